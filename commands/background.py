"""Run a pure, heavy step in a forked child while this process does its own start-up.

Reading a large Harbor job is pure (files in, records out) and CPU-bound, and so is loading
the store's code (SQLAlchemy and the projections take about as long to import as a
3,000-trial job takes to read). They do not depend on each other, so on a machine with a
second core a big ingest forks once: the child reads and compacts the job, the parent imports
meanwhile, then takes the child's result over a pipe. The child never touches the database,
never writes a file and leaves with ``os._exit``, so nothing it inherited (click's context,
pytest, atexit hooks) runs twice.

Errors keep their meaning: whatever the child raised is raised again here (a
``BenchledgerError`` with its message and details), and a child that dies without answering
is reported on one line. Where ``fork`` is missing, or the work is too small to pay for the
fork, the step simply runs inline.
"""

from __future__ import annotations

import os
import pickle
import signal
from collections.abc import Callable
from typing import Generic, TypeVar

from ledger.errors import InputError

T = TypeVar("T")


class Pending(Generic[T]):
    """The result of ``start``: call ``result()`` once to get the value or the child's error."""

    def __init__(self, pid: int | None, read_fd: int | None, inline: Callable[[], T] | None):
        self._pid = pid
        self._read_fd = read_fd
        self._inline = inline

    def result(self) -> T:
        if self._inline is not None:
            return self._inline()
        assert self._read_fd is not None and self._pid is not None
        with os.fdopen(self._read_fd, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(self._pid, 0)
        if not data:
            raise InputError(f"reading the input failed: the reader process {_exit_text(status)}")
        ok, value = pickle.loads(data)
        if ok:
            return value
        raise value

    def cancel(self) -> None:
        """Stop a child whose result is no longer wanted (the parent is failing)."""
        if self._pid is None:
            return
        try:
            os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        if self._read_fd is not None:
            os.close(self._read_fd)


def start(work: Callable[[], T], *, parallel: bool) -> Pending[T]:
    """Begin ``work``: in a forked child when ``parallel`` and ``fork`` exist, else on call."""
    if not parallel or not hasattr(os, "fork") or (os.cpu_count() or 1) < 2:
        return Pending(None, None, work)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read_fd)
        _child(work, write_fd)
    os.close(write_fd)
    return Pending(pid, read_fd, None)


def _child(work: Callable[[], object], write_fd: int) -> None:
    code = 0
    try:
        try:
            message = pickle.dumps((True, work()), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as exc:  # noqa: BLE001 - every outcome goes back to the parent
            message = _error_message(exc)
        with os.fdopen(write_fd, "wb") as pipe:
            pipe.write(message)
    except BaseException:  # noqa: BLE001 - the parent is gone or the pipe broke: just leave
        code = 1
    finally:
        os._exit(code)


def _error_message(exc: BaseException) -> bytes:
    try:
        return pickle.dumps((False, exc), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - an exception that will not pickle still gets its text
        return pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")))


def _exit_text(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"was killed by signal {os.WTERMSIG(status)}"
    return f"exited with status {os.waitstatus_to_exitcode(status)} without an answer"
