"""The JSON Schemas shipped in this package (``schemas/<name>.json``), read without pydantic so
``benchledger schema`` costs no more than any small command. ``ledger.contracts.generate``
writes them from the models; a test checks that they are what the models generate.
"""

from __future__ import annotations

from importlib import resources

from benchledger.ledger.core.errors import InputError

SUFFIX = ".json"


def _directory():  # noqa: ANN202 - an importlib Traversable
    return resources.files("benchledger.ledger.contracts").joinpath("schemas")


def schema_names() -> list[str]:
    """Every shipped schema name, sorted."""
    return sorted(
        entry.name[: -len(SUFFIX)]
        for entry in _directory().iterdir()
        if entry.name.endswith(SUFFIX)
    )


def schema_text(name: str) -> str:
    """The shipped JSON Schema of ``name``; an unknown name is an input error naming the known."""
    if name not in schema_names():
        raise InputError(f"no schema named {name!r}; known: {', '.join(schema_names())}")
    return _directory().joinpath(name + SUFFIX).read_text(encoding="utf-8")
