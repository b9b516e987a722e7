"""The installed console script works outside the source tree (migrations ship in the wheel)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).with_name("benchledger")


def _script_json(args: list[str], cwd: Path, env: dict[str, str]) -> dict:
    """What the installed console script prints, as JSON (a failure raises)."""
    done = subprocess.run(
        [str(SCRIPT), *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


@pytest.mark.skipif(not SCRIPT.exists(), reason="benchledger is not installed in this venv")
def test_installed_script_migrates_a_new_store_from_any_directory(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "BENCHLEDGER_DATABASE_URL"}
    env["PYTHONPATH"] = ""
    payload = _script_json(["--format", "json", "db", "upgrade"], tmp_path, env)
    assert payload["to_revision"] == payload["head"]
    assert (tmp_path / ".benchledger" / "ledger.db").exists()
    listed = _script_json(["events", "list", "--format", "json"], tmp_path, env)
    assert listed["count"] == 0


def test_help_is_cheap_to_import():
    """--help imports no subcommand, nor SQLAlchemy, Alembic or pydantic (startup cost)."""
    code = (
        "import sys\nfrom benchledger.commands.cli import cli\n"
        "try:\n    cli(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = ('sqlalchemy', 'alembic', 'pydantic', 'benchledger.services.store_session',"
        " 'benchledger.commands.store_commands')\n"
        "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert out.stderr.strip() == "[]"


HEAVY = ("sqlalchemy", "alembic")


def test_commands_on_the_embedded_store_never_import_sqlalchemy(tmp_path, fixtures_dir):
    """A first Harbor ingest (new store, events, ledger and run files) and a later upsert on
    SQLite run on the standard library's sqlite3: SQLAlchemy's import alone was most of a small
    command's time. PostgreSQL and migrations still use it."""
    job = fixtures_dir / "harbor/tb2-pilot-20260502/jobs/2026-05-02__09-14-07"
    commands = [
        ["--runtime-root", "rt", "--format", "json", "benchmark", "run", "terminal-bench",
         "--goal-id", "g", "--harbor-job-dir", str(job), "--update-run-ledger",
         "--no-global-sync", "--execute"],
        ["--runtime-root", "rt", "--format", "json", "benchmark", "run-ledger-check",
         "--goal-id", "g"],
        ["--format", "json", "verify", "--files"],
    ]  # fmt: skip
    for argv in commands:
        code = (
            "import sys\nfrom benchledger.commands.cli import cli\n"
            f"try:\n    cli({argv!r})\nexcept SystemExit as exit:\n    code = exit.code\n"
            f"print(code, sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)"
        )
        env = {k: v for k, v in os.environ.items() if k != "BENCHLEDGER_DATABASE_URL"}
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             cwd=tmp_path, env=env)  # fmt: skip
        assert out.stderr.strip().splitlines()[-1] in ("0 []", "None []"), (argv, out.stderr)
    assert (tmp_path / ".benchledger" / "ledger.db").exists()


def test_a_harbor_ingest_imports_no_other_source(tmp_path, fixtures_dir):
    """A Harbor ingest loads only the Harbor reader: neither BenchFlow's, Inspect's nor the
    planner's modules, and neither ``traceback`` nor ``socket``, which only an error print
    or a host lookup would use (each import is paid by every ingest; bench/README.md)."""
    job = fixtures_dir / "harbor/tb2-pilot-20260502/jobs/2026-05-02__09-14-07"
    argv = ["--runtime-root", "rt", "--format", "json", "benchmark", "run", "terminal-bench",
            "--goal-id", "g", "--harbor-job-dir", str(job), "--update-run-ledger",
            "--no-global-sync", "--execute"]  # fmt: skip
    unused = ("benchledger.ledger.sources.benchflow", "benchledger.ledger.sources.inspect",
              "benchledger.ledger.sources.planned.records", "traceback", "socket")  # fmt: skip
    code = (
        "import sys\nfrom benchledger.commands.cli import cli\n"
        f"try:\n    cli({argv!r})\nexcept SystemExit as exit:\n    code = exit.code\n"
        f"print(code, sorted(m for m in {unused!r} if m in sys.modules), file=sys.stderr)"
    )
    env = {k: v for k, v in os.environ.items() if k != "BENCHLEDGER_DATABASE_URL"}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                         capture_output=True, text=True, check=True)  # fmt: skip
    assert out.stderr.strip().splitlines()[-1] == "0 []"
