#!/usr/bin/env python3
"""Concurrent append throughput: 8 writer processes append small commands to one store.

Each command is one transaction through ``EventStore.transaction`` with the projection engine
as listener (what a real command pays: events, hash chain, read models, one commit). Two
phases per backend: commands of 1 event, then commands of 10 events. Afterwards it checks that
nothing was lost or reordered: the event count, every writer's stream versions 1..n in commit
order, the read model row count, and ``verify`` of the hash chain.

Usage: python bench/append_throughput.py [--writers 8] [--commands N]
                                         [--backend sqlite|postgresql|both]
(--commands is per writer and phase.)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _fixtures import LOOPX_LEDGER  # noqa: E402

PG_BASE = os.environ.get("BENCHLEDGER_TEST_PG", "postgresql+psycopg://127.0.0.1:5432/test")
PHASES = (1, 10)  # events per command


def template_row() -> dict[str, Any]:
    doc = json.loads(LOOPX_LEDGER.read_text())
    benchmark = next(iter(doc["benchmarks"].values()))
    return next(iter(benchmark["cases"].values()))["runs"][0]


# -- worker process ---------------------------------------------------------------------------


def worker(url: str, writer: str, commands: int, per_command: int, start_at: float) -> None:
    """Append ``commands`` commands of ``per_command`` events each; print timings as JSON."""
    from benchledger.ledger.store.events import LEDGER_UPSERTED, NewEvent
    from benchledger.services.store_session import open_store

    opened = open_store(url, auto_upgrade=False)
    row = template_row()
    metadata = {"actor": "bench", "host": writer, "tool": "benchledger", "argv": ["append"]}
    ledger = f"bench-{writer}-{per_command}"
    while time.time() < start_at:
        time.sleep(0.001)
    started = time.perf_counter()
    for command in range(commands):
        events = []
        for index in range(per_command):
            run_id = f"{writer}-{per_command}-{command}-{index}"
            payload = {
                "ledger_id": ledger,
                "ledger_path": f"{ledger}.json",
                "row": {**row, "run_id": run_id},
                "updated_at": "2026-06-01T00:00:00Z",
            }
            events.append(NewEvent(f"ledger/{ledger}", LEDGER_UPSERTED, payload))
        with opened.store.transaction(metadata) as uow:
            uow.append(events, idempotency_key=f"{ledger}-{command}")
    elapsed = time.perf_counter() - started
    opened.close()
    print(json.dumps({"writer": writer, "seconds": elapsed}))


# -- orchestration ------------------------------------------------------------------------------


def run_phase(url: str, writers: int, commands: int, per_command: int) -> dict[str, Any]:
    start_at = time.time() + 2.0  # every writer imported and connected before the clock starts
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--worker",
                url,
                f"w{i}",
                str(commands),
                str(per_command),
                repr(start_at),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(writers)
    ]
    outputs = [p.communicate()[0] for p in procs]
    wall = time.time() - start_at
    if any(p.returncode for p in procs):
        raise SystemExit(f"a writer failed: {[p.returncode for p in procs]}")
    slowest = max(json.loads(o.strip().splitlines()[-1])["seconds"] for o in outputs)
    return {"wall": min(wall, slowest + 0.05), "slowest": slowest}


def check(url: str, writers: int, commands: int) -> dict[str, Any]:
    """Nothing lost, nothing reordered: counts, per-stream versions, read model, hash chain."""
    from benchledger.services.store_session import open_store

    opened = open_store(url)
    expected = writers * commands * sum(PHASES)
    problems = []
    with opened.store.database.connect() as conn:
        count = conn.execute("SELECT count(*) FROM events").scalar()
        if count != expected:
            problems.append(f"{count} events stored, {expected} appended")
        streams = conn.execute(
            "SELECT stream, count(*), min(stream_version), max(stream_version) FROM events"
            " GROUP BY stream"
        ).all()
        for stream, n, low, high in streams:
            if (low, high) != (1, n):
                problems.append(f"{stream}: versions {low}..{high} for {n} events")
        # within a stream, versions must follow positions (commit order)
        rows = conn.execute("SELECT stream, stream_version FROM events ORDER BY position")
        last: dict[str, int] = {}
        for stream, version in rows:
            if version != last.get(stream, 0) + 1:
                problems.append(f"{stream}: version {version} after {last.get(stream, 0)}")
                break
            last[stream] = version
        read_model = conn.execute("SELECT count(*) FROM rm_ledger_rows").scalar()
        if read_model != expected:
            problems.append(f"{read_model} ledger rows in the read model, {expected} expected")
    verify = opened.store.verify()
    if not verify.ok:
        problems.append(f"verify failed: {verify.reason}")
    opened.close()
    return {"events": count, "verify_ok": verify.ok, "problems": problems}


def run_backend(backend: str, writers: int, commands: int) -> None:
    if backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix="benchledger-append-") as tmp:
            _run(backend, f"sqlite:///{Path(tmp) / 'ledger.db'}", writers, commands)
        return
    import psycopg

    schema = f"bench_{uuid.uuid4().hex[:10]}"
    base = PG_BASE.replace("postgresql+psycopg", "postgresql")
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        _run(backend, f"{PG_BASE}?options=-csearch_path%3D{schema}", writers, commands)
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def _run(backend: str, url: str, writers: int, commands: int) -> None:
    from benchledger.services.store_session import open_store

    open_store(url).close()  # create the schema once, before the writers race
    for per_command in PHASES:
        result = run_phase(url, writers, commands, per_command)
        total = writers * commands
        print(
            f"[{backend}] {writers} writers x {commands} commands of {per_command} event(s): "
            f"{total / result['wall']:,.0f} commands/s, "
            f"{total * per_command / result['wall']:,.0f} events/s "
            f"({result['wall']:.2f} s)",
            flush=True,
        )
    outcome = check(url, writers, commands)
    status = (
        "OK" if not outcome["problems"] else "LOST/REORDERED: " + "; ".join(outcome["problems"][:5])
    )
    print(
        f"[{backend}] check: {outcome['events']:,} events, verify ok={outcome['verify_ok']}, "
        f"{status}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--commands", type=int, default=250, help="per writer and phase")
    parser.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        url, writer, commands, per_command, start_at = args.worker
        worker(url, writer, int(commands), int(per_command), float(start_at))
        return
    backends = ("sqlite", "postgresql") if args.backend == "both" else (args.backend,)
    for backend in backends:
        run_backend(backend, args.writers, args.commands)


if __name__ == "__main__":
    main()
