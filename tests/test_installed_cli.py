"""The installed console script works outside the source tree (migrations ship in the wheel)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).with_name("benchledger")


@pytest.mark.skipif(not SCRIPT.exists(), reason="benchledger is not installed in this venv")
def test_installed_script_migrates_a_new_store_from_any_directory(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "BENCHLEDGER_DATABASE_URL"}
    env["PYTHONPATH"] = ""
    out = subprocess.run([str(SCRIPT), "--format", "json", "db", "upgrade"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, check=True)
    payload = json.loads(out.stdout)
    assert payload["to_revision"] == payload["head"]
    assert (tmp_path / ".benchledger" / "ledger.db").exists()
    listed = subprocess.run([str(SCRIPT), "events", "list", "--format", "json"], cwd=tmp_path,
                            env=env, capture_output=True, text=True, check=True)
    assert json.loads(listed.stdout)["count"] == 0


def test_help_is_cheap_to_import():
    """--help must not import SQLAlchemy, Alembic or pydantic (startup cost)."""
    code = ("import sys; from commands import cli; "
            "print(sorted(m for m in ('sqlalchemy', 'alembic', 'pydantic') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == "[]"
