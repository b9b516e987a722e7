"""Shared helpers for the benchmarks that compare with (or feed) loopx 0.4.8.

loopx lives in its own scratch venv, ``bench/.venv-loopx`` (git-ignored by being a dot-dir the
project never ships), created on first use with the ordinary ``pip install loopx==0.4.8``.
Nothing here is imported by the product.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

LOOPX_VERSION = "0.4.8"
BENCH_DIR = Path(__file__).resolve().parent
VENV = BENCH_DIR / ".venv-loopx"


@dataclass(frozen=True)
class Loopx:
    python: Path
    exe: Path

    def argv(self, *args: str) -> list[str]:
        return [str(self.exe), *args]


def foreign_env() -> dict[str, str]:
    """The environment for loopx's interpreter and its pip: our test suite turns deprecation
    warnings into errors (PYTHONWARNINGS), which is for our code, not for pip's or loopx's."""
    return {key: value for key, value in os.environ.items() if key != "PYTHONWARNINGS"}


def ensure_loopx(venv: Path = VENV) -> Loopx:
    """The loopx venv, created and installed when missing (pip output shown on failure)."""
    python = venv / "bin" / "python"
    exe = venv / "bin" / "loopx"
    if not exe.exists():
        if not python.exists():
            base = getattr(sys, "_base_executable", None) or sys.executable
            subprocess.run([base, "-m", "venv", str(venv)], check=True, env=foreign_env())
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", f"loopx=={LOOPX_VERSION}"],
            capture_output=True,
            text=True,
            env=foreign_env(),
        )
        if done.returncode != 0 or not exe.exists():
            raise SystemExit(f"pip install loopx=={LOOPX_VERSION} failed:\n{done.stderr[-2000:]}")
    return Loopx(python, exe)


def benchledger_exe() -> str:
    """The installed ``benchledger`` beside this interpreter, else the one on PATH."""
    beside = Path(sys.executable).with_name("benchledger")
    if beside.exists():
        return str(beside)
    found = shutil.which("benchledger")
    if not found:
        raise SystemExit("benchledger is not installed (pip install -e . in the project venv)")
    return found


@dataclass(frozen=True)
class Measured:
    returncode: int
    seconds: float
    max_rss_mib: float
    stdout: bytes
    stderr: bytes
    cpu_seconds: float = 0.0  # user + system time of the child: less noisy than wall on a busy host


# A small, fresh process starts the measured command and reports its wait4 usage. Linux keeps
# the larger of the old and new peak RSS across exec, so a command forked straight from this
# (by then much larger) benchmark process would report this process's peak, not its own.
LAUNCHER = """
import json, os, subprocess, sys, time
report, argv = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
proc = subprocess.Popen(argv)
_, status, usage = os.wait4(proc.pid, 0)
wall = time.perf_counter() - start
with open(report, "w") as fh:
    json.dump({"code": os.waitstatus_to_exitcode(status), "wall": wall,
               "maxrss_kib": usage.ru_maxrss, "cpu": usage.ru_utime + usage.ru_stime}, fh)
"""


def measure(argv: list[str], *, cwd: Path, stdin: bytes | None = None) -> Measured:
    """Wall time, CPU time and peak RSS of exactly this command (``wait4`` in a small launcher,
    so neither this process's own peak nor the launcher's start-up is counted)."""
    import json
    import tempfile

    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile(suffix=".json") as report,
    ):
        proc = subprocess.Popen(
            [sys.executable, "-c", LAUNCHER, report.name, *argv],
            cwd=cwd,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )
        if stdin is not None:
            assert proc.stdin is not None
            proc.stdin.write(stdin)
            proc.stdin.close()
        proc.wait()
        usage = json.loads(Path(report.name).read_text() or "{}")
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0 or not usage:
            return Measured(proc.returncode or 1, 0.0, 0.0, out.read(), err.read())
        return Measured(
            usage["code"], usage["wall"], usage["maxrss_kib"] / 1024, out.read(), err.read(),
            usage["cpu"],
        )  # fmt: skip
