"""Historical Alembic revisions never import live code: a revision is history, and editing a
projection must not silently change what an old upgrade does to a store.

A revision may import the standard library, SQLAlchemy and Alembic, and from our packages only
the modules on ``ALLOWED`` (each small, stable, and named with the reason it is safe).
``PENDING`` names the live imports that exist today and are being removed; a new live import
fails, and so does a pending one that is gone (take it off the list).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_import_graph import ROOT, imported_names, layer, our_modules

LIVE = ("ledger", "projections", "commands")
REVISIONS = sorted(
    path for path in (ROOT / "migrations" / "versions").glob("*.py") if path.stem != "__init__"
)

# Modules a revision may import: none so far. An entry needs a reason that it can never change
# what a past upgrade did (e.g. a constant-only module).
ALLOWED: dict[str, str] = {}

# Live imports being removed, by revision: none left (0002 no longer backfills the render
# cache, which the running code fills lazily).
PENDING: dict[str, set[str]] = {}


def live_imports(path: Path, name: str) -> set[str]:
    """The modules of our packages a file imports at any depth (``from m import f`` names
    ``m``), the allowed ones left out."""
    modules = our_modules()
    found: set[str] = set()
    for imported in imported_names(name, path):
        if not imported.startswith("benchledger.") or layer(imported) not in LIVE:
            continue
        module = imported
        while module not in modules and "." in module:
            module = module.rsplit(".", 1)[0]
        found.add(module if module in modules else imported)
    return found - set(ALLOWED)


@pytest.mark.parametrize("path", REVISIONS, ids=lambda p: p.stem)
def test_a_revision_imports_no_live_module(path):
    name = f"benchledger.migrations.versions.{path.stem}"
    assert live_imports(path, name) == PENDING.get(path.stem, set())


def test_pending_entries_name_revisions_that_exist():
    assert set(PENDING) <= {path.stem for path in REVISIONS}


def test_the_check_sees_a_function_level_live_import(tmp_path):
    probe = tmp_path / "0099_probe.py"
    probe.write_text(
        "import sqlalchemy as sa\n"
        "def upgrade():\n"
        "    from benchledger.projections.read_models.ledger_cases import rebuild_ledger_cases\n"
        "    import benchledger.ledger.core.jsonfmt\n",
        encoding="utf-8",
    )
    assert live_imports(probe, "benchledger.migrations.versions.0099_probe") == {
        "benchledger.projections.read_models.ledger_cases",
        "benchledger.ledger.core.jsonfmt",
    }
