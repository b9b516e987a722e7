"""The version benchledger reports: the installed distribution's, so it is written once (in
``pyproject.toml``) and every event's metadata, ``--version`` and the report agree with it.
"""

from __future__ import annotations

import functools
from pathlib import Path

DISTRIBUTION = "benchledger"
UNKNOWN = "0+unknown"


@functools.cache
def tool_version() -> str:
    """The installed version; a source checkout run without installing reads ``pyproject.toml``.

    Imported lazily by callers: ``importlib.metadata`` is not free, and ``--help`` needs none.
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return _checkout_version(Path(__file__).resolve().parent.parent / "pyproject.toml")


def _checkout_version(pyproject: Path) -> str:
    """The ``[project] version`` of a checkout's ``pyproject.toml``, or ``UNKNOWN`` without one."""
    import tomllib

    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return UNKNOWN
    found = project.get("version") if isinstance(project, dict) else None
    return found if isinstance(found, str) and found else UNKNOWN
