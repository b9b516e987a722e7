#!/usr/bin/env python3
"""``--as-of`` against a full ``rebuild``, with and without a snapshot, on a SQLite store.

Fills a fresh store with N events from ``rebuild_throughput.py``'s generator (a busy team's
ledger), builds its read models with ``benchledger rebuild``, then runs, each as a new
``benchledger`` process as a user would:

* ``rebuild``: the reference time;
* ``sql --as-of P`` and ``run-ledger-aggregate --as-of P`` at a recent position P, with no
  snapshot (a replay of P events into a scratch store): target, no slower than ``rebuild``;
* the same after ``snapshot create --at S`` (S a little before P: only P - S events replayed):
  target, at least 10x faster than ``rebuild``.

Usage: python bench/as_of.py [--events N] [--tail T] [--runs R] [--reuse]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent))

from rebuild_throughput import CACHE, LEDGERS, fill  # noqa: E402

BENCHLEDGER = [sys.executable, "-m", "benchledger.commands.cli"]
TARGET_SPEEDUP = 10.0


def timed(args: list[str], env: dict[str, str]) -> tuple[float, dict]:
    """Seconds one ``benchledger`` process took, and its JSON output."""
    start = time.perf_counter()
    proc = subprocess.run(
        [*BENCHLEDGER, *args, "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT.parent,
    )
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"benchledger {' '.join(args)} failed: {proc.stderr.strip()}")
    return seconds, json.loads(proc.stdout)


def median_time(args: list[str], env: dict[str, str], runs: int) -> tuple[float, dict]:
    results = [timed(args, env) for _ in range(runs)]
    return statistics.median(r[0] for r in results), results[-1][1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--tail", type=int, default=5_000,
                        help="events between the snapshot and the as-of position")  # fmt: skip
    parser.add_argument("--runs", type=int, default=1, help="runs per measurement (median)")
    parser.add_argument("--reuse", action="store_true",
                        help="copy the store rebuild_throughput.py keeps in bench/.data "
                             "(--fill-only makes it) instead of filling a new one")  # fmt: skip
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="benchledger-as-of-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'ledger.db'}"
        kept = CACHE / f"rebuild-realistic-{args.events}.db"
        if args.reuse and kept.is_file():
            print(f"copying {kept.name} ...", flush=True)
            _copy_store(kept, Path(tmp) / "ledger.db")
        else:
            print(f"filling {args.events:,} events ...", flush=True)
            fill(url, args.events, "realistic")
        env = {**os.environ, "BENCHLEDGER_SNAPSHOT_DIR": str(Path(tmp) / "snapshots")}
        base = ["--db", url]
        as_of = max(1, args.events - args.tail)
        snap_at = max(1, as_of - args.tail)
        queries = {
            "sql": ["sql", "SELECT count(*), sum(archived) FROM ledger_runs_v"],
            "aggregate": [
                "benchmark",
                "run-ledger-aggregate",
                "--ledger-id",
                LEDGERS[0],
                "--benchmark-id",
                "skillsbench@1.1",
            ],
        }
        rebuild_s, report = median_time([*base, "rebuild"], env, args.runs)
        print(f"rebuild: {report['rebuild']['events_replayed']:,} events in {rebuild_s:.2f} s",
              flush=True)  # fmt: skip
        full = {k: median_time([*base, *q, "--as-of", str(as_of)], env, args.runs)
                for k, q in queries.items()}  # fmt: skip
        _, made = timed([*base, "snapshot", "create", "--at", str(snap_at)], env)
        print(f"snapshot at position {made['snapshot']['position']:,} created", flush=True)
        fast = {k: median_time([*base, *q, "--as-of", str(as_of)], env, args.runs)
                for k, q in queries.items()}  # fmt: skip
        for name in queries:
            full_s, full_out = full[name]
            fast_s, fast_out = fast[name]
            assert _same(full_out, fast_out), f"{name}: snapshot result differs from replay"
            speedup = rebuild_s / fast_s
            print(
                f"{name} --as-of {as_of:,}: from position 1 {full_s:.2f} s "
                f"({full_s / rebuild_s:.2f}x rebuild: "
                f"{'MET' if full_s <= rebuild_s else 'MISSED'} <= 1x); "
                f"from the snapshot ({fast_out['as_of']['events_replayed']:,} events) "
                f"{fast_s:.2f} s = {speedup:.1f}x faster than rebuild "
                f"[target >= {TARGET_SPEEDUP:.0f}x: "
                f"{'MET' if speedup >= TARGET_SPEEDUP else 'MISSED'}]",
                flush=True,
            )


def _copy_store(source: Path, target: Path) -> None:
    """The kept store, its write-ahead log folded in first, and its head witness."""
    import shutil
    import sqlite3

    with sqlite3.connect(source) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    shutil.copyfile(source, target)
    witness = source.with_name(source.name + ".head")
    if witness.is_file():
        shutil.copyfile(witness, target.with_name(target.name + ".head"))


def _same(a: dict, b: dict) -> bool:
    """The two outputs but for how their scratch store was built."""
    strip = ("as_of",)
    return {k: v for k, v in a.items() if k not in strip} == {
        k: v for k, v in b.items() if k not in strip
    }


if __name__ == "__main__":
    main()
