"""Where the store lives and how a connection to it is opened.

Resolution order is ``--db URL`` > ``BENCHLEDGER_DATABASE_URL`` > the nearest
``.benchledger/ledger.db`` found upward from the working directory (created in the working
directory when there is none), so a project behaves like a git checkout. SQLAlchemy and Alembic
are imported inside functions: ``benchledger --help`` must not pay for them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ledger.errors import InputError, SchemaOutOfDateError

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

ENV_URL = "BENCHLEDGER_DATABASE_URL"
STORE_DIR = ".benchledger"
STORE_FILE = "ledger.db"
# The Alembic head this code expects; tests/test_migrations.py keeps it equal to the scripts.
SCHEMA_HEAD = "0002_ledger_render_cache"
SQLITE_BUSY_TIMEOUT_MS = 30_000
MIGRATION_LOCK_KEY = 0x62656E6D  # "benm": held while a new store is migrated


@dataclass(frozen=True)
class StoreLocation:
    """A resolved database URL plus, for the embedded default, the project directory it anchors."""

    url: str
    project_dir: Path | None

    @property
    def is_sqlite(self) -> bool:
        return self.url.startswith("sqlite")

    def display(self) -> str:
        """The URL without a password, for messages and metadata."""
        from sqlalchemy.engine import make_url

        return make_url(self.url).render_as_string(hide_password=True)


def find_project_dir(start: Path | None = None) -> Path | None:
    """The nearest directory at or above ``start`` that holds ``.benchledger/``."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / STORE_DIR).is_dir():
            return candidate
    return None


def resolve_location(db: str | None = None, cwd: Path | None = None) -> StoreLocation:
    """Apply the resolution order; the embedded default is created lazily on first write."""
    url = db or os.environ.get(ENV_URL)
    if url:
        return StoreLocation(normalize_url(url), None)
    project = find_project_dir(cwd) or (cwd or Path.cwd()).resolve()
    return StoreLocation(f"sqlite:///{project / STORE_DIR / STORE_FILE}", project)


def normalize_url(url: str) -> str:
    """Accept the spellings users type (``postgresql://``, a bare file path) and pick psycopg 3."""
    if url.startswith(("postgres://", "postgresql://")):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    if "://" not in url:
        return f"sqlite:///{Path(url).expanduser().resolve()}"
    return url


def create_engine_for(location: StoreLocation, *, read_only: bool = False) -> Engine:
    """An engine tuned per backend: WAL and a busy timeout on SQLite, psycopg 3 on PostgreSQL."""
    from sqlalchemy import create_engine, event

    if location.is_sqlite:
        return _sqlite_engine(
            location, read_only=read_only, create_engine=create_engine, event=event
        )
    connect_args = {}
    if read_only:
        from sqlalchemy.engine import make_url

        existing = make_url(location.url).query.get("options") or ""
        if isinstance(existing, tuple):
            existing = " ".join(existing)
        connect_args["options"] = f"{existing} -c default_transaction_read_only=on".strip()
    return create_engine(location.url, pool_pre_ping=False, connect_args=connect_args)


def _sqlite_engine(location: StoreLocation, *, read_only: bool, create_engine, event) -> Engine:
    path = location.url.removeprefix("sqlite:///")
    if path and path != ":memory:" and not read_only:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    if read_only:
        if not Path(path).exists():
            raise InputError("no benchledger store here yet: run a command with --execute first")
        url = f"sqlite:///file:{path}?mode=ro&uri=true"
    else:
        url = location.url
    engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record) -> None:  # noqa: ANN001 - DBAPI types are untyped
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        if read_only:
            cur.execute("PRAGMA query_only=ON")
        else:
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn) -> None:  # noqa: ANN001
        # pysqlite's own transaction handling is off (isolation_level=None), so BEGIN is ours:
        # a writer's IMMEDIATE takes the lock up front, so it queues instead of failing later.
        write = conn.get_execution_options().get("benchledger_write")
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write and not read_only else "BEGIN")

    return engine


def current_revision(engine: Engine) -> str | None:
    """The Alembic revision stamped in the database, or None for a new database."""
    from sqlalchemy import inspect, text

    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def upgrade_command_hint(location: StoreLocation) -> str:
    if location.project_dir is not None:
        return "benchledger db upgrade"
    return "benchledger --db <URL> db upgrade"


def ensure_schema(engine: Engine, location: StoreLocation, *, auto_upgrade: bool = True) -> None:
    """Upgrade a brand-new database; refuse an out-of-date one with the exact command to run."""
    revision = current_revision(engine)
    if revision == SCHEMA_HEAD:
        return
    if revision is None and auto_upgrade:
        with _migration_lock(engine, location):
            # another process may have created the schema while this one waited
            if current_revision(engine) is None:
                run_upgrade(engine)
            revision = current_revision(engine)
        if revision == SCHEMA_HEAD:
            return
    raise SchemaOutOfDateError(
        f"database schema is at revision {revision or 'none'}, this benchledger needs "
        f"{SCHEMA_HEAD}: run `{upgrade_command_hint(location)}`"
    )


@contextmanager
def _migration_lock(engine: Engine, location: StoreLocation) -> Iterator[None]:
    """Serialise first-use migrations of processes that start on a new store at once."""
    if not location.is_sqlite:
        from sqlalchemy import text

        with engine.connect() as conn:
            conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": MIGRATION_LOCK_KEY})
            conn.commit()
            try:
                yield
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": MIGRATION_LOCK_KEY})
                conn.commit()
        return
    import fcntl

    path = location.url.removeprefix("sqlite:///")
    lock_path = Path(path + ".migrate.lock") if path and path != ":memory:" else None
    if lock_path is None:
        yield
        return
    with open(lock_path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def alembic_config(engine: Engine):  # noqa: ANN201 - alembic is imported lazily
    """An Alembic config that finds the scripts inside the installed ``migrations`` package."""
    from alembic.config import Config

    import migrations

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(migrations.__file__).parent))
    cfg.attributes["engine"] = engine
    return cfg


def run_upgrade(engine: Engine, revision: str = "head") -> None:
    from alembic import command

    command.upgrade(alembic_config(engine), revision)
