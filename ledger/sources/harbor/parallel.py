"""Reading a large Harbor job's trials on several cores: the one trick of the Harbor reader,
kept behind one call (``TrialReading``).

Used only when the user asks for it (``--jobs N``): with a core to spare, a 3,000-trial job
was recorded ~0.1 s sooner on two cores (0.76 -> 0.67 s on a quiet 2-core machine); but a
worker costs ~45 ms of CPU (the pages fork shares and both processes then copy, pickling the
attempts both ways), so on a machine whose cores are busy two cores were ~10 % slower than one,
and the loopx ratios of issue 30 did not move with it (bench/README.md). It is therefore not
the default.

How: after every import, the command lists the trial directories and forks ``jobs - 1``
workers; the directories are cut into ``jobs`` runs of neighbours, each worker reads one run
with its own handle on the job directory, and the command reads the job's own files and then
the first run meanwhile. The runs are joined in trial order, so the attempts, the digests and
the first error are those a reading on one core gives: a run whose worker failed for any reason
is simply read again here, where the same file then raises the same error in its own words.

Each worker is a plain ``fork`` with a pipe: its attempts cross back pickled (plain
dataclasses of parsed JSON) once it has read them all, and it exits without running the
command's exit handlers. ``concurrent.futures`` would do the same but costs every ``benchmark
run`` ~15 ms of imports (``multiprocessing.connection``). Without ``fork`` (not POSIX), or
with too few trials to share, the trials are read one after the other (``trials.read_trials``).
"""

from __future__ import annotations

import os
import pickle

from benchledger.ledger.sources.harbor.files import _Reader
from benchledger.ledger.sources.harbor.trials import (
    Progress,
    _Attempt,
    _list_trials,
    _read_trial,
    read_trials,
)

_MIN_TRIALS_PER_WORKER = 200  # below this a worker costs more than it reads
_Found = tuple[list[_Attempt | None], dict[str, str]]  # a run's attempts, and its digests


class TrialReading:
    """The job's trials, read in name order on up to ``jobs`` cores (None: one). The workers
    start at once, so the caller reads the job's own files
    (a 3,000-trial job's ``lock.json`` is ~4.5 MB) while they read theirs::

        with TrialReading(reader, progress, jobs) as trials:
            ...  # read the job files
            attempts = trials.attempts()

    ``progress(done, total)`` after each run of trials, or after each trial when they are read
    here alone. Leaving the block reaps every worker (killed if it has not finished)."""

    def __init__(self, reader: _Reader, progress: Progress | None, jobs: int | None) -> None:
        self.reader = reader
        self.progress = progress
        self.names = _list_trials(reader)
        total = len(self.names)
        size = -(-total // _parts(total, jobs)) if total else 1
        self.runs = [self.names[i : i + size] for i in range(0, total, size)]
        self.workers: list[tuple[int, int] | None] = [
            _start(reader.root, run) for run in self.runs[1:]
        ]

    def __enter__(self) -> TrialReading:
        return self

    def __exit__(self, *exc: object) -> None:
        for i in range(len(self.workers)):
            _stop(self.workers, i)

    def attempts(self) -> list[_Attempt]:
        """This process's run of trials, then each worker's, joined in trial order."""
        if not self.workers:
            return read_trials(self.reader, self.progress, self.names)
        total = len(self.names)
        if self.progress:
            self.progress(0, total)
        attempts: list[_Attempt] = []
        done = 0
        for i, run in enumerate(self.runs):
            if i == 0:
                found = _read_here(self.reader, run)
            else:
                found = _join(self.reader, run, self.workers, i - 1)
            attempts.extend(a for a in found if a is not None)
            done += len(run)
            if self.progress:
                self.progress(done, total)
        return attempts


def _parts(total: int, jobs: int | None) -> int:
    """How many runs ``total`` trials are read in: ``jobs`` (None: one), each of at least
    ``_MIN_TRIALS_PER_WORKER`` trials."""
    if jobs is None or not hasattr(os, "fork"):
        return 1
    return max(1, min(jobs, total // _MIN_TRIALS_PER_WORKER))


def _read_here(reader: _Reader, names: list[str]) -> list[_Attempt | None]:
    return [_read_trial(reader, name) for name in names]


def _start(root: str, names: list[str]) -> tuple[int, int] | None:
    """Fork a worker reading ``names``: (pid, the pipe's read end), or None if it cannot."""
    try:
        out, into = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(out)
        os.close(into)
        return None
    if pid == 0:  # the worker: read, write, exit without the command's exit handlers
        code = 1
        try:
            os.close(out)
            with _Reader(root) as reader, os.fdopen(into, "wb") as pipe:
                found: _Found = (_read_here(reader, names), reader.files)
                pipe.write(pickle.dumps(found, pickle.HIGHEST_PROTOCOL))
            code = 0
        finally:
            os._exit(code)
    os.close(into)
    return pid, out


def _join(
    reader: _Reader, names: list[str], workers: list[tuple[int, int] | None], i: int
) -> list[_Attempt | None]:
    """Worker ``i``'s attempts, its digests added to ``reader``; read here if it failed."""
    worker = workers[i]
    found: _Found | None = None
    if worker is not None:
        with os.fdopen(worker[1], "rb") as pipe:
            data = pipe.read()
        workers[i] = (worker[0], -1)
        if _stop(workers, i) == 0 and data:
            found = pickle.loads(data)
    if found is None:  # the same error, if any, in trial order and in its own words
        return _read_here(reader, names)
    reader.files.update(found[1])
    return found[0]


def _stop(workers: list[tuple[int, int] | None], i: int) -> int:
    """Reap worker ``i`` (killed first if its pipe is still open): its exit code, -1 if none."""
    worker, workers[i] = workers[i], None
    if worker is None:
        return -1
    pid, out = worker
    if out >= 0:
        os.close(out)
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    try:
        return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    except ChildProcessError:
        return -1
