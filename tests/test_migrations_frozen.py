"""Historical revisions never import live code: editing a projection must not rewrite what an
old upgrade does. A revision may use the libraries and its own frozen copies under
``migrations/frozen_*``; nothing live may import those copies (they are history, not code to
share).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_import_graph import ROOT, import_graph, imported_names

LIVE = ("ledger", "projections", "commands")
REVISIONS = sorted((ROOT / "migrations" / "versions").glob("*.py"))
FROZEN = sorted((ROOT / "migrations").glob("frozen_*/*.py"))


def _live_imports(path: Path, name: str) -> list[str]:
    return sorted(
        imported
        for imported in imported_names(name, path)
        if imported.split(".")[0] in LIVE
    )


@pytest.mark.parametrize("path", REVISIONS + FROZEN, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_revision_and_its_frozen_helpers_import_no_live_package(path):
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    assert _live_imports(path, name) == []


def test_the_render_cache_revision_is_checked():
    assert any(path.name == "0002_ledger_render_cache.py" for path in REVISIONS)
    assert FROZEN, "the frozen helpers of revision 0002 are walked"


def test_the_check_sees_a_function_level_live_import(tmp_path):
    probe = tmp_path / "0099_probe.py"
    probe.write_text("def upgrade():\n    from projections.ledger_cases import x\n")
    assert _live_imports(probe, "migrations.versions.0099_probe") == [
        "projections.ledger_cases",
        "projections.ledger_cases.x",
    ]


def test_nothing_live_imports_a_frozen_copy():
    graph = import_graph()
    importers = sorted(
        name
        for name, deps in graph.items()
        if name.split(".")[0] in LIVE and any(".frozen_" in dep for dep in deps)
    )
    assert importers == []
