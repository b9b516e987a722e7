"""A first Harbor ingest into a new project, with ``--no-global-sync``, loads only what it uses
(bench/README.md, issue 18): not the global registry merge (it skips the sync) and not ctypes
(no ledger file is there yet to be exchanged for the new one, ``projections/file_swap``).
Run in a fresh interpreter: the test process has imported everything already."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_JOB = REPO / "examples" / "harbor" / "2026-05-02__09-14-07"
NOT_LOADED = ("benchledger.ledger.rules.history.global_registry", "ctypes")


def _ingest_in_a_new_interpreter(work: Path, *extra: str) -> dict:
    argv = [
        "--runtime-root", "rt", "--format", "json", "benchmark", "run", "terminal-bench",
        "--goal-id", "g", "--harbor-job-dir", str(EXAMPLE_JOB), "--update-run-ledger",
        "--execute", *extra,
    ]  # fmt: skip
    code = (
        "import json, sys\nfrom benchledger.commands.cli import cli\n"
        f"try:\n    cli({argv!r})\nexcept SystemExit as exit:\n    code = exit.code\n"
        f"print(json.dumps([code, [m for m in {NOT_LOADED!r} if m in sys.modules]]),"
        " file=sys.stderr)"
    )
    env = {k: v for k, v in os.environ.items() if k != "BENCHLEDGER_DATABASE_URL"}
    env["PYTHONPATH"] = str(REPO)
    env["HOME"] = str(work)  # the global registry, if anything wrote one, stays in the test
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=work, env=env
    )
    code_and_loaded = json.loads(out.stderr.strip().splitlines()[-1])
    assert code_and_loaded[0] in (0, None), out
    return {"loaded": code_and_loaded[1]}


def test_a_first_ingest_without_global_sync_loads_neither_the_merge_nor_ctypes(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    assert _ingest_in_a_new_interpreter(work, "--no-global-sync")["loaded"] == []
    assert (work / "benchmark-run-ledger.json").is_file()


def test_an_ingest_that_syncs_still_loads_the_merge(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    assert "ledger.rules.history.global_registry" in _ingest_in_a_new_interpreter(work)["loaded"]
