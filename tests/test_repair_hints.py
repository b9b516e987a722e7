"""Every repair command an error suggests works as printed (issue 36, item 6), here for a
ledger outside the project, which is keyed by its absolute path."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchledger.commands.cli import cli
from tests.conftest import FIXTURES_DIR

LOOPX_LEDGER = FIXTURES_DIR / "loopx-ledger" / "benchmark-run-ledger.json"
RUN = {
    "schema_version": "benchmark_run_v0", "source_runner": "harbor", "benchmark_id": "tb@2.0",
    "case_id": "c1", "run_status": "completed", "runner_return_status": "completed",
    "official_score": 1.0, "official_score_status": "completed",
    "official_task_score": {"kind": "harbor_verifier_reward", "value": 1.0, "passed": True},
}  # fmt: skip


@pytest.fixture
def project(tmp_path, monkeypatch, db_url):
    """A project directory as cwd, the store in the environment (so a printed command needs
    no --db), and a loopx ledger outside the project."""
    root = tmp_path / "proj"
    (root / ".benchledger").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(LOOPX_LEDGER, outside / "l.json")
    monkeypatch.chdir(root)
    monkeypatch.setenv("BENCHLEDGER_DATABASE_URL", db_url)
    return outside / "l.json"


def _run(args):
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def _printed_command(text: str) -> list[str]:
    found = re.search(r"`benchledger ([^`]+)`", text)
    assert found, text
    return shlex.split(found.group(1))


def test_render_as_printed_repairs_a_ledger_outside_the_project(project: Path):
    imported = _run(["import", "loopx-ledger", str(project), "--execute"])
    assert imported.exit_code == 0, imported.output
    assert not project.with_suffix(".md").exists()  # imported, not rendered yet
    stale = _run(["verify", "--files", "--format", "json"])
    assert stale.exit_code != 0
    command = _printed_command(stale.output)
    assert command == ["render"]
    repaired = _run(command)
    assert repaired.exit_code == 0, repaired.output
    assert project.with_suffix(".md").exists()
    assert _run(["verify", "--files"]).exit_code == 0


def test_import_as_printed_lets_an_upsert_into_an_outside_ledger_go_on(
    project: Path, tmp_path: Path
):
    run_json = tmp_path / "run.json"
    run_json.write_text(json.dumps(RUN), encoding="utf-8")
    upsert = ["benchmark", "run-ledger-upsert", "--benchmark-run-json", str(run_json),
              "--run-ledger-path", str(project), "--execute"]  # fmt: skip
    refused = _run(upsert)
    assert refused.exit_code == 1
    command = _printed_command(refused.stderr)
    assert command[:2] == ["import", "loopx-ledger"]
    assert not Path(command[2]).is_absolute()  # no absolute local path in the message
    imported = _run(command)
    assert imported.exit_code == 0, imported.output
    assert _run(upsert).exit_code == 0


def test_db_upgrade_as_printed_upgrades_an_old_store(db_url, tmp_path, monkeypatch):
    """A store at an older revision, addressed with --db: the printed upgrade runs as is."""
    from benchledger.ledger.store.database import (
        StoreLocation,
        normalize_url,
        open_database,
        run_upgrade,
    )

    monkeypatch.chdir(tmp_path)
    database = open_database(StoreLocation(normalize_url(db_url), None))
    run_upgrade(database, "0005_compare_facts")
    database.dispose()
    refused = _run(["--db", db_url, "events", "list"])
    assert refused.exit_code == 1, refused.output
    command = _printed_command(refused.stderr)
    assert "<URL>" not in command
    upgraded = _run(command)
    assert upgraded.exit_code == 0, upgraded.output
    assert _run(["--db", db_url, "events", "list"]).exit_code == 0
