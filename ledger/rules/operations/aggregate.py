"""``run-ledger-aggregate``: one current result per canonical case (docs/formats/ledger_v0.md §11).

Chooses a run per case (best-of-N, latest countable, or target lanes) from the buckets
``ledger.rules.operations.aggregate_buckets`` gives each run, and builds the payload the command
prints.
Nothing is written back to any ledger.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import orjson

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.jsonfmt import PlainJsonDict, float_prints_as_stdlib
from benchledger.ledger.rules.operations.aggregate_buckets import (
    BLOCKED_BUCKETS,
    BUCKET_PRECEDENCE,
    COUNTABLE_BUCKETS,
)
from benchledger.ledger.rules.operations.aggregate_facts import (
    RowFacts,
    noncanonical_source,
    row_facts,
)
from benchledger.ledger.rules.operations.merge import MergeResult
from benchledger.ledger.rules.row.archive_state import is_archived
from benchledger.ledger.rules.row.build import RULES_VERSION
from benchledger.ledger.rules.row.values import compact_text

AGGREGATE_SCHEMA = "benchmark_run_ledger_current_aggregate_v0"
STANDARD_CASE_SET_POLICY = (
    "accepted_numeric_official_scores_blocked_uncountable_infra_missing_elsewhere"
)
SELECTION_POLICIES = {
    "best": "best",
    "best-of-n": "best",
    "best_of_n": "best",
    "latest_countable": "latest_countable",
    "latest-countable": "latest_countable",
}
_PRIVACY_FLAGS = {
    "raw_logs_recorded": False,
    "raw_task_text_recorded": False,
    "absolute_paths_recorded": False,
}
_LANE_SOURCES = (
    "current_countable",
    "backfill_countable",
    "current_noncountable",
    "backfill_noncountable",
    "missing",
)
# loopx 0.4.8's statement of the two target-lane rules, word for word (docs/loopx-compat.md).
CURRENT_EVIDENCE_RULE = (
    "target-lane runs that do not match backfill patterns are current evidence unless explicit "
    "current patterns are provided"
)
DUPLICATE_CASE_RULE = (
    "current countable official score wins; backfill countable official score fills only when "
    "current countable evidence is absent"
)
# One run as ``aggregate`` takes it: the ledger row, or its facts
# (``ledger.rules.operations.aggregate_facts``)
# when they were stored. A row is judged only when its case is, as it always was.
Run = dict | RowFacts


def _pick(candidates: list[RowFacts], policy: str) -> RowFacts | None:
    if len(candidates) < 2:
        return candidates[0] if candidates else None
    if policy == "latest_countable":
        countable = [j for j in candidates if j.bucket in COUNTABLE_BUCKETS]
        if countable:
            return max(countable, key=RowFacts.sort_key)
    return max(candidates, key=RowFacts.best_key)


def _dedupe(values: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for value in values:
        text = str(value).strip()
        if text:
            seen.setdefault(text, None)
    return list(seen)


@dataclass(frozen=True)
class TargetLanes:
    """Current/backfill lanes of a target (§11); patterns match case-insensitively."""

    lane_id: str | None = None
    target: tuple[str, ...] = ()
    current: tuple[str, ...] = ()
    backfill: tuple[str, ...] = ()

    @property
    def enabled(self) -> bool:
        return bool(self.target or self.current or self.backfill)

    def lane_of(self, facts: RowFacts) -> str | None:
        text = facts.lane_text()
        in_target = any(p.lower() in text for p in self.target)
        in_current = any(p.lower() in text for p in self.current)
        in_backfill = any(p.lower() in text for p in self.backfill)
        if in_current or (in_target and not in_backfill):
            return "current"
        if in_backfill:
            return "backfill"
        return None


_NO_LANES = TargetLanes()


def _pick_lane(
    judged: list[RowFacts], lanes: TargetLanes, policy: str
) -> tuple[RowFacts | None, str]:
    by_lane: dict[str, list[RowFacts]] = {"current": [], "backfill": []}
    for item in judged:
        lane = lanes.lane_of(item)
        if lane:
            by_lane[lane].append(item)
    for lane, countable_only, label in (
        ("current", True, "current_countable"),
        ("backfill", True, "backfill_countable"),
        ("current", False, "current_noncountable"),
        ("backfill", False, "backfill_noncountable"),
    ):
        pool = [j for j in by_lane[lane] if not countable_only or j.bucket in COUNTABLE_BUCKETS]
        chosen = _pick(pool, policy)
        if chosen is not None:
            return chosen, label
    return None, "missing"


def _case_summary(judged: RowFacts | None, lane_source: str | None) -> dict[str, Any]:
    if judged is None:
        summary: dict[str, Any] = {"bucket": "missing"}
    else:
        summary = judged.summary_fields()
        summary.update(
            {
                "bucket": judged.bucket,
                "official_score_countable": judged.countable,
                "official_score_countability_reason": judged.reason,
            }
        )
        if judged.effective_class:
            summary["effective_failure_class"] = judged.effective_class
        if judged.bucket in COUNTABLE_BUCKETS:
            summary["countable_score"] = judged.score
    if lane_source is not None:
        summary["target_lane_source"] = lane_source
    return summary


# The rules behind ``case_result`` (selection, summary shape) and its stored layout
# (``projections/read_models/aggregate_cases.py``): kept results of any other version are worked
# out again.
CASE_RESULT_VERSION = f"1/{RULES_VERSION}"


class CaseResult(NamedTuple):
    """What one case gives the aggregate, a function of the case's active runs alone: so it
    can be kept per case and reused while none of the case's rows changed
    (``projections/read_models/aggregate_cases.py``)."""

    active: int  # active runs of the benchmark in the case (0: the case has none)
    noncanonical: bool  # every one of them is a noncanonical sanity source
    run_count: int  # how many of them have a run id
    bucket: str  # the chosen run's bucket, or "missing"
    summary: dict[str, Any] | str  # its ``case_best`` entry, or that entry's JSON text
    plain: bool  # the entry prints the same through orjson as through ``json``
    lane_source: str | None = None  # with target lanes: where the chosen run came from

    def summary_dict(self) -> dict[str, Any]:
        summary = self.summary
        if isinstance(summary, str):
            loaded: dict[str, Any] = orjson.loads(summary)
            return loaded
        return summary


def case_result(
    judged: Sequence[RowFacts], policy: str = "best", lanes: TargetLanes = _NO_LANES
) -> CaseResult:
    """The case's chosen run under ``policy`` (a ``SELECTION_POLICIES`` value; best-of-N by
    default) and ``lanes`` (none by default), from the facts of its active runs of the
    benchmark: the one place a case's current result is decided."""
    lane_source = None
    if lanes.enabled:
        chosen, lane_source = _pick_lane(list(judged), lanes, policy)
    else:
        chosen = _pick(list(judged), policy)
    return CaseResult(
        len(judged),
        all(j.noncanonical for j in judged),
        sum(1 for j in judged if j.run),
        chosen.bucket if chosen else "missing",
        _case_summary(chosen, lane_source),
        chosen is None or _prints_plainly(chosen),
        lane_source,
    )


def selection_policy(selection: str) -> str:
    """The ``SELECTION_POLICIES`` value ``--selection-policy`` names."""
    policy = SELECTION_POLICIES.get(selection)
    if policy is None:
        raise InputError("--selection-policy must be best or latest_countable")
    return policy


def aggregate(
    rows: Sequence[Run],
    *,
    benchmark_id: str,
    selection: str = "best",
    canonical_case_ids: Iterable[str] | None = None,
    active_case_ids: Iterable[str] | None = None,
    include_noncanonical_sanity_sources: bool = False,
    lanes: TargetLanes | None = None,
    source_ledger_files: Sequence[str] = (),
) -> dict:
    """One current result per canonical case (§11); nothing is written back anywhere.
    ``rows``: ledger rows, or their stored facts (``Run``), in any mix."""
    policy = selection_policy(selection)
    lanes = lanes or TargetLanes()
    by_case, run_ids = _active_rows_by_case(rows, benchmark_id)
    canonical = _dedupe(canonical_case_ids or ()) or sorted(
        case
        for case, case_rows in by_case.items()
        if include_noncanonical_sanity_sources or not all(_noncanonical(run) for run in case_rows)
    )
    # A row is judged only when its case is canonical, as it always was.
    results = {
        case: case_result([_facts(run) for run in by_case.get(case, ())], policy, lanes)
        for case in canonical
    }
    return _aggregate_payload(
        benchmark_id, canonical, _dedupe(active_case_ids or ()), results, len(run_ids),
        policy, lanes, source_ledger_files,
    )  # fmt: skip


def aggregate_of_cases(
    cases: Mapping[str, CaseResult],
    *,
    benchmark_id: str,
    canonical_case_ids: Iterable[str] | None = None,
    active_case_ids: Iterable[str] | None = None,
    include_noncanonical_sanity_sources: bool = False,
    source_ledger_files: Sequence[str] = (),
) -> dict:
    """The best-of-N aggregate without target lanes (what ``aggregate`` gives then) from each
    case's result worked out beforehand (``case_result``), by case id: only the cases that
    changed since a result was kept need their runs judged again."""
    canonical = _dedupe(canonical_case_ids or ()) or sorted(
        case
        for case, result in cases.items()
        if result.active and (include_noncanonical_sanity_sources or not result.noncanonical)
    )
    # a canonical case without runs: what ``case_result`` gives it (a summary of its own)
    results = {case: cases.get(case) or case_result(()) for case in canonical}
    run_count = sum(result.run_count for result in cases.values())
    return _aggregate_payload(
        benchmark_id, canonical, _dedupe(active_case_ids or ()), results, run_count, "best",
        _NO_LANES, source_ledger_files,
    )  # fmt: skip


def _prints_plainly(chosen: RowFacts) -> bool:
    """Whether ``_case_summary(chosen)`` is known to print the same through orjson as through
    ``json``: its stored summary fields were (``RowFacts.summary_plain``), and the score it adds
    is too; the other values it adds are text and booleans."""
    score = chosen.score
    return chosen.summary_plain and (type(score) is not float or float_prints_as_stdlib(score))


def _facts(run: Run) -> RowFacts:
    return run if isinstance(run, RowFacts) else row_facts(run)


def _noncanonical(run: Run) -> bool:
    return run.noncanonical if isinstance(run, RowFacts) else noncanonical_source(run)


def _active_rows_by_case(
    rows: Sequence[Run], benchmark_id: str
) -> tuple[dict[str, list[Run]], set[str]]:
    by_case: dict[str, list[Run]] = {}
    run_ids: set[str] = set()
    for row in rows:
        if isinstance(row, RowFacts):
            if row.archived or row.benchmark_id != benchmark_id:
                continue
            found = by_case.get(row.case_id)
            if found is None:
                by_case[row.case_id] = [row]
            else:
                found.append(row)
            if row.run:  # not empty exactly when the row's run id is truthy
                run_ids.add(row.run)
            continue
        if row.get("benchmark_id") != benchmark_id or is_archived(row):
            continue
        by_case.setdefault(str(row.get("case_id") or ""), []).append(row)
        if row.get("run_id"):
            run_ids.add(str(row["run_id"]))
    return by_case, run_ids


def _aggregate_payload(
    benchmark_id: str,
    canonical: list[str],
    active: list[str],
    results: Mapping[str, CaseResult],
    run_count: int,
    policy: str,
    lanes: TargetLanes,
    source_ledger_files: Sequence[str],
) -> dict:
    # One pass over the cases (nine passes were a tenth of a 30,000-case aggregate).
    cases_by_bucket: dict[str, list[str]] = {name: [] for name in BUCKET_PRECEDENCE}
    accepted: list[str] = []
    blocked: list[str] = []
    case_best: dict[str, dict] = {}
    lane_counts: dict[str, int] = {}
    plain = True  # every summary in ``case_best`` is known to print plainly
    for case in canonical:
        result = results[case]
        bucket = result.bucket
        cases_by_bucket[bucket].append(case)
        if bucket in COUNTABLE_BUCKETS:
            accepted.append(case)
        elif bucket in BLOCKED_BUCKETS:
            blocked.append(case)
        case_best[case] = result.summary_dict()
        plain = plain and result.plain
        if result.lane_source is not None:
            lane_counts[result.lane_source] = lane_counts.get(result.lane_source, 0) + 1
    if plain:
        case_best = PlainJsonDict(case_best)
    missing = cases_by_bucket["missing"]
    active_set = set(active)
    runnable_missing = [c for c in missing if c not in active_set]
    runnable_blocked = [c for c in blocked if c not in active_set]
    runnable_set = {*runnable_missing, *runnable_blocked}  # built once: this ran per case
    runnable = [c for c in canonical if c in runnable_set]
    # Listed twice on purpose: inside ``standard_case_sets`` and at the top level.
    case_sets = {
        "accepted_case_ids": accepted,
        "missing_case_ids": missing,
        "blocked_uncountable_case_ids": blocked,
        "active_case_ids": active,
        "runnable_missing_case_ids": runnable_missing,
        "runnable_blocked_uncountable_case_ids": runnable_blocked,
        "runnable_case_ids": runnable,
    }
    return {
        "schema_version": AGGREGATE_SCHEMA,
        "benchmark_id": benchmark_id,
        "canonical_total": len(canonical),
        "canonical_covered": len(canonical) - len(missing),
        "countable_score_summary": _score_summary(accepted, cases_by_bucket, case_best),
        "distribution": {name: len(cases_by_bucket[name]) for name in BUCKET_PRECEDENCE},
        "cases_by_bucket": cases_by_bucket,
        "standard_case_sets": {
            "schema_version": "benchmark_run_ledger_standard_case_sets_v0",
            "policy": STANDARD_CASE_SET_POLICY,
            **case_sets,
            **_PRIVACY_FLAGS,
            "source_paths_recorded": False,
        },
        **case_sets,
        "case_best": case_best,
        "deduped_run_count": run_count,
        "source_ledger_files": len(source_ledger_files),
        "selection_policy": _selection_policy(policy, lanes, lane_counts),
        "rules_version": RULES_VERSION,
    }


def _score_summary(
    accepted: list[str], cases_by_bucket: dict[str, list[str]], case_best: dict[str, dict]
) -> dict:
    scores = [float(case_best[c]["countable_score"]) for c in accepted]
    # Every chosen run with a numeric official score that is not counted, whatever its bucket
    # (a setup failure can carry a score too), as loopx 0.4.8 counts them.
    counted = set(accepted)
    uncountable = sorted(
        case_id
        for case_id, best in case_best.items()
        if case_id not in counted and _numeric_score(best.get("official_score")) is not None
    )
    return {
        "schema_version": "benchmark_run_ledger_countable_score_summary_v0",
        "countable_case_count": len(accepted),
        "countable_score_sum": round(sum(scores), 6),
        "countable_score_mean": round(sum(scores) / len(scores), 6) if scores else None,
        "pass_count": len(cases_by_bucket["pass"]),
        "partial_count": len(cases_by_bucket["partial"]),
        "official_zero_count": len(cases_by_bucket["official_zero"]),
        "uncountable_numeric_case_count": len(uncountable),
        "countable_case_ids": accepted,
        "uncountable_numeric_case_ids": uncountable,
    }


_POLICY_RULES = {
    "best": "prefer_countable_official_result_over_missing_or_infra_rows",
    "latest_countable": "latest_countable_official_result",
}
_POLICY_DESCRIPTIONS = {
    "best": (
        "best-of-N: per case the run in the highest bucket wins, then the higher score, then the "
        "later recorded_at; a pass always beats a later failure"
    ),
    "latest_countable": (
        "latest countable: per case the latest run in a countable bucket (pass, partial, "
        "official_zero) wins; cases without one fall back to best-of-N"
    ),
}


def _selection_policy(policy: str, lanes: TargetLanes, lane_counts: dict[str, int]) -> dict:
    rule = _POLICY_RULES[policy]
    if lanes.enabled:
        rule = "target_lane_current_countable_wins_backfill_fills_missing"
    counts = {name: 0 for name in _LANE_SOURCES}
    counts.update(lane_counts)
    return {
        "schema_version": "benchmark_run_ledger_current_selection_policy_v0",
        "selection": policy,
        "rule": rule,
        "description": _POLICY_DESCRIPTIONS[policy],
        "bucket_precedence": list(BUCKET_PRECEDENCE),
        **_PRIVACY_FLAGS,
        "source_paths_recorded": False,
        "target_lane": {
            "enabled": lanes.enabled,
            "lane_id": compact_text(lanes.lane_id, 120),
            "target_run_group_contains": _lane_patterns(lanes.target),
            "current_run_group_contains": _lane_patterns(lanes.current),
            "backfill_run_group_contains": _lane_patterns(lanes.backfill),
            "case_source_counts": counts,
            "current_evidence_rule": CURRENT_EVIDENCE_RULE,
            "duplicate_case_rule": DUPLICATE_CASE_RULE,
        },
    }


def _lane_patterns(patterns: Iterable[str]) -> list[str]:
    return [text for text in (compact_text(p, 120) for p in patterns) if text]


def aggregate_merge_preview(
    merge: MergeResult, unique_source_path_count: int, primary: tuple[int, int] | None = None
) -> dict:
    """The CLI's ``merge_preview`` block. As in loopx, the primary ledger counts as the first
    source: ``primary`` is its (row count, rows of the benchmark), ``None`` when it has none."""
    ledgers, runs, considered = (1, *primary) if primary is not None else (0, 0, 0)
    return {
        "schema_version": "benchmark_run_ledger_aggregate_source_merge_v0",
        "source_ledger_count": ledgers + merge.payload.get("source_ledger_count", 0),
        "source_run_count": runs + merge.payload.get("source_run_count", 0),
        "considered_run_count": considered + merge.payload.get("considered_run_count", 0),
        "source_paths_recorded": False,
        "unique_source_path_count": ledgers + unique_source_path_count,
    }


def _numeric_score(value: Any) -> float | None:
    """A score as a number: ints, floats and numeric text; booleans are not scores."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None
