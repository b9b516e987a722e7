"""Write ``ledger/store/tables.py`` and ``projections/read_models/tables.py``: the plain table
specs statements
are built from, generated from the SQLAlchemy models so each column is declared once.

Run by ``python -m benchledger.migrations.snapshot`` (with the SQLite head snapshot, after a
schema change);
``tests/test_table_specs.py`` fails until the generated files match the models again.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy import Table

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 100  # ruff's line length: the generated files pass `ruff check` and `ruff format`


@dataclass(frozen=True)
class SpecFile:
    """One generated module: which models it is made from and what it says about itself."""

    path: Path
    models: str
    docstring: str


SPEC_FILES = (
    SpecFile(
        ROOT / "ledger" / "store" / "tables.py",
        "benchledger.ledger.store.schema",
        "The store's own tables as statements name them: names, columns, primary keys.",
    ),
    SpecFile(
        ROOT / "projections" / "read_models" / "tables.py",
        "benchledger.projections.read_models.schema",
        "The read-model tables as statements name them: names, columns, primary keys.",
    ),
)


def _models(module: ModuleType) -> list[tuple[str, Table]]:
    """The tables a schema module defines, in definition order, with their variable names."""
    from sqlalchemy import Table as TableType

    return [
        (name, value)
        for name, value in vars(module).items()
        if isinstance(value, TableType) and not name.startswith("_")
    ]


def _tuple(names: list[str]) -> str:
    quoted = ", ".join(f'"{n}"' for n in names)
    return f"({quoted},)" if len(names) == 1 else f"({quoted})"


def _spec(variable: str, table: Table) -> str:
    """One ``NAME = TableSpec(...)`` statement, laid out as ``ruff format`` lays it out."""
    name = table.name
    columns = [c.name for c in table.columns]
    key = [c.name for c in table.primary_key.columns]
    head = f"{variable.upper()} = TableSpec("
    args = [f'"{name}"', _tuple(columns), _tuple(key)]
    flat = f"{head}{', '.join(args)})"
    if len(flat) <= WIDTH:
        return flat + "\n"
    inline = f"    {', '.join(args)}"
    if len(inline) <= WIDTH:
        return f"{head}\n{inline}\n)\n"
    lines = [head]
    for arg in args:
        if len(f"    {arg},") <= WIDTH:
            lines.append(f"    {arg},")
        else:
            lines.append("    (")
            lines.extend(f'        "{c}",' for c in columns)
            lines.append("    ),")
    lines.append(")")
    return "\n".join(lines) + "\n"


def render(spec_file: SpecFile) -> str:
    """The generated module's text."""
    module = importlib.import_module(spec_file.models)
    source = spec_file.models.removeprefix("benchledger.").replace(".", "/") + ".py"
    specs = "".join(_spec(variable, table) for variable, table in _models(module))
    return (
        f'"""{spec_file.docstring}\n\n'
        f"Generated from the models in ``{source}``\n"
        "by ``python -m benchledger.migrations.snapshot``;\n"
        'do not edit by hand. ``ledger/store/table_spec.py`` says why the specs exist.\n"""\n\n'
        "from __future__ import annotations\n\n"
        "from benchledger.ledger.store.table_spec import TableSpec\n\n"
        f"{specs}"
    )


def write_all() -> list[Path]:
    """Regenerate every spec module; the paths written."""
    for spec_file in SPEC_FILES:
        spec_file.path.write_text(render(spec_file), encoding="utf-8")
    return [spec_file.path for spec_file in SPEC_FILES]
