"""Reading a Harbor job's trials on two cores: a reader forked at start-up, and the command.

A 3,000-trial ``benchmark run`` spends its first ~0.2 s importing the command modules (click,
the handlers, the projections) on one core and then ~0.35 s reading the trials one after the
other on the same core, while the second core idles. Reading a trial needs none of those
modules and none of the command's options: each trial directory is read the same way whatever
the flags say. So the console script (``commands.entry``), before it imports anything else,
looks in the raw arguments for ``--harbor-job-dir`` and forks a reader for that directory. The
reader imports only the Harbor reading module and reads trials from the first one on; when
the command reaches the trials it reads from the last one back, and the two stop where they
meet (``Split``). The reader writes its trials as JSON lines into an in-memory file while it
reads them, so it never waits for the command to drain a pipe, and the command reads them all
at once when the reader has exited (``harbor_reading.read_front_for_prefetch``,
``harbor_reading.observed_trials``).

The reader can change how long an ingest takes, never what it records. Anything unusual makes
the command read every trial itself, as it always did: no ``fork`` here, a command line the
scan does not recognise, another directory or another listing than the command's, a reader
that failed or raised (a FIFO, a NUL, an unreadable directory: the command then meets the same
file and reports it in its own words, in trial order), a broken pipe. ``BENCHLEDGER_PREFETCH=0``
turns it off.

Forking this early is cheap: the process holds little besides the interpreter yet, so
neither side pays for copying pages the other one touches.
"""

from __future__ import annotations

import atexit
import mmap
import os
import signal
import sys
import time

_DISABLE_ENV = "BENCHLEDGER_PREFETCH"
_OPTION = "--harbor-job-dir"
_NOBODY = 1 << 62  # the back's claim before the command claims any trial


class Split:
    """Which trials each side takes, in three counters both processes see (a shared page).

    The reader claims trials 0, 1, 2, ... (``take_front``), the command N-1, N-2, ...
    (``take_back``); each side reads every trial it claimed and stops at the first one the
    other side already holds. Each counter has one writer and only grows (front) or shrinks
    (back), so a late view of the other's counter only makes a side read a trial twice where
    they meet, never skip one; the command keeps the front's copy of such a trial.
    """

    def __init__(self, pid: int, fd: int, shared: object) -> None:
        self.pid = pid
        self.fd = fd  # the in-memory file the reader writes its trials to
        self._shared = shared
        # [0] the front's next trial, [1] the back's last claim, [2] how many trials (-1: not yet)
        self._counters = memoryview(shared).cast("q")  # type: ignore[arg-type]
        self._reaped = False
        self._status = -1  # the reader's exit code, once reaped

    # the reader's side

    def begin(self, total: int) -> None:
        self._counters[2] = total

    def take_front(self, i: int) -> bool:
        if i >= self._counters[1]:
            return False
        self._counters[0] = i + 1
        return True

    # the command's side

    def wait_begun(self) -> int:
        """How many trials the reader listed (-1 if it ended first), once it has listed them."""

        while self._counters[2] < 0:
            if self._reap(block=False) is not None:
                return -1
            time.sleep(0.0005)
        return self._counters[2]

    def take_back(self, i: int) -> bool:
        if i < self._counters[0]:
            return False
        self._counters[1] = i
        return True

    def result(self) -> bytes | None:
        """What the reader wrote, once it has exited, or None if it failed."""
        if self._reap(block=True) != 0:
            return None
        size, done = os.fstat(self.fd).st_size, 0
        chunks: list[bytes] = []
        while done < size and (chunk := os.pread(self.fd, size - done, done)):
            chunks.append(chunk)
            done += len(chunk)
        return b"".join(chunks) or None

    def close(self) -> None:
        """Stop the reader if it still runs, and release its file and the shared page."""

        if not self._reaped:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
            self._reap(block=True)
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        self._counters.release()

    def _reap(self, *, block: bool) -> int | None:
        if self._reaped:
            return self._status
        try:
            pid, status = os.waitpid(self.pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            pid, status = self.pid, -1
        if pid == 0:
            return None
        self._reaped, self._status = True, os.waitstatus_to_exitcode(status) if status != -1 else -1
        return self._status


_pending: Split | None = None


def job_dir_in(argv: list[str]) -> str | None:
    """The value of ``--harbor-job-dir`` in a ``benchmark run`` command line, or None.

    Only a guess made before click parses the line (the value of another option could look
    like the flag); the command uses the reader only for the directory it resolved itself."""
    if "benchmark" not in argv or "run" not in argv:
        return None
    found = None
    for i, arg in enumerate(argv):
        if arg == _OPTION and i + 1 < len(argv):
            found = argv[i + 1]
        elif arg.startswith(_OPTION + "="):
            found = arg[len(_OPTION) + 1 :]
    return found or None


def start(argv: list[str]) -> None:
    """Fork a reader for the Harbor job named in ``argv``, if any (see the module docstring)."""
    job_dir = job_dir_in(argv)
    if job_dir is not None and _pending is None and _enabled():
        fork_reader(job_dir)


def fork_reader(job_dir: str, *, back: int = _NOBODY) -> None:
    """Fork the reader of ``job_dir`` for the next ``claim``. ``back``: trials from there on
    count as claimed by the command already (tests set it to pin where the two sides meet)."""
    global _pending

    try:
        shared = mmap.mmap(-1, mmap.PAGESIZE)
        out_fd = os.memfd_create("benchledger-trials", os.MFD_CLOEXEC)
    except OSError:
        return
    counters = memoryview(shared).cast("q")
    counters[0], counters[1], counters[2] = 0, back, -1
    counters.release()
    try:
        pid = os.fork()
    except OSError:
        os.close(out_fd)
        return
    if pid == 0:  # the reader
        _serve(job_dir, Split(os.getpid(), -1, shared), out_fd)  # never returns
    _pending = Split(pid, out_fd, shared)

    atexit.register(discard)


def _enabled() -> bool:
    return (
        sys.platform.startswith("linux")
        and hasattr(os, "fork")
        and hasattr(os, "memfd_create")
        and os.environ.get(_DISABLE_ENV, "1") != "0"
    )


def _serve(job_dir: str, split: Split, out_fd: int) -> None:
    """The reader's whole life: read and write, then exit without running the parent's exit
    handlers."""
    code = 1
    try:
        import gc

        gc.disable()  # as while the command reads: nothing read here is garbage
        from benchledger.ledger.sources.harbor.reading import read_front_for_prefetch
        with os.fdopen(out_fd, "wb") as out:
            read_front_for_prefetch(job_dir, split, out.write)
        code = 0
    except BaseException:  # noqa: BLE001 - any failure: the command reads for itself
        pass
    finally:
        os._exit(code)


def claim() -> Split | None:
    """The reader started for this command, handed over once (None: there is none)."""
    global _pending
    split, _pending = _pending, None
    return split


def discard() -> None:
    """Stop a reader nobody claimed (the command took another path or failed early)."""
    split = claim()
    if split is not None:
        split.close()
