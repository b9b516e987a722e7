"""benchmark_run_v0 compaction and input resolution (docs/formats/benchmark_run_v0.md §2, §4, §5,
§6)."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.safety import is_public_safe, ledger_text, nummap_status, parse_number
from benchledger.ledger.rules.record.compact_input import (
    NOT_AN_OBJECT,
    NOT_COMPACTABLE,
    resolve_compact_input,
)
from benchledger.ledger.rules.record.compaction import compact_run, is_compactable
from benchledger.ledger.rules.record.fields import (
    BODY_SPEC,
    MAX_TRIALS,
    METRIC_KEYS,
    RECORD_SCHEMA_VERSION,
    SECONDS_MAP,
    TRIAL_SPEC,
)
from benchledger.ledger.rules.record.kinds import KEYED, NNNUM, _rows, shape, shape_rows
from benchledger.ledger.rules.record.pass_at_k import pass_at_k

SPEC_EXAMPLE = json.loads(
    """
{"schema_version":"benchmark_run_v0","source_runner":"harbor","benchmark_id":"terminal-bench@2.0",
 "job_name":"2026-05-03__08-00-41","mode":"bare_codex_cli","case_id":"fix-git","case_ids":["fix-git"],
 "run_key":"harbor:2026-05-03__08-00-41:terminal-bench@2.0:fix-git:codex:openai-gpt-5",
 "run_status":"completed","arm_id":"codex__openai-gpt-5",
 "agent":{"name":"codex","model":"openai/gpt-5","version":"0.46.0"},
 "official_score":0.6667,"official_score_source":"harbor_attempt_mean",
 "official_score_status":"completed",
 "official_task_score":{"kind":"harbor_verifier_reward","value":0.6667,"passed":false,
   "source":"harbor_attempt_mean"},
 "score_aggregation":{"policy":"mean_of_scored_attempts","primary_reward_key":"reward",
   "planned_attempt_count":3,"attempt_count":3,"scored_attempt_count":3,
   "unscored_attempt_count":0,"passed_attempt_count":2,"binary_rewards":true,
   "runner_equivalent_mean":0.6667},
 "pass_at_k":{"2":1.0},"pass_at_k_basis":"scored_attempts_only","score_failure_attribution":"none",
 "progress":{"n_total_trials":3,"n_completed_trials":3,"n_errored_trials":0,"n_running_trials":0,
   "n_pending_trials":0,"n_cancelled_trials":0},
 "metrics":{"input_tokens":905793,"cache_tokens":660270,"output_tokens":20871,"cost_usd":0.598},
 "trial_count":3,"trials":[{"task_id":"fix-git","trial_name":"fix-git__QhrgDcZ","attempt_index":1,
   "status":"completed","exception_type":"none","reward":{"reward":1.0},"primary_reward":1.0,
   "passed":true}]}
"""
)


def _walk(value: Any, path: str = ""):
    """Yield (path, leaf) for every leaf of a JSON value, keys included as ("key", name)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield f"{path}.<key>", key
            yield from _walk(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, f"{path}[{index}]")
    else:
        yield path, value


def _assert_no_empties(value: Any) -> None:
    if isinstance(value, dict):
        for item in value.values():
            assert item is not None and item != "" and item != [] and item != {}
            _assert_no_empties(item)
    elif isinstance(value, list):
        for item in value:
            _assert_no_empties(item)
    elif isinstance(value, float):
        assert math.isfinite(value)


# --- §6 example -------------------------------------------------------------------------------


def test_spec_example_survives_compaction_unchanged() -> None:
    compact = compact_run(SPEC_EXAMPLE)
    derived = compact.pop("solution_quality_signals")
    assert compact == SPEC_EXAMPLE
    assert derived["outcome_class"] == "partial_nonpass"
    assert derived["solution_action_labels"] == [
        "partial_nonpass_official_score",
        "rubric_miss_labels_unavailable_compact_only",
    ]
    assert derived["rubric_miss_label_status"] == "not_available_from_compact_public_signals"
    assert derived["worker_activity"]["task_facing_activity_observed"] is False
    assert "public_safety" not in compact


def test_compaction_is_idempotent_on_the_example() -> None:
    once = compact_run(SPEC_EXAMPLE)
    assert compact_run(once) == once
    assert compact_run(copy.deepcopy(once)) == once


# --- emptiness and types ------------------------------------------------------------------------


def test_empties_are_omitted_but_false_and_zero_are_kept() -> None:
    raw = {
        "schema_version": "benchmark_run_v0",
        "case_id": "c",
        "job_name": "",
        "mode": "   ",
        "arm_id": None,
        "evidence_files": [],
        "agent": {},
        "progress": {"n_total_trials": 0, "n_running_trials": None},
        "submit_eligible": False,
        "official_score": 0,
        "read_boundary": {"compact_only": True, "docker_invoked": False},
    }
    compact = compact_run(raw)
    for key in ("job_name", "mode", "arm_id", "evidence_files", "agent"):
        assert key not in compact
    assert compact["progress"] == {"n_total_trials": 0}
    assert compact["submit_eligible"] is False
    assert compact["official_score"] == 0
    assert compact["read_boundary"] == {"compact_only": True, "docker_invoked": False}
    _assert_no_empties(compact)


def test_non_finite_and_boolean_numbers_are_dropped() -> None:
    raw = {
        "case_id": "c",
        "official_score": math.nan,
        "wall_time_seconds": math.inf,
        "official_task_score": {"kind": "k", "value": True, "passed": 1},
        "metrics": {"input_tokens": -math.inf, "output_tokens": "12", "cost_usd": "0.5"},
        "timing": {"agent_execution": 3.5, "verifier": -1, "x": math.nan},
        "trials": [{"task_id": "c", "primary_reward": math.nan, "reward": {"reward": math.inf}}],
    }
    compact = compact_run(raw)
    assert "official_score" not in compact
    assert "wall_time_seconds" not in compact
    assert compact["official_task_score"] == {"kind": "k"}
    assert compact["metrics"] == {"output_tokens": 12, "cost_usd": 0.5}
    assert compact["timing"] == {"agent_execution": 3.5}
    assert compact["trials"] == [{"task_id": "c"}]
    assert compact["solution_quality_signals"]["outcome_class"] == "missing_score"
    _assert_no_empties(compact)


def test_enums_reject_unknown_values() -> None:
    compact = compact_run(
        {
            "case_id": "c",
            "run_status": "finished",
            "arm_role": "control",
            "trials": [{"task_id": "c", "status": "done"}],
        }
    )
    assert "run_status" not in compact and "arm_role" not in compact
    assert compact["trials"] == [{"task_id": "c"}]
    ok = compact_run({"case_id": "c", "run_status": "not_started", "arm_role": "baseline"})
    assert ok["run_status"] == "not_started" and ok["arm_role"] == "baseline"


def test_unlisted_fields_are_dropped() -> None:
    raw = {
        "case_id": "c",
        "notes": "free text",
        "route": "codex-loopx",
        "task_id": "c",
        "score_status": "passed",
        "round_reward_trace": {"product_mode_round_policy": "x", "final_round": 2},
        "solution_quality_signals": {"outcome_class": "pass"},
    }
    compact = compact_run(raw)
    for key in ("notes", "route", "task_id", "score_status"):
        assert key not in compact
    assert compact["round_reward_trace"] == {"final_round": 2}
    assert compact["solution_quality_signals"]["outcome_class"] == "missing_score"


def test_texts_are_compacted_to_their_limits() -> None:
    compact = compact_run(
        {
            "case_id": "c" * 300,
            "run_key": "k" * 300,
            "agent": {"version": "v" * 100},
            "runner_verdict": "p" * 100,
        }
    )
    assert len(compact["case_id"]) == 120 and compact["case_id"].endswith("\u2026")
    assert len(compact["run_key"]) == 200
    assert len(compact["agent"]["version"]) == 80
    assert len(compact["runner_verdict"]) == 40


# --- identity ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "case_id"),
    [
        ({"case_id": "a", "task_id": "b", "case_ids": ["d"]}, "a"),
        ({"task_id": "b", "trials": [{"task_id": "t"}], "case_ids": ["d"]}, "b"),
        ({"trials": ["junk", {"task_id": "t"}], "case_ids": ["d"]}, "t"),
        ({"case_ids": ["d", "e"]}, "d"),
        ({"case_ids": "d"}, "d"),
        ({"case_id": "  ", "task_id": "b"}, "b"),
    ],
)
def test_case_id_derivation(raw: dict, case_id: str) -> None:
    assert compact_run(raw)["case_id"] == case_id


def test_case_ids_start_with_case_id_without_duplicates_capped() -> None:
    compact = compact_run({"case_id": "b", "case_ids": ["a", "b", "a", "c", "d", "e", "f"]})
    assert compact["case_ids"] == ["b", "a", "c", "d", "e"]
    assert compact_run({"case_id": "b"})["case_ids"] == ["b"]


def test_unsafe_case_id_is_dropped_and_named() -> None:
    compact = compact_run({"case_id": "/Users/alice/case", "task_id": "fix-git"})
    assert compact["case_id"] == "fix-git"
    assert compact["public_safety"] == {"dropped_field_count": 1, "dropped_fields": ["case_id"]}


def test_agent_kwargs_keys_are_sorted_names_never_values() -> None:
    compact = compact_run(
        {
            "case_id": "c",
            "agent": {
                "name": "codex",
                "kwargs": {"z": "token=abcdefabcdef123", "b": 1, "a": "/Users/x", "c": 2},
            },
        }
    )
    assert compact["agent"] == {"name": "codex", "kwargs_keys": ["a", "b", "c", "z"]}
    assert "public_safety" not in compact
    many = compact_run({"case_id": "c", "agent": {"kwargs_keys": list("gfedcba")}})
    assert many["agent"]["kwargs_keys"] == ["a", "b", "c", "d", "e"]


# --- public safety ----------------------------------------------------------------------------


def test_dropped_fields_name_paths_never_values() -> None:
    secret = "token=abcdef1234567890"
    raw = {
        "case_id": "c",
        "first_blocker": f"blocked by {secret}",
        "evidence_files": ["ok.json", "/home/ci/run/result.json"],
        "trials": [{"task_id": "c", "exception_type": "C:\\runner\\crash"}],
        "interaction_counters": {"note": "/tmp/x", "n": 3},
        "timing": {"/Users/x": 1.0, "agent_execution": 2.0},
    }
    compact = compact_run(raw)
    safety = compact["public_safety"]
    assert safety["dropped_fields"] == [
        "first_blocker",
        "timing.<key>",
        "evidence_files[1]",
        "interaction_counters.note",
        "trials[0].exception_type",
    ]
    assert safety["dropped_field_count"] == 5
    assert compact["evidence_files"] == ["ok.json"]
    assert compact["interaction_counters"] == {"n": 3}
    assert compact["timing"] == {"agent_execution": 2.0}
    for _, leaf in _walk(compact):
        if isinstance(leaf, str):
            assert is_public_safe(leaf)
    text = json.dumps(compact)
    assert secret not in text and "/home/ci" not in text and "/Users/x" not in text
    assert compact_run(compact) == compact


def test_dropped_fields_are_capped_but_counted() -> None:
    raw = {"case_id": "c", "trials": [{"task_id": f"/tmp/{i}"} for i in range(14)]}
    safety = compact_run(raw)["public_safety"]
    assert safety["dropped_field_count"] == 14
    assert len(safety["dropped_fields"]) == 10


def test_record_with_only_unsafe_values_is_not_compactable() -> None:
    compact = compact_run({"schema_version": "benchmark_run_v0", "case_id": "/Users/x"})
    assert compact == {"schema_version": RECORD_SCHEMA_VERSION}
    assert not is_compactable(compact)


# --- trials -----------------------------------------------------------------------------------


def _trial(index: int) -> dict:
    return {
        "task_id": "t",
        "trial_name": f"t__{index:07d}",
        "attempt_index": index + 1,
        "status": "completed",
        "reward": {"reward": 1.0, "tests": "3"},
        "primary_reward": 1.0,
        "passed": True,
        "metrics": {"input_tokens": 10, "cost_usd": 0.1, "junk": 4},
        "timing": {"agent_execution": 1.5},
        "trajectory_present": False,
        "unknown_trial_field": "x",
    }


def test_trials_keep_up_to_max_and_flag_truncation() -> None:
    raw = {"case_id": "t", "trials": [_trial(i) for i in range(MAX_TRIALS + 4)]}
    compact = compact_run(raw)
    assert len(compact["trials"]) == MAX_TRIALS
    assert compact["trial_count"] == MAX_TRIALS + 4
    assert compact["trials_truncated"] is True
    assert compact["trials"][0]["reward"] == {"reward": 1.0, "tests": 3}
    assert compact["trials"][0]["metrics"] == {"input_tokens": 10, "cost_usd": 0.1}
    assert "unknown_trial_field" not in compact["trials"][0]
    assert compact_run(compact) == compact


def test_trials_skip_non_objects_and_empty_items() -> None:
    compact = compact_run({"case_id": "t", "trials": [1, "x", {}, {"junk": 1}, _trial(0)]})
    assert len(compact["trials"]) == 1
    assert compact["trial_count"] == 5
    assert "trials_truncated" not in compact
    assert compact_run({"case_id": "t", "trial_count": 7})["trial_count"] == 7


def test_attempt_index_must_be_positive() -> None:
    compact = compact_run({"case_id": "t", "trials": [{"task_id": "t", "attempt_index": 0}]})
    assert compact["trials"] == [{"task_id": "t"}]


# --- aggregation ------------------------------------------------------------------------------


def test_pass_at_k_values() -> None:
    assert pass_at_k(3, 2) == {"2": 1.0}
    assert pass_at_k(4, 1) == {"2": 0.5, "4": 1.0}
    assert pass_at_k(2, 0) == {"2": 0.0}
    ten = pass_at_k(10, 3)
    assert list(ten) == ["2", "4", "5", "8", "10"]
    assert ten["2"] == pytest.approx(1 - 21 / 45)
    assert ten["8"] == 1.0 and ten["10"] == 1.0
    assert list(pass_at_k(20, 1)) == ["2", "4", "5", "8", "10", "15", "16", "20"]


def test_pass_at_k_is_derived_from_the_aggregation() -> None:
    aggregation = {"binary_rewards": True, "scored_attempt_count": 4, "passed_attempt_count": 1}
    compact = compact_run({"case_id": "c", "score_aggregation": aggregation, "pass_at_k": {"2": 9}})
    assert compact["pass_at_k"] == {"2": 0.5, "4": 1.0}
    assert compact["pass_at_k_basis"] == "scored_attempts_only"
    not_binary = dict(aggregation, binary_rewards=False)
    compact = compact_run({"case_id": "c", "score_aggregation": not_binary, "pass_at_k": {"2": 1}})
    assert "pass_at_k" not in compact and "pass_at_k_basis" not in compact
    one = dict(aggregation, scored_attempt_count=1, passed_attempt_count=1)
    assert "pass_at_k" not in compact_run({"case_id": "c", "score_aggregation": one})


def test_score_aggregation_fields() -> None:
    raw = {
        "case_id": "c",
        "score_aggregation": {
            "policy": "mean_of_scored_attempts",
            "unscored_reasons": {"verifier_failed": 2, "trial_cancelled": True, "x": -1},
            "unscored_attempt_count": 2,
            "primary_score_missing_reason": "no_scored_attempt",
            "runner_equivalent_mean": 0,
        },
    }
    compact = compact_run(raw)["score_aggregation"]
    assert compact == {
        "policy": "mean_of_scored_attempts",
        "unscored_attempt_count": 2,
        "unscored_reasons": {"verifier_failed": 2},
        "runner_equivalent_mean": 0,
        "primary_score_missing_reason": "no_scored_attempt",
    }


# --- validation -------------------------------------------------------------------------------


def test_validation_is_derived_from_boolean_checks() -> None:
    raw = {
        "case_id": "c",
        "validation": {
            "official_case_success": False,
            "leaderboard_claim_allowed": False,
            "native_goal_worker_trace_present": False,
            "no_raw_logs_read": True,
            "compact_record_written": False,
            "validation_scope": "compact_only",
            "all_passed": True,
        },
    }
    validation = compact_run(raw)["validation"]
    assert validation == {
        "all_passed": False,
        "failed_checks": ["compact_record_written"],
        "validation_scope": "compact_only",
        "official_case_success": False,
        "no_raw_logs_read": True,
    }
    assert compact_run(compact_run(raw))["validation"] == validation
    neutral_only = {"case_id": "c", "validation": {"official_case_success": False}}
    assert compact_run(neutral_only)["validation"]["all_passed"] is True


# --- derived solution_quality_signals ------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "outcome", "labels", "status"),
    [
        ({}, "missing_score", ["official_score_missing"], "score_missing"),
        (
            {"official_task_score": {"value": 1.0, "passed": True}},
            "pass",
            ["official_pass"],
            "not_applicable_pass",
        ),
        ({"official_score": 1}, "pass", ["official_pass"], "not_applicable_pass"),
        (
            {"official_score": 0, "agent_activity": {"tool_call_count": 4}},
            "official_zero",
            [
                "official_zero_after_public_worker_activity",
                "rubric_miss_labels_unavailable_compact_only",
            ],
            "not_available_from_compact_public_signals",
        ),
        (
            {"official_score": 0, "failure_attribution_labels": ["partial_trajectory"]},
            "official_zero",
            [
                "official_zero_without_public_worker_activity",
                "partial_trajectory_public_label_present",
                "rubric_miss_labels_unavailable_compact_only",
            ],
            "not_available_from_compact_public_signals",
        ),
        (
            {"official_task_score": {"value": 7.5, "passed": False}},
            "nonpassing_unknown",
            ["rubric_miss_labels_unavailable_compact_only"],
            "not_available_from_compact_public_signals",
        ),
    ],
)
def test_solution_quality_signals(fields: dict, outcome: str, labels: list, status: str) -> None:
    signals = compact_run({"case_id": "c", **fields})["solution_quality_signals"]
    assert signals["outcome_class"] == outcome
    assert signals["solution_action_labels"] == labels
    assert signals["rubric_miss_label_status"] == status
    assert signals["public_limits"] == [
        "task_text_not_recorded",
        "trajectory_not_recorded",
        "verifier_output_not_recorded",
    ]
    assert "rubric_miss_labels" not in signals


def test_worker_activity_falls_back_to_loopx_counters() -> None:
    compact = compact_run(
        {
            "case_id": "c",
            "interaction_counters": {
                "private_trajectory_tool_call_count": 3,
                "bridge_task_facing_operation_count": 2,
            },
        }
    )
    activity = compact["solution_quality_signals"]["worker_activity"]
    assert activity == {
        "task_facing_activity_observed": True,
        "worker_turn_or_bridge_observed": True,
        "tool_call_count": 3,
        "bridge_task_facing_operation_count": 2,
        "bridge_task_facing_success_count": 0,
    }


# --- nested blocks ----------------------------------------------------------------------------


def test_generic_loopx_blocks_keep_one_nested_level() -> None:
    raw = {
        "case_id": "c",
        "benchmark_loop_contract": {
            "route": "codex-loopx",
            "protocol_id": "p" * 200,
            "required": True,
            "budget": 3,
            "labels": ["a", "b", "c", "d", "e", "f", 7],
            "numbers": [1, 2],
            "inner": {"x": 1, "deeper": {"y": 2}, "ok": "yes"},
        },
    }
    block = compact_run(raw)["benchmark_loop_contract"]
    assert block["route"] == "codex-loopx"
    assert len(block["protocol_id"]) == 140
    assert block["required"] is True and block["budget"] == 3
    assert block["labels"] == ["a", "b", "c", "d", "e"]
    assert "numbers" not in block
    assert block["inner"] == {"x": 1, "ok": "yes"}


def test_round_reward_trace_records_sorted_unique_positive() -> None:
    raw = {
        "case_id": "c",
        "round_reward_trace": {
            "final_round_reward": 1,
            "first_success_round": -1,
            "records": [
                {"agent_round": 2, "reward": 1, "passed": True, "tool_calls": 4},
                {"agent_round": 1, "reward": 0, "reward_present": True, "tool_calls": -2},
                {"agent_round": 2, "reward": 0.5},
                {"agent_round": 0},
                {"agent_round": True},
                "junk",
            ],
        },
    }
    trace = compact_run(raw)["round_reward_trace"]
    assert trace["final_round_reward"] == 1.0 and isinstance(trace["final_round_reward"], float)
    assert "first_success_round" not in trace
    assert trace["records"] == [
        {"agent_round": 1, "reward_present": True, "reward": 0.0},
        {"agent_round": 2, "passed": True, "reward": 1.0, "tool_calls": 4},
    ]


def test_launch_preview_from_cli_spec_is_kept_whole() -> None:
    preview = {
        "schema_version": "benchledger_launch_preview_v0",
        "runner": "harbor",
        "runner_ref": "harbor==0.25.0",
        "argv": [
            "uvx",
            "--from",
            "harbor==0.25.0",
            "harbor",
            "run",
            "--dataset",
            "terminal-bench@2.0",
            "--include-task-name",
            "build-cython-ext",
            "--agent",
            "codex",
            "--jobs-dir",
            "<jobs-dir>",
            "--agent-env",
            "CODEX_FORCE_AUTH_JSON=${CODEX_FORCE_AUTH_JSON}",
            "--agent-env",
            "OPENAI_API_KEY=${OPENAI_API_KEY}",
        ],
        "command": "uvx --from harbor==0.25.0 harbor run --dataset terminal-bench@2.0",
        "job_name": "terminal-bench_2.0_build-cython-ext_codex",
        "jobs_dir": "<jobs-dir>",
        "placeholders": ["<jobs-dir>"],
        "env_names": ["CODEX_FORCE_AUTH_JSON", "OPENAI_API_KEY"],
        "allowed_environment_hosts": [],
        "agent_kwargs": {},
        "forbidden_flags_absent": True,
    }
    raw = {"case_id": "build-cython-ext", "run_status": "planned", "launch_preview": preview}
    kept = compact_run(raw)["launch_preview"]
    expected = {k: v for k, v in preview.items() if v not in ([], {})}
    assert kept == expected
    leaked = dict(preview, argv=[*preview["argv"], "--jobs-dir", "/home/me/jobs"])
    compact = compact_run(dict(raw, launch_preview=leaked))
    assert "argv" not in compact["launch_preview"]
    assert compact["public_safety"]["dropped_fields"] == ["launch_preview.argv"]


# --- idempotency on arbitrary input -----------------------------------------------------------

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "  x  y ", "/Users/x", "jobs/tmp/run", "token=abcdef1234567", "a" * 300]),
    st.text(max_size=20),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from([*TRIAL_SPEC, "value", "passed", "records", "agent_round", "x"]),
            inner,
            max_size=5,
        ),
    ),
    max_leaves=12,
)
_records = st.dictionaries(
    st.sampled_from(
        [*BODY_SPEC, "case_id", "case_ids", "task_id", "trials", "trial_count", "validation"]
    ),
    _values,
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(_records)
def test_compaction_is_idempotent_and_clean(raw: dict) -> None:
    once = compact_run(raw)
    assert compact_run(once) == once
    _assert_no_empties(once)
    for _, leaf in _walk(once):
        if isinstance(leaf, str):
            assert is_public_safe(leaf)


# --- input resolution (§2) --------------------------------------------------------------------


def test_resolve_plain_record() -> None:
    records, kind = resolve_compact_input(SPEC_EXAMPLE)
    assert kind == "benchmark_run_v0"
    assert records == [compact_run(SPEC_EXAMPLE)]


def test_resolve_nested_benchmark_run_first() -> None:
    wrapper = {
        "schema_version": "benchmark_run_v0",
        "case_id": "outer",
        "benchmark_run": {"schema_version": "benchmark_run_v0", "case_id": "inner"},
    }
    records, kind = resolve_compact_input(wrapper)
    assert kind == "benchmark_run_v0"
    assert records[0]["case_id"] == "inner"
    run_store_record = {"health_check": "x", "benchmark_run": SPEC_EXAMPLE}
    assert resolve_compact_input(run_store_record)[0][0]["case_id"] == "fix-git"


def test_resolve_harbor_wrapper() -> None:
    wrapper = {
        "schema_version": "harbor_job_result_reducer_v0",
        "compact_benchmark_run": SPEC_EXAMPLE,
    }
    records, kind = resolve_compact_input(wrapper)
    assert kind == "harbor_job_result_reducer_v0"
    assert records[0]["case_id"] == "fix-git"
    nested = {
        "schema_version": "harbor_job_result_reducer_v0",
        "compact_benchmark_run": {"benchmark_run": SPEC_EXAMPLE},
    }
    assert resolve_compact_input(nested)[0][0]["case_id"] == "fix-git"


def test_resolve_batch() -> None:
    second = dict(SPEC_EXAMPLE, case_id="other", case_ids=["other"])
    batch = {
        "schema_version": "benchmark_run_batch_v0",
        "benchmark_runs": [
            SPEC_EXAMPLE,
            {"benchmark_run": second},
            {"schema_version": "harbor_job_result_reducer_v0", "compact_benchmark_run": second},
        ],
    }
    records, kind = resolve_compact_input(batch)
    assert kind == "benchmark_run_batch_v0"
    assert [r["case_id"] for r in records] == ["fix-git", "other", "other"]
    bad = {"schema_version": "benchmark_run_batch_v0", "benchmark_runs": [SPEC_EXAMPLE, {"x": 1}]}
    with pytest.raises(InputError) as error:
        resolve_compact_input(bad, context="parity")
    assert error.value.message == NOT_COMPACTABLE["parity"]


@pytest.mark.parametrize("data", [[SPEC_EXAMPLE], "[1]", b"not json", 3, None])
def test_resolve_requires_an_object(data: object) -> None:
    with pytest.raises(InputError) as error:
        resolve_compact_input(data)
    assert NOT_AN_OBJECT == "ledger input JSON must contain an object"
    assert error.value.message.startswith(NOT_AN_OBJECT)  # unparsable input also says why


@pytest.mark.parametrize(
    ("context", "message"),
    [
        (
            "upsert",
            "--benchmark-run-json did not contain a compactable benchmark_run_v0 object or "
            "harbor_job_result_reducer_v0 wrapper with compact_benchmark_run",
        ),
        ("parity", "--benchmark-run-json did not contain a compactable benchmark_run_v0 object"),
        ("builder", "benchmark command did not produce a compactable benchmark_run_v0"),
    ],
)
@pytest.mark.parametrize(
    "data",
    [
        {"schema_version": "other_v0", "case_id": "c"},
        {"schema_version": "benchmark_run_v0"},
        {"schema_version": "benchmark_run_v0", "notes": "only unlisted fields"},
        {"schema_version": "benchmark_run_v0", "case_id": "/Users/me/case"},
        {"benchmark_run": {"schema_version": "other", "case_id": "c"}},
        {"schema_version": "harbor_job_result_reducer_v0", "compact_benchmark_run": "x"},
        {"schema_version": "terminal_bench_post_launch_materialization_v0", "case_id": "c"},
        {"schema_version": "benchmark_run_batch_v0", "benchmark_runs": []},
    ],
)
def test_resolve_rejections_use_the_exact_messages(context: str, message: str, data: dict) -> None:
    with pytest.raises(InputError) as error:
        resolve_compact_input(data, context=context)
    assert error.value.message == message


def test_resolve_accepts_json_text() -> None:
    records, _ = resolve_compact_input(json.dumps(SPEC_EXAMPLE).encode())
    assert records[0]["run_key"].startswith("harbor:")


def test_resolve_rejects_unknown_context() -> None:
    with pytest.raises(ValueError):
        resolve_compact_input(SPEC_EXAMPLE, context="nope")


# --- loopx 0.4.8 ledger rows --------------------------------------------------------------------


def _loopx_rows(fixtures_dir: Path) -> list[dict]:
    path = fixtures_dir / "loopx-ledger" / "benchmark-run-ledger.json"
    ledger = json.loads(path.read_text(encoding="utf-8"))
    return [
        run
        for benchmark in ledger["benchmarks"].values()
        for case in benchmark["cases"].values()
        for run in case["runs"]
    ]


def test_loopx_ledger_free_text_still_passes_the_stricter_filter(fixtures_dir: Path) -> None:
    rows = _loopx_rows(fixtures_dir)
    assert len(rows) == 303
    dropped = [
        (row["run_id"], path)
        for row in rows
        for path, leaf in _walk(row)
        if isinstance(leaf, str) and not is_public_safe(leaf)
    ]
    assert dropped == []


def test_loopx_ledger_notes_survive_the_ledger_text_variant(fixtures_dir: Path) -> None:
    notes = [row["notes"] for row in _loopx_rows(fixtures_dir) if "notes" in row]
    assert notes
    for note in notes:
        kept = ledger_text(note, 220)
        assert kept is not None
        # loopx 0.4.8 left some notes longer than 220 characters; they are cut, not dropped.
        assert kept == note or (kept.endswith("...") and note.startswith(kept[:-3]))


# --- the fast paths give what the generic kinds give --------------------------------------------

_trial_items = st.dictionaries(
    st.sampled_from([*TRIAL_SPEC, "x"]),
    st.one_of(
        _values,
        st.dictionaries(
            st.one_of(
                st.sampled_from(["reward", "verifier", "/Users/x", "token=abcdef1234567"]),
                st.text(max_size=8),
            ),
            st.one_of(_scalars, st.integers(min_value=-(2**70), max_value=2**70)),
            max_size=4,
        ),
    ),
    max_size=14,
)


@settings(max_examples=400, deadline=None)
@given(_trial_items, st.integers(min_value=0, max_value=300))
def test_trial_rows_shape_like_the_spec(item: dict, index: int) -> None:
    """``shape_rows`` (trials) writes BOOL and text kinds out; the result must be ``shape``'s."""
    prefix = f"trials[{index}]."
    drops_spec: list[str] = []
    drops_rows: list[str] = []
    expected = shape(item, TRIAL_SPEC, drops_spec, prefix)
    assert shape_rows(item, _rows(TRIAL_SPEC), drops_rows, prefix) == expected
    assert drops_rows == drops_spec


def _nummap_reference(value: object, keys: tuple[str, ...] | None) -> tuple[dict, int]:
    if not isinstance(value, dict):
        return {}, 0
    if keys is not None:
        found = {key: parse_number(value.get(key)) for key in keys}
        return {k: v for k, v in found.items() if v is not None}, 0
    out, dropped = {}, 0
    for key, raw in value.items():
        number = parse_number(raw)
        if number is None or not isinstance(key, str) or not key:
            continue
        if is_public_safe(key):
            out[key] = number
        else:
            dropped += 1
    return out, dropped


@settings(max_examples=400, deadline=None)
@given(
    st.dictionaries(
        st.one_of(st.sampled_from([*METRIC_KEYS, "/Users/x", "ak=1234"]), st.text(max_size=6)),
        st.one_of(_scalars, st.integers(min_value=-(2**70), max_value=2**70)),
        max_size=6,
    ),
    st.sampled_from([None, METRIC_KEYS]),
)
def test_nummap_fast_paths_match_parse_number(value: dict, keys: tuple | None) -> None:
    assert nummap_status(value, keys) == _nummap_reference(value, keys)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.one_of(st.sampled_from(["verifier", "/tmp/x", "a" * 70]), st.text(max_size=6)),
        st.one_of(_scalars, st.floats(min_value=-1e12, max_value=1e12)),
        max_size=14,
    )
)
def test_seconds_map_float_path_matches_nnnum(value: dict) -> None:
    generic = KEYED(lambda v, d, p: NNNUM(v, d, p), key_limit=60, cap=12)
    drops_fast: list[str] = []
    drops_generic: list[str] = []
    assert SECONDS_MAP(value, drops_fast, "timing") == generic(value, drops_generic, "timing")
    assert drops_fast == drops_generic
