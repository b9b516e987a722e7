"""Reading a large source on several cores: the one speed trick of the runner readers, kept
behind one call (``ForkedRuns``) and used only when the user asks for it (``--jobs N``).

What is read (the trials of a Harbor job, the logs of an Inspect directory) is cut into ``jobs``
runs of neighbours. ``jobs - 1`` workers are forked at once, each reading one run; this process
reads the first run when the caller asks for the results, and then joins the workers' runs in
order. So the results, and the first error, are those a reading on one core gives: a run whose
worker failed for any reason is simply read again here, where the same input then raises the
same error in its own words.

Each worker is a plain ``fork`` with a pipe: its result crosses back pickled once it has read
its whole run, and it exits without running the command's exit handlers. A worker costs CPU
(the pages ``fork`` shares and both processes then copy, the pickling both ways), so it pays
only with a core to spare and enough to read: each run holds at least ``min_per_run`` items.
``concurrent.futures`` would do the same but costs every ``benchmark run`` ~15 ms of imports
(``multiprocessing.connection``). Without ``fork`` (not POSIX) everything is read here.
Measured gains are in bench/README.md ("Method", "Current results").
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Iterator, Sequence
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")
_Worker = tuple[int, int]  # (pid, the read end of its pipe; -1 once read)


class ForkedRuns(Generic[Item, Result]):
    """``read`` applied to runs of ``items`` on up to ``jobs`` cores (None: one)::

        with ForkedRuns(paths, read_paths, jobs, min_per_run=4) as runs:
            ...  # anything else to read meanwhile
            for run, result in runs.results():
                ...

    ``prepare`` runs once before the first fork (to import what every worker needs, so it is
    imported once). Leaving the block reaps every worker (killed if it has not finished)."""

    def __init__(
        self,
        items: Sequence[Item],
        read: Callable[[list[Item]], Result],
        jobs: int | None,
        *,
        min_per_run: int,
        prepare: Callable[[], object] | None = None,
    ) -> None:
        self.read = read
        total = len(items)
        size = -(-total // parts(total, jobs, min_per_run)) if total else 1
        self.runs = [list(items[i : i + size]) for i in range(0, total, size)]
        if prepare is not None and len(self.runs) > 1:
            prepare()
        self.workers: list[_Worker | None] = [_start(read, run) for run in self.runs[1:]]

    @property
    def forked(self) -> bool:
        """Whether the items are read on more than one core."""
        return len(self.runs) > 1

    def __enter__(self) -> ForkedRuns[Item, Result]:
        return self

    def __exit__(self, *exc: object) -> None:
        for i in range(len(self.workers)):
            _stop(self.workers, i)

    def results(self) -> Iterator[tuple[list[Item], Result]]:
        """Each run with what ``read`` made of it, in order: the first read here, then each
        worker's, read here again if that worker failed."""
        for i, run in enumerate(self.runs):
            yield run, (self.read(run) if i == 0 else self._join(run, i - 1))

    def _join(self, run: list[Item], i: int) -> Result:
        worker = self.workers[i]
        if worker is not None:
            with os.fdopen(worker[1], "rb") as pipe:
                data = pipe.read()
            self.workers[i] = (worker[0], -1)
            if _stop(self.workers, i) == 0 and data:
                result: Result = pickle.loads(data)
                return result
        return self.read(run)  # the same error, if any, in order and in its own words


def parts(total: int, jobs: int | None, min_per_run: int) -> int:
    """How many runs ``total`` items are read in: ``jobs`` (None: one), each of at least
    ``min_per_run`` items."""
    if jobs is None or not hasattr(os, "fork"):
        return 1
    return max(1, min(jobs, total // min_per_run))


def _start(read: Callable[[list[Item]], object], run: list[Item]) -> _Worker | None:
    """Fork a worker reading ``run``: (pid, the pipe's read end), or None if it cannot."""
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
            with os.fdopen(into, "wb") as pipe:
                pipe.write(pickle.dumps(read(run), pickle.HIGHEST_PROTOCOL))
            code = 0
        finally:
            os._exit(code)
    os.close(into)
    return pid, out


def _stop(workers: list[_Worker | None], i: int) -> int:
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
