"""Shared test fixtures: where the shared fixture tree lives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["tests.plugin_contracts"]

SHARED_DIR = Path(
    os.environ.get("BENCHLEDGER_SHARED") or Path(__file__).resolve().parents[2] / "shared"
)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED_DIR.is_dir():
        pytest.fail(f"shared fixtures not found at {SHARED_DIR}; set BENCHLEDGER_SHARED")
    return SHARED_DIR


PG_BASE_URL = os.environ.get("BENCHLEDGER_TEST_PG", "postgresql+psycopg://127.0.0.1:5432/test")


def _postgres_available() -> bool:
    try:
        import psycopg

        with psycopg.connect(
            PG_BASE_URL.replace("postgresql+psycopg", "postgresql"), connect_timeout=3
        ):
            return True
    except Exception:  # noqa: BLE001 - any failure means "not here"
        return False


@pytest.fixture(scope="session")
def postgres_ok() -> bool:
    ok = _postgres_available()
    if not ok and os.environ.get("CI"):
        pytest.fail("PostgreSQL is required in CI but is not reachable at 127.0.0.1:5432")
    return ok


def _fresh_pg_schema() -> str:
    import uuid

    import psycopg

    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(
        PG_BASE_URL.replace("postgresql+psycopg", "postgresql"), autocommit=True
    ) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    return schema


def _drop_pg_schema(schema: str) -> None:
    import psycopg

    with psycopg.connect(
        PG_BASE_URL.replace("postgresql+psycopg", "postgresql"), autocommit=True
    ) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path, postgres_ok) -> str:
    """A fresh, empty store URL on each backend (a new schema per test on PostgreSQL)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store' / 'ledger.db'}"
        return
    if not postgres_ok:
        pytest.skip("PostgreSQL not reachable")
    schema = _fresh_pg_schema()
    yield f"{PG_BASE_URL}?options=-csearch_path%3D{schema}"
    _drop_pg_schema(schema)
