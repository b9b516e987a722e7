#!/usr/bin/env python3
"""Harbor ingest cost at scale: wall time and peak RSS of one `benchmark run terminal-bench
--harbor-job-dir` on generated Harbor 0.25 jobs of 10 / 100 / 1,000 / 3,000 trials.

Jobs are made by cloning the trials of a real fixture job (03: passes, clean fails, an agent
timeout and a verifier timeout) under new task names, trial names and ids; every file keeps
Harbor's own format (job and trial config/lock/result, reward files, trajectories, artifacts),
so the adapter reads exactly what it would read from Harbor. Each measurement is a new process
on a fresh store (default embedded SQLite in a fresh directory), like a user's shell.

With --with-loopx, loopx 0.4.8 (installed into bench/.venv-loopx on first use) ingests the same
directories with its own command, the two tools taking turns run by run (``taking_turns``), and
the speed-up loopx time / benchledger time is printed for wall and CPU (user + system) time,
with issue 30's targets at the largest size: >= 3x, and >= 5x for ``--one-task`` (the same
number of attempts of one task, where each tool writes one record). loopx files a whole job as
one case; benchledger writes one record and one ledger row per task. ``--jobs N`` passes
benchledger's ``--jobs`` (trials read on N cores; without it, benchledger's default: one).
The project's modules are byte-compiled first, as a wheel install does, so
PYTHONDONTWRITEBYTECODE in the environment does not make every benchledger process compile its
sources.

Usage: python bench/harbor_ingest.py [--sizes 10,100,1000,3000] [--runs 3] [--with-loopx]
       [--one-task] [--jobs N]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import shutil
import statistics
import string
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from _fixtures import HARBOR

REPO = Path(__file__).resolve().parents[1]
TEMPLATE_JOB = HARBOR / "tb2-pilot-20260502" / "jobs" / "2026-05-02__14-03-19"
LOOPX_VENV = REPO / "bench" / ".venv-loopx"
LOOPX_VERSION = "0.4.8"
S = TypeVar("S")

# Runs one command in a child of its own, so RUSAGE_CHILDREN is that command's peak alone.
MEASURE = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
with open(sys.argv[1], "wb") as out:
    code = subprocess.run(sys.argv[2:], stdout=out, stderr=subprocess.STDOUT).returncode
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"code": code, "wall": wall, "peak_kib": usage.ru_maxrss,
                  "cpu": usage.ru_utime + usage.ru_stime}))
"""


# --------------------------------------------------------------------------- job generator


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _write(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=4, ensure_ascii=False), encoding="utf-8")


def _trial_dirs(job: Path) -> list[Path]:
    return sorted(p for p in job.iterdir() if p.is_dir() and (p / "result.json").exists())


def _suffix(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(7))


def _clone_trial(src: Path, dest_job: Path, task: str, job_id: str, rng: random.Random) -> dict:
    """Copy one trial under a new task/trial name and id; returns its new result."""
    name = f"{task[:32].rstrip('-_')}__{_suffix(rng)}"
    dest = dest_job / name
    shutil.copytree(src, dest)
    result = _read(dest / "result.json")
    result.update(
        id=str(uuid.UUID(int=rng.getrandbits(128))),
        task_name=task,
        trial_name=name,
        trial_uri=f"file:///srv/bench/bench/jobs/{dest_job.name}/{name}",
    )
    if isinstance(result.get("task_id"), dict):
        result["task_id"]["path"] = task
    result["config"].update(trial_name=name, job_id=job_id)
    result["config"]["task"]["path"] = task
    _write(dest / "result.json", result)
    config = _read(dest / "config.json")
    config.update(trial_name=name, job_id=job_id)
    config["task"]["path"] = task
    _write(dest / "config.json", config)
    lock = _read(dest / "lock.json")
    lock["task"].update(name=task, path=task)
    _write(dest / "lock.json", lock)
    return result


TB2_TASKS = 89  # Terminal-Bench 2.0 has 89 tasks: a large job is many attempts per task


def generate_job(
    template: Path, dest_root: Path, n_trials: int, max_tasks: int = TB2_TASKS
) -> Path:
    """A finished Harbor job of ``n_trials`` trials over at most ``max_tasks`` tasks, cloned
    from ``template`` (trial ``i`` is attempt ``i // max_tasks`` of task ``i % max_tasks``)."""
    rng = random.Random(n_trials)
    job = dest_root / "bench" / "jobs" / f"bench-{n_trials}"
    job.mkdir(parents=True)
    job_id = str(uuid.UUID(int=rng.getrandbits(128)))
    sources = _trial_dirs(template)
    base_lock = {t["task"]["name"]: t for t in _read(template / "lock.json")["trials"]}
    results, lock_trials = [], []
    for i in range(n_trials):
        k = i % max_tasks
        src = sources[k % len(sources)]
        base_task = _read(src / "result.json")["task_name"]
        task = f"{base_task}-{k:05d}"
        results.append(_clone_trial(src, job, task, job_id, rng))
        planned = json.loads(json.dumps(base_lock[base_task]))
        planned["task"].update(name=task, path=task)
        lock_trials.append(planned)
    config = _read(template / "config.json")
    config["job_name"] = job.name
    config["datasets"][0]["task_names"] = list(dict.fromkeys(r["task_name"] for r in results))
    _write(job / "config.json", config)
    lock = _read(template / "lock.json")
    lock["trials"] = lock_trials
    _write(job / "lock.json", lock)
    _write(job / "result.json", _job_result(_read(template / "result.json"), job_id, results))
    shutil.copy(template / "job.log", job / "job.log")
    return job


def _job_result(template: dict, job_id: str, results: list[dict]) -> dict:
    """Job stats the way Harbor computes them (Mean counts a trial without rewards as 0)."""
    rewards = [(r.get("verifier_result") or {}).get("rewards") or {} for r in results]
    errored = [r for r in results if r.get("exception_info")]
    key = next(iter(template["stats"]["evals"]))
    reward_stats: dict[str, dict[str, list[str]]] = {}
    exception_stats: dict[str, list[str]] = {}
    for result, reward in zip(results, rewards, strict=True):
        for k, v in reward.items():
            reward_stats.setdefault(k, {}).setdefault(str(v), []).append(result["trial_name"])
        if result.get("exception_info"):
            kind = result["exception_info"]["exception_type"]
            exception_stats.setdefault(kind, []).append(result["trial_name"])
    stats = dict(template["stats"])
    stats.update(
        n_completed_trials=len(results) - len(errored),
        n_errored_trials=len(errored),
        n_running_trials=0,
        n_pending_trials=0,
        n_cancelled_trials=0,
        n_retries=0,
        evals={
            key: {
                "n_trials": sum(1 for r in rewards if r),
                "n_errors": len(errored),
                "metrics": [{"mean": sum(r.get("reward", 0.0) for r in rewards) / len(results)}],
                "pass_at_k": {},
                "reward_stats": reward_stats,
                "exception_stats": exception_stats,
            }
        },
    )
    return {**template, "id": job_id, "n_total_trials": len(results), "stats": stats}


# --------------------------------------------------------------------------- measurement


@dataclass
class Sample:
    wall: float
    peak_mib: float
    cpu: float  # user + system seconds: steadier than wall on a shared machine


def measure(argv: list[str], cwd: Path) -> Sample:
    env = {**os.environ, "HOME": str(cwd)}  # neither tool may touch the real home
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, str(cwd / "stdout.txt"), *argv],
        cwd=cwd, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    report = json.loads(out.stdout)
    if report["code"] != 0:
        tail = (cwd / "stdout.txt").read_text(errors="replace")[-400:]
        raise SystemExit(f"{argv[0]} exited {report['code']}: {tail}")
    return Sample(report["wall"], report["peak_kib"] / 1024, report["cpu"])


def taking_turns(runs: int, root: Path, commands: Sequence[Callable[[Path], S]]) -> list[list[S]]:
    """``runs`` samples of each command, the commands taking turns run by run, each run in a
    new directory under ``root`` (``command(directory)`` sets it up and measures).

    Taking turns puts every tool under the same machine: on this shared VM the speed of a
    whole minute drifts by 20 % or more, which timing one tool's runs after the other's put
    into the ratio. The directories are left to the caller, who deletes ``root`` after the
    last measurement: on ext4 without a journal (this VM) the inode allocator passes over
    every inode deleted in the last 30 s (``recently_deleted``, seen with ``perf``), so a
    harness deleting a run's ~200 files made the next run's file creation 2-5x slower
    (150-400 us a file instead of 70-90 us after 40 s without deletions), a cost of the harness
    that fell on the tool that writes more files (bench/README.md, issue 18). Users do not
    delete hundreds of files before each ingest."""
    samples: list[list[S]] = [[] for _ in commands]
    for _ in range(runs):
        for command, out in zip(commands, samples, strict=True):
            out.append(command(Path(tempfile.mkdtemp(dir=root))))
    return samples


def median_sample(samples: list[Sample]) -> Sample:
    return Sample(
        statistics.median(s.wall for s in samples),
        statistics.median(s.peak_mib for s in samples),
        statistics.median(s.cpu for s in samples),
    )


def pair_ratios(ours: list[Sample], theirs: list[Sample]) -> list[float]:
    """loopx's wall time over benchledger's, turn by turn: each pair ran back to back, so on
    a VM whose speed drifts from minute to minute their spread shows how steady the ratio of
    medians is (issue 18 asks for a steady 4x)."""
    return [t.wall / o.wall for o, t in zip(ours, theirs, strict=True)]


def benchledger_argv(exe: str, job: Path, jobs: int | None = None) -> list[str]:
    """benchledger's ingest of ``job``; ``jobs``: its ``--jobs`` (None: the default)."""
    return [
        exe, "--runtime-root", "rt", "--format", "json",
        "benchmark", "run", "terminal-bench", "--goal-id", "g", "--harbor-job-dir", str(job),
        "--update-run-ledger", "--no-global-sync", "--execute",
        *(["--jobs", str(jobs)] if jobs is not None else []),
    ]  # fmt: skip


def loopx_argv(exe: str, job: Path) -> list[str]:
    """loopx's command for the same work as ``benchledger_argv``: ingest and update the run
    ledger (loopx's global options, ``--runtime-root`` and ``--format``, go before the command).

    Until 2026-12-02 loopx ran without ``--update-run-ledger`` while benchledger ran with it, so
    loopx was timed doing less (0.6-0.7 s less here: its ledger modules and the ledger write)."""
    return [
        exe, "--runtime-root", "rt", "--format", "json",
        "benchmark", "run", "terminal-bench", "--goal-id", "g", "--harbor-job-dir", str(job),
        "--update-run-ledger", "--execute", "--no-global-sync",
    ]  # fmt: skip


def ensure_loopx() -> str:
    exe = LOOPX_VENV / "bin" / "loopx"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(LOOPX_VENV)], check=True)
        subprocess.run(
            [str(LOOPX_VENV / "bin" / "pip"), "install", "-q", f"loopx=={LOOPX_VERSION}"],
            check=True,
        )
    return str(exe)


# Issue 30's targets at the largest size: the usual job (a record per task from benchledger,
# one case from loopx), and the same number of attempts of one task (one record from each).
TARGET = 3.0
TARGET_ONE_RECORD = 5.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,100,1000,3000", help="trial counts, comma-separated")
    parser.add_argument("--runs", type=int, default=3, help="runs per size (median reported)")
    parser.add_argument(
        "--with-loopx", action="store_true", help=f"also time loopx {LOOPX_VERSION}"
    )
    parser.add_argument(
        "--jobs", type=int, default=None,
        help="benchledger's --jobs (cores reading the trials; default: its own default)",
    )  # fmt: skip
    parser.add_argument(
        "--one-task", action="store_true",
        help="also the largest size as attempts of one task (one record from each tool)",
    )  # fmt: skip
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    beside = Path(sys.executable).with_name("benchledger")  # the install under test, not PATH's
    exe = str(beside) if beside.exists() else (shutil.which("benchledger") or str(beside))
    loopx = ensure_loopx() if args.with_loopx else None
    if loopx is None and (LOOPX_VENV / "bin" / "loopx").exists():
        loopx = str(LOOPX_VENV / "bin" / "loopx")
    for package in ("commands", "ledger", "projections", "migrations", "services"):
        compileall.compile_dir(str(REPO / package), quiet=1)
    header = f"{'trials':>7} {'benchledger s':>14} {'CPU s':>6} {'peak MiB':>9}"
    if loopx:
        header += f" {'loopx s':>9} {'CPU s':>6} {'peak MiB':>9} {'speed-up':>8} {'CPU':>5}"
    jobs = "default" if args.jobs is None else args.jobs
    print(f"Harbor ingest (benchledger --jobs {jobs}), median of {args.runs} runs taking "
          "turns, fresh store each run; load "
          + ", ".join(f"{x:.2f}" for x in os.getloadavg()))  # fmt: skip
    print(header)
    verdicts = []
    with tempfile.TemporaryDirectory() as root:  # jobs and runs, deleted after the last run
        rows = [(n, f"{n:>7}", n, TB2_TASKS) for n in sizes]
        if args.one_task:
            rows.append((max(sizes), f"{max(sizes):>6}*", max(sizes), 1))
        for n, label, size, tasks in rows:
            job = generate_job(TEMPLATE_JOB, Path(root) / f"jobs-{n}-{tasks}", size, tasks)
            line, verdict = _row(exe, loopx, job, args.runs, Path(root), label, args.jobs)
            print(line, flush=True)
            if verdict is not None and n == max(sizes):
                what = "one record each" if tasks == 1 else f"{n:,} trials"
                target = TARGET_ONE_RECORD if tasks == 1 else TARGET
                speed, cpu, lowest = verdict
                verdicts.append(
                    f"[{'PASS' if speed >= target else 'FAIL'}] ingest of {what} {speed:.2f}x "
                    f"faster than loopx (target >= {target:g}x; CPU {cpu:.2f}x; lowest turn "
                    f"{lowest:.2f}x)"
                )
    if args.one_task:
        print(f"* {max(sizes):,} attempts of one task: one record from each tool")
    print("load average at the end " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    for verdict in verdicts:
        print(verdict)


def _row(
    exe: str, loopx: str | None, job: Path, runs: int, root: Path, label: str, jobs: int | None
) -> tuple[str, tuple[float, float, float] | None]:
    """One table line for ``job``, and (speed-up, CPU ratio, lowest turn) when loopx ran."""

    def ours(project: Path) -> Sample:
        # a project whose store exists already (its creation is a one-off, not ingest)
        subprocess.run([exe, "db", "upgrade"], cwd=project, check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        return measure(benchledger_argv(exe, job, jobs), project)

    def theirs(project: Path) -> Sample:
        return measure(loopx_argv(loopx or "", job), project)

    samples = taking_turns(runs, root, [ours, theirs] if loopx else [ours])
    mine = median_sample(samples[0])
    line = f"{label} {mine.wall:>14.2f} {mine.cpu:>6.2f} {mine.peak_mib:>9.1f}"
    if not loopx:
        return line, None
    other = median_sample(samples[1])
    speed, cpu = other.wall / mine.wall, other.cpu / mine.cpu
    line += (f" {other.wall:>9.2f} {other.cpu:>6.2f} {other.peak_mib:>9.1f}"
             f" {speed:>7.2f}x {cpu:>4.1f}x")  # fmt: skip
    turns = pair_ratios(samples[0], samples[1])
    line += f"  each turn {min(turns):.2f}-{max(turns):.2f}x"
    return line, (speed, cpu, min(turns))


if __name__ == "__main__":
    main()
