"""Helpers for the Inspect AI tests: the fixture logs, the CLI call, Inspect's own figures.

Expected values come from Inspect itself (its log reader, its ``value_to_float`` and the
``results``/``stats`` it wrote into each log), never from benchledger's helpers.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from tests.conftest import FIXTURES_DIR
from tests.support_harbor_ingest_cli import Call, cli
from tools.make_inspect_logs import rewrite_log

LOGS = FIXTURES_DIR / "inspect_logs"
__all__ = ["LOGS", "copy_logs", "ingest", "inspect_float", "inspect_logs", "rewrite_log"]


def copy_logs(dest: Path, *parts: str) -> Path:
    """A writable copy of the fixture logs (or of the named sub-directories)."""
    root = dest / "logs"
    if not parts:
        shutil.copytree(LOGS, root)
        return root
    for part in parts:
        shutil.copytree(LOGS / part, root / part)
    return root


def ingest(args: list[str], *, db: str, runtime_root: Path, execute: bool = True) -> Call:
    ledger = runtime_root.parent / "benchmark-run-ledger.json"
    full = [
        "benchmark", "run", "inspect", "--goal-id", "g", "--update-run-ledger",
        "--run-ledger-path", str(ledger), "--no-global-sync", "--format", "json", *args,
    ]  # fmt: skip
    if execute:
        full.append("--execute")
    return cli(full, db=db, runtime_root=runtime_root)


def inspect_logs(root: Path) -> list[Any]:
    """Every log under ``root``, read whole by Inspect's own reader."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    return [read_eval_log(info) for info in list_eval_logs(str(root))]


def inspect_float(value: Any) -> float:
    from inspect_ai.scorer import value_to_float

    return value_to_float()(value)
