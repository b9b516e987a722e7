"""The set-up and timing steps the store benchmarks share (imported by the bench scripts only).

A benchmark makes a fresh project (a directory with an empty ``.benchledger``), fills its
store with commands that must succeed (their time is not measured), then times commands as
new processes, several times, and keeps the medians.
"""

from __future__ import annotations

import compileall
import shutil
import statistics
import subprocess
from collections.abc import Callable
from pathlib import Path

from _loopx import Measured

REPO = Path(__file__).resolve().parents[1]


def fresh_project(project: Path) -> Path:
    """``project`` emptied, with the ``.benchledger`` directory that makes it a project."""
    if project.exists():
        shutil.rmtree(project)
    (project / ".benchledger").mkdir(parents=True)
    return project


def run_ok(argv: list[str], cwd: Path) -> None:
    """A set-up command: it must succeed, else the benchmark stops with its error output."""
    done = subprocess.run(argv, cwd=cwd, capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"setup failed: {' '.join(argv[:4])}: {done.stderr.decode()[-800:]}")


def medians(runs: int, once: Callable[[], Measured]) -> dict:
    """``once`` run ``runs`` times (each must succeed): median wall, CPU and peak RSS, and the
    last run's stdout."""
    samples = []
    for _ in range(runs):
        result = once()
        if result.returncode != 0:
            raise SystemExit(f"command failed ({result.returncode}): {result.stderr[-800:]!r}")
        samples.append(result)
    return {
        "seconds": statistics.median(s.seconds for s in samples),
        "cpu": statistics.median(s.cpu_seconds for s in samples),
        "rss_mib": statistics.median(s.max_rss_mib for s in samples),
        "stdout": samples[-1].stdout,
    }


def byte_compile() -> None:
    """Byte-compile the project's packages, as ``pip install`` does for a wheel: with
    PYTHONDONTWRITEBYTECODE set (as on the machine the numbers come from) every process of an
    editable install would otherwise compile its own sources again, which no user pays for."""
    for package in ("commands", "ledger", "projections", "migrations"):
        compileall.compile_dir(str(REPO / package), quiet=1)
