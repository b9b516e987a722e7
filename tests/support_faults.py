"""Helpers for the fault, load and tamper suites: run the real ``benchmark run`` command as a
child process, read back what it left in the store and on disk, and compare that with a clean
run "modulo timestamps".

Why a child process: only a real process can be SIGKILLed part-way through, and only separate
processes race each other for the store's append lock the way separate runners do.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# The console script's own start, as a user's shell runs it.
CLI = [sys.executable, "-m", "benchledger"]
MANIFEST_REL = Path("harbor/manifest.json")
GOAL = "g"
RUNTIME_ROOT = "rt"
LEDGER = "ledger/benchmark-run-ledger.json"
FAULT_ENV = "BENCHLEDGER_FAULT_POINT"
EXPORT_WRITTEN = "export_written"
# Run-record stems and every timestamp the pipeline stamps (``-2`` marks a same-second stem).
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d[:-]\d\d[:-]\d\d(\.\d+)?Z(-\d+)?")
# Rollout event ids hash the whole event, ``recorded_at`` included: a time-derived value too.
ROLLOUT_EVENT_ID = re.compile(r'"event_id": "[0-9a-f]{16}"')


# --- fixtures -------------------------------------------------------------------------------


def harbor_copy(fixtures_dir: Path, dest: Path) -> Path:
    """A writable copy of the Harbor fixtures with the empty dirs version control drops."""
    root = dest / "harbor"
    shutil.copytree(fixtures_dir / "harbor", root)
    manifest = json.loads((fixtures_dir / MANIFEST_REL).read_text("utf-8"))
    for rel in manifest["empty_dirs"]:
        (root / rel).mkdir(parents=True, exist_ok=True)
    return root


def job_dir(harbor_root: Path, key: str) -> Path:
    manifest = json.loads((harbor_root / "manifest.json").read_text("utf-8"))
    return harbor_root / next(j["job_dir"] for j in manifest["jobs"] if j["key"] == key)


def job_records(harbor_root: Path, key: str) -> int:
    """Records one job yields: one per (task, agent, model), from the manifest, not the adapter."""
    manifest = json.loads((harbor_root / "manifest.json").read_text("utf-8"))
    job = next(j for j in manifest["jobs"] if j["key"] == key)
    return len({(t["task_name"], t["agent"], t["model"]) for t in job["trials"]})


# --- running the command --------------------------------------------------------------------


def child_env(fault: str | None = None) -> dict[str, str]:
    """The test's own checkout first on the path; the fault point armed only when asked."""
    env = {k: v for k, v in os.environ.items() if k != FAULT_ENV}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    if fault:
        env[FAULT_ENV] = fault
    return env


def ingest_args(job: Path) -> list[str]:
    """The ingest under test, after the ``--db`` and ``--format`` root options."""
    return [
        "--runtime-root",
        RUNTIME_ROOT,
        "benchmark",
        "run",
        "terminal-bench",
        "--goal-id",
        GOAL,
        "--harbor-job-dir",
        str(job),
        "--update-run-ledger",
        "--run-ledger-path",
        LEDGER,
        "--execute",
        "--no-global-sync",
    ]


def ingest_argv(db: str, job: Path) -> list[str]:
    return [*CLI, "--db", db, "--format", "json", *ingest_args(job)]


def spawn_ingest(
    db: str, workdir: Path, job: Path, *, fault: str | None = None
) -> subprocess.Popen:
    workdir.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        ingest_argv(db, job),
        cwd=workdir,
        env=child_env(fault),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def finish(proc: subprocess.Popen, timeout: float = 120) -> tuple[int, dict[str, Any] | None, str]:
    """Exit code, the JSON envelope (None when the process died before printing) and stderr."""
    out, err = proc.communicate(timeout=timeout)
    payload = json.loads(out) if out.strip() else None
    return proc.returncode, payload, err.decode(errors="replace")


def ingest(
    db: str, workdir: Path, job: Path, *, fault: str | None = None
) -> tuple[int, dict[str, Any] | None, str]:
    return finish(spawn_ingest(db, workdir, job, fault=fault))


def cli(db: str, *args: str, cwd: Path | None = None) -> tuple[int, dict[str, Any] | None, str]:
    proc = subprocess.run(
        [*CLI, "--db", db, "--format", "json", *args],
        cwd=cwd,
        env=child_env(),
        capture_output=True,
        timeout=120,
    )
    payload = json.loads(proc.stdout) if proc.stdout.strip() else None
    return proc.returncode, payload, proc.stderr.decode(errors="replace")


def cli_in_process(db: str, *args: str, cwd: Path) -> tuple[int, dict[str, Any] | None, str]:
    """The same command through click's runner: no interpreter start-up, for the steps that
    are set-up or read-back rather than the thing under test."""
    from contextlib import chdir

    from click.testing import CliRunner

    from benchledger.commands.cli import cli as root

    cwd.mkdir(parents=True, exist_ok=True)
    with chdir(cwd):
        result = CliRunner().invoke(root, ["--db", db, "--format", "json", *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    payload = json.loads(result.stdout) if result.stdout.strip() else None
    return result.exit_code, payload, result.stderr


def ingest_in_process(db: str, workdir: Path, job: Path) -> tuple[int, dict[str, Any] | None, str]:
    return cli_in_process(db, *ingest_args(job), cwd=workdir)


# --- the store ------------------------------------------------------------------------------


def store_state(db: str) -> dict[str, Any]:
    """Events, chain verdict and replay verdict, read in-process (cheaper than three CLIs)."""
    from benchledger.services.store_session import open_store

    with open_store(db) as opened:
        events = list(opened.store.read())
        return {
            "events": events,
            "verify": opened.store.verify(),
            "rebuild": opened.projections.verify_rebuild(opened.store),
        }


def command_groups(events: list) -> list[list]:
    """Events of each command invocation (one correlation id), exports left out, in order."""
    groups: dict[str, list] = defaultdict(list)
    for event in events:
        if event.event_type != EXPORT_WRITTEN:
            groups[event.correlation_id].append(event)
    return sorted(groups.values(), key=lambda g: g[0].position)


def type_counts(events: list) -> Counter:
    return Counter(e.event_type for e in events)


def ledger_ids(db: str) -> list[str]:
    from benchledger.services.store_session import open_store

    with open_store(db) as opened:
        with opened.store.database.connect() as conn:
            return [r[0] for r in conn.execute("SELECT ledger_id FROM rm_ledgers")]


def fresh_ledger(db: str, ledger_id: str) -> tuple[bytes, bytes, list[dict[str, Any]]]:
    """Ledger JSON and Markdown as a render from the store now writes them, and the rows of
    the ledger's runs as the read model holds them (``ledger_runs_v``)."""
    from benchledger.projections.publishing.ledger_files import ledger_document
    from benchledger.projections.publishing.ledger_v0 import dump_json, render_markdown
    from benchledger.services.store_session import open_store

    with open_store(db) as opened:
        with opened.store.database.connect() as conn:
            doc = ledger_document(conn, ledger_id)
            # The view: a row the read model leaves in its event is read there.
            query = 'SELECT "row" FROM ledger_runs_v WHERE ledger_id = ?'
            rows = [json.loads(r[0]) for r in conn.execute(query, (ledger_id,))]
        return dump_json(doc), render_markdown(doc).encode("utf-8"), rows


# --- files on disk --------------------------------------------------------------------------


def is_temp(name: str) -> bool:
    """``atomic_write`` temp files: ``.<name>.<pid>.<random>.tmp``."""
    return name.startswith(".") and name.endswith(".tmp")


def published_files(workdir: Path) -> dict[str, bytes]:
    """Every output file under the runtime root and the ledger dir (temp files excluded)."""
    files: dict[str, bytes] = {}
    for top in (workdir / RUNTIME_ROOT, (workdir / LEDGER).parent):
        if not top.is_dir():
            continue
        for path in sorted(top.rglob("*")):
            if path.is_file() and not is_temp(path.name):
                files[path.relative_to(workdir).as_posix()] = path.read_bytes()
    return files


def assert_files_whole(workdir: Path) -> None:
    """No half-written file: every JSON parses, every JSONL line parses, Markdown is UTF-8."""
    for rel, data in published_files(workdir).items():
        if rel.endswith(".json"):
            json.loads(data)
        elif rel.endswith(".jsonl"):
            for line in data.decode().splitlines():
                json.loads(line)
        elif rel.endswith(".md"):
            assert data.decode().strip(), f"{rel} is empty"


def ledger_rows(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Ledger rows keyed by run_id, wherever the document nests them."""
    rows: dict[str, dict[str, Any]] = {}
    for benchmark in doc.get("benchmarks", {}).values():
        for case in benchmark.get("cases", {}).values():
            for row in case.get("runs", []):
                rows[row["run_id"]] = row
    return rows


def normalise(text: str, workdir: Path) -> str:
    text = TIMESTAMP.sub("<T>", text.replace(str(workdir.resolve()), "<DIR>"))
    return ROLLOUT_EVENT_ID.sub('"event_id": "<ID>"', text)


def snapshot(workdir: Path) -> dict[str, Any]:
    """What a reader of the published files sees, with times, stems and the workdir blanked.

    Ledger rows are compared by run_id; run records (named by stem) as a multiset of contents.
    """
    files = published_files(workdir)
    ledger_json = files.pop(LEDGER, None)
    ledger = json.loads(normalise(ledger_json.decode(), workdir)) if ledger_json else None
    contents = Counter(
        (normalise(rel, workdir), normalise(data.decode(), workdir)) for rel, data in files.items()
    )
    return {
        "ledger_rows": ledger_rows(ledger) if ledger else None,
        "ledger_rest": {k: v for k, v in (ledger or {}).items() if k != "benchmarks"},
        "files": contents,
    }
