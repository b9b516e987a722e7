"""``benchmark_run_compare_v0``: arms of one benchmark side by side, with honest uncertainty.

A pure function of ledger rows: whoever holds the rows as they stood at some position (the live
read model, or a scratch store replayed to an earlier position) gets the same document. The
steps, in order: every row is placed under its arm and case; each (arm, case) either yields the
attempts of its countable runs or an exclusion reason; attempts become one case value under the
declared per-case policy; arms are summarised over cases and paired with the reference on the
cases both can count, after the comparability guard has had its say.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.requests.compare import CompareRequest
from benchledger.ledger.rules.row.timestamps import UNREADABLE
from benchledger.projections.reports.compare import intervals as ci
from benchledger.projections.reports.compare import stats as cs
from benchledger.projections.reports.compare.arm_settings import (
    arm_labels,
    named_arms,
    settings_of,
    split_by_setting,
)
from benchledger.projections.reports.compare.facts import (
    ROW_KEYS,
    RunFacts,
    matches_benchmark,
    needs_judgement,
    run_facts,
)
from benchledger.projections.reports.compare.guard import Mismatch, find_mismatches
from benchledger.projections.reports.compare.markdown import render_compare_markdown
from benchledger.projections.reports.compare.verdict import small_sample_note, verdict_line

# The facts of one row live in ``facts``; they are named here too, where the readers of the
# document (and of its cache, ``projections.read_models.compare_facts``) have always found them.
__all__ = [
    "ROW_KEYS",
    "RunFacts",
    "arm_labels",
    "arm_results",
    "build_compare",
    "build_compare_from_facts",
    "build_compare_with_cases",
    "matches_benchmark",
    "needs_judgement",
    "render_compare_markdown",
    "run_facts",
]

SCHEMA = "benchmark_run_compare_v0"
METRICS = ("score", "pass")
INTERVAL_METHOD = "by_rule_per_arm_and_pair"  # each block names its own (intervals.py)
BOOTSTRAP_METHOD = "percentile_over_cases_multinomial_numpy_default_rng"
POWER_METHOD = "normal_approximation_two_sided"


@dataclass(slots=True)
class ArmCase:
    """One arm on one case: the attempts it counts, or why it counts none."""

    attempts: list[float] = field(default_factory=list)
    value: float | None = None
    excluded: str | None = None
    rows: list[RunFacts] = field(default_factory=list)  # the counted runs


@dataclass
class ArmResult:
    arm_id: str
    cases: dict[str, ArmCase]
    runs_excluded: Counter = field(default_factory=Counter)
    attempts_unscored: Counter = field(default_factory=Counter)
    runs_without_attempt_detail: int = 0
    settings: list[str] = field(default_factory=list)  # distinct settings of its runs
    _included: dict[str, ArmCase] | None = field(default=None, repr=False)

    def included(self) -> dict[str, ArmCase]:
        """Cases with a value (computed once the cases are settled, then kept)."""
        if self._included is None:
            self._included = {case: c for case, c in self.cases.items() if c.value is not None}
        return self._included


def build_compare(rows: Iterable[Mapping[str, Any]], request: CompareRequest) -> dict[str, Any]:
    """The ``benchmark_run_compare_v0`` document for ``rows`` (any order, any benchmarks).

    A row needs only the keys of ``ROW_KEYS`` unless ``needs_judgement`` says otherwise
    (``projections.reports.compare.rows`` reads rows that way). Raises ``InputError`` — one line,
    for
    the CLI to print — on a bad request, a benchmark without rows, an arm without runs, or
    mismatches the request did not allow.
    """
    return build_compare_from_facts(_facts_of(rows, request), request)


def build_compare_from_facts(facts: Iterable[RunFacts], request: CompareRequest) -> dict[str, Any]:
    """``build_compare`` of the rows these are the ``RunFacts`` of (the same document)."""
    policy, metric, results = _arm_results(facts, request)
    mismatches = find_mismatches(results)
    if mismatches and not request.allow_incomparable:
        raise InputError(_refusal(mismatches))
    return _document(request, policy, metric, results, mismatches)


CaseValues = dict[str, dict[str, float | None]]  # arm -> case -> value (None: excluded)


def build_compare_with_cases(
    rows: Iterable[Mapping[str, Any]], request: CompareRequest
) -> tuple[dict[str, Any] | None, str | None, CaseValues]:
    """(document or None, refusal or None, each arm's case values): what the report's overview
    and grid show, from one pass, so the grid's cells are the values the overview's means are
    the means of. Raises ``InputError`` only when there are no arms to show at all."""
    policy, metric, results = _arm_results(_facts_of(rows, request), request)
    values = {r.arm_id: {case: entry.value for case, entry in r.cases.items()} for r in results}
    mismatches = find_mismatches(results)
    if mismatches and not request.allow_incomparable:
        return None, _refusal(mismatches), values
    return _document(request, policy, metric, results, mismatches), None, values


def arm_results(
    rows: Iterable[Mapping[str, Any]], request: CompareRequest
) -> tuple[cs.CasePolicy, str, list[ArmResult]]:
    """Every requested arm on every case of the benchmark: attempts, case value or exclusion."""
    return _arm_results(_facts_of(rows, request), request)


def _facts_of(rows: Iterable[Mapping[str, Any]], request: CompareRequest) -> list[RunFacts]:
    """The facts of the rows of the requested benchmark (only they are judged)."""
    wanted = request.benchmark_id
    return [run_facts(r) for r in rows if matches_benchmark(r.get("benchmark_id"), wanted)]


def _order(facts: RunFacts) -> tuple[float, str]:
    """``row_sort_key`` of the row these are the facts of."""
    instant = facts.instant
    return (UNREADABLE if instant is None else instant, facts.run_key)


def _arm_results(
    facts: Iterable[RunFacts], request: CompareRequest
) -> tuple[cs.CasePolicy, str, list[ArmResult]]:
    policy = _checked(request)
    metric = _metric(request, policy)
    by_arm: dict[str, dict[str, list[RunFacts]]] = defaultdict(lambda: defaultdict(list))
    matches: dict[Any, bool] = {}  # per distinct benchmark id
    for run in facts:
        wanted = matches.get(run.benchmark_id)
        if wanted is None:
            wanted = matches[run.benchmark_id] = matches_benchmark(
                run.benchmark_id, request.benchmark_id
            )
        if wanted:
            by_arm[run.arm_id][run.case_id].append(run)
    if not by_arm:
        raise InputError(f"no ledger rows for benchmark {request.benchmark_id}")
    settings = settings_of(by_arm)
    if not request.pool_versions:
        by_arm = split_by_setting(by_arm, settings)
        request = named_arms(request, settings)
    for cases in by_arm.values():  # each case's runs in §6.3 order (most cases have one)
        for runs in cases.values():
            if len(runs) > 1:
                runs.sort(key=_order)
    all_cases = sorted({case for cases in by_arm.values() for case in cases})
    arms = _arms(request, by_arm)
    passes = metric == "pass"
    results = [_arm_result(arm, all_cases, by_arm.get(arm, {}), policy, passes) for arm in arms]
    for result in results:
        result.settings = settings_of({result.arm_id: by_arm.get(result.arm_id, {})})[result.arm_id]
    return policy, metric, results


def _checked(request: CompareRequest) -> cs.CasePolicy:
    try:
        policy = cs.CasePolicy.parse(request.per_case)
    except ValueError as err:
        raise InputError(str(err)) from None
    if request.metric not in METRICS:
        raise InputError(f"--metric must be score or pass, not {request.metric!r}")
    if not 0 < request.confidence < 1:
        raise InputError("--confidence must be between 0 and 1")
    if request.bootstrap < 0:
        raise InputError("--bootstrap must be 0 (off) or a positive number of resamples")
    if request.seed < 0:
        raise InputError("--seed must be 0 or more")
    if request.effect is not None and not request.effect > 0:
        raise InputError("--effect must be a positive difference")
    return policy


def _metric(request: CompareRequest, policy: cs.CasePolicy) -> str:
    if policy.name == "pass@k" and request.metric != "pass":
        raise InputError("--per-case pass@k:K counts passes: use it with --metric pass")
    return request.metric


def _arms(request: CompareRequest, by_arm: Mapping[str, Mapping[str, list[RunFacts]]]) -> list[str]:
    """Given arms in the order given (the reference first when it is not among them); else every
    arm with a countable run, sorted."""
    if request.arms:
        arms = list(dict.fromkeys(request.arms))
    else:
        arms = sorted(
            arm
            for arm, cases in by_arm.items()
            if any(run.verdict is None for runs in cases.values() for run in runs)
        )
    if request.reference and request.reference not in arms:
        arms.insert(0, request.reference)
    elif request.reference:
        arms.remove(request.reference)
        arms.insert(0, request.reference)
    unknown = [arm for arm in arms if arm not in by_arm]
    if unknown:
        known = ", ".join(sorted(by_arm)) or "none"
        raise InputError(f"no runs of arm {unknown[0]} in this benchmark (arms: {known})")
    if not arms:
        raise InputError(f"no arm of benchmark {request.benchmark_id} has a countable run")
    return arms


def _arm_result(
    arm: str,
    all_cases: Sequence[str],
    by_case: Mapping[str, list[RunFacts]],
    policy: cs.CasePolicy,
    passes: bool,
) -> ArmResult:
    result = ArmResult(arm, {})
    value_of = policy.value
    excluded, unscored = result.runs_excluded, result.attempts_unscored
    for case in all_cases:
        runs = by_case.get(case)
        entry = ArmCase()
        result.cases[case] = entry
        if not runs:
            entry.excluded = "missing"
            continue
        counted = []
        for run in runs:
            if run.verdict is None:
                counted.append(run)
            else:
                excluded[run.verdict] += 1
        if not counted:
            entry.excluded = runs[-1].verdict
            continue
        attempts = entry.attempts
        for run in counted:
            if not run.detailed:
                result.runs_without_attempt_detail += 1
            attempts.extend(run.passes if passes else run.scores)
            for reason in run.unscored:
                unscored[reason] += 1
        entry.rows = counted
        entry.value = value_of(attempts)
        if entry.value is None:
            entry.excluded = "fewer_attempts_than_k" if attempts else "no_scored_attempt"
    return result


# --------------------------------------------------------------------------------- document


def _document(
    request: CompareRequest,
    policy: cs.CasePolicy,
    metric: str,
    results: list[ArmResult],
    mismatches: list[Mismatch],
) -> dict[str, Any]:
    reference = results[0]
    arms = [_arm_block(r, request) for r in results]
    _mark_pareto(arms)
    paired = [_paired_block(r, reference, request, metric) for r in results[1:]]
    for block, p_holm in zip(paired, cs.holm([p["p_value"] for p in paired]), strict=True):
        block["p_holm"] = p_holm
    return {
        "verdict": verdict_line(arms, paired, request.confidence, request.effect),
        "small_sample_note": small_sample_note(arms, paired),
        "schema_version": SCHEMA,
        "benchmark_id": request.benchmark_id,
        "metric": metric,
        "per_case_policy": policy.label,
        "confidence": request.confidence,
        "pool_versions": request.pool_versions,
        "interval_method": INTERVAL_METHOD,
        "reference": reference.arm_id,
        "banner": _banner(mismatches, results, request),
        "arms": arms,
        "paired": paired,
        "power": {
            "method": POWER_METHOD,
            "alpha": cs.ALPHA,
            "target_power": cs.POWER,
            "effect": request.effect,
        },
        "bootstrap": {
            "method": BOOTSTRAP_METHOD,
            "resamples": request.bootstrap,
            "seed": request.seed,
        },
        "comparability": _comparability(results, mismatches, request),
    }


def _comparability(
    results: list[ArmResult], mismatches: list[Mismatch], request: CompareRequest
) -> dict[str, Any]:
    """The guard's verdict, and, only when the arms' runs came from different runners
    (a Harbor arm paired with an Inspect arm), each arm's runners: a difference to name, not
    to refuse, since both ran the same cases of the same benchmark version."""
    block: dict[str, Any] = {
        "ok": not mismatches,
        "allowed_incomparable": bool(mismatches) and request.allow_incomparable,
        "mismatches": [m.as_dict() for m in mismatches],
        "settings": {r.arm_id: r.settings for r in results},
    }
    runners = {
        result.arm_id: sorted(
            {run.runner for entry in result.included().values() for run in entry.rows if run.runner}
        )
        for result in results
    }
    if len({name for names in runners.values() for name in names}) > 1:
        block["runners"] = runners
    if any("benchflow" in names for names in runners.values()):
        block["runner_rules"] = {"benchflow": BENCHFLOW_RESULT_RULE}
    return block


# BenchFlow 0.7.11 picks a task's result two ways (docs/formats/benchflow.md §4); the ledger
# follows one, and a user comparing with BenchFlow's own numbers needs to know which.
BENCHFLOW_RESULT_RULE = (
    "a task's result is its newest scored one, as BenchFlow's resume and `bench eval score` "
    "pick it; `bench eval metrics` keeps the best one instead (docs/formats/benchflow.md §4)"
)


def _arm_block(result: ArmResult, request: CompareRequest) -> dict[str, Any]:
    included = result.included()
    # every included case has a value: the filter only tells the type checker so
    values = [c.value for c in included.values() if c.value is not None]
    summary = cs.t_interval(values, request.confidence)
    low, high, method = _arm_interval(values, request.confidence)
    split = cs.variance_split([c.attempts for c in included.values()])
    excluded: dict[str, list[str]] = defaultdict(list)
    for case, entry in result.cases.items():
        if entry.value is None:
            excluded[entry.excluded or "missing"].append(case)
    return {
        "arm_id": result.arm_id,
        "n_cases": summary.n,
        "n_attempts": sum(len(c.attempts) for c in included.values()),
        "mean": summary.mean,
        "se": summary.se,
        "ci_low": low,
        "ci_high": high,
        "interval_method": method,
        "var_between_cases": split.between,
        "var_within_cases": split.within,
        "coverage": {
            "cases_total": len(result.cases),
            "cases_included": len(included),
            "excluded": dict(sorted(excluded.items())),
            "runs_included": sum(len(c.rows) for c in included.values()),
            "runs_excluded": dict(sorted(result.runs_excluded.items())),
            "attempts_unscored": dict(sorted(result.attempts_unscored.items())),
            "runs_without_attempt_detail": result.runs_without_attempt_detail,
        },
        "cost": _cost(included),
        "pareto": None,
    }


def _cost(included: Mapping[str, ArmCase]) -> dict[str, Any]:
    """Tokens (input + output) and dollars per case, over cases whose counted runs all
    recorded them. A case's cost is the mean over its attempts (each run's usage is summed over
    its attempts: divided by them, then weighed by them), so a second job on a case does not
    double its cost."""
    tokens: list[float] = []
    dollars: list[float] = []
    for entry in included.values():
        runs = entry.rows
        if len(runs) == 1:  # most cases: one run, no sums to build
            run = runs[0]
            if not run.has_usage:
                continue
            attempts = (len(run.scores) + len(run.unscored) or 1) if run.detailed else 1
            if run.tokens is not None:
                tokens.append(run.tokens / attempts)
            if run.dollars is not None:
                dollars.append(run.dollars / attempts)
            continue
        if not runs or not all(run.has_usage for run in runs):
            continue
        attempts = sum(_attempts_of(run) for run in runs)
        if all(run.tokens is not None for run in runs):
            tokens.append(sum(run.tokens for run in runs) / attempts)  # type: ignore[misc]
        if all(run.dollars is not None for run in runs):
            dollars.append(sum(run.dollars for run in runs) / attempts)  # type: ignore[misc]
    return {
        "tokens_per_case": sum(tokens) / len(tokens) if tokens else None,
        "cost_usd_per_case": sum(dollars) / len(dollars) if dollars else None,
        "recorded_cases": max(len(tokens), len(dollars)),
    }


def _attempts_of(run: RunFacts) -> int:
    """The attempts a run's usage was summed over: scored and unscored; one without detail."""
    return max(1, len(run.scores) + len(run.unscored)) if run.detailed else 1


def _mark_pareto(arms: list[dict[str, Any]]) -> None:
    """Dollars when every arm with a mean has them, else tokens, else nobody is judged."""
    scored = [a for a in arms if a["mean"] is not None]
    for basis in ("cost_usd_per_case", "tokens_per_case"):
        if scored and all(a["cost"][basis] is not None for a in scored):
            points = [(a["mean"], a["cost"][basis]) if a in scored else None for a in arms]
            for arm, on_front in zip(arms, cs.pareto_front(points), strict=True):
                arm["pareto"] = on_front
                arm["cost"]["pareto_basis"] = basis
            return
    for arm in arms:
        arm["cost"]["pareto_basis"] = None


def _paired_block(
    arm: ArmResult, reference: ArmResult, request: CompareRequest, metric: str
) -> dict[str, Any]:
    mine, theirs = arm.included(), reference.included()
    common = [case for case in mine if case in theirs]
    diffs = [mine[c].value - theirs[c].value for c in common]  # type: ignore[operator]
    summary = cs.t_interval(diffs, request.confidence)
    boot = cs.bootstrap_interval(diffs, request.bootstrap, request.seed, request.confidence)
    low, high, method = _paired_interval(
        [mine[c].value for c in common],  # type: ignore[misc]
        [theirs[c].value for c in common],  # type: ignore[misc]
        request.confidence,
    )
    plan = _power(arm, reference, common, summary, request)
    return {
        "arm_id": arm.arm_id,
        "reference": reference.arm_id,
        "n_pairs": len(common),
        "mean_diff": summary.mean,
        "se": summary.se,
        "ci_low": low,
        "ci_high": high,
        "interval_method": method,
        "p_value": cs.paired_p_value(summary),
        "p_holm": None,
        "bootstrap": {
            "n": request.bootstrap,
            "seed": request.seed,
            "ci_low": boot[0] if boot else None,
            "ci_high": boot[1] if boot else None,
        },
        "mcnemar": _mcnemar(mine, theirs, common) if metric == "pass" else None,
        "power": {
            "mde_80": plan.mde,
            "cases_needed_for_effect": plan.cases_needed,
            "attempts_per_case_for_effect": plan.attempts_per_case,
            "attempts_limited_by_cases": plan.attempts_limited_by_cases,
            "basis": plan.basis,
            "note": plan.reason,
        },
    }


def _power(
    arm: ArmResult,
    reference: ArmResult,
    common: Sequence[str],
    summary: cs.Interval,
    request: CompareRequest,
) -> cs.PowerPlan:
    """Attempts can only be traded for cases when a case value is a mean of its attempts."""
    mine, theirs = arm.included(), reference.included()
    within_sum = inverse = None
    if request.per_case == "mean" and common:
        a = cs.variance_split([mine[c].attempts for c in common]).within
        b = cs.variance_split([theirs[c].attempts for c in common]).within
        if a is not None and b is not None:
            within_sum = a + b
            inverse = sum(
                (a / len(mine[c].attempts) + b / len(theirs[c].attempts)) / within_sum
                if within_sum
                else 0.0
                for c in common
            ) / len(common)
    bounded = all(
        0 <= v <= 1 for side in (mine, theirs) for c in common if (v := side[c].value) is not None
    )
    return cs.power_plan(
        summary,
        request.effect,
        within_sum=within_sum,
        mean_inverse_attempts=inverse,
        bounded=bounded,
    )


def _arm_interval(
    values: Sequence[float], confidence: float
) -> tuple[float | None, float | None, str | None]:
    """The arm's interval by the rule of ``intervals`` (None without a case, or a t-interval
    from one case)."""
    if not values:
        return None, None, None
    low, high, methods = ci.arm_intervals(np.asarray([values], dtype=float), confidence)
    return _finite(low[0]), _finite(high[0]), methods[0]


def _paired_interval(
    mine: Sequence[float], theirs: Sequence[float], confidence: float
) -> tuple[float | None, float | None, str | None]:
    if not mine:
        return None, None, None
    low, high, methods = ci.paired_intervals(
        np.asarray([mine], dtype=float), np.asarray([theirs], dtype=float), confidence
    )
    return _finite(low[0]), _finite(high[0]), methods[0]


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def _mcnemar(
    mine: Mapping[str, ArmCase], theirs: Mapping[str, ArmCase], common: Sequence[str]
) -> dict[str, Any] | None:
    """Discordant cases when every paired case value is a plain pass (1) or fail (0):
    ``b`` = the reference passed and the arm failed, ``c`` = the other way round."""
    pairs = [(theirs[c].value, mine[c].value) for c in common]
    if not pairs or any(v not in (0.0, 1.0) for pair in pairs for v in pair):
        return None
    b = sum(1 for ref, arm in pairs if ref == 1.0 and arm == 0.0)
    c = sum(1 for ref, arm in pairs if ref == 0.0 and arm == 1.0)
    return {"b": b, "c": c, "p_value": cs.mcnemar_exact(b, c)}


def _banner(
    mismatches: Sequence[Mismatch], results: Sequence[ArmResult], request: CompareRequest
) -> str | None:
    """What the reader must know before any number: incomparable runs let through, and arms
    that pool runs of different settings (``--pool-versions``)."""
    parts = []
    if mismatches:
        kinds = ", ".join(sorted({m.kind for m in mismatches}))
        parts.append(
            f"INCOMPARABLE RUNS COMPARED ANYWAY (--allow-incomparable): {len(mismatches)} "
            f"mismatch(es) in {kinds}; differences may reflect the setup, not the arms"
        )
    pooled = [r for r in results if len(r.settings) > 1]
    if pooled and request.pool_versions:
        listed = "; ".join(f"{r.arm_id}: {', '.join(r.settings)}" for r in pooled)
        parts.append(f"SETTINGS POOLED (--pool-versions): {listed}")
    return " | ".join(parts) or None


def _refusal(mismatches: Sequence[Mismatch]) -> str:
    listed = "; ".join(m.describe() for m in mismatches)
    return (
        f"arms are not comparable ({len(mismatches)} mismatch(es)): {listed}; "
        "pass --allow-incomparable to compare anyway"
    )
