#!/usr/bin/env python3
"""Replay speed, memory and store size: fill a store with N events of a named workload,
then time the CLI (``benchledger --db URL rebuild``, ``rebuild --verify``, ``verify``), each in
a fresh process.

Workloads (``--workload``):

* ``realistic`` (default): what ingests append. Per case a ``run_built``, a ``run_appended``
  and a ``ledger_upserted`` of a new run (rows are real ~2 KB rows of the loopx ledger
  fixture with new run ids), one ``export_written`` per ingest; about one ingest in ten
  re-ingests an earlier job, and some ingests' runs are archived and later restored.
* ``supersession``: ``ledger_upserted`` events rewriting only 30,000 distinct runs over and
  over plus one ``run_appended`` in ten (the sparse replay's best case).

Filling is not measured (the listener is off while filling). Stores are kept under
``bench/.data/`` (SQLite) or a ``bench_rebuild_<workload>_<N>`` schema (PostgreSQL) and
reused; ``--fresh`` regenerates. Peak RSS and CPU are the command's own (``wait4``).

Usage: python bench/rebuild_throughput.py [--events N] [--workload realistic|supersession]
           [--backend sqlite|postgresql|both] [--verify-rebuild] [--fresh] [--db URL]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
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
TARGET_PG_EVENTS_PER_S = 25_000
TARGET_KB_PER_EVENT = 3.0
CACHE = ROOT / "bench" / ".data"


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


WORKLOADS = ("realistic", "supersession")
CASES_PER_INGEST = (1, 30)  # a Harbor job or BenchFlow run files 1-30 tasks as cases
REINGEST_EVERY = 10  # about one ingest in ten is a re-ingest of an earlier one
ARCHIVE_EVERY = 150  # one ingest in 150 is followed by an archive of an earlier ingest ...
RECENT_INGESTS = 2000  # the jobs a re-ingest or an archive picks from
RESTORE_EVERY = 3  # ... and one archive in three is later restored


def event_stream(total: int, workload: str = "realistic", seed: int = 7) -> Iterator[Any]:
    """``total`` NewEvents of ``workload``, deterministic for a seed."""
    stream = realistic_stream if workload == "realistic" else supersession_stream
    for count, event in enumerate(stream(random.Random(seed), fixture_rows())):
        if count >= total:
            return
        yield event


def realistic_stream(rng: random.Random, templates: list[dict[str, Any]]) -> Iterator[Any]:
    """What ``benchmark run ... --update-run-ledger --execute`` appends, ingest after ingest:
    per case a ``run_built``, a ``run_appended`` and a ``ledger_upserted`` of a new run, then
    one ``export_written`` for the files rendered. About one ingest in ten re-ingests an
    earlier job (the same run ids again: its upserts replace rows); now and then an earlier
    ingest's runs are archived, and some archives are restored."""
    from benchledger.ledger.store.events import LEDGER_RUNS_ARCHIVED, LEDGER_RUNS_RESTORED, NewEvent

    ingests: list[tuple[str, str, list[dict[str, Any]]]] = []  # (goal, ledger, rows)
    archived: list[tuple[str, list[dict[str, Any]]]] = []
    seen_ledgers: set[str] = set()
    i = 0
    run_serial = 0
    while True:
        i += 1
        stamp = _stamp(i)
        if ingests and rng.randrange(REINGEST_EVERY) == 0:
            goal, ledger, old_rows = rng.choice(ingests)
            rows = [dict(row, recorded_at=stamp) for row in old_rows]
        else:
            goal = GOALS[rng.randrange(len(GOALS))]
            ledger = LEDGERS[rng.randrange(len(LEDGERS))]
            rows = []
            for _ in range(rng.randint(*CASES_PER_INGEST)):
                run_serial += 1
                rows.append(_new_row(rng, templates, run_serial, stamp))
            ingests.append((goal, ledger, rows))
            if len(ingests) > RECENT_INGESTS:  # bounded memory: re-ingest and archive recent jobs
                del ingests[: len(ingests) - RECENT_INGESTS]
        yield from _ingest_events(rng, goal, ledger, rows, stamp, i, seen_ledgers)
        if len(ingests) > 1 and i % ARCHIVE_EVERY == 0:
            _goal, old_ledger, old_rows = ingests[rng.randrange(len(ingests) - 1)]
            gone = [dict(row, archive_state="archived") for row in old_rows]
            archived = [*archived[-RECENT_INGESTS:], (old_ledger, old_rows)]
            yield NewEvent(
                f"ledger/{old_ledger}",
                LEDGER_RUNS_ARCHIVED,
                _maintenance(old_ledger, gone, stamp, f"batch-{i:08d}"),
            )
        if archived and i % (ARCHIVE_EVERY * RESTORE_EVERY) == ARCHIVE_EVERY // 2:
            old_ledger, old_rows = archived.pop(rng.randrange(len(archived)))
            yield NewEvent(
                f"ledger/{old_ledger}",
                LEDGER_RUNS_RESTORED,
                _maintenance(old_ledger, old_rows, stamp, None),
            )


def _new_row(
    rng: random.Random, templates: list[dict[str, Any]], serial: int, stamp: str
) -> dict[str, Any]:
    row = copy.deepcopy(templates[serial % len(templates)])
    row["run_id"] = f"{row['run_id']}-{serial:07d}"
    row["case_id"] = f"{row.get('case_id') or 'case'}-{serial % 2000:04d}"
    row["recorded_at"] = stamp
    row["official_score"] = round(rng.random(), 4)
    row.pop("archive_state", None)
    return row


def _ingest_events(
    rng: random.Random,
    goal: str,
    ledger: str,
    rows: list[dict[str, Any]],
    stamp: str,
    ingest: int,
    seen_ledgers: set[str],
) -> Iterator[Any]:
    from benchledger.ledger.store.events import (
        EXPORT_WRITTEN,
        LEDGER_UPSERTED,
        RUN_APPENDED,
        RUN_BUILT,
        NewEvent,
    )

    stream = f"goal/{goal}"
    upserts = []
    for index, row in enumerate(rows):
        stem = f"{stamp[:10].replace('-', '')}T000000Z-{ingest:07d}-{index:02d}"
        appended = _run_appended_payload(rng, row, goal, stem, stamp)
        yield NewEvent(stream, RUN_BUILT, _run_built(row, goal, appended["run_key"]))
        yield NewEvent(stream, RUN_APPENDED, appended)
        payload = _upsert_payload(ledger, row, stamp)
        if ledger not in seen_ledgers:
            seen_ledgers.add(ledger)
            payload["update_policy"] = {"mode": "replace_by_run_id", "keep_archived": True}
        upserts.append(NewEvent(f"ledger/{ledger}", LEDGER_UPSERTED, payload))
    yield from upserts
    yield NewEvent("exports", EXPORT_WRITTEN, _exports(rng, goal, ledger, len(rows), ingest))


def _run_built(row: dict[str, Any], goal: str, run_key: str) -> dict[str, Any]:
    record = {
        "run_key": run_key,
        "benchmark_id": row.get("benchmark_id"),
        "case_id": row.get("case_id"),
        "arm_id": row.get("arm_id"),
        "agent_model": row.get("agent_model"),
        "status": row.get("status"),
        "official_score": row.get("official_score"),
        "round_rewards": row.get("round_rewards") or [],
        "artifact_refs": row.get("artifact_refs") or [],
        "notes": row.get("notes"),
    }
    return {
        "goal_id": goal,
        "run_key": run_key,
        "record": record,
        "provenance": {"runner": "harbor", "runner_version": "0.25.0", "source": "result.json"},
        "content_digest": f"sha256:{abs(hash(run_key)) % 16**16:016x}",
        "warnings": [],
    }


def _run_appended_payload(
    rng: random.Random, row: dict[str, Any], goal: str, stem: str, stamp: str
) -> dict[str, Any]:
    run_key = f"{row.get('benchmark_id')}::{row.get('case_id')}::{row['run_id']}"
    record = {
        "schema_version": "benchmark_run_v0",
        "goal_id": goal,
        "benchmark_id": row.get("benchmark_id"),
        "case_id": row.get("case_id"),
        "arm_id": row.get("arm_id"),
        "agent_model": row.get("agent_model"),
        "status": row.get("status"),
        "official_score": row.get("official_score"),
        "round_rewards": row.get("round_rewards") or [],
        "classification": "benchmark_result",
        "recommended_action": "continue",
        "generated_at": stamp,
    }
    rollout = {
        "event_id": f"rollout-{stem}",
        "event_kind": "benchmark_run",
        "status": row.get("status") or "completed",
        "goal_id": goal,
        "run_id": row["run_id"],
        "history_stem": stem,
        "recorded_at": stamp,
    }
    return {
        "goal_id": goal,
        "stem": stem,
        "run_key": run_key,
        "run_id": row["run_id"],
        "generated_at": stamp,
        "record": record,
        "rollout_event": rollout,
    }


def _upsert_payload(ledger: str, row: dict[str, Any], stamp: str) -> dict[str, Any]:
    return {
        "ledger_id": ledger,
        "ledger_path": f"{ledger}/benchmark-run-ledger.json",
        "row": row,
        "merged_into": "inserted",
        "touched_run_id": row["run_id"],
        "rules_version": 1,
        "updated_at": stamp,
    }


def _maintenance(
    ledger: str, rows: list[dict[str, Any]], stamp: str, batch: str | None
) -> dict[str, Any]:
    return {
        "ledger_id": ledger,
        "ledger_path": f"{ledger}/benchmark-run-ledger.json",
        "rows": rows,
        "benchmark_id": rows[0].get("benchmark_id") if rows else None,
        "reason": "bench",
        "archive_batch_id": batch,
        "run_ids": [row["run_id"] for row in rows],
        "updated_at": stamp,
        "chunk": 1,
        "chunks": 1,
    }


def _exports(rng: random.Random, goal: str, ledger: str, cases: int, ingest: int) -> dict[str, Any]:
    paths = [
        (f"{ledger}/benchmark-run-ledger.json", "ledger_json"),
        (f"{ledger}/benchmark-run-ledger.md", "ledger_markdown"),
        (f".loopx/goals/{goal}/rollout-events.jsonl", "rollout_log"),
    ] + [
        (f".loopx/goals/{goal}/runs/{ingest:07d}-{n:02d}.json", "goal_run_json")
        for n in range(cases)
    ]
    return {
        "files": [
            {"path": path, "kind": kind, "sha256": f"{rng.getrandbits(256):064x}"}
            for path, kind in paths
        ]
    }


def supersession_stream(rng: random.Random, templates: list[dict[str, Any]]) -> Iterator[Any]:
    """The earlier bench's stream: ``ledger_upserted`` events rewriting only 30,000 distinct
    runs over and over (at 1M events 97 % of upserts are superseded) plus one ``run_appended``
    in ten. Kept as a named workload: it is the sparse replay's best case, not typical use."""
    from benchledger.ledger.store.events import LEDGER_UPSERTED, RUN_APPENDED, NewEvent

    seen_ledgers: set[str] = set()
    i = -1
    while True:
        i += 1
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


def fill(url: str, total: int, workload: str) -> float:
    """Append ``total`` events in large transactions with the listener off; seconds taken."""
    from benchledger.services.store_session import open_store

    opened = open_store(url)
    opened.store.listener = None
    metadata = {"actor": "bench", "host": "bench", "tool": "benchledger", "argv": ["bench"]}
    start = time.perf_counter()
    batch: list[Any] = []
    done = 0
    for event in event_stream(total, workload):
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


# -- measured commands ------------------------------------------------------------------------

# A small launcher: runs the command and reports its own rusage via wait4, so the peak RSS and
# CPU are the command's alone (Linux keeps the larger peak across exec, so a command started
# straight from this large process would report ours).
LAUNCHER = """
import json, os, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.Popen(sys.argv[2:], stdout=open(sys.argv[1], "wb"), stderr=subprocess.STDOUT)
_, status, usage = os.wait4(proc.pid, 0)
print(json.dumps({"code": os.waitstatus_to_exitcode(status),
                  "seconds": time.perf_counter() - start,
                  "cpu_s": usage.ru_utime + usage.ru_stime,
                  "peak_mb": usage.ru_maxrss / 1024}))
"""


def benchledger_exe() -> str:
    found = Path(sys.executable).with_name("benchledger")
    return str(found) if found.exists() else (shutil.which("benchledger") or "benchledger")


def measure(url: str, *command: str) -> dict[str, Any]:
    """Time ``benchledger --db URL --format json COMMAND`` in a fresh process."""
    argv = [benchledger_exe(), "--db", url, "--format", "json", *command]
    with tempfile.TemporaryDirectory(prefix="benchledger-out-") as tmp:
        out = Path(tmp) / "out.json"
        proc = subprocess.run(
            [sys.executable, "-c", LAUNCHER, str(out), *argv],
            check=True,
            capture_output=True,
            text=True,
        )
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        text = out.read_text()
    try:
        result["report"] = json.loads(text)
    except ValueError:
        result["report"] = {"ok": False, "output": text[-400:]}
    return result


# -- stores -------------------------------------------------------------------------------------


def cached_sqlite(workload: str, total: int, fresh: bool) -> str:
    """A SQLite store of ``total`` ``workload`` events kept under bench/.data (git-ignored)
    between runs, so a 1M-event store is generated once."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"rebuild-{workload}-{total}.db"
    if fresh:
        for stale in CACHE.glob(f"{path.name}*"):
            stale.unlink()
    return f"sqlite:///{path}"


def cached_pg_schema(workload: str, total: int, fresh: bool) -> str:
    """A PostgreSQL schema kept between runs likewise (``--fresh`` drops it first)."""
    schema = f"bench_rebuild_{workload}_{total}"
    if fresh:
        _pg(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    _pg(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    return f"{PG_BASE}?options=-csearch_path%3D{schema}"


def store_mb(url: str) -> float:
    """Bytes on disk of everything the store holds: events, read models, caches, indexes
    (SQLite: the database file and its WAL; PostgreSQL: every relation of the schema)."""
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        files = [path, path.with_name(path.name + "-wal")]
        return sum(f.stat().st_size for f in files if f.exists()) / 1e6
    schema = url.rsplit("%3D", 1)[-1] if "%3D" in url else "public"
    return _pg_mb(schema)


def backend_of(url: str) -> str:
    return "sqlite" if url.startswith("sqlite") else "postgresql"


def upgrade_kept_store(url: str) -> None:
    """A store kept from an earlier run may predate the schema head: upgrade it first (a new
    one is created at the head by the first command)."""
    subprocess.run(
        [benchledger_exe(), "--db", url, "db", "upgrade"], check=True, capture_output=True
    )


def head_of(url: str) -> int:
    from benchledger.services.store_session import open_store

    with open_store(url) as opened:
        return opened.store.head_position()


def run_store(
    url: str, total: int, workload: str, verify_rebuild: bool, fill_only: bool = False
) -> None:
    """Fill ``url`` if it is empty, then time the CLI's ``rebuild`` (and ``rebuild
    --verify``, ``verify``) on it."""
    backend = backend_of(url)
    label = f"[{backend}, {workload}]"
    upgrade_kept_store(url)
    head = head_of(url)
    if head == 0:
        print(f"{label} filling {total:,} events ...", flush=True)
        fill_s = fill(url, total, workload)
        print(f"{label} filled in {fill_s:.1f} s ({total / fill_s:,.0f} events/s)", flush=True)
        head = head_of(url)
    else:
        print(f"{label} store kept from an earlier run: {head:,} events", flush=True)
    if fill_only:
        return
    print(f"{label} load average {_load()}", flush=True)
    rebuild = measure(url, "rebuild")
    replayed = (rebuild["report"].get("rebuild") or {}).get("events_replayed", 0)
    events = head  # every event in the store counts, handled by a projection or not
    rate = events / rebuild["seconds"]
    target = TARGET_EVENTS_PER_S if backend == "sqlite" else TARGET_PG_EVENTS_PER_S
    ok = rebuild["code"] == 0 and rate >= target
    if backend == "sqlite":
        ok = ok and rebuild["peak_mb"] < TARGET_PEAK_MB
    print(
        f"{label} rebuild: {events:,} events ({replayed:,} of projected types) in "
        f"{rebuild['seconds']:.2f} s = {rate:,.0f} "
        f"events/s, CPU {rebuild['cpu_s']:.2f} s (= {events / rebuild['cpu_s']:,.0f} events per "
        f"CPU-second), peak RSS {rebuild['peak_mb']:.0f} MB "
        f"[target >= {target:,}/s{', < 500 MB' if backend == 'sqlite' else ''}: "
        f"{'MET' if ok else 'MISSED'}]",
        flush=True,
    )
    size = store_mb(url)
    per_event_kb = size * 1e3 / max(head, 1)
    size_ok = (
        ""
        if backend != "sqlite"
        else (
            f" [target <= {TARGET_KB_PER_EVENT} KB: "
            f"{'MET' if per_event_kb <= TARGET_KB_PER_EVENT else 'MISSED'}]"
        )
    )
    print(
        f"{label} store size {size:,.0f} MB = {per_event_kb:.2f} KB per event "
        f"(events, read models, caches){size_ok}",
        flush=True,
    )
    if verify_rebuild:
        check = measure(url, "rebuild", "--verify")
        report = check["report"]
        print(
            f"{label} rebuild --verify: ok={report.get('ok')} in {check['seconds']:.2f} s, "
            f"CPU {check['cpu_s']:.2f} s, peak RSS {check['peak_mb']:.0f} MB",
            flush=True,
        )
    verify = measure(url, "verify")
    print(
        f"{label} verify:  {head:,} events in {verify['seconds']:.2f} s = "
        f"{head / verify['seconds']:,.0f} events/s, CPU {verify['cpu_s']:.2f} s, "
        f"peak RSS {verify['peak_mb']:.0f} MB, ok={verify['report'].get('ok')}",
        flush=True,
    )


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


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
    parser.add_argument("--workload", choices=WORKLOADS, default="realistic")
    parser.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument(
        "--verify-rebuild",
        action="store_true",
        help="also run rebuild --verify (replay into scratch, compare)",
    )
    parser.add_argument("--fresh", action="store_true", help="regenerate the cached store")
    parser.add_argument("--fill-only", action="store_true", help="fill the store, measure nothing")
    parser.add_argument(
        "--db", help="measure this store (a URL, or a SQLite file's path) instead; filled if empty"
    )
    args = parser.parse_args()
    if args.db:
        url = args.db if "://" in args.db else f"sqlite:///{Path(args.db).resolve()}"
        run_store(url, args.events, args.workload, args.verify_rebuild, args.fill_only)
        return
    backends = ("sqlite", "postgresql") if args.backend == "both" else (args.backend,)
    for backend in backends:
        if backend == "sqlite":
            url = cached_sqlite(args.workload, args.events, args.fresh)
        else:
            url = cached_pg_schema(args.workload, args.events, args.fresh)
        run_store(url, args.events, args.workload, args.verify_rebuild, args.fill_only)


if __name__ == "__main__":
    main()
