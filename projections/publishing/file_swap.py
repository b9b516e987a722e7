"""Putting a large finished temp file in place of the file it replaces, without the wait that
``rename`` over an existing file costs on ext4.

ext4 (mounted with the default ``auto_da_alloc``) starts writing back every dirty page of the
renamed file when a ``rename`` replaces an existing one: its guess at an application that
forgot to fsync. For the ~90 MB ledger JSON of a 30,000-row ledger that was 40-55 ms of wall
time per upsert (13 ms of CPU) spent waiting in ``rename``, and the unlink of the old file's
blocks and pages another 25-30 ms. The store does not need that write-back: it is the durable
copy, and a ledger file a crash emptied or rolled back is reported by ``verify --files`` and
written again by ``render`` (``projections/publishing/ledger_files.py``).

So on Linux a large file is swapped in with ``renameat2(RENAME_EXCHANGE)``: the target name
atomically points at the new file (a reader sees the old or the new file, never neither, as
with ``rename``), the temp name at the old one, and the old file is unlinked on a thread while
the command goes on (the interpreter waits for it at exit). A crash before that unlink leaves
the old file under the temp name, which the next render's sweep removes like any leftover temp
file. Where the call is missing or refused (another OS, a file system without exchange, a
target that is not a regular file) this is ``os.replace``.
"""

from __future__ import annotations

import os
import stat
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Below this a file's write-back is too short to be worth loading ctypes (~4 ms) for.
SWAP_MIN_BYTES = 1 << 20

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_renameat2: Any = None  # the libc function once loaded; False when unavailable
_loading = threading.Lock()
_discarding: dict[Path, threading.Thread] = {}


def replace_file(tmp: Path, path: Path, size: int) -> None:
    """``os.replace(tmp, path)``; for a file of ``size >= SWAP_MIN_BYTES`` replacing a regular
    file, an exchange and the old file unlinked in the background."""
    if size < SWAP_MIN_BYTES or not _exchange(tmp, path):
        os.replace(tmp, path)
        return
    thread = threading.Thread(target=_unlink, args=(tmp,), name="discard-old-file")
    _discarding[tmp] = thread
    thread.start()


def preload() -> None:
    """Load the exchange call now (importing ctypes costs ~5 ms): ``atomic_stream`` runs this
    on its writer thread while the caller is still producing the file."""
    _load()


def preload_for(path: Path) -> Callable[[], None] | None:
    """``preload`` when writing ``path`` may end in an exchange, else None: only a regular
    file already there is exchanged (``_exchange``), so the first write of a file (a new
    project's ledger, the first ingest into it) does not load ctypes for nothing."""
    try:
        return preload if stat.S_ISREG(os.lstat(path).st_mode) else None
    except OSError:
        return None


def wait_discarded(tmp: Path) -> None:
    """Before ``tmp`` is created again: the old file still unlinking under that name is gone."""
    thread = _discarding.pop(tmp, None)
    if thread is not None:
        thread.join()


def wait_all_discarded() -> None:
    """Every old file still unlinking is gone: what interpreter shutdown would wait for (the
    threads are not daemons), so a command that skips shutdown (``commands/quick_exit.py``)
    waits here instead, after the rest of its work overlapped the unlinks."""
    while _discarding:
        _discarding.popitem()[1].join()


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass  # a leftover temp file: the next render's sweep removes it


def _exchange(tmp: Path, path: Path) -> bool:
    """Swap the two names; False (nothing changed) when that is not possible here."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
    except OSError:
        return False  # nothing to replace: a plain rename creates it
    call = _load()
    if not call:
        return False
    return call(_AT_FDCWD, os.fsencode(tmp), _AT_FDCWD, os.fsencode(path), _RENAME_EXCHANGE) == 0


def _load() -> Any:
    global _renameat2
    with _loading:  # the writer thread may be loading it right now (``preload``)
        if _renameat2 is None:
            _renameat2 = _find_renameat2()
    return _renameat2


def _find_renameat2() -> Any:
    """libc's ``renameat2``, or False where there is none to call."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        call = ctypes.CDLL(None, use_errno=True).renameat2
    except (ImportError, OSError, AttributeError):  # no ctypes, or glibc before 2.28
        return False
    call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    call.restype = ctypes.c_int
    return call
