#!/usr/bin/env python3
"""How ledger commands scale with ledger size: 100, 1,000, 10,000 and 30,000 rows.

For each size, a fresh project store is imported from the generated ledger
(``import loopx-ledger --execute``) and the goal ``g`` history is seeded (neither timed); then,
each in a fresh copy of that project and as a subprocess of the installed ``benchledger``:

* ``run-ledger-upsert --execute`` of a new compact run, with rendering and with ``--no-render``;
* ``run-ledger-aggregate --benchmark-id terminal-bench@2.0``;
* ``run-ledger-check --goal-id g``.

Wall time (median of ``--runs``) and peak RSS of the process are printed. With ``--with-loopx``
the same operations run through loopx 0.4.8 (scratch venv ``bench/.venv-loopx``, created when
missing) on the same ledger files, and the ratios measured in this run are printed with the
targets: no-render upsert at 30,000 <= 1.5x the one at 100; rendered upsert >= 20x faster than
loopx at 30,000 with less memory; aggregate and check >= 10x faster than loopx at 30,000.

Data comes from ``bench/make_ledger.py``; run by loopx's Python (``--with-loopx``), it
normalises the ledgers with loopx's own code.

Usage: python bench/ledger_scaling.py [--sizes 100,1000,10000,30000] [--runs 3] [--with-loopx]
                                      [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _loopx import Measured, benchledger_exe, ensure_loopx, measure  # noqa: E402
from _store import fresh_project, medians, run_ok  # noqa: E402

TB = "terminal-bench@2.0"
GOAL = "g"
LEDGER = "benchmark-run-ledger.json"


# ------------------------------------------------------------------------------ data


def generate(data: Path, sizes: list[int], python: str) -> None:
    """Write the ledgers, inputs and history (``bench/make_ledger.py``) with ``python``."""
    generator = Path(__file__).resolve().parent / "make_ledger.py"
    sizes_arg = ",".join(map(str, sizes))
    subprocess.run([python, str(generator), "--out", str(data), "--sizes", sizes_arg], check=True)


def seed_history(project: Path, index: Path) -> None:
    """Append the goal history as ``run_appended`` events (setup for run-ledger-check).

    Runs in this interpreter against the project's store; equivalent to what ``benchmark run``
    appends for each record, without a source to ingest (the records are already compact).
    """
    import os

    os.chdir(project)
    from benchledger.commands.runtime import command_metadata
    from benchledger.ledger.store.events import RUN_APPENDED, NewEvent
    from benchledger.services.store_session import open_store

    events = []
    for line in index.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        stem = Path(row.pop("json_path")).stem
        row.pop("markdown_path", None)
        payload = {
            "goal_id": GOAL,
            "stem": stem,
            "run_key": None,
            "generated_at": row["generated_at"],
            "record": row,
        }
        events.append(NewEvent(f"goal/{GOAL}", RUN_APPENDED, payload))
    with open_store(None) as opened:
        opened.store.append(events, metadata=command_metadata("bench"))


def prepare_base(work: Path, data: Path, n: int, bl: str) -> Path:
    project = fresh_project(work / f"base-{n}")
    shutil.copyfile(data / "ledger" / f"ledger-{n}.json", project / LEDGER)
    run_ok([bl, "import", "loopx-ledger", LEDGER, "--execute"], project)
    index = data / "history" / "runtime" / "goals" / GOAL / "runs" / "index.jsonl"
    run_ok([sys.executable, __file__, "--seed-history", str(project), str(index)], project)
    return project


# ------------------------------------------------------------------------------ measuring


def settle() -> None:
    """Write the fresh copy back to disk before the timed run (not timed), for both tools.

    Otherwise the first fsync of the timed process (benchledger's file fsync and SQLite's
    checkpoint; loopx does not fsync) also pays for writing back the ~250 MB store the copy
    just left dirty in the page cache, which a user's store sitting on disk never has.
    """
    os.sync()


def in_copy(base: Path, work: Path, argv: list[str]) -> Measured:
    """Run a writing command in a fresh copy of the base project (the copy is not timed)."""
    scratch = Path(tempfile.mkdtemp(dir=work))
    project = scratch / "p"
    shutil.copytree(base, project)
    settle()
    try:
        return measure(argv, cwd=project)
    finally:
        shutil.rmtree(scratch)


def ours(base: Path, work: Path, data: Path, bl: str, runs: int) -> dict:
    new_run = str(data / "inputs" / "new-run.compact.json")
    upsert = [bl, "benchmark", "run-ledger-upsert", "--benchmark-run-json", new_run, "--execute",
              "--format", "json"]  # fmt: skip
    out = {
        "upsert": medians(runs, lambda: in_copy(base, work, upsert)),
        "upsert_no_render": medians(runs, lambda: in_copy(base, work, [*upsert, "--no-render"])),
        "aggregate": medians(runs, lambda: measure(
            [bl, "benchmark", "run-ledger-aggregate", "--benchmark-id", TB, "--format", "json"],
            cwd=base)),
        "check": medians(runs, lambda: measure(
            [bl, "benchmark", "run-ledger-check", "--goal-id", GOAL, "--format", "json"],
            cwd=base)),
    }  # fmt: skip
    upserted = json.loads(out["upsert"]["stdout"])["benchmark_run_ledger"]
    assert upserted["updated"] and upserted["merged_into"] == "appended", upserted
    out["matched"] = _matched(out["check"]["stdout"])
    return out


def theirs(loopx, data: Path, work: Path, n: int, runs: int) -> dict:
    ledger = data / "ledger" / f"ledger-{n}.json"
    new_run = str(data / "inputs" / "new-run.compact.json")
    runtime = str(data / "history" / "runtime")

    def upsert() -> Measured:
        scratch = Path(tempfile.mkdtemp(dir=work))
        shutil.copyfile(ledger, scratch / LEDGER)
        if ledger.with_suffix(".md").exists():
            shutil.copyfile(ledger.with_suffix(".md"), scratch / "benchmark-run-ledger.md")
        settle()
        try:
            return measure(loopx.argv("benchmark", "run-ledger-upsert", "--benchmark-run-json",
                                      new_run, "--run-ledger-path", LEDGER, "--execute"),
                           cwd=scratch)  # fmt: skip
        finally:
            shutil.rmtree(scratch)

    out = {
        "upsert": medians(runs, upsert),
        "aggregate": medians(runs, lambda: measure(loopx.argv(
            "--format", "json", "benchmark", "run-ledger-aggregate", "--run-ledger-path",
            str(ledger), "--benchmark-id", TB), cwd=work)),
        "check": medians(runs, lambda: measure(loopx.argv(
            "--runtime-root", runtime, "--format", "json", "benchmark", "run-ledger-check",
            "--goal-id", GOAL, "--run-ledger-path", str(ledger)), cwd=work)),
    }  # fmt: skip
    out["matched"] = _matched(out["check"]["stdout"])
    return out


def _matched(stdout: bytes) -> int | None:
    try:
        drift = json.loads(stdout)["benchmark_run_ledger_drift"]
    except (ValueError, KeyError, TypeError):
        return None
    return drift.get("matched_history_run_count")


# ------------------------------------------------------------------------------ report


def cell(m: dict) -> str:
    return f"{m['seconds']:6.2f}s {m['cpu']:5.2f}c {m['rss_mib']:4.0f}M"


def report(sizes: list[int], results: dict, loopx_results: dict) -> list[str]:
    rule = "-------+" + "+".join(["-" * 22] * 4)
    lines = [
        "each cell: wall seconds, CPU seconds (user + system), peak RSS MiB (medians)",
        "rows   | upsert+render        | upsert no-render     | aggregate            | check",
        rule,
    ]
    for n in sizes:
        r = results[n]
        lines.append(f"{n:6d} | {cell(r['upsert'])} | {cell(r['upsert_no_render'])} | "
                     f"{cell(r['aggregate'])} | {cell(r['check'])}")  # fmt: skip
    if loopx_results:
        lines += [
            "",
            "loopx 0.4.8 on the same files, and speed-up (loopx time / benchledger time):",
            "rows   | loopx upsert         | loopx aggregate      | loopx check          | "
            "upsert    agg  check",
            rule,
        ]  # fmt: skip
        for n in sizes:
            lx, r = loopx_results[n], results[n]
            keys = ("upsert", "aggregate", "check")
            ratios = " ".join(f"{lx[k]['seconds'] / r[k]['seconds']:7.1f}" for k in keys)
            cells = " | ".join(cell(lx[k]) for k in keys)
            lines.append(f"{n:6d} | {cells} | {ratios}")
        matched = ", ".join(
            f"{n}: {results[n]['matched']}/{loopx_results[n]['matched']}" for n in sizes
        )
        lines.append(f"check matched history runs (benchledger/loopx): {matched}")
    lines += ["", *targets(sizes, results, loopx_results)]
    return lines


def targets(sizes: list[int], results: dict, loopx_results: dict) -> list[str]:
    out = []
    small, big = min(sizes), max(sizes)
    flat = (
        results[big]["upsert_no_render"]["seconds"] / results[small]["upsert_no_render"]["seconds"]
    )
    out.append(f"[{'PASS' if flat <= 1.5 else 'FAIL'}] no-render upsert at {big} = {flat:.2f}x "
               f"the one at {small} (target <= 1.5x)")  # fmt: skip
    if big in loopx_results:
        r, lx = results[big], loopx_results[big]
        up = lx["upsert"]["seconds"] / r["upsert"]["seconds"]
        mem = r["upsert"]["rss_mib"] < lx["upsert"]["rss_mib"]
        ours_mib, theirs_mib = r["upsert"]["rss_mib"], lx["upsert"]["rss_mib"]
        out.append(f"[{'PASS' if up >= 20 and mem else 'FAIL'}] rendered upsert at {big}: "
                   f"{up:.1f}x faster than loopx (target >= 20x), peak memory "
                   f"{ours_mib:.0f} MiB vs {theirs_mib:.0f} MiB (target: less)")  # fmt: skip
        for key in ("aggregate", "check"):
            ratio = lx[key]["seconds"] / r[key]["seconds"]
            out.append(f"[{'PASS' if ratio >= 10 else 'FAIL'}] {key} at {big}: {ratio:.1f}x "
                       "faster than loopx (target >= 10x)")  # fmt: skip
    return out


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--seed-history":
        seed_history(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000,10000,30000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--with-loopx", action="store_true")
    parser.add_argument("--work", type=Path, default=None, help="keep the data here")
    args = parser.parse_args()
    sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    bl = benchledger_exe()
    loopx = ensure_loopx() if args.with_loopx else None
    work = args.work or Path(tempfile.mkdtemp(prefix="ledger-scaling-"))
    work.mkdir(parents=True, exist_ok=True)
    data = work / "data"
    try:
        generate(data, sizes, str(loopx.python) if loopx else sys.executable)
        results, loopx_results = {}, {}
        for n in sizes:
            base = prepare_base(work, data, n, bl)
            results[n] = ours(base, work, data, bl, args.runs)
            if loopx:
                loopx_results[n] = theirs(loopx, data, work, n, args.runs)
            shutil.rmtree(base)
            print(f"measured {n} rows", file=sys.stderr)
        print("\n".join(report(sizes, results, loopx_results)))
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
