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

from tests.test_import_graph import ROOT, imported_names, our_modules

LIVE = ("ledger", "projections", "commands")
REVISIONS = sorted(
    path for path in (ROOT / "migrations" / "versions").glob("*.py") if path.stem != "__init__"
)

# Modules a revision may import: none so far. An entry needs a reason that it can never change
# what a past upgrade did (e.g. a constant-only module).
ALLOWED: dict[str, str] = {}

# Revision 0002 backfills the render cache with the live projection code (issue #15): the
# `replay` work makes that cache lazy, so the revision stops importing it.
PENDING: dict[str, set[str]] = {
    "0002_ledger_render_cache": {
        "ledger.db_sqlalchemy",
        "projections.ledger_cases",
        "projections.ledger_fragments",
    },
}


def live_imports(path: Path, name: str) -> set[str]:
    """The modules of our packages a file imports at any depth (``from m import f`` names
    ``m``), the allowed ones left out."""
    modules = our_modules()
    found: set[str] = set()
    for imported in imported_names(name, path):
        if imported.split(".")[0] not in LIVE:
            continue
        module = imported
        while module not in modules and "." in module:
            module = module.rsplit(".", 1)[0]
        found.add(module if module in modules else imported)
    return found - set(ALLOWED)


@pytest.mark.parametrize("path", REVISIONS, ids=lambda p: p.stem)
def test_a_revision_imports_no_live_module(path):
    name = f"migrations.versions.{path.stem}"
    assert live_imports(path, name) == PENDING.get(path.stem, set())


def test_pending_entries_name_revisions_that_exist():
    assert set(PENDING) <= {path.stem for path in REVISIONS}


def test_the_check_sees_a_function_level_live_import(tmp_path):
    probe = tmp_path / "0099_probe.py"
    probe.write_text(
        "import sqlalchemy as sa\n"
        "def upgrade():\n"
        "    from projections.ledger_cases import rebuild_ledger_cases\n"
        "    import ledger.jsonfmt\n",
        encoding="utf-8",
    )
    assert live_imports(probe, "migrations.versions.0099_probe") == {
        "projections.ledger_cases",
        "ledger.jsonfmt",
    }
