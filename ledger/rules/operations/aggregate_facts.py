"""What ``run-ledger-aggregate`` reads of one ledger row, as one small value (``RowFacts``).

Why: the aggregate of a 66,000-row benchmark spent most of its time parsing whole rows (~2 KB
each) and judging them by the ledger rules (countability, failure labels), though per row it
only needs a bucket, a few sort keys and, for the run a case ends up with, the summary fields.
All of these are a pure function of the row, so ``projections/read_models/aggregate_facts.py``
keeps them
beside the row and the aggregate (``ledger.rules.operations.aggregate``) selects from them without
the row.

Every field is exactly what ``ledger.rules.operations.aggregate`` used to derive from the row at
the place it
needed it; ``summary`` is the row itself (rows judged now) or the JSON text of the
``CASE_BEST_FIELDS`` it holds (stored facts), parsed only for the runs that are chosen.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import orjson

from benchledger.ledger.core.jsonfmt import orjson_prints_as_stdlib
from benchledger.ledger.rules.operations.aggregate_buckets import BUCKET_RANK, judge_row
from benchledger.ledger.rules.row.archive_state import is_archived
from benchledger.ledger.rules.row.build import RULES_VERSION
from benchledger.ledger.rules.row.copies import NATIVE_GOAL_FIELDS
from benchledger.ledger.rules.row.timestamps import UNREADABLE, instant

# The layout of a stored ``RowFacts`` (``encode``) and the rules behind its verdicts: stored
# facts of any other version are computed again.
AGGREGATE_FACTS_VERSION = f"2/{RULES_VERSION}"

# loopx 0.4.8's case summary fields, then benchledger's additions (arm role, job, mode, rounds,
# next action).
CASE_BEST_FIELDS = (
    "run_id",
    "recorded_at",
    "benchmark_id",
    "case_id",
    "run_group_id",
    "arm_id",
    "route",
    "artifact_refs",
    "status",
    "score_status",
    "official_score",
    "official_passed",
    "round_reward_count",
    "round_success_observed",
    "max_rounds_budget",
    "app_server_goal_round_semantics",
    *NATIVE_GOAL_FIELDS,
    "official_feedback_blinded",
    "reward_feedback_forwarded",
    "failure_class",
    "failure_scope",
    "failure_labels",
    "score_failure_attribution",
    "failure_attribution_labels",
    "attempt_lifecycle_phase",
    "attempt_failure_label",
    "attempt_failure_class",
    "runner_return_status",
    "runner_score_recovered_from_verifier_artifact",
    "verifier_reward_artifact_recovery_status",
    "verifier_reward_artifact_recovered",
    "official_result_json_materialized",
    "solution_quality_signals",
    "task_setup_preflight",
    "task_staging",
    "repair_class",
    "repair_priority",
    # benchledger additions
    "arm_role",
    "job_name",
    "mode",
    "official_score_bool_fallback_used",
    "first_success_round",
    "final_round_reward",
    "best_round_reward",
    "next_action",
)


class RowFacts(NamedTuple):
    """One ledger row as the aggregate reads it (see the module doc)."""

    benchmark_id: Any  # the row's own value, compared with the benchmark asked for
    archived: bool
    case_id: str  # ``str(case_id or "")``
    noncanonical: bool  # ``noncanonical_source``
    bucket: str  # ``judge_row``'s verdict, with the four values below
    countable: bool
    reason: str
    score: float | None
    effective_class: str
    recorded: float  # ``instant(recorded_at)``
    group: str  # ``str(run_group_id or "")``
    run: str  # ``str(run_id or "")``: sort keys, and the run counted when not empty
    job: str  # ``str(job_name or "")``
    summary: Mapping[str, Any] | str  # the row, or its summary fields' JSON text
    # The summary fields are known to print the same through orjson as through ``json``
    # (``ledger.core.jsonfmt``), so the printed aggregate need not walk them again: worked out once,
    # when the facts are stored. False for rows judged now (the walk decides as before).
    summary_plain: bool = False

    def best_key(self) -> tuple:
        """``Judged.best_key``: bucket, score, recorded_at, run group, run id."""
        score = self.score if self.score is not None else -1.0
        return (BUCKET_RANK[self.bucket], score, self.recorded, self.group, self.run)

    def sort_key(self) -> tuple[float, str]:
        """``benchledger.ledger.rules.row.ordering.row_sort_key`` of the row."""
        return self.recorded, self.run

    def lane_text(self) -> str:
        """The text target-lane patterns are matched in (run group, run id, job name)."""
        return f"{self.group} {self.run} {self.job}".lower()

    def summary_fields(self) -> dict[str, Any]:
        """The ``CASE_BEST_FIELDS`` the row holds, in that order (a new dict)."""
        source = self.summary
        if isinstance(source, str):
            loaded: dict[str, Any] = orjson.loads(source)
            return loaded
        return {key: source[key] for key in CASE_BEST_FIELDS if key in source}


def noncanonical_source(row: Mapping[str, Any]) -> bool:
    """[loopx-specific] best effort: the row's task-setup preflight says the canonical task
    was not present, or the class excludes the task source from formal scoring."""
    preflight = row.get("task_setup_preflight")
    if isinstance(preflight, Mapping) and preflight.get("canonical_task_present") is False:
        return True
    return row.get("failure_class") == "skillsbench_task_source_excluded"


def row_facts(row: dict) -> RowFacts:
    """The facts of ``row``, its summary read from the row itself when it is chosen. An
    archived row is never judged nor chosen (the aggregate skips it first), so its facts say
    only that: judging it was a fifth of a first aggregate of an archive-heavy ledger."""
    if is_archived(row):
        return RowFacts(row.get("benchmark_id"), True, "", False, "missing", False, "", None,
                        "", UNREADABLE, "", "", "", {})  # fmt: skip
    judged = judge_row(row)
    return RowFacts(
        row.get("benchmark_id"),
        False,
        str(row.get("case_id") or ""),
        noncanonical_source(row),
        judged.bucket,
        judged.countable,
        judged.reason,
        judged.score,
        judged.effective_class,
        instant(row.get("recorded_at")),
        str(row.get("run_group_id") or ""),
        str(row.get("run_id") or ""),
        str(row.get("job_name") or ""),
        row,
    )


def encode(facts: RowFacts) -> tuple[str, str] | None:
    """The stored form of ``facts`` (of a row that came out of ``orjson.loads``): a JSON array
    of every field but the summary, with whether the summary prints plainly (``summary_plain``,
    found here) and this version last, and the summary fields' JSON text.
    None when JSON cannot carry the facts exactly (a score of numeric text that overflowed to
    infinity, say): those are judged again at each read instead."""
    recorded = None if facts.recorded == UNREADABLE else facts.recorded
    fields = facts.summary_fields()
    plain = orjson_prints_as_stdlib(fields)
    values = [*facts[:9], recorded, *facts[10:13], plain, AGGREGATE_FACTS_VERSION]
    try:
        text = orjson.dumps(values)
        # The summary is part of a row orjson parsed, so it comes back exactly as it is.
        summary = orjson.dumps(fields)
    except TypeError:
        return None
    if orjson.loads(text) != values:
        return None
    return text.decode(), summary.decode()


def decode(text: str | bytes, summary: str | bytes) -> RowFacts | None:
    """Stored facts (``encode``) back, or None when they are of another version."""
    stored = orjson.loads(text)
    if stored[-1] != AGGREGATE_FACTS_VERSION:
        return None
    if stored[9] is None:
        stored[9] = UNREADABLE
    # [..., plain, version] -> [..., summary, plain]: the field order of ``RowFacts``
    stored[-1] = stored[-2]
    stored[-2] = summary if isinstance(summary, str) else summary.decode()
    return RowFacts._make(stored)
