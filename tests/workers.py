"""Child-process entry points for the concurrency and crash tests (``python -m tests.workers``)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from benchledger.services.store_session import open_store
from tests.support_store import upsert_event


def append_many(url: str, worker: str, count: int) -> None:
    """One command per event, like many small ingests racing each other."""
    with open_store(url) as s:
        for i in range(count):
            s.store.append(
                [upsert_event("one-ledger", f"{worker}-{i}")], metadata={"worker": worker}
            )


def append_slowly(url: str, count: int, marker: str) -> None:
    """One command whose events arrive over time; the parent kills it half way."""
    with open_store(url) as s:
        with s.store.transaction() as uow:
            for i in range(count):
                uow.append([upsert_event("crash", f"r{i}")])
                if i == count // 2:
                    Path(marker).write_text("half")
                time.sleep(0.02)
        Path(marker).write_text("committed")
        time.sleep(30)  # stay alive, the store still open, so a kill after commit is possible


if __name__ == "__main__":
    name, *args = sys.argv[1:]
    if name == "append_many":
        append_many(args[0], args[1], int(args[2]))
    elif name == "append_slowly":
        append_slowly(args[0], int(args[1]), args[2])
    else:
        raise SystemExit(f"unknown worker {name}")
