#!/usr/bin/env python3
"""How long ``benchledger compare`` takes on a 30,000-row ledger with 5 arms (target: < 1 s).

A fresh project store is filled (not timed) by one ``run-ledger-upsert --no-render`` of a
``benchmark_run_batch_v0`` of compact Harbor-like records — one benchmark, 5 arms, 6,000 cases,
one run per (arm, case), 1 to 3 attempts each with rewards, task digests, a timeout policy and
usage — so the rows carry exactly what an ingest gives them. Then, as subprocesses of the
installed ``benchledger``, median of ``--runs``:

* ``compare --benchmark-id B --format json`` (default bootstrap: 2,000 resamples per pair),
  warm: every row's compare facts already kept (``projections/read_models/compare_facts.py``);
* the same ``compare`` cold, first after an upsert: before each run one run of arm 0 is
  upserted again with another score (not timed), so that row's facts are computed again;
* with ``--cold-rebuild``, also cold after ``rebuild`` (not timed): every row's facts computed;
* ``benchmark run-ledger-aggregate --benchmark-id B --format json`` on the same store.

Wall time, CPU time and peak RSS are printed with the ratio compare / aggregate, and the load
average before and after (the machine is shared). The project's modules are byte-compiled first
and each command runs once unmeasured, so the medians are of a warm, installed tool. ``--db URL``
puts the store on PostgreSQL instead (every command gets ``--db``).

Usage: python bench/compare_speed.py [--rows 30000] [--arms 5] [--runs 3] [--db URL]
                                     [--work DIR [--reuse]] [--cold-rebuild]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _loopx import Measured, benchledger_exe, measure  # noqa: E402
from _store import byte_compile, fresh_project, medians, run_ok  # noqa: E402

BENCHMARK = "terminal-bench@2.0"


def record(arm: int, case: int, rng: random.Random) -> dict:
    """One compact run: the arm's skill shifts the pass rate; 1-3 attempts, a few unscored."""
    skill = 0.35 + 0.08 * arm
    task = f"task-{case:05d}"
    trials, scored = [], []
    for index in range(1, rng.randint(1, 3) + 1):
        trial = {"task_id": task, "attempt_index": index, "status": "completed",
                 "source": "terminal-bench", "task_digest": f"sha256:{case:064x}"}  # fmt: skip
        if rng.random() < 0.05:
            trial["unscored_reason"] = "verifier_failed"
        else:
            reward = 1.0 if rng.random() < skill else 0.0
            trial.update(reward={"reward": reward}, primary_reward=reward, passed=reward == 1.0)
            scored.append(reward)
        trials.append(trial)
    run = {
        "schema_version": "benchmark_run_v0",
        "source_runner": "harbor",
        "benchmark_id": BENCHMARK,
        "case_id": task,
        "job_name": f"job-arm{arm}",
        "run_key": f"bench:arm{arm}:{task}",
        "run_status": "completed",
        "runner_return_status": "completed",
        "trial_count": len(trials),
        "trials": trials,
        "timeout_policy": {"official_comparable": True, "source": "harbor_job_config"},
        "metrics": {
            "input_tokens": rng.randint(10**5, 10**6),
            "output_tokens": 20000,
            "cost_usd": round(rng.uniform(0.2, 2.0), 4),
        },  # fmt: skip
        "metrics_coverage": {"attempts_with_usage": len(trials), "attempts_total": len(trials)},
    }
    if scored:
        score = sum(scored) / len(scored)
        passed = all(s == 1.0 for s in scored)
        run.update(official_score=score, official_score_status="completed",
                   official_task_score={"kind": "harbor_verifier_reward", "value": score,
                                        "passed": passed})  # fmt: skip
    else:
        run["official_score_status"] = "missing"
    run["score_aggregation"] = {
        "policy": "mean_of_scored_attempts", "attempt_count": len(trials),
        "scored_attempt_count": len(scored), "unscored_attempt_count": len(trials) - len(scored),
        "passed_attempt_count": sum(1 for s in scored if s == 1.0),
    }  # fmt: skip
    return run


def build_store(project: Path, rows: int, arms: int, bl: str, db: tuple[str, ...] = ()) -> None:
    """Upsert ``rows`` generated runs, one batch per arm, into the project's store (or ``db``)."""
    rng = random.Random(16)
    cases = rows // arms
    runs = [record(arm, case, rng) for case in range(cases) for arm in range(arms)]
    for arm in range(arms):
        part = [r for r in runs if r["job_name"] == f"job-arm{arm}"]
        path = project / f"arm{arm}.json"
        path.write_text(json.dumps({"schema_version": "benchmark_run_batch_v0",
                                    "benchmark_runs": part}))  # fmt: skip
        run_ok([bl, *db, "benchmark", "run-ledger-upsert", "--benchmark-run-json", str(path),
                "--arm-id", f"arm-{arm}", "--execute", "--no-render"], project)  # fmt: skip


def timed(argv: list[str], project: Path, runs: int) -> dict:
    """One unmeasured run (warm page cache), then the medians of ``runs``."""
    medians(1, lambda: measure(argv, cwd=project))
    return medians(runs, lambda: measure(argv, cwd=project))


def timed_after(argv: list[str], project: Path, runs: int, prepare: Callable[[int], None]) -> dict:
    """The medians of ``runs``, each right after ``prepare(run)`` (not timed)."""
    count = iter(range(runs))

    def once() -> Measured:
        prepare(next(count))
        return measure(argv, cwd=project)

    return medians(runs, once)


def reupsert(project: Path, bl: str, db: tuple[str, ...], salt: int) -> None:
    """Upsert one run of arm 0 again with another score: its row moves to a new position."""
    run = record(0, salt % 100, random.Random(1000 + salt))
    path = project / "again.json"
    path.write_text(json.dumps({"schema_version": "benchmark_run_batch_v0",
                                "benchmark_runs": [run]}))  # fmt: skip
    run_ok([bl, *db, "benchmark", "run-ledger-upsert", "--benchmark-run-json", str(path),
            "--arm-id", "arm-0", "--execute", "--no-render"], project)  # fmt: skip


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=30000)
    parser.add_argument("--arms", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", type=Path, default=None, help="keep the store here")
    parser.add_argument("--reuse", action="store_true", help="time the store already in --work")
    parser.add_argument("--db", default=None, help="store URL (e.g. PostgreSQL) instead of "
                        "the project's SQLite file")  # fmt: skip
    parser.add_argument("--cold-rebuild", action="store_true", help="also time the first "
                        "compare after a rebuild (every row's facts computed)")  # fmt: skip
    args = parser.parse_args()
    bl = benchledger_exe()
    db = ("--db", args.db) if args.db else ()
    work = args.work or Path(tempfile.mkdtemp(prefix="compare-speed-"))
    project = work / "project"
    if not (args.reuse and (project / ".benchledger").is_dir()):
        build_store(fresh_project(project), args.rows, args.arms, bl, db)
    byte_compile()
    print(f"load average at start: {load()}")
    compare_argv = [bl, *db, "compare", "--benchmark-id", BENCHMARK, "--format", "json"]
    compare = timed(compare_argv, project, args.runs)
    cold = timed_after(compare_argv, project, args.runs,
                       lambda i: reupsert(project, bl, db, i))  # fmt: skip
    measured = [("compare (warm)", compare), ("compare after upsert", cold)]
    if args.cold_rebuild:
        rebuilt = timed_after(compare_argv, project, args.runs,
                              lambda _i: run_ok([bl, *db, "rebuild"], project))  # fmt: skip
        measured.append(("compare after rebuild", rebuilt))
    doc = json.loads(compare["stdout"])["compare"]
    rows_seen = sum(a["coverage"]["runs_included"] for a in doc["arms"])
    aggregate = timed([bl, *db, "benchmark", "run-ledger-aggregate", "--benchmark-id", BENCHMARK,
                       "--format", "json"], project, args.runs)  # fmt: skip
    print(f"load average at end: {load()}")
    print(f"ledger: {args.rows} rows, {len(doc['arms'])} arms, {rows_seen} countable runs read")
    print(f"{'command':<24}{'wall s':>9}{'cpu s':>9}{'rss MiB':>10}")
    for name, m in (*measured, ("run-ledger-aggregate", aggregate)):
        print(f"{name:<24}{m['seconds']:>9.3f}{m['cpu']:>9.3f}{m['rss_mib']:>10.1f}")
    ratio = compare["seconds"] / aggregate["seconds"]
    cpu_ratio = compare["cpu"] / aggregate["cpu"]
    verdict = "met" if compare["seconds"] < 1.0 else "NOT met"
    print(f"compare (warm) / aggregate: {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU; "
          f"target compare < 1 s: {verdict}")  # fmt: skip
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
