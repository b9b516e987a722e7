"""Store integrity: SQLite refuses an insert that would replace an event, and PostgreSQL gets
the ``benchledger_reader`` role that ``benchledger sql`` switches to.

SQLite's ``REPLACE`` (and ``INSERT OR REPLACE``) deletes a conflicting row without firing
delete triggers, so the append-only triggers of 0001 never saw it. A ``BEFORE INSERT``
trigger runs before that implicit delete, so refusing any insert that collides with an
existing event on one of its unique keys closes the hole (``ON CONFLICT DO UPDATE`` is
refused by the same trigger before it can reach the update trigger).

On PostgreSQL, ``benchledger sql`` runs the user's statement as ``benchledger_reader``: a
NOLOGIN role that can only read the documented views, so admin functions
(``pg_terminate_backend``, ``pg_read_file``, ``lo_import``...) and the raw tables are
refused even when benchledger connects as a superuser. Roles are cluster-wide while a
store is one schema, so the role is created once (idempotently, safe against another
schema's migration creating it at the same moment) and each schema grants its own views.

Revision ID: 0003_store_integrity
Revises: 0002_ledger_render_cache
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0003_store_integrity"
down_revision = "0002_ledger_render_cache"
branch_labels = None
depends_on = None

READER_ROLE = "benchledger_reader"
VIEWS = ("events_v", "ledger_runs_v", "goal_runs_v", "rollout_events_v")

SQLITE_NO_REPLACE = """CREATE TRIGGER events_no_replace BEFORE INSERT ON events
        WHEN EXISTS (SELECT 1 FROM events WHERE position = NEW.position)
          OR EXISTS (SELECT 1 FROM events WHERE event_id = NEW.event_id)
          OR EXISTS (SELECT 1 FROM events WHERE idempotency_key = NEW.idempotency_key)
          OR EXISTS (SELECT 1 FROM events
                     WHERE stream = NEW.stream AND stream_version = NEW.stream_version)
        BEGIN SELECT RAISE(ABORT, 'events are append-only'); END"""

# duplicate_object: the role exists; unique_violation: another session created it between
# the check and the CREATE; insufficient_privilege: this user may not create roles (then
# ``benchledger sql`` says so instead of running the statement with the user's own rights).
PG_CREATE_READER = f"""DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{READER_ROLE}') THEN
        CREATE ROLE {READER_ROLE} NOLOGIN NOSUPERUSER NOINHERIT NOCREATEDB NOCREATEROLE;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation OR insufficient_privilege THEN
    NULL;
END $$"""

PG_GRANT_READER = f"""DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{READER_ROLE}') THEN
        EXECUTE format('GRANT USAGE ON SCHEMA %I TO {READER_ROLE}', current_schema());
        {" ".join(f"GRANT SELECT ON {view} TO {READER_ROLE};" for view in VIEWS)}
        IF NOT pg_has_role(current_user, '{READER_ROLE}', 'USAGE') THEN
            EXECUTE format('GRANT {READER_ROLE} TO %I', current_user);
        END IF;
    END IF;
EXCEPTION WHEN insufficient_privilege OR unique_violation THEN
    NULL;
END $$"""


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute(SQLITE_NO_REPLACE)
        return
    op.execute(PG_CREATE_READER)
    op.execute(PG_GRANT_READER)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS events_no_replace")
        return
    # The role stays: other schemas' stores may use it; only this schema's grants go.
    op.execute(f"""DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{READER_ROLE}') THEN
        {" ".join(f"REVOKE SELECT ON {view} FROM {READER_ROLE};" for view in VIEWS)}
        EXECUTE format('REVOKE USAGE ON SCHEMA %I FROM {READER_ROLE}', current_schema());
    END IF;
END $$""")
