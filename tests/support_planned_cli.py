"""Helpers for the planned-run and analysis CLI tests: invoke the CLI, read stored events."""

from __future__ import annotations

import json
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result


@dataclass
class Call:
    result: Result
    payload: dict[str, Any] | None

    @property
    def code(self) -> int:
        return self.result.exit_code

    @property
    def stderr(self) -> str:
        return self.result.stderr

    @property
    def stdout(self) -> str:
        return self.result.stdout


def invoke(
    args: list[str],
    *,
    db: str | None = None,
    runtime_root: Path | None = None,
    input_text: str | None = None,
) -> Call:
    from benchledger.commands.cli import cli

    prefix = ["--db", db] if db else []
    if runtime_root is not None:
        prefix += ["--runtime-root", str(runtime_root)]
    result = CliRunner().invoke(cli, [*prefix, *args], input=input_text, catch_exceptions=False)
    try:
        payload = json.loads(result.stdout)
    except ValueError:
        payload = None
    return Call(result, payload)


def stored_events(db: str, event_type: str | None = None) -> list[dict[str, Any]]:
    """Every event (with payload) through the store API, oldest first."""
    from benchledger.services.store_session import open_store

    with open_store(db) as opened:
        types = [event_type] if event_type else None
        return [e.as_dict() for e in opened.store.read(event_types=types)]


def make_writable(root: Path) -> None:
    for dirpath, _dirs, files in os.walk(root):
        os.chmod(dirpath, os.stat(dirpath).st_mode | stat.S_IWUSR | stat.S_IXUSR)
        for name in files:
            path = os.path.join(dirpath, name)
            os.chmod(path, os.stat(path).st_mode | stat.S_IWUSR)


def copy_harbor_job_renamed(fixtures_dir: Path, job_key: str, new_name: str, dest: Path) -> Path:
    """Copy a fixture job as ``dest/jobs/<new_name>`` with its job name rewritten everywhere.

    Harbor writes the job name into the job config and into every trial's config and result
    (``job_id``-free fields such as ``trial_uri`` and ``jobs_dir`` paths); all are rewritten so
    the copy reads as if Harbor had run it under ``--job-name <new_name>``.
    """
    manifest = json.loads((fixtures_dir / "harbor/manifest.json").read_text("utf-8"))
    job = next(j for j in manifest["jobs"] if j["key"] == job_key)
    src = fixtures_dir / "harbor" / job["job_dir"]
    dst = dest / "jobs" / new_name
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dst)
    prefix = job["job_dir"].rstrip("/")
    for rel in manifest["empty_dirs"]:
        if rel.startswith(prefix + "/"):
            (dst / rel[len(prefix) + 1 :]).mkdir(parents=True, exist_ok=True)
    make_writable(dst)
    old = job["job_name"]
    for path in dst.rglob("*.json"):
        text = path.read_text(encoding="utf-8")
        if old in text:
            path.write_text(text.replace(old, new_name), encoding="utf-8")
    return dst


def ledger_rows(ledger_path: Path) -> list[dict[str, Any]]:
    document = json.loads(ledger_path.read_text(encoding="utf-8"))
    return [
        row
        for benchmark in document.get("benchmarks", {}).values()
        for case in benchmark.get("cases", {}).values()
        for row in case.get("runs", [])
    ]
