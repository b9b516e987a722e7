"""Published files: their digests are recorded as ``export_written`` events, so a reader can
ask whether a ledger JSON/Markdown on disk still matches what the store published.

Files are written beside their target as ``.<name>.<pid>.tmp`` and renamed into place; a
process killed mid-write (or a full disk) leaves its temp file behind, so the first write of
a process into a directory removes temp files whose writer is gone or that are older than
``STALE_TEMP_SECONDS``.
"""

from __future__ import annotations

import hashlib
import os
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
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
from benchledger.projections.publishing.file_swap import preload_for, replace_file, wait_discarded
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
_CREATE_FLAGS = (
    os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)
STALE_TEMP_SECONDS = 3600  # no render takes an hour: an older temp file is a leftover
_TEMP_NAME = re.compile(r"^\..+\.(\d+)\.tmp$")
_swept: set[Path] = set()  # directories the current render has already cleaned


def sha256_file(path: Path) -> str | None:
    """None when there is no regular file to hash: a FIFO planted where a ledger was published
    must not block ``verify --files`` (the bounded reader never opens one for a blocking read)."""

    try:
        data = read_regular_file(path, shown=path.name, limit=LEDGER_JSON_LIMIT)
    except (OSError, UnreadableFileError):
        return None
    return hashlib.sha256(data).hexdigest()


def atomic_write(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Write beside the target, then rename: a reader sees the old or the new file, never half.

    ``durable`` adds an fsync before the rename (power-loss safety); per-run files that the
    store can always re-render skip it, since thousands of fsyncs dominate a large ingest.
    """
    if path.parent not in _swept:  # a directory swept in this render was there: no mkdir
        path.parent.mkdir(parents=True, exist_ok=True)
    sweep_stale_temp_files(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    wait_discarded(tmp)
    try:
        fd = os.open(tmp, _CREATE_FLAGS, 0o666)  # the mode ``open(tmp, "wb")`` would give
    except FileNotFoundError:  # the directory went away since: make it again, as before
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, _CREATE_FLAGS, 0o666)
    # Unbuffered, without ``open``'s file object (its size, tty and position probes are three
    # more system calls per file, and a large ingest writes hundreds of files).
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
    replace_file(tmp, path, len(data))


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

    def __init__(
        self, handle: BinaryIO, *, durable: bool, first: Callable[[], None] | None = None
    ) -> None:
        self._handle = handle
        self._durable = durable
        self._first = first  # run on the thread before the first chunk arrives
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
        if self._first is not None:
            try:
                self._first()
            except Exception:  # noqa: BLE001 - only a head start: the caller does it again
                pass
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
    """A file written in full under its temp name (``.<name>.<pid>.tmp``), not yet in place:
    ``publish`` puts it there, ``discard`` removes it. A process killed in between leaves the
    temp file, which the next render's sweep removes like any other leftover."""

    tmp: Path
    path: Path
    size: int
    sha256: str

    def publish(self) -> None:
        replace_file(self.tmp, self.path, self.size)

    def discard(self) -> None:
        self.tmp.unlink(missing_ok=True)


class StagedStream:
    """``with StagedStream(path) as out:`` writes the file in pieces through ``out`` (a
    ``HashingWriter``); after the block, ``staged`` is the finished file, still under its temp
    name. On an exception the temp file is removed. ``atomic_stream`` publishes it at once;
    a render that writes two files streams both, then publishes them in order."""

    def __init__(self, path: Path, *, durable: bool = True, preload: bool = True) -> None:
        self.path = path
        self.durable = durable
        self.preload = preload
        self.tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        self.staged: StagedFile | None = None
        self._handle: BinaryIO | None = None
        self._writer: HashingWriter | None = None

    def __enter__(self) -> HashingWriter:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        sweep_stale_temp_files(self.path.parent)
        wait_discarded(self.tmp)
        self._handle = open(self.tmp, "wb")  # noqa: SIM115 - closed in __exit__
        first = preload_for(self.path) if self.preload else None
        self._writer = HashingWriter(self._handle, durable=self.durable, first=first)
        return self._writer

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        assert self._handle is not None and self._writer is not None
        try:
            try:
                self._writer.finish()
                size = self._handle.tell()
            finally:
                self._handle.close()
        except BaseException:
            self.tmp.unlink(missing_ok=True)
            raise
        if kind is not None:
            self.tmp.unlink(missing_ok=True)
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
    stream.staged.publish()


def start_sweeping() -> None:
    """A new render: each directory it writes into is swept once more."""
    _swept.clear()


def sweep_stale_temp_files(directory: Path) -> list[Path]:
    """Remove ``.<name>.<pid>.tmp`` files left in ``directory`` by a writer that is gone (or
    older than ``STALE_TEMP_SECONDS``, in case the pid was reused); once per render and
    directory (``start_sweeping``). A live writer's temp file is left alone."""
    if directory in _swept:
        return []
    _swept.add(directory)
    removed: list[Path] = []
    now = time.time()
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        match = _TEMP_NAME.match(entry.name)
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
