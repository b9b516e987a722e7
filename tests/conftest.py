"""Shared test fixtures: where the shared fixture tree lives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED_DIR = Path(os.environ.get("BENCHLEDGER_SHARED") or Path(__file__).resolve().parents[2] / "shared")


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED_DIR.is_dir():
        pytest.fail(f"shared fixtures not found at {SHARED_DIR}; set BENCHLEDGER_SHARED")
    return SHARED_DIR
