#!/usr/bin/env python3
"""Two installs of benchledger, alternated on one prepared project: wall, CPU, system time,
peak RSS and page faults of one rendered ``run-ledger-upsert --execute``, medians and minimums.

The project is made once (``ledger_scaling.py``'s ``prepare_base``: ``import loopx-ledger`` of
the generated ledger, not timed); each run upserts into a fresh copy of it, written back to
disk first (``sync``, not timed), so both builds meet the same store and file state. On a
shared 2-core machine a change of a few percent is lost between two separate bench runs;
alternating the builds run by run puts both under the same load.

Usage: python bench/upsert_ab.py OLD_VENV NEW_VENV --base PROJECT --run-json NEW_RUN
                                 [--runs 11] [--work DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# wait4 in a small launcher: Linux keeps the larger peak RSS across exec (see _loopx.py).
LAUNCHER = """
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    os.execv(sys.argv[2], sys.argv[2:])
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - start
print(wall, ru.ru_utime, ru.ru_stime, ru.ru_maxrss, ru.ru_minflt, os.waitstatus_to_exitcode(status))
"""


def one_run(venv: Path, base: Path, run_json: Path, work: Path) -> tuple[float, ...]:
    """(wall, user + system, system, peak RSS MiB, minor faults) of one upsert in a copy."""
    scratch = Path(tempfile.mkdtemp(dir=work))
    project = scratch / "p"
    shutil.copytree(base, project)
    os.sync()
    argv = [str(venv / "bin" / "benchledger"), "benchmark", "run-ledger-upsert",
            "--benchmark-run-json", str(run_json), "--execute", "--format", "json"]  # fmt: skip
    try:
        done = subprocess.run([sys.executable, "-c", LAUNCHER, str(scratch / "out.json"), *argv],
                              cwd=project, check=True, capture_output=True, text=True)  # fmt: skip
        wall, user, system, rss_kib, faults, code = done.stdout.split()
        if int(code) != 0:
            raise SystemExit(f"{venv}: exit {code}")
        return (float(wall), float(user) + float(system), float(system), int(rss_kib) / 1024,
                int(faults))  # fmt: skip
    finally:
        shutil.rmtree(scratch)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--base", type=Path, required=True, help="prepared 30,000-row project")
    parser.add_argument("--run-json", type=Path, required=True, help="new-run.compact.json")
    parser.add_argument("--runs", type=int, default=11, help="runs per build")
    parser.add_argument("--work", type=Path, default=None, help="where the copies go")
    args = parser.parse_args()
    work = args.work or args.base.parent
    samples: dict[Path, list[tuple[float, ...]]] = {args.old: [], args.new: []}
    print("load average at start", ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    started = time.time()
    for i in range(args.runs):
        for venv in (args.old, args.new) if i % 2 == 0 else (args.new, args.old):
            samples[venv].append(one_run(venv, args.base, args.run_json, work))
    print("load average at end", ", ".join(f"{x:.2f}" for x in os.getloadavg()),
          f"({time.time() - started:.0f} s)")  # fmt: skip
    heads = ("wall ms", "CPU ms", "system ms", "RSS MiB", "faults")
    print(f"{'build':<24}" + "".join(f"{h:>18}" for h in heads) + "   (median / min)")
    for venv, runs in samples.items():
        cells = []
        for k in range(5):
            column = sorted(run[k] for run in runs)
            scale = 1000 if k < 3 else 1
            cells.append(f"{statistics.median(column) * scale:>10.0f} / {column[0] * scale:<6.0f}")
        print(f"{str(venv)[-24:]:<24}" + "".join(cells))


if __name__ == "__main__":
    main()
