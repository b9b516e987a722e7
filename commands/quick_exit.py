"""Ending the process without tearing the interpreter down, for commands that ask for it.

A 3,000-trial ``benchmark run`` holds tens of thousands of parsed objects when its output is
printed; normal interpreter shutdown then frees every one of them and runs a last cyclic
collection over what is left: ~30-50 ms of a ~0.7 s command that nobody waits for a result
of (bench/README.md, "Harbor ingest: skipping teardown"). A command that has finished all of
its work (store closed, files written, output printed) calls ``allow()``; ``main`` then ends
the process with ``os._exit`` once the exit functions ran and stdout/stderr are flushed.

Only when it is safe: a clean exit code, no other thread alive (shutdown would wait for a
non-daemon one), and every flush succeeded; otherwise the normal shutdown runs as before.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading

_allowed = False
_kept: object = None


def allow(keep: object = None) -> None:
    """The running command has nothing left to finish: teardown may be skipped.

    ``keep`` (its printed payload, say) is held until the process ends, so freeing it object
    by object is skipped too; a later ``allow`` in the same process (a test runner's) lets
    the previous one go."""
    global _allowed, _kept
    _allowed = True
    _kept = keep


def reset() -> None:
    """A new command starts: nothing is allowed until it says so (an earlier command run in
    the same process, by a test runner say, must not let this one skip its shutdown)."""
    global _allowed, _kept
    _allowed = False
    _kept = None


def exit_now(code: object) -> None:
    """``os._exit(code)`` when ``allow()`` was called and nothing could be lost; else return
    so the caller re-raises its ``SystemExit`` and Python shuts down as usual."""
    if not _allowed or not (code is None or type(code) is int):
        return
    if threading.active_count() != 1:
        return
    try:
        atexit._run_exitfuncs()  # what shutdown would run: finalizers, temp directories
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed or broken stream: let shutdown report it
        return
    os._exit(code or 0)
