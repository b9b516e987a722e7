"""``benchmark run inspect`` over 100 Inspect logs of 100 samples x 3 epochs (issue 35).

One log is made by Inspect itself (``inspect_ai.eval`` on ``mockllm/model``, 100 samples, 3
epochs, the scorers of ``tools/make_inspect_logs.py``); the other 99 are clones of it with
their own task, eval and run ids (each zip entry rewritten under its name and compression,
zstd as Inspect writes it; nothing else changed), so the directory holds 100 distinct evals.
Printed side by side, wall and CPU time (user + system, of the command and its children) of:

* ``inspect log list --json --log-dir DIR`` (Inspect's own listing of the same directory),
* ``benchledger benchmark run inspect --log-dir DIR`` dry run (read, build and decide, nothing
  written), with ``--execute --no-render`` (the events appended and committed, no file
  written) and with ``--execute`` (the files rendered too; the size of the store it leaves,
  the ``.db`` file with its WAL); with ``--jobs N``, also ``--execute --jobs N`` (the logs read
  on N cores); and the same ``--execute`` again (the input already recorded: read again,
  nothing appended, every file of the goal rendered again);
* the floor of the reading: Inspect imported and each log's header and sample summaries read
  with Inspect's own reader, as the ingest reads them, on one core, with nothing done with
  them;
* the floor of the files: the run files that ``--execute`` rendered, written again bare (each
  a new temporary file moved into place, as the renderer does, with no other work) into a new
  directory on the same file system. How long creating 20,000 files takes depends on the file
  system's state far more than on the code, so it is measured in each round, right after the
  ``--execute`` it matches. Nothing is deleted before the last round: ext4 creates files
  several times slower just after many were deleted (``bench/README.md``, "Method").

The rows differ by one step each, so their differences are where the time goes.

    python bench/inspect_ingest.py [--logs 100] [--samples 100] [--runs 3] [--keep DIR]
                                   [--jobs N]

``--keep DIR`` makes the log directory in ``DIR/logs`` (or reuses one already there with that
many logs) and leaves it, so the same logs can be profiled again and again.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))


def _one_log(out: Path, samples: int) -> Path:
    import make_inspect_logs as fixtures
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.solver import generate

    os.environ["INSPECT_DISPLAY"] = "none"
    fixtures._offline_token_counts()
    ids = [f"s{i % 4 + 1}" for i in range(samples)]
    rows = [Sample(id=f"case-{i:03d}", input="Q?", target="42") for i in range(samples)]
    fixtures.VERDICTS.update({r.id: fixtures.VERDICTS[k] for r, k in zip(rows, ids, strict=True)})
    fixtures.POINTS.update({r.id: fixtures.POINTS[k] for r, k in zip(rows, ids, strict=True)})
    (log,) = inspect_eval(
        Task(name="bench", dataset=MemoryDataset(rows), solver=generate(),
             scorer=fixtures._scorers(), epochs=3),
        model="mockllm/model", log_dir=str(out), display="none", log_level="error",
        max_samples=50,
    )  # fmt: skip
    return Path(log.location.removeprefix("file://"))


def _clone(source: Path, dest: Path, index: int) -> None:
    """The same log as another eval: every id it carries replaced by one of the same length,
    each zip entry rewritten under its name and compression (zstd, as Inspect writes it)."""
    import make_inspect_logs as fixtures
    from inspect_ai.log import read_eval_log

    spec = read_eval_log(str(source), header_only=True).eval
    swaps = [
        (old.encode(), (f"{index:04d}" + old[4:]).encode())
        for old in (spec.task_id, spec.eval_id, spec.run_id)
    ]

    def swap(_name: str, data: bytes) -> bytes:
        for old, new in swaps:
            data = data.replace(old, new)
        return data

    shutil.copyfile(source, dest)
    fixtures.rewrite_log(dest, swap)


def _log_dir(where: Path, count: int, samples: int) -> Path:
    """``where/logs`` holding ``count`` distinct logs: reused when it already holds that many
    (``--keep``), otherwise made afresh."""
    logs = where / "logs"
    if logs.is_dir() and len(list(logs.glob("*.eval"))) == count:
        return logs
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    made = _one_log(where / "made", samples)
    for index in range(count):
        _clone(made, logs / f"{index:04d}_{made.name}", index)
    shutil.rmtree(where / "made")
    return logs


def _timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, from the children's resource usage) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]} failed: {done.stderr.strip().splitlines()[-1:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _bare_writes(rendered: Path, into: Path) -> tuple[float, float]:
    """Wall and CPU seconds of writing every file under ``rendered/goals`` again into the new
    directory ``into``: a temporary file created, written and moved into place per file."""
    payloads = [f.read_bytes() for f in sorted((rendered / "goals").rglob("*")) if f.is_file()]
    into.mkdir()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    start, cpu = time.perf_counter(), time.process_time()
    for number, data in enumerate(payloads):
        temp = f"{into}/.tmp{os.urandom(5).hex()}"
        fd = os.open(temp, flags, 0o666)
        os.write(fd, data)
        os.close(fd)
        os.replace(temp, f"{into}/{number}")
    return time.perf_counter() - start, time.process_time() - cpu


# Inspect's own reading of the logs as the ingest reads them (header, then sample summaries).
_READS_ONLY = """
import sys
from pathlib import Path
from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries
for log in sorted(Path(sys.argv[1]).glob("*.eval")):
    read_eval_log(str(log), header_only=True)
    list(read_eval_log_sample_summaries(str(log)))
"""


def _ingest(bindir: Path, work: Path, logs: Path, tag: str, *, execute: bool = False) -> list[Any]:
    """The ingest (a dry run, or ``--execute`` updating a ledger) into a store and runtime root
    of its own, named by ``tag``."""
    argv: list[Any] = [
        str(bindir / "benchledger"), "--db", f"sqlite:///{work}/l{tag}.db",
        "--runtime-root", str(work / f"rt{tag}"), "benchmark", "run", "inspect",
        "--goal-id", "g", "--log-dir", str(logs), "--no-global-sync", "--format", "json",
    ]  # fmt: skip
    if execute:
        ledger = str(work / f"ledger{tag}.json")
        argv += ["--update-run-ledger", "--run-ledger-path", ledger, "--execute"]
    return argv


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=100)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="also time --execute with --jobs N (logs read on N cores)",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="make (or reuse) the logs in DIR/logs and leave them there",
    )
    args = parser.parse_args(argv)
    bindir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        logs = _log_dir(args.keep or work, args.logs, args.samples)
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"{args.logs} logs x {args.samples} samples x 3 epochs; load average {load}")
        timings: dict[str, list[tuple[float, float]]] = {
            "inspect log list": [], "dry run": [], "--execute --no-render": [], "--execute": [],
            "--execute again": [],
            "floor: Inspect reads": [], "floor: files bare": [],
        }  # fmt: skip
        jobs = f"--execute --jobs {args.jobs}"
        if args.jobs:
            timings[jobs] = []
        sizes: list[int] = []  # bytes of each --execute's store
        for run in range(args.runs):
            timings["inspect log list"].append(
                _timed([str(bindir / "inspect"), "log", "list", "--json", "--log-dir", str(logs)],
                       work)
            )  # fmt: skip
            reads = [sys.executable, "-c", _READS_ONLY, str(logs)]
            timings["floor: Inspect reads"].append(_timed(reads, work))
            timings["dry run"].append(_timed(_ingest(bindir, work, logs, f"{run}"), work))
            unrendered = [*_ingest(bindir, work, logs, f"{run}n", execute=True), "--no-render"]
            timings["--execute --no-render"].append(_timed(unrendered, work))
            execute = _ingest(bindir, work, logs, f"{run}", execute=True)
            timings["--execute"].append(_timed(execute, work))
            bare = _bare_writes(work / f"rt{run}", work / f"bare{run}")
            timings["floor: files bare"].append(bare)
            timings["--execute again"].append(_timed(execute, work))  # already recorded
            sizes.append(sum(f.stat().st_size for f in work.glob(f"l{run}.db*")))
            if args.jobs:  # the same on N cores
                parallel = [*_ingest(bindir, work, logs, f"{run}j", execute=True),
                            "--jobs", str(args.jobs)]  # fmt: skip
                timings[jobs].append(_timed(parallel, work))
        store = statistics.median(sizes) / 1e6
        print(f"store after --execute: {store:.0f} MB (median; the .db with its WAL)")
        for name, runs in timings.items():
            walls = [round(wall, 2) for wall, _ in runs]
            cpus = [cpu for _, cpu in runs]
            print(
                f"{name:>21}: median {statistics.median(walls):6.2f} s wall, "
                f"{statistics.median(cpus):6.2f} s CPU  (walls {walls})"
            )


if __name__ == "__main__":
    main()
