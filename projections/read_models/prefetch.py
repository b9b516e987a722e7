"""Reading the next batch of events while the current one is applied (PostgreSQL).

A replay alternates: the server reads a batch, the client decodes it and sends its rows, the
server writes them. Run one after the other, each side waits for the other (bench/README.md,
issue 18). A second connection, in a thread, reads ahead: waiting on the server releases the
GIL, so the read of batch N+1 runs in one server process while batch N is decoded here and
written by the other. SQLite gains nothing from it (its reads are in-process and hold the
GIL), and a private in-memory database has no second connection.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
    from benchledger.ledger.store.event_store import EventStore
T = TypeVar("T")
DEPTH = 2  # batches read ahead: enough to keep the reader busy, bounded memory
_END = object()


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


def read_ahead(
    store: EventStore, read_conn: Connection, batches: Callable[[Connection], Iterator[T]]
) -> Iterator[T]:
    """``batches(conn)``'s items, read on a second connection by a thread when that helps.

    The second connection must see what ``read_conn`` sees: every caller reads positions up to
    a head it fixed first, and PostgreSQL appends commit in position order (the append lock),
    so events up to that head are the same for any later snapshot.
    """
    if read_conn.dialect != "postgresql" or read_conn.in_memory:
        yield from batches(read_conn)
        return
    items: queue.Queue[Any] = queue.Queue(maxsize=DEPTH)
    stop = threading.Event()

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                items.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def read() -> None:
        try:
            with store.database.connect() as conn:
                for item in batches(conn):
                    if not put(item):
                        return
        except BaseException as error:  # handed to the consumer, raised there
            put(_Failed(error))
        put(_END)

    thread = threading.Thread(target=read, name="benchledger-read-ahead", daemon=True)
    thread.start()
    try:
        while (item := items.get()) is not _END:
            if isinstance(item, _Failed):
                raise item.error
            yield item
    finally:
        stop.set()
        thread.join()
