"""Table models: the event table (the truth) and the bookkeeping the store needs.

These SQLAlchemy models are what the Alembic revisions are checked against
(``tests/test_migrations.py``); statements name tables through the plain specs in
``ledger/store/tables.py``, so no command imports SQLAlchemy to run. Read-model tables live in
``projections/read_models/schema.py`` on the same ``metadata`` so one Alembic history covers both.
All JSON is stored as canonical text (not JSONB) so the bytes hashed into the chain are the
bytes stored, identically on SQLite and PostgreSQL.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, Integer, MetaData, String, Table, Text

metadata = MetaData()

events = Table(
    "events",
    metadata,
    Column(
        "position",
        BigInteger().with_variant(Integer, "sqlite"),
        primary_key=True,
        autoincrement=False,
    ),
    Column("event_id", String(36), nullable=False, unique=True),
    Column("stream", String(300), nullable=False),
    Column("stream_version", Integer, nullable=False),
    Column("event_type", String(100), nullable=False),
    Column("schema_version", Integer, nullable=False),
    Column("payload", Text, nullable=False),
    Column("metadata", Text, nullable=False),
    Column("correlation_id", String(36), nullable=False),
    Column("recorded_at", String(32), nullable=False),
    Column("idempotency_key", String(200), nullable=True, unique=True),
    Column("prev_hash", String(64), nullable=False),
    Column("hash", String(64), nullable=False),
)
Index("ix_events_stream_version", events.c.stream, events.c.stream_version, unique=True)
Index("ix_events_event_type", events.c.event_type, events.c.position)
Index("ix_events_correlation_id", events.c.correlation_id)

projection_checkpoints = Table(
    "projection_checkpoints",
    metadata,
    Column("name", String(100), primary_key=True),
    Column("position", BigInteger().with_variant(Integer, "sqlite"), nullable=False),
)
