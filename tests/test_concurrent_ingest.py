"""Concurrent ``benchmark run`` ingests into one store, one ledger, one goal, one runtime root.

Eight runners finishing at once must lose nothing and duplicate nothing; two runners ingesting
the same job at once must record it once (the idempotency key) while the other says
``already_recorded``. Whatever order the renders land in, the published ledger must be the
store's newest state, byte for byte.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from benchledger.services.store_session import open_store
from tests.support_faults import (
    EXPORT_WRITTEN,
    GOAL,
    LEDGER,
    RUNTIME_ROOT,
    assert_files_whole,
    cli_in_process,
    command_groups,
    finish,
    fresh_ledger,
    harbor_copy,
    job_dir,
    job_records,
    ledger_ids,
    ledger_rows,
    spawn_ingest,
    store_state,
    type_counts,
)

EIGHT_JOBS = [
    "01_all_pass",
    "02_all_fail",
    "05_multi_key_reward_json",
    "12_hardened_baseline_arm",
    "13_managed_treatment_arm",
    "14_dash_named_baseline",
    "15_treatment_name_plain_agent",
    "18_package_tasks_oracle",
]
SAME_JOB = "16_two_agents_one_job"


@pytest.fixture(scope="module")
def harbor(fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return harbor_copy(fixtures_dir, tmp_path_factory.mktemp("concurrent-fixtures"))


def _race(db_url: str, work: Path, jobs: list[Path]) -> list[dict]:
    open_store(db_url).close()  # first use migrates; the race is about appends, not DDL
    procs = [spawn_ingest(db_url, work, job) for job in jobs]
    results = []
    for proc in procs:
        code, payload, err = finish(proc, timeout=300)
        assert code == 0, err[-2000:]
        assert payload["ok"], payload
        results.append(payload)
    return results


def _assert_store_sound(db_url: str) -> list:
    state = store_state(db_url)
    assert state["verify"].ok, state["verify"].as_dict()
    assert state["rebuild"].ok, state["rebuild"].as_dict()
    events = state["events"]
    assert [e.position for e in events] == list(range(1, len(events) + 1))
    by_stream: dict[str, list[int]] = {}
    for e in events:
        by_stream.setdefault(e.stream, []).append(e.stream_version)
    for stream, versions in by_stream.items():
        assert versions == list(range(1, len(versions) + 1)), stream
    return events


def _assert_published_is_newest(db_url: str, work: Path, expected_rows: int) -> None:
    """The ledger on disk is what a fresh render from the store writes now, row for row."""
    (ledger_id,) = ledger_ids(db_url)
    fresh_json, fresh_markdown, model_rows = fresh_ledger(db_url, ledger_id)
    on_disk = (work / LEDGER).read_bytes()
    assert on_disk == fresh_json
    assert (work / LEDGER).with_suffix(".md").read_bytes() == fresh_markdown
    rows = ledger_rows(json.loads(on_disk))
    assert len(rows) == len(model_rows) == expected_rows
    assert rows == {r["run_id"]: r for r in model_rows}
    assert_files_whole(work)
    runs = work / RUNTIME_ROOT / "goals" / GOAL / "runs"
    index = [json.loads(line) for line in (runs / "index.jsonl").read_text().splitlines()]
    stems = [Path(line["json_path"]).stem for line in index]
    assert len(stems) == len(set(stems)) == expected_rows
    for stem in stems:
        assert (runs / f"{stem}.json").is_file() and (runs / f"{stem}.md").is_file()
    rollout = (work / RUNTIME_ROOT / "goals" / GOAL / "rollout-event-log.jsonl").read_text()
    assert len(rollout.splitlines()) == expected_rows
    code, verdict, err = cli_in_process(db_url, "verify", "--files", cwd=work)
    assert code == 0, verdict or err
    assert all(f["status"] == "match" for f in verdict["verify"]["files"])


def test_eight_runners_ingest_eight_jobs_at_once(db_url, tmp_path, harbor):
    work = tmp_path / "work"
    results = _race(db_url, work, [job_dir(harbor, key) for key in EIGHT_JOBS])
    assert all(r["appended"] for r in results)
    events = _assert_store_sound(db_url)
    groups = command_groups(events)
    expected = Counter(3 * job_records(harbor, key) for key in EIGHT_JOBS)
    assert Counter(len(g) for g in groups) == expected
    keys = [e.idempotency_key for e in events if e.idempotency_key]
    assert len(keys) == len(set(keys)) == len(EIGHT_JOBS)
    for group in groups:  # each command's events are contiguous: nothing interleaved
        positions = [e.position for e in group]
        assert positions == list(range(positions[0], positions[0] + len(positions)))
    total = sum(job_records(harbor, key) for key in EIGHT_JOBS)
    _assert_published_is_newest(db_url, work, total)


def test_two_runners_ingest_the_same_job_at_once(db_url, tmp_path, harbor):
    work = tmp_path / "work"
    job = job_dir(harbor, SAME_JOB)
    results = _race(db_url, work, [job, job])
    assert sorted(bool(r.get("already_recorded")) for r in results) == [False, True]
    assert sorted(bool(r["appended"]) for r in results) == [False, True]
    events = _assert_store_sound(db_url)
    records = job_records(harbor, SAME_JOB)
    assert [len(g) for g in command_groups(events)] == [3 * records]
    assert len([e for e in events if e.idempotency_key]) == 1
    # both rendered the same bytes; only the first render is recorded as an export
    assert type_counts(events)[EXPORT_WRITTEN] == 1
    _assert_published_is_newest(db_url, work, records)
