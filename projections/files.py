"""Published files: their digests are recorded as ``export_written`` events, so a reader can
ask whether a ledger JSON/Markdown on disk still matches what the store published."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    from ledger.store import EventStore


def sha256_file(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


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
    """A file handle that also hashes what passes through, for the ``export_written`` digest
    of a file too large to hold in memory twice."""

    def __init__(self, handle: BinaryIO) -> None:
        self._handle = handle
        self._digest = hashlib.sha256()

    def write(self, data: bytes) -> None:
        self._digest.update(data)
        self._handle.write(data)

    def hexdigest(self) -> str:
        return self._digest.hexdigest()


@contextmanager
def atomic_stream(path: Path, *, durable: bool = True) -> Iterator[HashingWriter]:
    """``atomic_write`` for data written in pieces: the target is replaced only when the
    block finishes; on an exception the temp file is removed and the target left as it was."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb", buffering=1024 * 1024) as handle:
            yield HashingWriter(handle)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)


def verify_exports(store: EventStore) -> list[dict[str, Any]]:
    """Compare every published file's recorded digest with the file as it is now."""
    from sqlalchemy import select

    from projections.schema import exports

    with store.engine.connect() as conn:
        rows = conn.execute(select(exports).order_by(exports.c.path)).all()
    results = []
    for row in rows:
        actual = sha256_file(Path(row.path))
        status = "missing" if actual is None else ("match" if actual == row.sha256 else "changed")
        results.append(
            {
                "path": row.path,
                "kind": row.kind,
                "ok": status == "match",
                "status": status,
                "position": row.position,
            }
        )
    return results
