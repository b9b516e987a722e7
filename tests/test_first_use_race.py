"""Processes that start on a brand-new store at the same time all migrate it safely."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support_store import opened

ROOT = Path(__file__).resolve().parents[1]


def test_concurrent_first_use_migrates_once(db_url):
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.workers", "append_many", db_url, f"w{i}", "3"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for i in range(4)
    ]
    for w in workers:
        _, err = w.communicate(timeout=120)
        assert w.returncode == 0, err.decode()[-2000:]
    s = opened(db_url)
    assert len(list(s.store.read())) == 12
    assert s.store.verify().ok
    s.close()
