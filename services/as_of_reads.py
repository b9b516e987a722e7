"""The database a read command reads: the live store, or read models replayed to ``--as-of``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ledger.connection import Database
    from services.store_session import OpenStore

Progress = Callable[[int, int], None]


@contextmanager
def read_database(
    opened: OpenStore, as_of: str | None, progress: Progress | None = None
) -> Iterator[tuple[Database, dict[str, Any] | None]]:
    """The database to read, with the ``as_of`` block to print (None for the live store).

    A past moment is replayed into scratch read models from the nearest snapshot in the
    store's snapshot directory; nothing live is written.
    """
    if as_of is None:
        yield opened.store.database, None
        return
    from projections.as_of import read_models_as_of
    from projections.snapshots import default_snapshot_dir

    snapshots = default_snapshot_dir(opened.location)
    with read_models_as_of(
        opened.store, opened.projections, as_of, snapshot_dir=snapshots, progress=progress
    ) as view:
        yield view.database, view.as_dict()
