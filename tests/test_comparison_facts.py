"""The row fields compare reads, as the row builder derives them from a compact record."""

from __future__ import annotations

from benchledger.ledger.rules.row.build import build_row

RECORD = {
    "schema_version": "benchmark_run_v0",
    "benchmark_id": "terminal-bench@2.0",
    "case_id": "fix-git",
    "job_name": "j1",
    "run_key": "harbor:j1:terminal-bench@2.0:fix-git:codex:-",
    "run_status": "completed",
    "official_score": 0.5,
    "official_score_status": "completed",
    "official_task_score": {"kind": "harbor_verifier_reward", "value": 0.5, "passed": False},
    "trials": [
        {"attempt_index": 2, "primary_reward": 0.0, "passed": False, "source": "terminal-bench",
         "task_digest": "sha256:aa"},
        {"attempt_index": 1, "primary_reward": 1.0, "passed": True, "source": "terminal-bench",
         "task_digest": "sha256:aa"},
        {"attempt_index": 3, "unscored_reason": "verifier_failed", "task_digest": "sha256:bb"},
        {"attempt_index": 4, "primary_reward": True},
        "not a trial",
    ],
    "timeout_policy": {"official_comparable": False},
    "metrics": {"input_tokens": 10, "output_tokens": 2, "cost_usd": 0.5, "cache_tokens": "x"},
    "metrics_coverage": {"attempts_with_usage": 2, "attempts_total": 3},
}  # fmt: skip


def _row(record: dict) -> dict:
    row, _warnings = build_row(record, now="2026-05-01T00:00:00Z", arm_id="a")
    return row


def test_attempts_keep_their_reward_verdict_or_reason() -> None:
    assert _row(RECORD)["attempt_outcomes"] == [
        {"attempt_index": 2, "primary_reward": 0.0, "passed": False},
        {"attempt_index": 1, "primary_reward": 1.0, "passed": True},
        {"attempt_index": 3, "unscored_reason": "verifier_failed"},
        # a boolean is not a reward: the attempt is unscored, never a 1
        {"attempt_index": 4, "unscored_reason": "no_primary_reward"},
    ]


def test_comparability_and_usage() -> None:
    row = _row(RECORD)
    assert row["comparability"] == {
        "task_digests": ["sha256:aa", "sha256:bb"],
        "dataset_sources": ["terminal-bench"],
        "timeout_official_comparable": False,
    }
    assert row["usage"] == {
        "input_tokens": 10,
        "output_tokens": 2,
        "cost_usd": 0.5,
        "attempts_with_usage": 2,
        "attempts_total": 3,
    }


def test_records_without_the_facts_add_no_keys() -> None:
    bare = {k: v for k, v in RECORD.items() if k not in ("trials", "timeout_policy", "metrics")}
    row = _row(bare)
    assert not {"attempt_outcomes", "comparability", "usage"} & row.keys()


def test_unsafe_text_is_dropped_from_the_facts() -> None:
    record = {**RECORD, "trials": [{"attempt_index": 1, "source": "/home/me/tasks",
                                    "unscored_reason": "token=abcdef1234567890"}]}  # fmt: skip
    row = _row(record)
    assert row["attempt_outcomes"] == [{"attempt_index": 1, "unscored_reason": "no_primary_reward"}]
    assert "dataset_sources" not in row.get("comparability", {})


def test_the_agent_version_and_scaled_timeouts_are_kept_for_compare() -> None:
    """What splits one agent's runs into arms (issue 32): the recorded agent version and any
    effective timeout multiplier other than 1."""
    policy = {"official_comparable": False, "effective_multipliers": {
        "agent_timeout_multiplier": 8.0, "verifier_timeout_multiplier": 1.0}}  # fmt: skip
    record = {**RECORD, "agent": {"name": "codex", "version": "0.46.0"}, "timeout_policy": policy}
    facts = _row(record)["comparability"]
    assert facts["agent_version"] == "0.46.0"
    assert facts["timeout_multipliers"] == {"agent_timeout_multiplier": 8.0}
    assert "agent_version" not in _row(RECORD)["comparability"]


def test_the_runner_s_job_times_are_kept_for_the_timeline() -> None:
    job = {"started_at": "2026-05-01T10:00:00Z", "finished_at": "2026-05-01T11:00:00Z"}
    row = _row({**RECORD, "runner_job": job})
    assert row["run_window"] == job
    assert "run_window" not in _row(RECORD)
