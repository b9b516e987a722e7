"""Named crash points for the kill-anywhere tests.

``BENCHLEDGER_FAULT_POINT=<name>`` makes the process SIGKILL itself the first time it reaches
``<name>``; ``<name>@<n>`` waits for the n-th time (a point reached once per file, say). The
variable is read once at import, so an unset variable costs one ``is None`` test per point:
production code can call ``reach`` on its hot paths.

Why SIGKILL and not an exception: a kill runs no ``finally``, no rollback and no flush, which is
exactly the crash the store and the atomic file writes must survive.
"""

from __future__ import annotations

import os
import signal

_SPEC = os.environ.get("BENCHLEDGER_FAULT_POINT") or None


def _parse(spec: str) -> tuple[str, int]:
    name, _, nth = spec.partition("@")
    return name, int(nth) if nth.isdigit() and int(nth) > 0 else 1


_TARGET = _parse(_SPEC) if _SPEC else None
_seen = 0


def reach(point: str) -> None:
    """Die here, now, if this is the armed point (and its armed occurrence)."""
    if _TARGET is None or point != _TARGET[0]:
        return
    global _seen
    _seen += 1
    if _seen == _TARGET[1]:
        os.kill(os.getpid(), signal.SIGKILL)
