"""Payloads of the events on a goal's stream (``goal/<goal_id>``): ``run_built`` records what
an adapter built from a source, ``run_appended`` what was appended to the goal's run history
(docs/formats/history_registry_rollout.md §5, §9).
"""

from __future__ import annotations

from typing import Literal

from benchledger.ledger.contracts.base import Closed, Count, JsonObject, Number, Open, optional
from benchledger.ledger.contracts.benchmark_run import BenchmarkRunV0


class Provenance(Open):
    """Where a record came from; each adapter adds its own facts beside these."""

    kind: str
    adapter_version: str = optional()
    # relative path -> sha256 of the files the record was read from (a Harbor trial's with the
    # job's own, an Inspect record's log or retried logs), or of every file read when the
    # source does not map its records to files; ``source_file_count``: how many it read in all
    files: dict[str, str] = optional()
    source_file_count: Count = optional()
    # the resolved directory the files were read from: a local path, kept in the store's event
    # only (never in a record or a published file) for ``report --link-artifacts``
    local_root: str = optional()


class RunBuiltV1(Closed):
    goal_id: str
    run_key: str | None
    record: BenchmarkRunV0
    provenance: Provenance
    content_digest: str
    warnings: list[str]


class GoalRunRecord(Open):
    """A goal run file (``goals/<goal>/runs/<stem>.json``, §5.2)."""

    generated_at: str
    goal_id: str
    classification: str
    recommended_action: str
    health_check: str
    benchmark_run: BenchmarkRunV0
    delivery_batch_scale: str = optional()
    delivery_outcome: str = optional()


class RolloutDetails(Open):
    command: str = optional()
    action: str = optional()
    mode: str | None = optional()
    source_runner: str | None = optional()
    runner_status: str | None = optional()
    score_status: str | None = optional()
    official_score: Number | None = optional()
    official_passed: bool | None = optional()
    failure_attribution: str | None = optional()
    trial_count: Count | None = optional()
    progress_completed: Count | None = optional()
    progress_total: Count | None = optional()
    history_stem: str | None = optional()


class RolloutEvent(Open):
    """A ``loopx_rollout_event_v0`` record (§9): the lifecycle event of one appended run."""

    schema_version: Literal["loopx_rollout_event_v0"]
    event_id: str
    goal_id: str
    event_kind: str
    recorded_at: str
    boundary: dict[str, bool]
    benchmark_id: str = optional()
    case_id: str = optional()
    run_id: str = optional()
    status: str = optional()
    classification: str = optional()
    delivery_outcome: str = optional()
    summary: str = optional()
    labels: list[str] = optional()
    details: RolloutDetails = optional()
    artifact_refs: list[JsonObject | str] = optional()
    source_refs: list[JsonObject | str] = optional()


class RunAppendedV1(Closed):
    goal_id: str
    stem: str
    run_key: str | None
    run_id: str
    generated_at: str
    record: GoalRunRecord
    rollout_event: RolloutEvent
