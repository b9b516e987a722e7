"""Test fixtures: the in-repo fixture data and a fresh store on each database."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# tests.support_report: the `project` fixture (a two-arm ledger) the report tests share.
pytest_plugins = ["tests.plugin_contracts", "tests.support_report"]

# Harbor jobs, BenchFlow result trees and a real loopx ledger, kept with the tests so that a
# clone runs its suite with nothing beside it (see tests/fixtures/README.md).
FIXTURES_DIR = Path(__file__).resolve().parent / "fixtures"

# The CLI processes tests start fail on a deprecated call too, like pytest's filterwarnings.
os.environ.setdefault("PYTHONWARNINGS", "error::DeprecationWarning")


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES_DIR


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
