"""The composition root: opens the store with the projection engine as its listener.

Services call ``open_store`` and hand read models to handlers; handlers never open databases or
pick projections themselves, so ``ledger/`` stays free of any import of ``projections/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from benchledger.ledger.store.database import ensure_schema, open_database, resolve_location
from benchledger.ledger.store.event_store import EventStore
from benchledger.projections.read_models.engine import ProjectionEngine
from benchledger.projections.read_models.models import all_projections

if TYPE_CHECKING:
    from benchledger.ledger.store.database import StoreLocation


@dataclass
class OpenStore:
    """An open store and its projections; ``with open_store(db) as opened:`` closes it on the
    way out, whether the block returned or raised, so no caller repeats a try/finally."""

    location: StoreLocation
    store: EventStore
    projections: ProjectionEngine

    def close(self) -> None:
        self.store.database.dispose()

    def __enter__(self) -> OpenStore:
        return self

    def __exit__(self, *_exc_info: object) -> None:
        self.close()


def open_store(
    db: str | None, *, auto_upgrade: bool = True, check_schema: bool = True
) -> OpenStore:
    """Resolve, connect, make sure the schema is current, and wire projections in."""
    location = resolve_location(db)
    database = open_database(location)
    try:
        if check_schema:
            ensure_schema(database, location, auto_upgrade=auto_upgrade)
    except Exception:
        database.dispose()
        raise
    projections = ProjectionEngine(all_projections())
    return OpenStore(location, EventStore(database, listener=projections), projections)
