"""Published files: their digests are recorded as ``export_written`` events, so a reader can
ask whether a ledger JSON/Markdown on disk still matches what the store published.

Every published file takes one path: its bytes go to a new file beside the target created
with ``O_CREAT|O_EXCL|O_NOFOLLOW`` under an unpredictable name ``.<name>.<pid>.<random>.tmp``
(40 bits from ``os.urandom``), which is then renamed over the target. A link planted at a
temp name is never written through (the name is not known ahead, and creation refuses an
existing entry), and ``os.replace`` replaces a name without following it. A target that is a
symbolic link is refused rather than replaced: whoever put it there meant something by it.

A process killed mid-write (or a full disk) leaves its temp file behind; no later write trips
over it (each write picks a fresh name), and the first write of a process into a directory
removes temp files whose writer is gone or that are older than ``STALE_TEMP_SECONDS``.
"""

from __future__ import annotations

import binascii
import errno
import hashlib
import os
import queue
import re
import stat
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson

from benchledger.ledger.core.input_files import (
    LEDGER_JSON_LIMIT,
    UnreadableFileError,
    read_regular_file,
)
from benchledger.ledger.store.connection import placeholders
from benchledger.ledger.store.events import EXPORT_WRITTEN
from benchledger.projections.publishing.global_registry_file import (
    GLOBAL_REGISTRY_KIND as REGISTRY_KIND,
)
from benchledger.projections.publishing.global_registry_file import (
    OwnEntries,
    own_entries,
    registry_file_digest,
)

if TYPE_CHECKING:
    from benchledger.ledger.store.event_store import EventStore
STALE_TEMP_SECONDS = 3600  # no render takes an hour: an older temp file is a leftover
# ``.<name>.<pid>.<8 random characters>.tmp`` (``mkstemp``'s alphabet, which earlier versions
# used, holds the base32 one of ``_temp_token``), and ``.<name>.<pid>.tmp``: the predictable
# name of earlier versions, whose leftovers are swept the same way.
_TEMP_NAME = re.compile(r"^\..+\.(\d+)\.[a-z0-9_]{8}\.tmp$")
_OLD_TEMP_NAME = re.compile(r"^\..+\.(\d+)\.tmp$")
_swept: set[str] = set()  # directories the current render has already cleaned (as str)
# What ``tempfile.mkstemp`` opens with, created 0o666 so that the kernel applies the umask (and
# any default ACL) exactly as ``open(path, "wb")`` does: no ``fchmod`` after.
_TEMP_FLAGS = (
    os.O_RDWR
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
_TOKEN_LETTERS = bytes.maketrans(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
    b"abcdefghijklmnopqrstuvwxyz234567" * 2,
)
_TEMP_ATTEMPTS = 100  # names already taken in a row before giving up (mkstemp tries 10,000)


def sha256_file(path: Path) -> str | None:
    """None when there is no regular file to hash: a FIFO planted where a ledger was published
    must not block ``verify --files`` (the bounded reader never opens one for a blocking read)."""

    try:
        data = read_regular_file(path, shown=path.name, limit=LEDGER_JSON_LIMIT)
    except (OSError, UnreadableFileError):
        return None
    return hashlib.sha256(data).hexdigest()


def atomic_write(path: str | Path, data: bytes, *, durable: bool = True) -> None:
    """Write beside the target, then rename: a reader sees the old or the new file, never half.

    ``durable`` adds an fsync before the rename (power-loss safety); per-run files that the
    store can always re-render skip it, since thousands of fsyncs dominate a large ingest.
    The work is done on ``str`` paths: a render writes tens of thousands of run files, and
    building a ``Path`` for each target, directory and temp name cost as much as the writes.
    """
    path = os.fspath(path)
    directory = os.path.dirname(path) or "."
    if directory not in _swept:  # a directory swept in this render was there: no mkdir
        os.makedirs(directory, exist_ok=True)
        sweep_stale_temp_files(directory)
    refuse_link(path)
    try:
        fd, tmp = _open_temp(directory, os.path.basename(path))
    except FileNotFoundError:  # the directory went away since: make it again, as before
        os.makedirs(directory, exist_ok=True)
        fd, tmp = _open_temp(directory, os.path.basename(path))
    _finish_write(fd, tmp, path, data, durable)


def write_unless_same(path: str, data: bytes) -> None:
    """``atomic_write`` of a re-rendered file (not fsynced), left alone when ``path`` already
    is exactly what writing would leave: a regular file of ours, with one link, a new file's
    mode and the bytes ``data``.

    Why: rendering a goal again (a repeated ingest, ``benchledger render``) replaced every run
    file with the same bytes, and on ext4 creating and renaming 20,000 files takes seconds where
    reading them takes a tenth of one (docs/architecture.md, "Publish after commit"). Anything
    else there (another mode, owner or size, a link, a second name, other bytes) is written as
    before, so what a reader finds afterwards is the same either way."""
    try:
        seen = os.lstat(path)
    except OSError:
        seen = None
    if seen is not None and _looks_written(seen, len(data)) and _holds(path, seen, data):
        return
    atomic_write(path, data, durable=False)


def _looks_written(seen: os.stat_result, size: int) -> bool:
    """What ``atomic_write`` leaves, by its metadata: a regular file of this user, one link,
    0o666 less the umask, ``size`` bytes."""
    return (
        stat.S_ISREG(seen.st_mode)
        and seen.st_size == size
        and seen.st_nlink == 1
        and seen.st_uid == _OWNER
        and stat.S_IMODE(seen.st_mode) == _new_file_mode()
    )


def _holds(path: str, seen: os.stat_result, data: bytes) -> bool:
    """``path`` is still the file ``seen`` and its bytes are ``data`` (opened without following
    a link and without blocking, in case it was swapped since the ``lstat``)."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
    except OSError:
        return False
    try:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (seen.st_dev, seen.st_ino):
            return False
        return os.read(fd, len(data) + 1) == data
    except OSError:
        return False
    finally:
        os.close(fd)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_OWNER = os.geteuid() if hasattr(os, "geteuid") else 0  # Windows reports st_uid 0
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


@lru_cache(maxsize=1)
def _new_file_mode() -> int:
    """The mode a file created 0o666 gets: the umask, read once (setting it back at once)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def _finish_write(fd: int, tmp: str | Path, path: str | Path, data: bytes, durable: bool) -> None:
    """Write ``data`` to the new temp file ``fd`` and rename it over ``path``; on any error the
    temp file is removed and the target left as it was."""
    # Unbuffered, without ``open``'s file object (its size, tty and position probes are three
    # more system calls per file, and a large ingest writes hundreds of files).
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        remove_quietly(tmp)
        raise


def atomic_copy(source: Path, path: Path) -> None:
    """``atomic_write`` of a file's contents, copied in chunks (a snapshot database can be
    larger than is worth holding in memory)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = create_temp(path)
    try:
        with os.fdopen(fd, "wb") as out, open(source, "rb") as src:
            while chunk := src.read(1 << 20):
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        remove_quietly(tmp)
        raise


def create_temp(path: Path) -> tuple[int, Path]:
    """A new empty file beside ``path`` to write it under (descriptor and name), created with
    ``O_EXCL|O_NOFOLLOW`` under a name no one can guess ahead; refused when ``path`` itself is
    a symbolic link. The caller renames it over ``path`` or removes it."""
    refuse_link(path)
    try:
        fd, name = _mkstemp(path)
    except FileNotFoundError:  # the directory went away since: make it again, as before
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = _mkstemp(path)
    return fd, Path(name)


def refuse_link(path: str | Path) -> None:
    """An ``OSError`` (one line once the render reports it, ``projections/publishing/
    render.py``) when ``path`` is a symbolic link: publishing never writes through one and
    never silently replaces one."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return  # nothing there yet (or unreadable: the write itself says why)
    if stat.S_ISLNK(mode):
        raise OSError(errno.ELOOP, "is a symbolic link; refusing to write through it", str(path))


def _mkstemp(path: Path) -> tuple[int, str]:
    """An absolute temp name, as ``tempfile.mkstemp`` gave."""
    return _open_temp(os.path.abspath(path.parent), path.name)


def _open_temp(directory: str, name: str) -> tuple[int, str]:
    """``tempfile.mkstemp``'s guarantees (a new entry, never a link followed, a name from the
    OS's random source) without its per-call costs, and the mode ``open(path, "wb")`` gives
    (0o666 less the umask, applied by the kernel) instead of 0o600 that needed an ``fchmod``."""
    prefix = f"{directory}/.{name}.{os.getpid()}."
    for _ in range(_TEMP_ATTEMPTS):
        tmp = f"{prefix}{_temp_token()}.tmp"
        try:
            return os.open(tmp, _TEMP_FLAGS, 0o666), tmp
        except FileExistsError:
            continue  # someone holds that name: draw another
    raise FileExistsError(errno.EEXIST, "no unused temporary name found", prefix)


def _temp_token() -> str:
    """8 characters (40 bits) from ``os.urandom``: not derivable from the pid or the clock.

    6 random bytes in base64 are 8 characters of 6 bits; ``_TOKEN_LETTERS`` maps the 64
    letters two to one onto 32 of ``mkstemp``'s, 5 uniform bits each. (``base64.b32encode``
    gives the same in pure Python, a third slower; 20,000 names a render.)"""
    return binascii.b2a_base64(os.urandom(6), newline=False).translate(_TOKEN_LETTERS).decode()


def remove_quietly(path: str | Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass  # a leftover temp file: the next render's sweep removes it


class HashingWriter:
    """Hashes and writes chunks on a background thread while the caller produces the next
    ones: sha256, ``write`` and ``fsync`` all release the GIL, so streaming a 90 MB ledger
    out of the database overlaps with hashing and writing it instead of waiting for both.

    At most ``_PENDING`` chunks are queued (bounded memory: each queued chunk holds ~1 MB of
    fragments the heap cannot reuse until it is written, so a deeper queue only costs fresh
    pages, ~256 page faults per MB). An error on the thread is kept, the rest of the stream is
    discarded, and ``finish`` raises it.
    """

    _PENDING = 3

    def __init__(self, handle: BinaryIO, *, durable: bool) -> None:
        self._handle = handle
        self._durable = durable
        self._digest = hashlib.sha256()
        self._queue: queue.Queue[tuple[bytes, list[bytes]] | None] = queue.Queue(
            maxsize=self._PENDING
        )
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="atomic-stream", daemon=True)
        self._thread.start()

    def write(self, data: bytes) -> None:
        self._queue.put((b"", [data]))

    def write_parts(self, parts: list[bytes], separator: bytes = b"") -> None:
        """Queue ``parts`` to be written one after the other, ``separator`` between each two:
        the thread joins them into one chunk, and CPython copies a join of 1 MB or more
        without holding the GIL, so the caller does not pay for that copy of every byte.
        The list belongs to the writer from now on."""
        self._queue.put((separator, parts))

    def hexdigest(self) -> str:
        return self._digest.hexdigest()

    def finish(self) -> None:
        """Wait until every chunk is hashed, written and (when durable) on disk."""
        self._queue.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            if self._error is None:
                separator, parts = item
                try:
                    chunk = parts[0] if len(parts) == 1 else separator.join(parts)
                    self._digest.update(chunk)
                    self._handle.write(chunk)
                except BaseException as exc:  # noqa: BLE001 - re-raised by finish()
                    self._error = exc
        if self._error is None:
            try:
                self._handle.flush()
                if self._durable:
                    os.fsync(self._handle.fileno())
            except BaseException as exc:  # noqa: BLE001 - re-raised by finish()
                self._error = exc


@dataclass
class StagedFile:
    """A file written in full under its temp name (``create_temp``), not yet in place:
    ``publish`` puts it there, ``discard`` removes it. A process killed in between leaves the
    temp file, which the next render's sweep removes like any other leftover."""

    tmp: Path
    path: Path
    size: int
    sha256: str

    def publish(self) -> None:
        os.replace(self.tmp, self.path)

    def discard(self) -> None:
        remove_quietly(self.tmp)


class StagedStream:
    """``with StagedStream(path) as out:`` writes the file in pieces through ``out`` (a
    ``HashingWriter``); after the block, ``staged`` is the finished file, still under its temp
    name. On an exception the temp file is removed. ``atomic_stream`` publishes it at once;
    a render that writes two files streams both, then publishes them in order."""

    def __init__(self, path: Path, *, durable: bool = True) -> None:
        self.path = path
        self.durable = durable
        self.tmp: Path | None = None  # named when the block starts
        self.staged: StagedFile | None = None
        self._handle: BinaryIO | None = None
        self._writer: HashingWriter | None = None

    def __enter__(self) -> HashingWriter:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        sweep_stale_temp_files(self.path.parent)
        fd, self.tmp = create_temp(self.path)
        try:
            self._handle = os.fdopen(fd, "wb")
        except BaseException:
            os.close(fd)
            remove_quietly(self.tmp)
            raise
        self._writer = HashingWriter(self._handle, durable=self.durable)
        return self._writer

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        assert self._handle is not None and self._writer is not None and self.tmp is not None
        try:
            try:
                self._writer.finish()
                size = self._handle.tell()
            finally:
                self._handle.close()
        except BaseException:
            remove_quietly(self.tmp)
            raise
        if kind is not None:
            remove_quietly(self.tmp)
            return
        self.staged = StagedFile(self.tmp, self.path, size, self._writer.hexdigest())


@contextmanager
def atomic_stream(path: Path, *, durable: bool = True) -> Iterator[HashingWriter]:
    """``atomic_write`` for data written in pieces: the target is replaced only when the
    block finishes; on an exception the temp file is removed and the target left as it was."""
    stream = StagedStream(path, durable=durable)
    with stream as writer:
        yield writer
    assert stream.staged is not None
    try:
        stream.staged.publish()
    except BaseException:
        stream.staged.discard()
        raise


def start_sweeping() -> None:
    """A new render: each directory it writes into is swept once more."""
    _swept.clear()


def sweep_stale_temp_files(directory: str | Path) -> list[Path]:
    """Remove temp files (``create_temp``) left in ``directory`` by a writer that is gone (or
    older than ``STALE_TEMP_SECONDS``, in case the pid was reused); once per render and
    directory (``start_sweeping``). A live writer's temp file is left alone."""
    key = os.fspath(directory)
    if key in _swept:
        return []
    _swept.add(key)
    removed: list[Path] = []
    now = time.time()
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        match = _TEMP_NAME.match(entry.name) or _OLD_TEMP_NAME.match(entry.name)
        if match is None or not entry.is_file(follow_symlinks=False):
            continue
        pid = int(match.group(1))
        try:
            old = now - entry.stat(follow_symlinks=False).st_mtime > STALE_TEMP_SECONDS
        except OSError:
            continue
        if pid == os.getpid() or (_alive(pid) and not old):
            continue
        try:
            os.unlink(entry.path)
            removed.append(Path(entry.path))
        except OSError:
            pass
    return removed


def writer_gone(pid: int) -> bool:
    """No process ``pid`` runs (a temp file or staging directory it named is a leftover)."""
    return not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # someone else's process (or a number no pid can be): leave it
    return True


@dataclass
class ExportCheck:
    """``verify --files``: each published file's status and whether the store's last
    committed events were rendered at all."""

    files: list[dict[str, Any]]
    summary: dict[str, Any]

    @property
    def ok(self) -> bool:
        return self.summary["ok"] and all(f["ok"] for f in self.files)


_LAST_EVENT_SQL = "SELECT position FROM events WHERE event_type <> ? ORDER BY position DESC LIMIT 1"
_LAST_EXPORT_SQL = "SELECT max(position) FROM events WHERE event_type = ?"


def verify_exports(store: EventStore) -> ExportCheck:
    """Compare every published file with the store.

    A file is ``match`` only when its bytes are the ones recorded, the ``export_written`` event
    that recorded them is still in the chain (at or below the head) and lists it, and no
    command committed events after it without rendering (``stale``). ``beyond_head``: its
    export is past the head (the tail of the chain was deleted); ``export_missing``: the event
    that recorded it is gone or does not list it.
    """
    with store.database.connect() as conn:
        head = store.head_position(conn)
        rows = conn.execute(
            "SELECT path, kind, sha256, position FROM rm_exports ORDER BY path"
        ).all()
        last_event = conn.execute(_LAST_EVENT_SQL, (EXPORT_WRITTEN,)).scalar() or 0
        last_export = conn.execute(_LAST_EXPORT_SQL, (EXPORT_WRITTEN,)).scalar() or 0
        listed = _listed_exports(conn, {r[3] for r in rows if r[3] <= head})
        own = {r[0]: own_entries(conn, Path(r[0]).parent) for r in rows if r[1] == REGISTRY_KIND}
    behind = last_event > last_export
    files = [_file_status(row, head, listed, last_event if behind else 0, own) for row in rows]
    summary: dict[str, Any] = {
        "ok": not behind,
        "last_event_position": last_event or None,
        "last_export_position": last_export or None,
    }
    if behind:
        summary["reason"] = (
            f"events up to position {last_event} were committed but no files were rendered "
            "after them (a render failed, was killed or was skipped): run `benchledger render`"
        )
    return ExportCheck(files, summary)


def _listed_exports(conn: Any, positions: set[int]) -> dict[int, dict[str, str]]:
    """``{position: {path: sha256}}`` of the export events at ``positions`` that still exist."""
    found: dict[int, dict[str, str]] = {}
    wanted = sorted(positions)
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        query = (
            "SELECT position, event_type, payload FROM events"
            f" WHERE position IN ({placeholders(len(chunk))})"
        )
        for position, event_type, payload in conn.execute(query, chunk):
            if event_type == EXPORT_WRITTEN:
                files = orjson.loads(payload).get("files") or []
                found[position] = {f.get("path"): f.get("sha256") for f in files}
    return found


def _file_status(
    row: Any,
    head: int,
    listed: dict[int, dict[str, str]],
    stale_before: int,
    own: Mapping[str, OwnEntries | None],
) -> dict[str, Any]:
    """``own``: this store's entries of each global registry, the only part of that shared file
    it published (``projections.publishing.global_registry_file``)."""
    path, kind, sha256, position = row
    if position > head:
        status = "beyond_head"
    elif listed.get(position, {}).get(path) != sha256:
        status = "export_missing"
    else:
        if kind == REGISTRY_KIND:
            actual = registry_file_digest(Path(path), sha256, own.get(path))
        else:
            actual = sha256_file(Path(path))
        if actual is None:
            status = "missing"
        elif actual != sha256:
            status = "changed"
        else:
            status = "stale" if position < stale_before else "match"
    return {"path": path, "kind": kind, "ok": status == "match", "status": status,
            "position": position}  # fmt: skip
