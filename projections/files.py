"""Published files: their digests are recorded as ``export_written`` events, so a reader can
ask whether a ledger JSON/Markdown on disk still matches what the store published."""

from __future__ import annotations

import hashlib
import os
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    from ledger.store import EventStore


def sha256_file(path: Path) -> str | None:
    """None when there is no regular file to hash: a FIFO planted where a ledger was published
    must not block ``verify --files`` (the bounded reader never opens one for a blocking read)."""
    from ledger.input_files import LEDGER_JSON_LIMIT, UnreadableFileError, read_regular_file

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
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        if durable:
            os.fsync(handle.fileno())
    os.replace(tmp, path)


class HashingWriter:
    """Hashes and writes chunks on a background thread while the caller produces the next
    ones: sha256, ``write`` and ``fsync`` all release the GIL, so streaming a 90 MB ledger
    out of the database overlaps with hashing and writing it instead of waiting for both.

    At most ``_PENDING`` chunks are queued (bounded memory). An error on the thread is kept,
    the rest of the stream is discarded, and ``finish`` raises it.
    """

    _PENDING = 8

    def __init__(self, handle: BinaryIO, *, durable: bool) -> None:
        self._handle = handle
        self._durable = durable
        self._digest = hashlib.sha256()
        self._queue: queue.Queue[bytes | None] = queue.Queue(maxsize=self._PENDING)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="atomic-stream", daemon=True)
        self._thread.start()

    def write(self, data: bytes) -> None:
        self._queue.put(data)

    def hexdigest(self) -> str:
        return self._digest.hexdigest()

    def finish(self) -> None:
        """Wait until every chunk is hashed, written and (when durable) on disk."""
        self._queue.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        while (chunk := self._queue.get()) is not None:
            if self._error is None:
                try:
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


@contextmanager
def atomic_stream(path: Path, *, durable: bool = True) -> Iterator[HashingWriter]:
    """``atomic_write`` for data written in pieces: the target is replaced only when the
    block finishes; on an exception the temp file is removed and the target left as it was."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as handle:
            writer = HashingWriter(handle, durable=durable)
            try:
                yield writer
            finally:
                writer.finish()
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)


def verify_exports(store: EventStore) -> list[dict[str, Any]]:
    """Compare every published file's recorded digest with the file as it is now."""
    with store.database.connect() as conn:
        rows = conn.execute("SELECT path, kind, sha256, position FROM rm_exports ORDER BY path")
        rows = rows.all()
    results = []
    for path, kind, sha256, position in rows:
        actual = sha256_file(Path(path))
        status = "missing" if actual is None else ("match" if actual == sha256 else "changed")
        ok = status == "match"
        results.append(
            {"path": path, "kind": kind, "ok": ok, "status": status, "position": position}
        )
    return results
