#!/usr/bin/env python3
"""Replay speed and memory: fill a fresh store with N realistic events, then time
`ProjectionEngine.rebuild` and `EventStore.verify` each in a fresh process.

The events look like a busy team's ledger: mostly ``ledger_upserted`` events carrying real
~2 KB rows from the loopx ledger fixture (run ids rewritten so about 30,000 distinct runs are
updated over and over) plus ``run_appended`` events. Filling is not measured; the listener is
off while filling, so the measured rebuild is what builds the read models.

Each measurement runs in its own subprocess so its peak RSS is that of the rebuild alone.

Usage: python bench/rebuild_throughput.py [--events N] [--backend sqlite|postgresql|both]
                                          [--verify-rebuild]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _fixtures import LOOPX_LEDGER  # noqa: E402

PG_BASE = os.environ.get("BENCHLEDGER_TEST_PG", "postgresql+psycopg://127.0.0.1:5432/test")
FILL_BATCH = 5000
DISTINCT_RUNS = 30_000
LEDGERS = ("team/terminal-bench", "team/skillsbench", "team/swe-marathon")
GOALS = tuple(f"goal-{i:02d}" for i in range(12))
RUN_APPENDED_EVERY = 10  # one event in ten is a run_appended
TARGET_EVENTS_PER_S = 50_000
TARGET_PEAK_MB = 500


# -- realistic events -----------------------------------------------------------------------


def fixture_rows() -> list[dict[str, Any]]:
    """Every row of the real loopx ledger fixture, in file order."""
    doc = json.loads(LOOPX_LEDGER.read_text())
    return [
        row
        for benchmark in doc["benchmarks"].values()
        for case in benchmark["cases"].values()
        for row in case["runs"]
    ]


def event_stream(total: int, seed: int = 7) -> Iterator[Any]:
    """``total`` NewEvents, deterministic for a seed."""
    from ledger.events import LEDGER_UPSERTED, RUN_APPENDED, NewEvent

    rng = random.Random(seed)
    templates = fixture_rows()
    seen_ledgers: set[str] = set()
    for i in range(total):
        stamp = _stamp(i)
        if i % RUN_APPENDED_EVERY == RUN_APPENDED_EVERY - 1:
            goal = GOALS[i % len(GOALS)]
            yield NewEvent(f"goal/{goal}", RUN_APPENDED, _run_appended(rng, templates, goal, i))
            continue
        slot = rng.randrange(DISTINCT_RUNS)
        ledger = LEDGERS[slot % len(LEDGERS)]
        payload = _ledger_upserted(rng, templates, ledger, slot, stamp)
        if ledger not in seen_ledgers:
            seen_ledgers.add(ledger)
            payload["update_policy"] = {"mode": "replace_by_run_id", "keep_archived": True}
        yield NewEvent(f"ledger/{ledger}", LEDGER_UPSERTED, payload)


def _stamp(i: int) -> str:
    seconds = i // 10
    return (
        f"2026-06-{1 + seconds // 86400 % 28:02d}T{seconds // 3600 % 24:02d}:"
        f"{seconds // 60 % 60:02d}:{seconds % 60:02d}.{i % 10}00000Z"
    )


def _ledger_upserted(
    rng: random.Random, templates: list[dict[str, Any]], ledger: str, slot: int, stamp: str
) -> dict[str, Any]:
    row = copy.deepcopy(templates[slot % len(templates)])
    row["run_id"] = f"{row['run_id']}-{slot:05d}"
    row["recorded_at"] = stamp
    row["official_score"] = round(rng.random(), 4)
    row["notes"] = f"{row.get('notes') or ''} (rerun {rng.randrange(1000)})".strip()
    if rng.random() < 0.03:
        row["archive_state"] = "archived"
    return {
        "ledger_id": ledger,
        "ledger_path": f"{ledger}/benchmark-run-ledger.json",
        "row": row,
        "merged_into": rng.choice(("inserted", "replaced", "backfilled")),
        "touched_run_id": row["run_id"],
        "rules_version": 1,
        "updated_at": stamp,
    }


def _run_appended(
    rng: random.Random, templates: list[dict[str, Any]], goal: str, i: int
) -> dict[str, Any]:
    base = templates[i % len(templates)]
    stem = f"20260601T000000Z-{i:08d}"
    run_id = f"{base['run_id']}-{rng.randrange(DISTINCT_RUNS):05d}"
    record = {
        "schema_version": "benchmark_run_v0",
        "goal_id": goal,
        "benchmark_id": base.get("benchmark_id"),
        "case_id": base.get("case_id"),
        "arm_id": base.get("arm_id"),
        "agent_model": base.get("agent_model"),
        "status": base.get("status"),
        "official_score": round(rng.random(), 4),
        "round_rewards": base.get("round_rewards") or [],
        "classification": "benchmark_result",
        "recommended_action": "continue",
        "generated_at": _stamp(i),
    }
    rollout = {
        "event_id": f"rollout-{i:08d}",
        "event_kind": "benchmark_run",
        "status": base.get("status") or "completed",
        "goal_id": goal,
        "run_id": run_id,
        "history_stem": stem,
        "recorded_at": _stamp(i),
    }
    return {
        "goal_id": goal,
        "stem": stem,
        "run_key": f"{base.get('benchmark_id')}::{base.get('case_id')}::{i}",
        "run_id": run_id,
        "generated_at": _stamp(i),
        "record": record,
        "rollout_event": rollout,
    }


# -- filling ----------------------------------------------------------------------------------


def fill(url: str, total: int) -> float:
    """Append ``total`` events in large transactions with the listener off; seconds taken."""
    from commands.runtime import open_store

    opened = open_store(url)
    opened.store.listener = None
    metadata = {"actor": "bench", "host": "bench", "tool": "benchledger", "argv": ["bench"]}
    start = time.perf_counter()
    batch: list[Any] = []
    done = 0
    for event in event_stream(total):
        batch.append(event)
        if len(batch) >= FILL_BATCH:
            done += _append(opened.store, batch, metadata)
            batch = []
            _progress("fill", done, total, start)
    done += _append(opened.store, batch, metadata)
    opened.close()
    _progress("fill", done, total, start, end=True)
    return time.perf_counter() - start


def _append(store: Any, batch: list[Any], metadata: dict[str, Any]) -> int:
    if not batch:
        return 0
    with store.transaction(metadata) as uow:
        uow.append(batch)
    return len(batch)


def _progress(label: str, done: int, total: int, start: float, *, end: bool = False) -> None:
    if not sys.stderr.isatty() and not end:
        return
    rate = done / max(time.perf_counter() - start, 1e-9)
    sys.stderr.write(f"\r  {label}: {done:,}/{total:,} events ({rate:,.0f}/s)")
    if end:
        sys.stderr.write("\n")
    sys.stderr.flush()


# -- measured children --------------------------------------------------------------------------


def child(kind: str, url: str) -> None:
    """Run one measurement in this (fresh) process and print one JSON line."""
    from commands.runtime import open_store

    opened = open_store(url)
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_SELF)
    if kind == "rebuild":
        report = opened.projections.rebuild(opened.store)
        result = {"events": report.events_replayed, "head": report.head_position}
    elif kind == "verify":
        report = opened.store.verify()
        result = {"events": report.checked, "ok": report.ok}
    elif kind == "verify-rebuild":
        report = opened.projections.verify_rebuild(opened.store)
        result = {"events": report.events_replayed, "ok": report.ok, "diff": report.differences}
    else:
        raise SystemExit(f"unknown measurement {kind}")
    result["seconds"] = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    # user+sys of every thread of this process: less sensitive than wall time to other load
    # on a shared machine (a PostgreSQL server's own CPU is not in it)
    result["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    result["self_maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    opened.close()
    print(json.dumps(result))


def measure(kind: str, url: str) -> dict[str, Any]:
    """Run ``kind`` in a subprocess; peak RSS is read back from the kernel for that child."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc = subprocess.run(
        [sys.executable, __file__, "--child", kind, url],
        check=True,
        capture_output=True,
        text=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    # RUSAGE_CHILDREN is the max over every waited-for child: exact for the first child, and
    # the child's own RUSAGE_SELF (identical by definition) covers later ones.
    result["peak_mb"] = after / 1024 if after > before else result["self_maxrss_mb"]
    return result


# -- backends -----------------------------------------------------------------------------------


def run_backend(backend: str, total: int, verify_rebuild: bool) -> None:
    if backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix="benchledger-rebuild-") as tmp:
            url = f"sqlite:///{Path(tmp) / 'ledger.db'}"
            _run(backend, url, total, verify_rebuild, size=lambda: _file_mb(Path(tmp)))
        return
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    _pg(f"CREATE SCHEMA {schema}")
    try:
        url = f"{PG_BASE}?options=-csearch_path%3D{schema}"
        _run(backend, url, total, verify_rebuild, size=lambda: _pg_mb(schema))
    finally:
        _pg(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def run_existing(url: str, total: int, verify_rebuild: bool) -> None:
    """``--db``: measure a store that is kept between runs (filled first if it is empty)."""
    from commands.runtime import open_store

    opened = open_store(url)
    head = opened.store.head_position()
    opened.close()
    backend = "sqlite" if url.startswith("sqlite") else "postgresql"
    _run(backend, url, total if head == 0 else 0, verify_rebuild, size=lambda: float("nan"))


def _run(backend: str, url: str, total: int, verify_rebuild: bool, size: Any) -> None:
    if total:
        print(f"[{backend}] filling {total:,} events ...", flush=True)
        fill_s = fill(url, total)
        print(
            f"[{backend}] filled in {fill_s:.1f} s ({total / fill_s:,.0f} events/s), "
            f"store size {size():,.0f} MB",
            flush=True,
        )
    rebuild = measure("rebuild", url)
    rate = rebuild["events"] / rebuild["seconds"]
    verdict = ""
    if backend == "sqlite":
        ok = rate >= TARGET_EVENTS_PER_S and rebuild["peak_mb"] < TARGET_PEAK_MB
        verdict = (
            f"  [target >= {TARGET_EVENTS_PER_S:,}/s, < {TARGET_PEAK_MB} MB: "
            f"{'MET' if ok else 'MISSED'}]"
        )
    print(
        f"[{backend}] rebuild: {rebuild['events']:,} events in {rebuild['seconds']:.2f} s = "
        f"{rate:,.0f} events/s, CPU {rebuild['cpu_s']:.2f} s, peak RSS "
        f"{rebuild['peak_mb']:.0f} MB{verdict}",
        flush=True,
    )
    verify = measure("verify", url)
    print(
        f"[{backend}] verify:  {verify['events']:,} events in {verify['seconds']:.2f} s = "
        f"{verify['events'] / verify['seconds']:,.0f} events/s, CPU {verify['cpu_s']:.2f} s, "
        f"peak RSS {verify['peak_mb']:.0f} MB, ok={verify['ok']}",
        flush=True,
    )
    if verify_rebuild:
        check = measure("verify-rebuild", url)
        print(
            f"[{backend}] rebuild --verify: ok={check['ok']} in {check['seconds']:.2f} s, "
            f"CPU {check['cpu_s']:.2f} s, peak RSS {check['peak_mb']:.0f} MB "
            f"{check['diff'][:3] or ''}",
            flush=True,
        )


def _file_mb(directory: Path) -> float:
    return sum(p.stat().st_size for p in directory.iterdir()) / 1e6


def _pg(sql: str) -> Any:
    import psycopg

    with psycopg.connect(
        PG_BASE.replace("postgresql+psycopg", "postgresql"), autocommit=True
    ) as conn:
        cursor = conn.execute(sql)
        return cursor.fetchone() if sql.startswith("SELECT") else None


def _pg_mb(schema: str) -> float:
    row = _pg(
        "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
        f"JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '{schema}' "
        "AND c.relkind = 'r'"
    )
    return float(row[0]) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument(
        "--verify-rebuild",
        action="store_true",
        help="also run rebuild --verify (replay into scratch, compare)",
    )
    parser.add_argument("--db", help="measure this kept store instead (filled if empty)")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "URL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if args.db:
        run_existing(args.db, args.events, args.verify_rebuild)
        return
    backends = ("sqlite", "postgresql") if args.backend == "both" else (args.backend,)
    for backend in backends:
        run_backend(backend, args.events, args.verify_rebuild)


if __name__ == "__main__":
    main()
