"""The database a read command reads: the live store, or read models replayed to ``--as-of``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.handlers.ledger_store import require_store_ledger
from benchledger.ledger.handlers.store_ledger import ledger_the_store_knows
from benchledger.projections.history.as_of import LEDGER_READ_MODELS, read_models_as_of
from benchledger.projections.history.snapshots import default_snapshot_dir
from benchledger.projections.read_models.queries import StoreReads
from benchledger.services.store_session import open_store

if TYPE_CHECKING:
    from benchledger.ledger.core.ledger_target import LedgerTarget
    from benchledger.ledger.store.connection import Connection, Database
    from benchledger.projections.read_models.queries import StoreReads
    from benchledger.services.store_session import OpenStore
Progress = Callable[[int, int], None]


@contextmanager
def read_database(
    opened: OpenStore,
    as_of: str | None,
    progress: Progress | None = None,
    names: Sequence[str] | None = None,
    *,
    own_file: bool = False,
) -> Iterator[tuple[Database, dict[str, Any] | None]]:
    """The database to read, with the ``as_of`` block to print (None for the live store).

    A past moment is replayed into scratch read models (of the projections ``names``, the
    ones the caller reads; default all) from the nearest snapshot in the store's snapshot
    directory; nothing live is written. ``own_file``: the caller writes into that database
    (events copied in), so it must not be a snapshot read in place.
    """
    if as_of is None:
        yield opened.store.database, None
        return
    snapshots = default_snapshot_dir(opened.location)
    with read_models_as_of(
        opened.store,
        opened.projections,
        as_of,
        snapshot_dir=snapshots,
        progress=progress,
        names=names,
        own_file=own_file,
    ) as view:
        yield view.database, view.as_dict()


@contextmanager
def ledger_reads_at(
    db: str | None,
    target: LedgerTarget,
    as_of: str | None,
    progress: Progress | None = None,
    *,
    named: bool = True,
) -> Iterator[tuple[Connection, StoreReads, dict[str, Any] | None, LedgerTarget]]:
    """A connection and the store's reads of a ledger as it stands (or stood at ``as_of``),
    with the ``as_of`` block and the ledger read; a ledger the store did not hold then is
    refused. ``named=False`` (no ledger flag given): the ledger the store knows."""
    with open_store(db) as opened:
        with read_database(opened, as_of, progress, LEDGER_READ_MODELS) as (database, moment):
            with database.connect() as conn:
                reads = StoreReads(conn)
                target = ledger_the_store_knows(reads, target, named=named)
                if moment is not None and reads.ledger(target.ledger_id) is None:
                    raise InputError(f"no ledger {target.ledger_id} in the store at that moment")
                require_store_ledger(reads, target)
                yield conn, reads, moment, target
