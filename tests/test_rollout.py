"""Rollout records (docs/formats/history_registry_rollout.md §8)."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.rules.history.rollout import (
    APPEND_ERROR_MESSAGE,
    BOUNDARY,
    benchmark_run_case_id,
    benchmark_run_event,
    benchmark_run_status,
    build_event,
    compute_event_id,
    format_recorded_at,
    parse_log,
    plan_append,
    render_event_line,
    rollout_error_fields,
    rollout_payload_fields,
    summarize_rollout_events,
)

AT = "2026-11-30T17:47:17.123456Z"


def _fixture_run(fixtures_dir: Path) -> tuple[dict, str]:
    """A compact record shaped after the fixture ledger's hello-world row, and its run_id."""
    ledger = json.loads((fixtures_dir / "loopx-ledger" / "benchmark-run-ledger.json").read_text())
    row = ledger["benchmarks"]["skillsbench-cloud-oracle-sanity@v0"]["cases"]["hello-world"][
        "runs"
    ][0]
    run = {
        "schema_version": "benchmark_run_v0",
        "benchmark_id": row["benchmark_id"],
        "case_id": row["case_id"],
        "mode": row["mode"],
        "source_runner": "official_skillsbench_benchflow_result",
        "official_score": row["official_score"],
        "official_score_status": "completed",
        "official_task_score": {
            "kind": "skillsbench_verifier_reward",
            "value": 1.0,
            "passed": True,
        },
        "score_failure_attribution": row["failure_class"],
        "trial_count": 7,
        "trials": [{"task_id": "hello-world"}] * 3,
        "progress": {"n_total_trials": 7, "n_completed_trials": 0},
    }
    return run, row["run_id"]


def test_benchmark_run_event_from_fixture_row(fixtures_dir: Path) -> None:
    run, run_id = _fixture_run(fixtures_dir)
    event = benchmark_run_event(
        run,
        goal_id="demo",
        run_id=run_id,
        action="skillsbench",
        recorded_at=AT,
        history_stem="2026-11-30T17-47-17Z",
        classification="skillsbench_official_benchflow_result_ingest_v0",
        delivery_outcome="outcome_progress",
    )
    assert event["schema_version"] == "loopx_rollout_event_v0"
    assert event["event_kind"] == "compact_case_result" and event["status"] == "passed"
    assert event["run_id"] == "ba6d29ecc60f"
    assert (event["benchmark_id"], event["case_id"]) == (
        "skillsbench-cloud-oracle-sanity@v0",
        "hello-world",
    )
    assert event["summary"] == (
        "benchmark_run compact lifecycle event recorded: "
        "benchmark=skillsbench-cloud-oracle-sanity@v0 case=hello-world status=passed"
    )
    assert event["labels"] == [
        "oracle_uv_prewarm_no_upload_sanity",
        "official_skillsbench_benchflow_result",
        "completed",
        "none",
    ]
    assert event["details"] == {
        "command": "benchmark",
        "action": "skillsbench",
        "mode": "oracle_uv_prewarm_no_upload_sanity",
        "source_runner": "official_skillsbench_benchflow_result",
        "runner_status": None,
        "score_status": "completed",
        "official_score": 1.0,
        "official_passed": True,
        "failure_attribution": "none",
        "trial_count": 7,
        "progress_completed": None,
        "progress_total": 7,
        "history_stem": "2026-11-30T17-47-17Z",
    }
    assert event["boundary"] == BOUNDARY and all(value is False for value in BOUNDARY.values())
    assert event["event_id"] == compute_event_id(event)


@pytest.mark.parametrize(
    ("run", "status"),
    [
        (
            {
                "score_failure_attribution": "verifier_timeout",
                "official_task_score": {"passed": True},
            },
            "precise_blocker",
        ),
        ({"failure_attribution": "setup_failed"}, "precise_blocker"),
        (
            {
                "score_failure_attribution": "no_score_failure",
                "official_task_score": {"passed": False},
            },
            "failed",
        ),
        ({"official_task_score": {"passed": True}}, "passed"),
        ({"official_task_score": {"kind": "not_run"}}, "not_run"),
        ({"official_score_passed": False}, "failed"),
        ({"official_score_status": "not_run"}, "not_run"),
        ({"run_status": "planned", "runner_return_status": "x"}, "not_run"),
        ({"run_status": "fixture"}, "not_run"),
        (
            {"runner_return_status": "completed_with_agent_timeout", "official_score": 0.5},
            "completed_with_agent_timeout",
        ),
        ({"terminal_state": "cancelled"}, "cancelled"),
        ({"official_score": 0.0}, "scored"),
        ({"official_task_score": {"value": 0.25}}, "scored"),
        ({"official_score": True}, "appended"),
        ({}, "appended"),
    ],
)
def test_status_ladder(run: dict, status: str) -> None:
    assert benchmark_run_status(run) == status


def test_precise_blocker_is_compact_blocker_kind() -> None:
    event = benchmark_run_event(
        {"score_failure_attribution": "x"},
        goal_id="g",
        run_id="r",
        action="terminal-bench",
        recorded_at=AT,
    )
    assert event["event_kind"] == "compact_blocker"
    assert "benchmark=unknown case=unknown status=precise_blocker" in event["summary"]


@pytest.mark.parametrize(
    ("run", "case_id"),
    [
        ({"case_id": "a", "task_id": "b"}, "a"),
        ({"task_id": "b", "trials": [{"task_id": "c"}]}, "b"),
        ({"trials": [{"task_id": "c"}], "scenario_id": "d"}, "c"),
        ({"scenario_id": "d"}, "d"),
        ({}, None),
    ],
)
def test_case_id_fallbacks(run: dict, case_id: str | None) -> None:
    assert benchmark_run_case_id(run) == case_id


# --- validation (§8.2) -------------------------------------------------------------------------


def test_optional_fields_only_when_non_empty_and_kind_normalised() -> None:
    event = build_event(
        goal_id="g",
        event_kind="Compact-Case-Result",
        recorded_at=AT,
        agent_id="",
        labels=[],
        details={},
        summary="  a \n b  ",
    )
    assert event["event_kind"] == "compact_case_result"
    assert event["summary"] == "a b"
    assert set(event) == {
        "schema_version",
        "goal_id",
        "event_kind",
        "recorded_at",
        "boundary",
        "summary",
        "event_id",
    }


def test_truncation_limits() -> None:
    event = build_event(
        goal_id="g",
        event_kind="validation",
        recorded_at=AT,
        summary="x" * 600,
        delivery_outcome="y" * 200,
        labels=["z" * 100, "z" * 100, "short"],
        details={"note": "w" * 300, "empty": ""},
    )
    assert len(event["summary"]) == 500 and event["summary"].endswith("...")
    assert len(event["delivery_outcome"]) == 180
    assert [len(label) for label in event["labels"]] == [80, 5]
    assert len(event["details"]["note"]) == 240 and event["details"]["empty"] is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"event_kind": "deploy"}, "unsupported rollout event_kind: deploy"),
        ({"summary": "read /Users/alice/notes"}, "rollout event summary is not public-safe"),
        ({"labels": ["token=abcdef1234567"]}, "rollout event labels is not public-safe"),
        (
            {"details": {"log_excerpt": "x"}},
            "rollout event details key is not allowed: log_excerpt",
        ),
        (
            {"details": {"api_token_count": 3}},
            "rollout event details key is not allowed: api_token_count",
        ),
        ({"details": {"nested": {"a": 1}}}, "rollout event details.nested must be a scalar"),
        (
            {"details": {"score": float("nan")}},
            "rollout event details.score must be a finite number",
        ),
        (
            {"source_refs": [{"stdout_ref": "x"}]},
            "rollout event source_refs key is not allowed: stdout_ref",
        ),
        (
            {"artifact_refs": ["/abs/file"]},
            "rollout event artifact_refs must be a relative path without '..'",
        ),
        (
            {"artifact_refs": ["a/../../b"]},
            "rollout event artifact_refs must be a relative path without '..'",
        ),
        (
            {"artifact_refs": ["~x"]},
            "rollout event artifact_refs must be a relative path without '..'",
        ),
        (
            {"causality": {"blocks": ["\\\\share\\x"]}},
            "rollout event causality.blocks must be a relative path without '..'",
        ),
        (
            {"code_refs": {"commit_ref": "C:x"}},
            "rollout event code_refs.commit_ref must be a relative path without '..'",
        ),
    ],
)
def test_validation_errors(kwargs: dict, message: str) -> None:
    options = {"goal_id": "g", "event_kind": "validation", "recorded_at": AT, **kwargs}
    with pytest.raises(InputError) as info:
        build_event(**options)
    assert str(info.value) == message


def test_structured_fields() -> None:
    event = build_event(
        goal_id="g",
        event_kind="todo_update",
        recorded_at=AT,
        lane={"lane_id": "l1", "agent_role": "", "extra": "dropped"},
        state_transition={"from_state": "open", "to_state": "done"},
        causality={"caused_by": "e1", "blocks": ["todo/a", "todo/a"], "unblocks": []},
        code_refs={"commit_ref": "abc123"},
        handoff={"to_agent_id": "a2"},
        artifact_refs=["reports/x.md"],
        source_refs=["docs/y.md", {"kind": "issue", "n": 3}],
        private_source={"kind": "operator_note", "raw_values_recorded": True, "count": 2},
    )
    assert event["lane"] == {"lane_id": "l1"}
    assert event["causality"] == {"caused_by": "e1", "blocks": ["todo/a"]}
    assert event["code_refs"] == {"commit_ref": "abc123"}
    assert event["source_refs"] == ["docs/y.md", {"kind": "issue", "n": 3}]
    assert event["private_source"] == {
        "kind": "operator_note",
        "raw_values_recorded": False,
        "count": 2,
    }


# --- event_id and idempotency (§8.3) -----------------------------------------------------------


def test_event_id_is_sha256_of_sorted_ascii_json() -> None:
    event = build_event(goal_id="g", event_kind="validation", recorded_at=AT, summary="données")
    body = {key: value for key, value in event.items() if key != "event_id"}
    expected = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]
    assert event["event_id"] == expected and len(expected) == 16
    line = render_event_line(event)
    assert "données" in line and list(json.loads(line)) == sorted(event)


def test_plan_append_idempotent_and_conflicting() -> None:
    event = build_event(goal_id="g", event_kind="validation", recorded_at=AT)
    other = build_event(goal_id="g", event_kind="validation", recorded_at=AT, status="x")
    assert plan_append([other], event) is None
    assert plan_append([other, event], event) == event
    forged = {**other, "event_id": event["event_id"]}
    with pytest.raises(InputError, match=rf"^conflicting rollout event_id: {event['event_id']}$"):
        plan_append([forged], event)


def test_parse_log_skips_malformed_and_foreign_lines() -> None:
    event = build_event(goal_id="g", event_kind="validation", recorded_at=AT)
    lines = [
        render_event_line(event),
        "\n",
        '{"schema_version":"loopx_rollout',
        '{"schema_version":"v9"}',
        "[]",
    ]
    assert parse_log(lines) == [event]


def test_recorded_at_is_utc_microseconds_z() -> None:
    moment = datetime(2026, 12, 1, 1, 47, 17, 123456, tzinfo=timezone(timedelta(hours=8)))
    assert format_recorded_at(moment) == AT


# --- payload fields and summary (§8.4, §8.5) ---------------------------------------------------


def test_payload_fields() -> None:
    first = build_event(
        goal_id="g", event_kind="compact_case_result", recorded_at=AT, status="passed"
    )
    second = build_event(
        goal_id="g", event_kind="compact_blocker", recorded_at=AT, status="precise_blocker"
    )
    single = rollout_payload_fields([first])
    assert single == {
        "rollout_event": {
            "schema_version": "loopx_rollout_event_v0",
            "event_id": first["event_id"],
            "event_kind": "compact_case_result",
            "recorded_at": AT,
            "status": "passed",
        }
    }
    assert [
        item["status"] for item in rollout_payload_fields([first, second])["rollout_events"]
    ] == ["passed", "precise_blocker"]
    assert rollout_payload_fields([]) == {}
    error = rollout_error_fields(InputError("rollout event summary is not public-safe"))
    assert error == {
        "rollout_event_log_error": {
            "recorded": False,
            "error_type": "InputError",
            "message": APPEND_ERROR_MESSAGE,
        }
    }


def test_summary() -> None:
    events = [
        build_event(
            goal_id="g",
            event_kind="compact_case_result",
            recorded_at=f"2026-11-30T00:00:{i:02d}.000000Z",
            status="passed" if i % 2 else "failed",
            details={"n": i},
        )
        for i in range(15)
    ]
    summary = summarize_rollout_events(events, limit=12)
    assert summary["schema_version"] == "loopx_rollout_event_summary_v0"
    assert summary["event_count"] == 15
    assert summary["counts_by_kind"] == {"compact_case_result": 15}
    assert summary["counts_by_status"] == {"failed": 8, "passed": 7}
    assert len(summary["recent_events"]) == 12
    assert summary["latest_event"] == summary["recent_events"][-1]
    assert summary["latest_event"]["recorded_at"].endswith(":14.000000Z")
    assert "details" not in summary["latest_event"] and "boundary" not in summary["latest_event"]
    assert summary["boundary"] == BOUNDARY
    assert summarize_rollout_events([])["latest_event"] is None
