"""The case × arm grid: one cell per case and arm, bucketed exactly as ``run-ledger-aggregate``
buckets a case (``ledger.rules.operations.aggregate.aggregate``, best-of-N selection), so the grid
and the aggregate
can never disagree about a case.

Each cell points at the run the aggregate selected and carries that run's compact facts
(attempts, scores, failure class, repair route, artifact references). The page gets the cells
flat with their names interned (``packing``) and draws rows on demand; the facts, most of the
weight of a large ledger, go to chunk files the page loads only when a cell is opened.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchledger.ledger.rules.operations.aggregate import aggregate
from benchledger.ledger.rules.operations.aggregate_buckets import BUCKET_PRECEDENCE
from benchledger.ledger.rules.row.archive_state import is_archived
from benchledger.projections.reports.html.packing import StringTable, public_text

NO_ARM = "(no arm)"
BUCKET_LABELS = {
    "pass": "pass",
    "partial": "partial",
    "official_zero": "zero",
    "uncountable_official_score": "uncountable",
    "verifier_no_reward": "verifier without reward",
    "setup_runner_infra": "setup/infra",
    "missing": "missing",
}
BUCKET_INDEX = {name: i for i, name in enumerate(BUCKET_PRECEDENCE)}
RUN_COLUMNS = (
    "run_id",
    "recorded_at",
    "status",
    "score",
    "passed",
    "attempts",
    "scored_attempts",
    "attempt_rewards",
    "failure_class",
    "repair_priority",
    "repair_class",
    "next_action",
    "artifact_refs",
    "job_name",
    "active_runs",
    "archived_runs",
    "artifact_links",  # None unless the report links artifacts (``artifacts``)
)


def arm_of(row: dict) -> str:
    arm = row.get("arm_id")
    return arm if isinstance(arm, str) and arm else NO_ARM


def grid_arms(rows: Sequence[dict], preferred: Sequence[str] = ()) -> list[str]:
    """Arms with an active run: ``preferred`` first (compare's order), the rest sorted."""
    present = {arm_of(r) for r in rows if not is_archived(r)}
    first = [arm for arm in preferred if arm in present]
    return first + sorted(present - set(first))


@dataclass
class Grid:
    """``page``: what the page needs at once (names, buckets, scores; flat and case-major, cell
    ``i * len(arms) + j``). ``facts``: per cell, the selected run's facts in ``RUN_COLUMNS``
    order (None where no run was selected), written in chunks the page loads when asked."""

    page: dict[str, Any]
    facts: list[list[Any] | None]


def build_grid(
    rows: Sequence[dict],
    benchmark_id: str,
    arms: Sequence[str],
    strings: StringTable,
    case_values: Mapping[str, Mapping[str, float | None]] | None = None,
    policy: str = "mean",
    links: Callable[[dict], list] | None = None,
) -> Grid:
    """The grid of ``rows``; ``case_values`` (compare's value of each arm's case under
    ``policy``, ``Overview.case_values``) go on the page beside the buckets, so a cell can show
    the very number the overview's mean is the mean of (the page's default view). ``links``
    (``report --link-artifacts`` only) gives a selected run's links to its files on disk."""
    cases = sorted({str(r.get("case_id") or "") for r in rows} - {""})
    counts = _run_counts(rows)
    by_id = {r.get("run_id"): r for r in rows if not is_archived(r)}
    buckets = [0] * (len(cases) * len(arms))
    scores: list[float | int | None] = [None] * len(buckets)
    facts: list[list[Any] | None] = [None] * len(buckets)
    for j, arm in enumerate(arms):
        arm_rows = [r for r in rows if arm_of(r) == arm]
        best = aggregate(arm_rows, benchmark_id=benchmark_id, canonical_case_ids=cases)
        for i, case in enumerate(cases):
            summary = best["case_best"].get(case, {"bucket": "missing"})
            cell = i * len(arms) + j
            buckets[cell] = BUCKET_INDEX[summary["bucket"]]
            row = by_id.get(summary.get("run_id"))
            if row is not None:
                scores[cell] = _number(row.get("official_score"))
                fact = _run_facts(row, *counts.get((case, arm), (0, 0)))
                fact.append(links(row) if links is not None else None)
                facts[cell] = fact
    known = case_values or {}
    values = [_number(known.get(arm, {}).get(case)) for case in cases for arm in arms]
    page = {
        "cases": [strings.ref(c) for c in cases],
        "arms": [strings.ref(a) for a in arms],
        "bucket": buckets,
        "score": scores,
        "value": values,
        "policy": strings.ref(policy),
        "valued_arms": [arm in known for arm in arms],
    }
    return Grid(page, facts)


def _run_counts(rows: Sequence[dict]) -> dict[tuple[str, str], tuple[int, int]]:
    counts: dict[tuple[str, str], tuple[int, int]] = {}
    for row in rows:
        key = (str(row.get("case_id") or ""), arm_of(row))
        active, archived = counts.get(key, (0, 0))
        counts[key] = (active, archived + 1) if is_archived(row) else (active + 1, archived)
    return counts


def _run_facts(row: dict, active: int, archived: int) -> list[Any]:
    """One run as a list in ``RUN_COLUMNS`` order but the last (its links, added by the grid);
    every text through the safety filter."""
    artifact_refs = row.get("artifact_refs")
    refs = artifact_refs if isinstance(artifact_refs, dict) else {}
    return [
        _text(row.get("run_id")),
        _text(row.get("recorded_at")),
        _text(row.get("score_status") or row.get("status")),
        _number(row.get("official_score")),
        row.get("official_passed") if isinstance(row.get("official_passed"), bool) else None,
        _number(row.get("attempt_count")),
        _number(row.get("scored_attempt_count")),
        _attempt_rewards(row),
        _text(row.get("failure_class")),
        _text(row.get("repair_priority")),
        _text(row.get("repair_class")),
        _text(row.get("next_action")),
        [[_text(key), _text(value)] for key, value in sorted(refs.items()) if value],
        _text(row.get("job_name")),
        active,
        archived,
    ]


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else public_text(value)


def _attempt_rewards(row: dict) -> list[float | None] | None:
    """Each attempt's primary reward (None for an unscored attempt), when the row keeps them."""
    outcomes = row.get("attempt_outcomes")
    if not isinstance(outcomes, list):
        return None
    return [_number(o.get("primary_reward")) for o in outcomes if isinstance(o, dict)]


def _number(value: Any) -> int | float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None
