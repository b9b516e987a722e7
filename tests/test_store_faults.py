"""Concurrency and crash: nothing lost, nothing duplicated, all of a command or none of it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support_store import opened

ROOT = Path(__file__).resolve().parents[1]


def _spawn(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.workers", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_eight_concurrent_writers_lose_nothing(db_url):
    opened(db_url).close()  # migrate once, before the race
    workers = [_spawn("append_many", db_url, f"w{i}", "50") for i in range(8)]
    for w in workers:
        _, err = w.communicate(timeout=300)
        assert w.returncode == 0, err.decode()[-2000:]
    s = opened(db_url)
    events = list(s.store.read())
    assert len(events) == 400
    assert [e.position for e in events] == list(range(1, 401))
    assert [e.stream_version for e in events] == list(range(1, 401))  # one stream, no gaps
    assert len({e.payload["row"]["run_id"] for e in events}) == 400
    assert s.store.verify().ok
    assert s.projections.verify_rebuild(s.store).ok
    s.close()


@pytest.mark.parametrize("when", ["half", "committed"])
def test_sigkill_leaves_all_or_nothing(db_url, tmp_path, when):
    opened(db_url).close()
    marker = tmp_path / "marker"
    child = _spawn("append_slowly", db_url, "20", str(marker))
    deadline = time.time() + 60
    while time.time() < deadline:
        if marker.exists() and marker.read_text() == when:
            break
        time.sleep(0.005)
    else:
        child.kill()
        pytest.fail(f"child never reached {when}: {child.stderr.read().decode()[-1000:]}")
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    s = opened(db_url)
    count = len(list(s.store.read()))
    assert count == (0 if when == "half" else 20)
    assert s.store.verify().ok
    assert s.projections.verify_rebuild(s.store).ok
    s.close()
