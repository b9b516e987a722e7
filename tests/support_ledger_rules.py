"""Shared builders for the row-rule and ledger-operation tests."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

NOW = "2026-07-01T00:00:00Z"

HARBOR_RECORD: dict[str, Any] = {
    "schema_version": "benchmark_run_v0",
    "source_runner": "harbor",
    "benchmark_id": "terminal-bench@2.0",
    "job_name": "2026-05-03__08-00-41",
    "mode": "bare_codex_cli",
    "case_id": "fix-git",
    "case_ids": ["fix-git"],
    "run_key": "harbor:2026-05-03__08-00-41:terminal-bench@2.0:fix-git:codex:openai-gpt-5",
    "run_status": "completed",
    "arm_id": "codex__openai-gpt-5",
    "agent": {"name": "codex", "model": "openai/gpt-5", "version": "0.46.0"},
    "official_score": 0.6667,
    "official_score_source": "harbor_attempt_mean",
    "official_score_status": "completed",
    "official_task_score": {
        "kind": "harbor_verifier_reward",
        "value": 0.6667,
        "passed": False,
        "source": "harbor_attempt_mean",
    },
    "score_aggregation": {
        "policy": "mean_of_scored_attempts",
        "primary_reward_key": "reward",
        "planned_attempt_count": 3,
        "attempt_count": 3,
        "scored_attempt_count": 3,
        "unscored_attempt_count": 0,
        "passed_attempt_count": 2,
        "binary_rewards": True,
        "runner_equivalent_mean": 0.6667,
    },
    "pass_at_k": {"2": 1.0},
    "score_failure_attribution": "none",
    "progress": {"n_total_trials": 3, "n_completed_trials": 3, "n_running_trials": 0},
    "trial_count": 3,
    "trials": [{"task_id": "fix-git", "trial_name": "fix-git__QhrgDcZ", "exception_type": "none"}],
}


def record(**changes: Any) -> dict[str, Any]:
    """A copy of the Harbor example record with top-level keys replaced (None deletes)."""
    out = copy.deepcopy(HARBOR_RECORD)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def bare_record(**fields: Any) -> dict[str, Any]:
    """A minimal record: just what a test names, plus the schema."""
    return {"schema_version": "benchmark_run_v0", **fields}


def load_fixture_ledger(fixtures_dir: Path, name: str = "benchmark-run-ledger.json") -> dict:
    return json.loads((fixtures_dir / "loopx-ledger" / name).read_text("utf-8"))


def fixture_rows(document: dict) -> list[tuple[str, dict]]:
    """(benchmark node key, stored row) for every run of a ledger document."""
    return [
        (benchmark_key, run)
        for benchmark_key, node in document["benchmarks"].items()
        for case in node["cases"].values()
        for run in case["runs"]
    ]
