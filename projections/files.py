"""Published files: their digests are recorded as ``export_written`` events, so a reader can
ask whether a ledger JSON/Markdown on disk still matches what the store published."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
