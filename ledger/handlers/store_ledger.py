"""Which ledger a command means when it names none: the one the store knows.

The default ledger file (``benchmark-run-ledger.json`` in the project) is only a default. After
``scripts/demo`` recorded into ``example-out/benchmark-run-ledger.json``, a later ``compare``
or ``benchmark run --update-run-ledger`` without ``--run-ledger-path`` read or started a second,
empty ledger (issue 34). Now, when no flag names a ledger and the default is not in the store,
a store holding exactly one ledger means that one; a store holding several lists them and says
which flags pick one.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.ledger_target import (
    LedgerTarget,
    project_dir_for_ledgers,
    resolve_ledger_target,
)
from benchledger.ledger.handlers.ledger_store import display_path_text

LISTED = 10  # ledgers or benchmarks an error names before "and N more"


class StoreLedgers(Protocol):
    def ledger(self, ledger_id: str) -> dict[str, Any] | None: ...
    def ledger_ids(self) -> list[str]: ...


class StoreBenchmarks(StoreLedgers, Protocol):
    def benchmark_ids(self, ledger_id: str) -> list[str]: ...


def ledger_the_store_knows(
    reads: StoreLedgers, target: LedgerTarget, *, named: bool, cwd: Path | None = None
) -> LedgerTarget:
    """``target`` when a flag named it, the store holds it, its file exists or the store holds
    no ledger at all; else the store's only ledger; else an error that lists the store's
    ledgers."""
    if named or reads.ledger(target.ledger_id) is not None or target.json_path.exists():
        return target  # a default file the store never recorded: "import it first" still says so
    ids = reads.ledger_ids()
    if not ids:
        return target
    if len(ids) > 1:
        raise InputError(
            f"no --run-ledger-path or --ledger-id given and the store holds {len(ids)} ledgers "
            f"({listed_ledgers(ids)}); pick one with --run-ledger-path PATH or --ledger-id ID"
        )
    return target_of(reads, ids[0], cwd=cwd)


def target_of(reads: StoreLedgers, ledger_id: str, *, cwd: Path | None = None) -> LedgerTarget:
    """The target of a stored ledger. A path-keyed ledger's id is its path relative to the
    project, so it resolves from any working directory; an explicit ``--ledger-id`` ledger
    renders to the path it was last recorded with."""
    cwd = cwd or Path.cwd()
    project = project_dir_for_ledgers(cwd)
    path = project / ledger_id
    if not os.path.isabs(ledger_id):
        candidate = resolve_ledger_target(os.path.relpath(path, cwd), cwd=cwd)
        if candidate.ledger_id == ledger_id:
            return candidate
    recorded = (reads.ledger(ledger_id) or {}).get("ledger_path")
    return resolve_ledger_target(recorded, ledger_id=ledger_id, cwd=cwd)


def no_rows_message(
    reads: StoreBenchmarks,
    target: LedgerTarget,
    benchmark_id: str,
    *,
    source_benchmarks: Iterable[str] | None = None,
) -> str:
    """Say which ledger was read and what exists: its benchmarks, else the store's ledgers and
    the flags that pick one (a bare "no rows", or an empty result, left users guessing which
    ledger was read; issue 34). ``source_benchmarks``: the benchmarks of the source ledgers a
    command read beside the store's (``run-ledger-aggregate --source-run-ledger-path``)."""
    shown = display_path_text(target.display_path)
    head = f"no ledger rows for benchmark {benchmark_id} in ledger {shown}"
    benchmarks = reads.benchmark_ids(target.ledger_id)
    if source_benchmarks is not None:
        head += " or its source ledgers"
        benchmarks = sorted({*benchmarks, *source_benchmarks})
        if benchmarks:
            return f"{head} (benchmarks in them: {listed(benchmarks)})"
    if benchmarks:
        return f"{head} (benchmarks in it: {listed(benchmarks)})"
    others = [i for i in reads.ledger_ids() if i != target.ledger_id]
    if others:
        return (
            f"{head}, which holds no rows; ledgers in this store: {listed_ledgers(others)} "
            "(pick one with --run-ledger-path or --ledger-id)"
        )
    return (
        f"{head}: the store holds no ledger rows yet (record runs with "
        "`benchledger benchmark run ... --update-run-ledger --execute`)"
    )


def listed_ledgers(ids: list[str]) -> str:
    """Ledger ids as a short list (an absolute one by its file name only)."""
    return listed([display_path_text(i) for i in ids])


def listed(names: list[str]) -> str:
    """``a, b, c`` up to ``LISTED`` names, then how many more."""
    more = len(names) - LISTED
    return ", ".join(names[:LISTED]) + (f" and {more} more" if more > 0 else "")
