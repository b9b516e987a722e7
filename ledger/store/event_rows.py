"""Rows of the event table: their columns, the SQL that reads them in position order, and
how a row becomes a ``StoredEvent``.

Kept apart from the store's transactions because replay and the as-of views read rows the
same way the store does, and decoding is where replay spends its time (see
``stored_decoder``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import Any

import orjson

from benchledger.ledger.store.connection import placeholders
from benchledger.ledger.store.events import CURRENT_SCHEMA_VERSION, StoredEvent, upcast
from benchledger.ledger.store.tables import EVENTS

# The event table's columns in declaration order: the order of every full event row.
EVENT_COLUMNS = EVENTS.columns
# What replay reads (``read_replay_rows``): the envelope fields a read model is built from.
# Metadata, ids and hashes are a third of every row's bytes and most of its Python objects,
# and no read model looks at them.
REPLAY_COLUMNS = (
    "position",
    "event_id",
    "stream",
    "event_type",
    "schema_version",
    "payload",
    "recorded_at",
)


def stored_event(
    row: dict[str, Any],
    *,
    payload: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
) -> StoredEvent:
    if payload is None:
        payload = decode_payload(row)
    return StoredEvent(
        position=row["position"],
        event_id=row["event_id"],
        stream=row["stream"],
        stream_version=row["stream_version"],
        event_type=row["event_type"],
        schema_version=row["schema_version"],
        payload=payload,
        metadata=metadata if metadata is not None else orjson.loads(row["metadata"]),
        correlation_id=row["correlation_id"],
        recorded_at=row["recorded_at"],
        idempotency_key=row["idempotency_key"],
        prev_hash=row["prev_hash"],
        hash=row["hash"],
    )


def decode_payload(row: dict[str, Any]) -> dict[str, Any]:
    payload = orjson.loads(row["payload"])
    if row["event_type"] in CURRENT_SCHEMA_VERSION:
        payload = upcast(row["event_type"], row["schema_version"], payload)
    return payload


_POSITIONAL_OK = tuple(f.name for f in fields(StoredEvent)) == EVENT_COLUMNS


def _event_by_name(*values: Any) -> StoredEvent:
    return StoredEvent(**dict(zip(EVENT_COLUMNS, values, strict=True)))


def stored_decoder() -> Callable[[Sequence[Any]], StoredEvent]:
    """A row tuple (``EVENT_COLUMNS`` order) to a ``StoredEvent``, for sequential reads.

    Every event one command appends carries the same metadata text, and replay never looks
    at it, so it is parsed once per run of equal texts instead of once per event (a third
    of the decode cost). Those events share the parsed dict, exactly as the events
    ``UnitOfWork.append`` returns do.
    """
    last_text: str | None = None
    last_metadata: dict[str, Any] = {}
    upcasted = CURRENT_SCHEMA_VERSION
    loads = orjson.loads
    make = StoredEvent if _POSITIONAL_OK else _event_by_name

    def decode(row: Sequence[Any]) -> StoredEvent:
        nonlocal last_text, last_metadata
        (
            position,
            event_id,
            stream,
            stream_version,
            event_type,
            schema_version,
            payload,
            metadata,
            correlation_id,
            recorded_at,
            idempotency_key,
            prev_hash,
            hash_,
        ) = row
        if metadata != last_text:
            last_text, last_metadata = metadata, loads(metadata)
        body = loads(payload)
        if event_type in upcasted:
            body = upcast(event_type, schema_version, body)
        # Positional (a third cheaper than keywords): _POSITIONAL_OK checks the field order.
        return make(
            position,
            event_id,
            stream,
            stream_version,
            event_type,
            schema_version,
            body,
            last_metadata,
            correlation_id,
            recorded_at,
            idempotency_key,
            prev_hash,
            hash_,
        )

    return decode


Query = tuple[str, list[Any]]  # SQL text and its ``?`` parameters


def events_query(
    after: int,
    upto: int | None,
    stream: str | None,
    types: list[str] | None,
    size: int,
    columns: Sequence[str] = EVENT_COLUMNS,
) -> Query:
    where: list[str] = ["position > ?"]
    params: list[Any] = [after]
    if upto is not None:
        where.append("position <= ?")
        params.append(upto)
    if stream is not None:
        where.append("stream = ?")
        params.append(stream)
    if types and len(types) == 1:
        where.append("event_type = ?")  # its (event_type, position) index
        params.append(types[0])
    elif types:
        # ``|| ''`` keeps the planners off the type index, whose rows come out of type order
        # and need a sort: the window is scanned along the position key instead.
        where.append(f"(event_type || '') IN ({placeholders(len(types))})")
        params.extend(types)
    sql = (
        f"SELECT {', '.join(columns)} FROM events WHERE {' AND '.join(where)}"
        " ORDER BY position LIMIT ?"
    )
    return sql, [*params, size]


def sparse_query(after: int, upto: int, dense: list[str], kept: list[int]) -> Query | None:
    """One window of ``read_replay_rows(sparse=...)``: every event of the ``dense`` types and
    the ``kept`` positions in ``(after, upto]``, in position order; None when there is nothing
    to ask for. The dense types go through their (event_type, position) index and the kept
    positions through the primary key, so the events left out are not even read: the window
    bounds what the type index returns, which an open range did not (see ``_row_batches``).
    """
    columns = ", ".join(REPLAY_COLUMNS)
    parts: list[str] = []
    params: list[Any] = []
    if dense:
        parts.append(
            f"SELECT {columns} FROM events WHERE event_type IN ({placeholders(len(dense))})"
            " AND position > ? AND position <= ?"
        )
        params += [*dense, after, upto]
    if kept:
        parts.append(f"SELECT {columns} FROM events WHERE position IN ({placeholders(len(kept))})")
        params += kept
    if not parts:
        return None
    return " UNION ALL ".join(parts) + " ORDER BY position", params


# How many events of one type a window holds (its (event_type, position) index).
COUNT_SQL = "SELECT count(*) FROM events WHERE event_type = ? AND position > ? AND position <= ?"
