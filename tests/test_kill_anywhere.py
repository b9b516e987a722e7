"""Kill anywhere: SIGKILL the real ``benchmark run`` ingest at named points
(``ledger/store/faults.py``)
and at arbitrary moments, then prove nothing is lost, duplicated or half-written, and that
running the same command again finishes the job.

Each case ingests a small job first (so a ledger and run history already exist), then kills a
second ingest of a two-record job: two run records give two distinct ``mid_render`` moments
inside the run-record loop before the third, between the ledger JSON and its Markdown.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support_faults import (
    EXPORT_WRITTEN,
    FAULT_ENV,
    GOAL,
    LEDGER,
    RUNTIME_ROOT,
    assert_files_whole,
    child_env,
    cli_in_process,
    command_groups,
    finish,
    harbor_copy,
    ingest,
    ingest_in_process,
    job_dir,
    job_records,
    snapshot,
    spawn_ingest,
    store_state,
    type_counts,
)

PRIOR = "12_hardened_baseline_arm"  # one record
TARGET = "14_dash_named_baseline"  # two records: two run-record files, then the ledger

# (fault point, whether the killed command's events are committed when it dies)
POINTS = [
    ("before_transaction", False),
    ("after_append", False),
    ("after_commit", True),
    ("mid_render@1", True),  # after the first run record's JSON, before its Markdown
    ("mid_render@2", True),  # first record complete, second has only its JSON
    ("mid_render@3", True),  # ledger JSON written, ledger Markdown not yet
    ("before_export_event", True),
]


@pytest.fixture(scope="module")
def harbor(fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return harbor_copy(fixtures_dir, tmp_path_factory.mktemp("kill-fixtures"))


@pytest.fixture(scope="module")
def clean(harbor: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The same two ingests, never killed: what every killed-then-rerun case must end up as."""
    work = tmp_path_factory.mktemp("clean")
    db = f"sqlite:///{work / 'store' / 'ledger.db'}"
    for key in (PRIOR, TARGET):
        code, payload, err = ingest(db, work, job_dir(harbor, key))
        assert code == 0 and payload["appended"], err[-2000:]
    state = store_state(db)
    assert state["verify"].ok and state["rebuild"].ok
    groups = command_groups(state["events"])
    assert [len(g) for g in groups] == [3 * job_records(harbor, k) for k in (PRIOR, TARGET)]
    return {"events": state["events"], "groups": groups, "snapshot": snapshot(work)}


def _assert_store_sound(db_url: str) -> list:
    state = store_state(db_url)
    assert state["verify"].ok, state["verify"].as_dict()
    assert state["rebuild"].ok, state["rebuild"].as_dict()
    return state["events"]


def _assert_all_or_nothing(events: list, clean: dict) -> bool:
    """Each command's events are all there or none; True when the killed one committed."""
    sizes = [len(g) for g in command_groups(events)]
    clean_sizes = [len(g) for g in clean["groups"]]
    assert sizes in (clean_sizes[:1], clean_sizes), sizes
    committed = len(sizes) == 2
    if committed:
        assert type_counts(command_groups(events)[1]) == type_counts(clean["groups"][1])
    return committed


def _plant_leftover_temp_files(work: Path) -> list[Path]:
    """What a kill inside ``atomic_write`` leaves: dot-named, torn, never to be read as output."""
    runs = work / RUNTIME_ROOT / "goals" / GOAL / "runs"
    ledger = work / LEDGER
    planted = [
        runs / ".2026-01-01T00-00-00Z.json.99999.tmp",
        ledger.with_name(f".{ledger.name}.99999.tmp"),
    ]
    for path in planted:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b'{"torn": ')
    return planted


def _rerun_completes(db_url: str, work: Path, harbor: Path, clean: dict, committed: bool) -> None:
    planted = _plant_leftover_temp_files(work)
    code, payload, err = ingest(db_url, work, job_dir(harbor, TARGET))
    assert code == 0, err[-2000:]
    assert bool(payload.get("already_recorded")) is committed
    events = _assert_store_sound(db_url)
    assert [len(g) for g in command_groups(events)] == [len(g) for g in clean["groups"]]
    assert type_counts(events) == type_counts(clean["events"])
    assert_files_whole(work)
    assert snapshot(work) == clean["snapshot"]
    index = (work / RUNTIME_ROOT / "goals" / GOAL / "runs" / "index.jsonl").read_text()
    assert ".tmp" not in index
    code, verdict, err = cli_in_process(db_url, "verify", "--files", cwd=work)
    assert code == 0, verdict or err
    files = verdict["verify"]["files"]
    assert files and all(f["status"] == "match" for f in files)
    assert not {str(p) for p in planted} & {f["path"] for f in files}


@pytest.mark.parametrize(("point", "committed"), POINTS, ids=[p for p, _ in POINTS])
def test_kill_at_named_point_then_rerun(db_url, tmp_path, harbor, clean, point, committed):
    work = tmp_path / "work"
    code, _, err = ingest_in_process(db_url, work, job_dir(harbor, PRIOR))
    assert code == 0, err[-2000:]
    code, payload, err = ingest(db_url, work, job_dir(harbor, TARGET), fault=point)
    assert code == -signal.SIGKILL, f"fault point {point} was never reached: {err[-2000:]}"
    assert payload is None
    events = _assert_store_sound(db_url)
    assert _assert_all_or_nothing(events, clean) is committed
    # the killed command never got as far as recording an export of its own files
    assert type_counts(events)[EXPORT_WRITTEN] == 1
    assert_files_whole(work)
    if point.startswith("mid_render"):  # the render really was cut short
        assert snapshot(work) != clean["snapshot"]
    _rerun_completes(db_url, work, harbor, clean, committed)


@pytest.mark.parametrize("delay", [0.3, 0.6])
def test_kill_at_an_arbitrary_moment_then_rerun(db_url, tmp_path, harbor, clean, delay):
    """No named point: wherever the kill lands (import, read, commit, render), the same holds."""
    work = tmp_path / "work"
    code, _, err = ingest_in_process(db_url, work, job_dir(harbor, PRIOR))
    assert code == 0, err[-2000:]
    proc = spawn_ingest(db_url, work, job_dir(harbor, TARGET))
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    try:
        finish(proc)
    except subprocess.TimeoutExpired:  # pragma: no cover - a hung child is a failure
        proc.kill()
        raise
    events = _assert_store_sound(db_url)
    committed = _assert_all_or_nothing(events, clean)
    assert_files_whole(work)
    _rerun_completes(db_url, work, harbor, clean, committed)


def test_fault_hook_arms_only_the_named_occurrence():
    """``name@n`` dies at the n-th reach and not before; other names never fire."""
    script = (
        "from benchledger.ledger.store.faults import reach\n"
        "for i in range(1, 4):\n"
        "    reach('other'); reach('p'); print(i, flush=True)\n"
    )
    env = child_env("p@2")
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert proc.stdout.split() == [b"1"]
    env.pop(FAULT_ENV)
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.split() == [b"1", b"2", b"3"]
