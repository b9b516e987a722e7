"""Where the store lives and how it is opened.

Resolution order is ``--db URL`` > ``BENCHLEDGER_DATABASE_URL`` > the nearest
``.benchledger/ledger.db`` found upward from the working directory (created in the working
directory when there is none), so a project behaves like a git checkout. SQLite is opened
with the standard library (``ledger/store/sqlite.py``), PostgreSQL through SQLAlchemy
(``ledger/store/postgresql.py``); SQLAlchemy and Alembic are imported only for PostgreSQL and
for migrations, so neither ``--help`` nor a command on an embedded store pays for them.
"""

from __future__ import annotations

import fcntl
import os
import re
import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchledger import migrations
from benchledger.ledger.core.errors import InputError, SchemaOutOfDateError
from benchledger.ledger.store.connection import PG_SCHEMA_KEY
from benchledger.ledger.store.head_witness import forget_marker
from benchledger.ledger.store.postgresql import SqlAlchemyDatabase
from benchledger.ledger.store.sqlite import SqliteDatabase
from benchledger.ledger.store.url_display import display_url
from benchledger.migrations.sqlite_head import REVISION, STATEMENTS

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Database
ENV_URL = "BENCHLEDGER_DATABASE_URL"
STORE_DIR = ".benchledger"
STORE_FILE = "ledger.db"
# The Alembic head this code expects; tests/test_migrations.py keeps it equal to the scripts.
SCHEMA_HEAD = "0008_aggregate_cases"
# Every revision this code knows, oldest first (kept equal to the scripts by the tests): a
# store stamped with anything else was written by a newer benchledger.
KNOWN_REVISIONS = (
    "0001_initial",
    "0002_ledger_render_cache",
    "0003_store_integrity",
    "0004_ledger_row_once",
    "0005_compare_facts",
    SCHEMA_HEAD,
)
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
        """The URL without a password, for messages and metadata (``***`` as SQLAlchemy
        renders it)."""
        return display_url(self.url)


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
    """Accept the spellings users type (``postgresql://``, a bare file path) and pick psycopg 3.

    Anything else is refused here with one line, before a driver is looked for: a URL naming a
    driver that is not installed (psycopg2, asyncpg, mysql) would otherwise fail deep inside
    SQLAlchemy, and a libpq keyword string (``host=... password=...``) has no ``://`` and would
    become a SQLite file named after it, password included."""
    if _LIBPQ_KEYWORDS.match(url):
        raise InputError(
            "--db looks like a libpq keyword string (key=value ...): give a URL instead, "
            "postgresql://USER@HOST:PORT/DATABASE (the password in PGPASSWORD or ~/.pgpass)"
        )
    if url.startswith(("postgres://", "postgresql://", "postgresql+psycopg://")):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    if "://" not in url:
        if not url.strip():
            raise InputError("--db is empty: give a store URL or a file path")
        return f"sqlite:///{Path(url).expanduser().resolve()}"
    if url == "sqlite://" or url.startswith("sqlite:///"):
        return url
    scheme = url.split("://", 1)[0]
    if scheme == "sqlite":
        raise InputError(
            "--db sqlite:// takes three slashes and a path: sqlite:///relative/ledger.db or "
            "sqlite:////absolute/ledger.db (or give the file path itself)"
        )
    raise InputError(
        f"--db URL scheme {scheme[:40]!r} is not supported: benchledger stores live in SQLite "
        "(sqlite:///PATH or a file path) or PostgreSQL through psycopg 3 "
        "(postgresql://USER@HOST:PORT/DATABASE)"
    )


# ``key=value`` first (libpq's connection-string keywords), e.g. ``host=db dbname=x``.
_LIBPQ_KEYWORDS = re.compile(r"^\s*[A-Za-z_]+\s*=")


def open_database(location: StoreLocation, *, read_only: bool = False) -> Database:
    """The store's database: stdlib SQLite for the embedded default, SQLAlchemy otherwise."""
    if location.is_sqlite:
        return SqliteDatabase(location.url, read_only=read_only)
    return SqlAlchemyDatabase(location.url, read_only=read_only)


def current_revision(database: Database) -> str | None:
    """The Alembic revision stamped in the database, or None for a new database."""
    with database.connect() as conn:
        if database.dialect == "sqlite":
            exists = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
        else:
            _require_schema(conn)
            exists = (
                "SELECT 1 FROM information_schema.tables"
                " WHERE table_schema = current_schema() AND table_name = ?"
            )
        if conn.execute(exists, ("alembic_version",)).first() is None:
            return None
        return conn.execute("SELECT version_num FROM alembic_version").scalar()


def _require_schema(conn: Any) -> None:
    """A PostgreSQL search_path naming no existing schema leaves ``current_schema()`` NULL:
    every later statement would fail (or the advisory locks take no key), so say so first."""
    if conn.execute("SELECT current_schema()").scalar() is None:
        path = conn.execute("SHOW search_path").scalar()
        raise InputError(
            f"the store URL's search_path ({str(path)[:80]}) names no schema that exists in "
            "this database: create it first (CREATE SCHEMA name) or fix the URL's "
            "options=-csearch_path=..."
        )


def upgrade_command_hint(location: StoreLocation) -> str:
    """The upgrade command as it runs when pasted: the store's own URL, unless the URL holds
    a password (never printed: the user puts it back in place of ``<URL>``)."""
    if location.project_dir is not None:
        return "benchledger db upgrade"
    if display_url(location.url) != location.url:
        return "benchledger --db <URL> db upgrade"
    return f"benchledger --db {shlex.quote(location.url)} db upgrade"


def ensure_schema(
    database: Database, location: StoreLocation, *, auto_upgrade: bool = True
) -> None:
    """Create a brand-new database at head; refuse an out-of-date one with the exact command."""
    revision = current_revision(database)
    if revision == SCHEMA_HEAD:
        return
    refuse_newer(revision)
    if revision is None and auto_upgrade:
        with _migration_lock(database):
            # another process may have created the schema while this one waited
            if current_revision(database) is None:
                create_at_head(database)
            revision = current_revision(database)
        if revision == SCHEMA_HEAD:
            return
    raise SchemaOutOfDateError(
        f"database schema is at revision {revision or 'none'}, this benchledger needs "
        f"{SCHEMA_HEAD}: run `{upgrade_command_hint(location)}`"
    )


def refuse_newer(revision: str | None) -> None:
    """A store at a revision this code does not know cannot be upgraded by it: say so.

    Revision ids start with their sequence number (``0003_...``), so an unknown id numbered
    past this code's head was written by a newer benchledger."""
    if revision is None or revision in KNOWN_REVISIONS:
        return
    number = revision.split("_", 1)[0]
    if number.isdigit() and int(number) <= int(SCHEMA_HEAD.split("_", 1)[0]):
        return  # an older or foreign stamp: the upgrade path says what it makes of it
    raise SchemaOutOfDateError(
        f"this store was written by a newer benchledger (schema revision {revision}; "
        f"this version knows up to {SCHEMA_HEAD}): upgrade benchledger to use it"
    )


def create_at_head(database: Database) -> None:
    """A new SQLite store from the head snapshot (``migrations/sqlite_head.py``: what the
    Alembic revisions build, checked by ``tests/test_migrations.py``), in one transaction and
    without importing Alembic; any other database through the revisions themselves."""
    if database.dialect != "sqlite":
        run_upgrade(database)
        return

    forget_marker(database)
    with database.begin() as conn:
        for statement in STATEMENTS:
            conn.execute(statement)
        conn.execute("INSERT INTO alembic_version (version_num) VALUES (?)", (REVISION,))


@contextmanager
def _migration_lock(database: Database) -> Iterator[None]:
    """Serialise first-use migrations of processes that start on a new store at once."""
    if database.dialect != "sqlite":
        with database.connect() as conn:
            conn.execute(f"SELECT pg_advisory_lock(?, {PG_SCHEMA_KEY})", (MIGRATION_LOCK_KEY,))
            conn.commit()
            try:
                yield
            finally:
                conn.execute(
                    f"SELECT pg_advisory_unlock(?, {PG_SCHEMA_KEY})", (MIGRATION_LOCK_KEY,)
                )
                conn.commit()
        return

    # an in-memory database is private to this process: nobody to wait for
    if not isinstance(database, SqliteDatabase) or database.in_memory:
        yield
        return
    with open(f"{database.path}.migrate.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def alembic_config(database: Database) -> Any:
    """An Alembic config that finds the scripts inside the installed ``migrations`` package
    and runs them on ``database`` (through a SQLAlchemy engine made for the purpose)."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(migrations.__file__).parent))
    cfg.attributes["engine"] = database.sqlalchemy_engine()
    return cfg


def run_upgrade(database: Database, revision: str = "head") -> None:
    from alembic import command

    refuse_newer(current_revision(database))
    cfg = alembic_config(database)
    try:
        command.upgrade(cfg, revision)
    finally:
        if database.dialect == "sqlite" and not database.in_memory:
            cfg.attributes["engine"].dispose()  # its pooled connections hold the file open
