#!/usr/bin/env python3
"""Two installs of benchledger, alternated on one generated Harbor job: wall, CPU and system
time of ``benchmark run`` (the argv of ``harbor_ingest.py``), medians and minimums.

On a shared 2-core machine a change of a few percent is lost between two separate runs of
``harbor_ingest.py``; alternating the builds run by run, on the same job, puts both under the
same load. Each install is a venv (``python3 -m venv V && V/bin/pip install .``); each run is
a new process on a fresh store, ``db upgrade`` first (untimed).

``--one-task`` makes the job's trials attempts of one task (one record, as ``harbor_ingest.py
--one-task``); ``--old-jobs``/``--new-jobs`` pass ``--jobs N`` to one build, so the same venv given
twice compares reading on one core with reading on N.

Usage: python bench/harbor_ingest_ab.py OLD_VENV NEW_VENV [--trials 3000] [--runs 15]
       [--one-task] [--old-jobs N] [--new-jobs N]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from harbor_ingest import TB2_TASKS, TEMPLATE_JOB, benchledger_argv, generate_job


def one_run(
    venv: Path, job: Path, project: Path, jobs: int | None = None
) -> tuple[float, float, float]:
    """(wall, user + system, system) seconds of one ingest into a fresh store in ``project``,
    a new directory the caller deletes after the last run (``harbor_ingest.taking_turns``)."""
    exe = str(venv / "bin" / "benchledger")
    env = {**os.environ, "HOME": str(project)}
    subprocess.run([exe, "db", "upgrade"], cwd=project, env=env, check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(project / "stdout.txt", "wb") as out:
        subprocess.run(benchledger_argv(exe, job, jobs), cwd=project, env=env, check=True,
                       stdout=out)  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    system = after.ru_stime - before.ru_stime
    return wall, after.ru_utime - before.ru_utime + system, system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path, help="venv of the build to compare against")
    parser.add_argument("new", type=Path, help="venv of the build under test")
    parser.add_argument("--trials", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=15, help="runs per build")
    parser.add_argument("--one-task", action="store_true", help="all trials attempts of one task")
    parser.add_argument("--old-jobs", type=int, help="--jobs of the old build (default: none)")
    parser.add_argument("--new-jobs", type=int, help="--jobs of the new build (default: none)")
    args = parser.parse_args()
    builds = [(args.old, args.old_jobs), (args.new, args.new_jobs)]
    samples: list[list[tuple[float, float, float]]] = [[], []]
    with tempfile.TemporaryDirectory() as root:
        job = generate_job(TEMPLATE_JOB, Path(root), args.trials, 1 if args.one_task else TB2_TASKS)
        print("load average at start", ", ".join(f"{x:.2f}" for x in os.getloadavg()))
        for i in range(args.runs):
            for k in (0, 1) if i % 2 == 0 else (1, 0):
                venv, jobs = builds[k]
                samples[k].append(one_run(venv, job, Path(tempfile.mkdtemp(dir=root)), jobs))
    print("load average at end", ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"{'build':<40} {'wall ms':>16} {'CPU ms':>16} {'system ms':>16}   (median / min)")
    for (venv, jobs), runs in zip(builds, samples, strict=True):
        cols = [sorted(run[k] for run in runs) for k in range(3)]
        cells = " ".join(f"{statistics.median(c) * 1000:>8.0f} / {c[0] * 1000:<5.0f}" for c in cols)
        flag = "" if jobs is None else f" --jobs {jobs}"
        print(f"{f'{venv}{flag}':<40} {cells}")


if __name__ == "__main__":
    main()
