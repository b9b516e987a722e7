"""Harbor ingest end to end through the CLI (issue 4 acceptance), on SQLite and PostgreSQL.

Every manifest job goes through ``benchledger benchmark run terminal-bench --harbor-job-dir``
exactly as a user runs it; the assertions read what reached the disk (run records,
``index.jsonl``, the ledger JSON, the rollout log) and the event table, and compare them with
the manifest, which records what the fixture generator wrote and what Harbor itself computed.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.support_harbor_ingest_cli import (
    case_key,
    cli,
    copy_all_jobs,
    copy_job,
    domain_counts,
    event_counts,
    expected_case_status,
    expected_cases,
    expected_job_status,
    files_under,
    finish_job,
    ingest,
    job_keys,
    ledger_entries,
    ledger_rows,
    load_manifest,
    run_ids,
    set_trial_reward,
)

JOB_KEYS = job_keys()
REPO_ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_JOB = REPO_ROOT / "examples" / "harbor" / "2026-05-02__09-14-07"


@pytest.fixture(scope="module")
def manifest(fixtures_dir: Path) -> dict:
    return load_manifest(fixtures_dir)


@pytest.fixture(scope="module")
def jobs(manifest: dict) -> dict[str, dict]:
    return {job["key"]: job for job in manifest["jobs"]}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's working directory: the default ledger path is relative to it."""
    cwd = tmp_path / "project"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return cwd


# --------------------------------------------------------------------------- checks


def _case_status(job: dict, record: dict) -> str:
    return expected_case_status(job, record["case_id"], record["agent"]["name"])


def _check_records(job: dict, records: list[dict], status: str) -> None:
    """Per-case status, score, pass flag, attempts and exception types agree with the manifest;
    the job's own status is in every record's ``runner_job`` (docs/formats/harbor.md §3)."""
    for record in records:
        assert record["run_status"] == _case_status(job, record), record["case_id"]
        assert record["runner_job"]["job_status"] == status
    if job["key"] == "19_config_only":
        # docs/formats/harbor.md §6: config.json only, with a task list -> one not_started, pending
        # case.
        (record,) = records
        assert record["case_id"] == "fix-git"
        assert [t["status"] for t in record["trials"]] == ["pending"]
        assert record["official_score_status"] == "missing"
        return
    expected = expected_cases(job)
    assert {case_key(r) for r in records} == set(expected)
    assert len(records) == len(expected)
    for record in records:
        case = expected[case_key(record)]
        agg = record["score_aggregation"]
        assert record["trial_count"] == agg["attempt_count"] == len(case.trials)
        assert agg["scored_attempt_count"] == len(case.scored)
        assert agg["unscored_attempt_count"] == len(case.trials) - len(case.scored)
        if case.score is None:
            assert "official_score" not in record  # a missing reward is never a zero
            assert record["official_score_status"] == "missing"
        else:
            assert record["official_score"] == pytest.approx(case.score)
            assert record["official_task_score"]["passed"] is case.passed
            want = "completed" if record["run_status"] == "completed" else "provisional"
            assert record["official_score_status"] == want
        trials = {t["trial_name"]: t for t in record["trials"]}
        assert set(trials) == set(case.trials)
        for name, want in case.trials.items():
            assert trials[name].get("exception_type") == want["exception"], name
            assert trials[name].get("primary_reward") == want["primary"], name


def _check_run_store(runtime_root: Path, payload: dict) -> None:
    """Run records and index lines on disk are the records the payload reported."""
    records = payload["benchmark_runs"]
    assert payload["appended_count"] == len(records) == len(payload["json_paths"])
    for record, json_path, md_path in zip(
        records, payload["json_paths"], payload["markdown_paths"], strict=True
    ):
        stored = json.loads(Path(json_path).read_text(encoding="utf-8"))
        assert stored["benchmark_run"] == record
        assert stored["goal_id"] == "g"
        assert stored["generated_at"] == payload["generated_at"]
        assert Path(md_path).read_text(encoding="utf-8").startswith("# Benchmark Run Append")
    index = runtime_root / "goals" / "g" / "runs" / "index.jsonl"
    lines = [json.loads(line) for line in index.read_text(encoding="utf-8").splitlines()]
    assert [line["benchmark_run"] for line in lines] == records
    for line, json_path in zip(lines, payload["json_paths"], strict=True):
        assert not line["json_path"].startswith("/")  # RT-relative (new)
        assert runtime_root / line["json_path"] == Path(json_path)


def _check_ledger(project: Path, job: dict, payload: dict) -> None:
    """The ledger JSON on disk holds one row per record that is not still running, with the
    manifest's facts."""
    records = payload["benchmark_runs"]
    entries = ledger_entries(payload)
    rows = ledger_rows(project / "benchmark-run-ledger.json")
    assert len(records) == len(entries)
    running = [e for r, e in zip(records, entries, strict=True) if r["run_status"] == "running"]
    # A running case is recorded in the history but never written to the public ledger.
    assert all(e["skipped"] for e in running)
    if len(running) == len(records):
        assert payload["benchmark_run_ledger"]["updated"] is False
        assert rows == {}
        return
    assert len(rows) == len(records) - len(running)
    expected = expected_cases(job)
    for record, entry in zip(records, entries, strict=True):
        status = _case_status(job, record)
        if status == "running":
            assert entry["run_id"] not in rows
            continue
        row = rows[entry["run_id"]]
        assert (row["case_id"], row["arm_id"], row["run_key"]) == (
            record["case_id"], record["arm_id"], record["run_key"],
        )  # fmt: skip
        assert row["status"] == status  # running/missing/corrupt never become completed
        assert row["attempt_count"] == record["trial_count"]
        if job["key"] == "19_config_only":
            assert row.get("official_score") is None and row["official_score_countable"] is False
            continue
        case = expected[case_key(record)]
        assert row["scored_attempt_count"] == len(case.scored)
        assert row["unscored_attempt_count"] == len(case.trials) - len(case.scored)
        if case.score is None:
            assert row.get("official_score") is None and row["score_status"] == "missing"
            assert row["official_score_countable"] is False
        else:
            assert row["official_score"] == pytest.approx(case.score)
            assert row["official_passed"] is case.passed
        if status != "completed":
            assert row["official_score_countable"] is False
            assert row["official_score_countability_reason"] == "run_not_completed"
        elif case.score is not None:
            assert row["official_score_countable"] is True


def _check_events(db: str, payload: dict) -> None:
    n = len(payload["benchmark_runs"])
    expected = {"run_built": n, "run_appended": n, "global_synced": 1}
    upserted = sum(r["run_status"] != "running" for r in payload["benchmark_runs"])
    if upserted:
        expected["ledger_upserted"] = upserted
    assert payload["events"] == {"appended": sum(expected.values()), "by_type": expected}
    assert domain_counts(db) == expected
    assert event_counts(db).get("export_written") == 1  # files rendered after the commit


def _check_rollout(runtime_root: Path, payload: dict) -> None:
    log = runtime_root / "goals" / "g" / "rollout-event-log.jsonl"
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [e["run_id"] for e in events] == run_ids(payload)
    assert all(e["boundary"]["absolute_paths_recorded"] is False for e in events)


def _assert_refused(call, tmp_path: Path, message: str) -> None:
    assert call.code == 1
    lines = call.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]
    assert str(tmp_path) not in call.stderr
    assert call.payload["ok"] is False and call.payload["appended"] is False
    assert call.payload["error"] in lines[0]


# --------------------------------------------------------------------------- every job


@pytest.mark.parametrize("key", JOB_KEYS)
def test_every_manifest_job_end_to_end(
    key: str, db_url: str, fixtures_dir: Path, manifest: dict, jobs: dict, project: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    job = jobs[key]
    job_dir = copy_job(fixtures_dir, manifest, job, tmp_path)
    runtime_root = tmp_path / "rt"
    rel = os.path.relpath(job_dir, project)
    status = expected_job_status(job)

    dry = ingest(rel, db=db_url, runtime_root=runtime_root, execute=False)
    if status is None:
        _assert_refused(dry, tmp_path, "is not a Harbor job directory")
        executed = ingest(rel, db=db_url, runtime_root=runtime_root)
        _assert_refused(executed, tmp_path, "is not a Harbor job directory")
        assert event_counts(db_url) == {}
        assert files_under(runtime_root) == [] and files_under(project) == []
        return

    # The dry run writes nothing, yet reports what the execute will do.
    assert dry.code == 0, dry.result.output
    assert dry.payload["dry_run"] is True and dry.payload["appended"] is False
    assert event_counts(db_url) == {}
    assert files_under(runtime_root) == [] and files_under(project) == []

    executed = ingest(rel, db=db_url, runtime_root=runtime_root)
    assert executed.code == 0, executed.result.output
    payload = executed.payload
    assert payload["ok"] is True and payload["appended"] is True
    assert run_ids(dry.payload) == run_ids(payload)
    assert dry.payload["events"]["by_type"] == payload["events"]["by_type"]
    assert dry.payload["benchmark_runs"] == payload["benchmark_runs"]

    _check_records(job, payload["benchmark_runs"], status)
    _check_run_store(runtime_root, payload)
    _check_ledger(project, job, payload)
    _check_events(db_url, payload)
    _check_rollout(runtime_root, payload)


# --------------------------------------------------------------------------- idempotency


def test_reingest_is_a_no_op_that_says_so(
    db_url: str, fixtures_dir: Path, manifest: dict, jobs: dict, project: Path, tmp_path: Path
) -> None:
    job_dir = copy_job(fixtures_dir, manifest, jobs["16_two_agents_one_job"], tmp_path)
    runtime_root = tmp_path / "rt"
    first = ingest(job_dir, db=db_url, runtime_root=runtime_root)
    assert first.code == 0
    before = domain_counts(db_url)
    ledger_before = (project / "benchmark-run-ledger.json").read_bytes()
    index = runtime_root / "goals" / "g" / "runs" / "index.jsonl"
    index_before = index.read_bytes()

    for execute in (False, True):
        again = ingest(job_dir, db=db_url, runtime_root=runtime_root, execute=execute)
        assert again.code == 0, again.result.output
        assert again.payload["already_recorded"] is True
        assert again.payload["appended"] is False and again.payload["appended_count"] == 0
        assert "already recorded" in again.payload["message"]
        assert [r["run_key"] for r in again.payload["benchmark_runs"]] == [
            r["run_key"] for r in first.payload["benchmark_runs"]
        ]
    assert domain_counts(db_url) == before
    assert (project / "benchmark-run-ledger.json").read_bytes() == ledger_before
    assert index.read_bytes() == index_before


def test_reingest_leaves_run_files_that_hold_their_bytes_and_heals_the_rest(
    db_url: str, fixtures_dir: Path, manifest: dict, jobs: dict, project: Path, tmp_path: Path
) -> None:
    """The repeated ingest renders every run of the goal again: a run file already holding its
    bytes is not replaced (the same inode), one edited in place is written again."""
    job_dir = copy_job(fixtures_dir, manifest, jobs["16_two_agents_one_job"], tmp_path)
    runtime_root = tmp_path / "rt"
    assert ingest(job_dir, db=db_url, runtime_root=runtime_root).code == 0
    run_files = sorted((runtime_root / "goals" / "g" / "runs").glob("*.*[dn]"))
    assert len(run_files) >= 4 and {f.suffix for f in run_files} == {".json", ".md"}
    inodes = {f: f.stat().st_ino for f in run_files}
    edited = run_files[0]
    kept = edited.read_bytes()
    edited.write_bytes(kept.replace(b"{", b"[", 1))  # same size, other bytes, same inode

    again = ingest(job_dir, db=db_url, runtime_root=runtime_root)
    assert again.code == 0 and again.payload["already_recorded"] is True
    assert edited.read_bytes() == kept and edited.stat().st_ino != inodes[edited]
    assert {f: f.stat().st_ino for f in run_files[1:]} == {f: inodes[f] for f in run_files[1:]}
    verified = cli(["verify", "--files", "--format", "json"], db=db_url, runtime_root=runtime_root)
    assert verified.code == 0, verified.result.output
    statuses = {f["path"]: f["status"] for f in verified.payload["verify"]["files"]}
    assert {statuses[str(f)] for f in run_files} == {"match"}


def test_changed_trial_reward_supersedes_the_ledger_row(
    db_url: str, fixtures_dir: Path, manifest: dict, jobs: dict, project: Path, tmp_path: Path
) -> None:
    job = jobs["01_all_pass"]
    job_dir = copy_job(fixtures_dir, manifest, job, tmp_path)
    runtime_root = tmp_path / "rt"
    first = ingest(job_dir, db=db_url, runtime_root=runtime_root)
    ids = run_ids(first.payload)
    fix_git = next(t for t in job["trials"] if t["task_name"] == "fix-git")
    set_trial_reward(job_dir, fix_git["dir"], 0.0)

    second = ingest(job_dir, db=db_url, runtime_root=runtime_root)
    assert second.code == 0 and "already_recorded" not in second.payload
    assert run_ids(second.payload) == ids
    merged = {e["run_id"]: e["merged_into"] for e in ledger_entries(second.payload)}
    rows = ledger_rows(project / "benchmark-run-ledger.json")
    fix_git_id = next(i for i, r in rows.items() if r["case_id"] == "fix-git")
    assert merged.pop(fix_git_id) == "replaced"
    assert set(merged.values()) == {"unchanged"}  # the same attempts, the same history record
    assert set(rows) == set(ids)  # replaced, not appended beside the old rows
    row = next(r for r in rows.values() if r["case_id"] == "fix-git")
    assert row["official_score"] == 0.0 and row["official_passed"] is False
    assert all(r["official_score"] == 1.0 for r in rows.values() if r["case_id"] != "fix-git")
    # The run history is append-only: both observations of fix-git are kept; the four runner
    # attempts that did not change are already in it and are not appended again (issue 34).
    assert len(second.payload["json_paths"]) == 1
    assert second.payload["already_in_history"] == 4
    index = runtime_root / "goals" / "g" / "runs" / "index.jsonl"
    assert len(index.read_text(encoding="utf-8").splitlines()) == 6


@pytest.mark.parametrize(
    ("key", "first_status"),
    [("08_running_job", "running"), ("09_missing_job_result", "incomplete")],
)
def test_job_that_finished_later_supersedes_the_earlier_ingest(
    key: str, first_status: str, db_url: str, fixtures_dir: Path, manifest: dict, jobs: dict,
    project: Path, tmp_path: Path,
) -> None:  # fmt: skip
    job_dir = copy_job(fixtures_dir, manifest, jobs[key], tmp_path)
    runtime_root = tmp_path / "rt"
    first = ingest(job_dir, db=db_url, runtime_root=runtime_root)
    # The finished cases are completed at once; the unfinished ones carry the first status.
    first_records = first.payload["benchmark_runs"]
    assert {r["run_status"] for r in first_records} == {first_status, "completed"}
    assert {r["runner_job"]["job_status"] for r in first_records} == {first_status}
    rows_before = ledger_rows(project / "benchmark-run-ledger.json")
    unfinished = {
        e["run_id"]
        for r, e in zip(first_records, ledger_entries(first.payload), strict=True)
        if r["run_status"] == first_status
    }
    for run_id, row in rows_before.items():
        assert row["status"] == (first_status if run_id in unfinished else "completed")

    finished = finish_job(job_dir)
    assert finished, "the fixture job has unfinished trials"
    second = ingest(job_dir, db=db_url, runtime_root=runtime_root)
    assert second.code == 0, second.result.output
    assert "already_recorded" not in second.payload
    records = second.payload["benchmark_runs"]
    assert {r["run_status"] for r in records} == {"completed"}
    assert run_ids(second.payload) == run_ids(first.payload)  # same identity
    rows = ledger_rows(project / "benchmark-run-ledger.json")
    assert set(rows) == set(run_ids(first.payload))
    assert {r["status"] for r in rows.values()} == {"completed"}
    for name in finished:
        record = next(r for r in records if r["trials"][0]["trial_name"] == name)
        assert record["official_score"] == 1.0
        assert rows[run_ids(second.payload)[records.index(record)]]["official_score"] == 1.0
    if rows_before:
        merged = {e["run_id"]: e["merged_into"] for e in ledger_entries(second.payload)}
        assert {merged[run_id] for run_id in rows_before} == {"replaced"}


# --------------------------------------------------------------------------- identity


def test_run_ids_do_not_depend_on_cwd_or_path_spelling(
    db_url: str, fixtures_dir: Path, manifest: dict, jobs: dict, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    job_dir = copy_job(fixtures_dir, manifest, jobs["16_two_agents_one_job"], tmp_path)
    runtime_root = tmp_path / "rt"
    here, elsewhere = tmp_path / "a", tmp_path / "b" / "deeper"
    here.mkdir()
    elsewhere.mkdir(parents=True)
    (tmp_path / "link-to-job").symlink_to(job_dir, target_is_directory=True)
    spellings = {
        here: [os.path.relpath(job_dir, here), str(job_dir),
               os.path.join("..", "b", "..", os.path.relpath(job_dir, tmp_path))],
        elsewhere: [os.path.relpath(job_dir, elsewhere), "../../link-to-job",
                    str(tmp_path / "link-to-job")],
    }  # fmt: skip
    seen = {}
    for cwd, paths in spellings.items():
        monkeypatch.chdir(cwd)
        for path in paths:
            call = ingest(path, db=db_url, runtime_root=runtime_root, execute=False)
            assert call.code == 0, (path, call.result.output)
            seen[(cwd.name, path)] = run_ids(call.payload)
    assert len({tuple(ids) for ids in seen.values()}) == 1, seen

    monkeypatch.chdir(here)
    executed = ingest(os.path.relpath(job_dir, here), db=db_url, runtime_root=runtime_root)
    assert run_ids(executed.payload) == next(iter(seen.values()))
    monkeypatch.chdir(elsewhere)
    again = ingest("../../link-to-job", db=db_url, runtime_root=runtime_root)
    assert again.payload["already_recorded"] is True  # the idempotency key ignores cwd/spelling


def test_each_run_built_event_names_only_its_own_trial_files(
    fixtures_dir: Path, manifest: dict, jobs: dict, project: Path, tmp_path: Path
) -> None:
    """Provenance per record: job-level files plus that record's trial directories, so a large
    job's events do not each repeat the digest of every file (and still name what they used)."""
    db = f"sqlite:///{tmp_path / 'store.db'}"
    job = jobs["16_two_agents_one_job"]
    job_dir = copy_job(fixtures_dir, manifest, job, tmp_path)
    assert ingest(job_dir, db=db, runtime_root=tmp_path / "rt").code == 0
    call = cli(
        ["sql", "SELECT payload FROM events_v WHERE event_type = 'run_built'", "--format", "json"],
        db=db,
    )
    events = [json.loads(row[0]) for row in call.payload["rows"]]
    assert len(events) >= 2
    seen: set[str] = set()
    for event in events:
        files = event["provenance"]["files"]
        trial_dirs = {rel.split("/", 1)[0] for rel in files if "/" in rel}
        named = {trial["trial_name"] for trial in event["record"]["trials"]}
        assert trial_dirs == named, event["record"]["run_key"]
        assert {"config.json", "lock.json", "result.json"} <= set(files)
        assert event["provenance"]["source_file_count"] > len(files)
        seen |= set(files)
    every_file = {
        str(p.relative_to(job_dir)) for p in job_dir.rglob("*.json")
        if p.parent == job_dir or p.name == "result.json" and p.parent.parent == job_dir
    }  # fmt: skip
    assert every_file <= seen


# --------------------------------------------------------------------------- whole set


def test_whole_fixture_set_in_one_store_rebuilds_and_verifies(
    db_url: str, fixtures_dir: Path, manifest: dict, project: Path, tmp_path: Path
) -> None:
    root = copy_all_jobs(fixtures_dir, manifest, tmp_path)
    runtime_root = tmp_path / "rt"
    expected_rows = 0
    for job in manifest["jobs"]:
        call = ingest(root / job["job_dir"], db=db_url, runtime_root=runtime_root)
        status = expected_job_status(job)
        assert call.code == (1 if status is None else 0), (job["key"], call.result.output)
        if status is not None:
            runs = call.payload["benchmark_runs"]
            expected_rows += sum(r["run_status"] != "running" for r in runs)
    assert len(ledger_rows(project / "benchmark-run-ledger.json")) == expected_rows

    rebuilt = cli(["rebuild", "--verify", "--format", "json"], db=db_url)
    assert rebuilt.code == 0, rebuilt.result.output
    assert rebuilt.payload["ok"] and rebuilt.payload["rebuild_verify"]["differences"] == []
    verified = cli(["verify", "--files", "--format", "json"], db=db_url)
    assert verified.code == 0, verified.result.output
    assert verified.payload["verify"]["ok"] is True
    assert verified.payload["verify"]["first_bad_position"] is None
    assert all(f["status"] == "match" for f in verified.payload["verify"]["files"])
    published = (project / "benchmark-run-ledger.json").read_text(encoding="utf-8")
    assert str(tmp_path) not in published and "/srv/bench" not in published


# --------------------------------------------------------------------------- shipped example


def test_shipped_example_job_ingests_like_its_fixture(
    db_url: str, fixtures_dir: Path, manifest: dict, jobs: dict, project: Path, tmp_path: Path
) -> None:
    """The README's main-job command runs on ``examples/harbor``; it must match fixture 01."""
    if not EXAMPLE_JOB.is_dir():
        pytest.fail("examples/harbor/2026-05-02__09-14-07 is missing")
    example = tmp_path / "example"
    shutil.copytree(EXAMPLE_JOB, example)
    call = cli(
        ["benchmark", "run", "terminal-bench", "--goal-id", "g", "--harbor-job-dir",
         str(example), "--run-ledger-path", "example-out/benchmark-run-ledger.json",
         "--update-run-ledger", "--no-global-sync", "--execute", "--format", "json"],
        db=db_url, runtime_root=project / "example-out" / "runtime",
    )  # fmt: skip
    assert call.code == 0, call.result.output
    _check_records(jobs["01_all_pass"], call.payload["benchmark_runs"], "completed")
    rows = ledger_rows(project / "example-out" / "benchmark-run-ledger.json")
    assert sorted(r["case_id"] for r in rows.values()) == sorted(
        t["task_name"] for t in jobs["01_all_pass"]["trials"]
    )
    assert all(r["official_score_countable"] for r in rows.values())


def test_shipped_example_holds_no_machine_paths() -> None:
    for path in EXAMPLE_JOB.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            assert "/work" not in text and "/home/" not in text and "/tmp/" not in text, path
