"""What compare reads of one ledger row, reduced to ``RunFacts``: where the run goes (benchmark,
case, arm, its place in the §6.3 order) and whether it counts or why not; for a run that counts,
its attempt values under either metric, its usage and its comparability facts.

A pure function of the row, so the facts can be kept beside the row while it is unchanged
(``projections.read_models.compare_facts``) and ``projections.reports.compare.document`` builds
the document from facts alone. Rows are judged by the ledger rules only when the stored
decision is not the current rules' (``needs_judgement``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple, TypeGuard

from benchledger.ledger.rules.operations.aggregate_buckets import COUNTABLE_BUCKETS, judge_row
from benchledger.ledger.rules.row.build import RULES_VERSION
from benchledger.ledger.rules.row.ordering import row_sort_key
from benchledger.ledger.rules.row.timestamps import UNREADABLE
from benchledger.projections.reports.compare.guard import Facts, row_facts

NOT_FINISHED = frozenset({"running", "planned", "fixture"})
NOT_COMPLETED = frozenset({"cancelled", "incomplete", "corrupt", "not_started"})
NOT_RUN = NOT_FINISHED | NOT_COMPLETED
# Every key of a row that ``build_compare`` reads, unless ``needs_judgement`` says the row is
# to be judged by the ledger rules (which read more): what ``compare_rows`` asks the database for.
ROW_KEYS = (
    "run_id",
    "benchmark_id",
    "case_id",
    "arm_id",
    "recorded_at",
    "archive_state",
    "status",
    "rules_version",
    "official_score",
    "official_score_countable",
    "official_passed",
    "attempt_outcomes",
    "usage",
    "comparability",
    "run_key",
)


class RunFacts(NamedTuple):
    """All that compare reads of one ledger row, already reduced: where the run goes, whether
    it counts (``verdict`` None) or why not, and, for a run that counts, its attempt values
    under either metric, its usage and its comparability facts.

    A pure function of the row (``run_facts``), so it can be kept beside the row and reused
    while the row is unchanged (``projections.read_models.compare_facts``); every value is plain
    JSON but
    ``guard``, a tuple of tuples compared whole.
    """

    benchmark_id: Any
    case_id: str
    arm_id: str
    instant: float | None  # ``recorded_at`` as an instant; None when unreadable (sorts first)
    run_key: str  # the run id as text: the tie-break of the §6.3 order
    verdict: str | None
    detailed: bool  # False: no attempt detail, the run stands for one attempt (``scores[0]``)
    scores: list[float]
    passes: list[float]
    unscored: list[str]  # reasons of the attempts without a score, in attempt order
    has_usage: bool
    tokens: float | None  # input + output tokens, when both are numbers
    dollars: float | None
    runner: str | None  # the runner that produced the run (its run key's first part)
    setting: str | None  # the recorded agent version and timeout multipliers other than 1
    guard: Facts


def run_facts(row: Mapping[str, Any]) -> RunFacts:
    """``RunFacts`` of one row; a row that does not count carries no attempts, usage or facts.

    Reads only ``ROW_KEYS`` unless ``needs_judgement(row)``.
    """
    instant, run_key = row_sort_key(row)
    verdict = _verdict(row)
    place = (
        row.get("benchmark_id"),
        str(row.get("case_id") or "unknown-case"),
        _arm_of(row),
        None if instant == UNREADABLE else instant,
        run_key,
        verdict,
    )
    if verdict is not None:
        return RunFacts(
            *place, True, [], [], [], False, None, None, None, run_setting(row), ((), (), (), ())
        )
    detailed, scores, passes, unscored = _attempts(row)
    usage = row.get("usage")
    tokens = dollars = None
    if type(usage) is dict:
        spent_in, spent_out = usage.get("input_tokens"), usage.get("output_tokens")
        if _numeric(spent_in) and _numeric(spent_out):
            tokens = spent_in + spent_out
        if _numeric(paid := usage.get("cost_usd")):
            dollars = paid
    return RunFacts(
        *place,
        detailed,
        scores,
        passes,
        unscored,
        type(usage) is dict,
        tokens,
        dollars,
        runner_of(row),
        run_setting(row),
        row_facts(row),
    )


#: Run keys name their runner first (``harbor:…``, ``benchflow:…``, ``inspect:…``).
RUNNERS = frozenset({"harbor", "benchflow", "inspect"})


def runner_of(row: Mapping[str, Any]) -> str | None:
    """The runner a run key names, or None (rows imported from loopx, planned runs)."""
    key = row.get("run_key")
    if type(key) is not str:
        return None
    first = key.partition(":")[0]
    return first if first in RUNNERS else None


def run_setting(row: Mapping[str, Any]) -> str | None:
    """What tells this run's setting apart (kept for runs that do not count as well: they still
    say which arm the run belongs to) from another of the same arm: the agent version it
    recorded and the timeout multipliers it ran with other than 1, as a label ("0.46.0",
    "0.46.0, agent_timeout_multiplier=8"); None when it recorded neither."""
    recorded = row.get("comparability")
    if type(recorded) is not dict:
        return None
    parts = []
    version = recorded.get("agent_version")
    if type(version) is str and version:
        parts.append(version)
    scaled = recorded.get("timeout_multipliers")
    if type(scaled) is dict:
        parts += [f"{key}={value:g}" for key, value in scaled.items() if _numeric(value)]
    return ", ".join(parts) or None


def _attempts(row: Mapping[str, Any]) -> tuple[bool, list[float], list[float], list[str]]:
    """(detailed, scores, passes, unscored reasons) of a run that counts, in stored (attempt)
    order; unscored attempts are counted by reason, never read as 0. A row without attempt
    detail (imported from loopx, or upserted from a record without trials) stands for one
    attempt: its official score and verdict."""
    outcomes = row.get("attempt_outcomes")
    if not isinstance(outcomes, list) or not outcomes:
        verdict = 1.0 if row.get("official_passed") is True else 0.0
        return False, [float(row["official_score"])], [verdict], []
    scores: list[float] = []
    passes: list[float] = []
    unscored: list[str] = []
    for item in outcomes:
        if type(item) is not dict:  # rows are parsed JSON: objects are plain dicts
            continue
        reward = item.get("primary_reward")
        if type(reward) is not float and (type(reward) is not int or isinstance(reward, bool)):
            unscored.append(str(item.get("unscored_reason") or "unscored"))
            continue
        passed = item.get("passed")
        passes.append(1.0 if (passed is True or (passed is None and reward >= 1)) else 0.0)
        scores.append(float(reward))
    return True, scores, passes, unscored


def matches_benchmark(row_benchmark: Any, requested: str) -> bool:
    """``name@version`` matches itself; a bare ``name`` matches every version of it, which is
    how runs on two versions of a benchmark reach the comparability guard."""
    if not isinstance(row_benchmark, str):
        return False
    if row_benchmark == requested:
        return True
    return "@" not in requested and row_benchmark.startswith(f"{requested}@")


def _arm_of(row: Mapping[str, Any]) -> str:
    arm = row.get("arm_id")
    return arm if isinstance(arm, str) and arm else "unknown_arm"


def _numeric(value: Any) -> TypeGuard[float]:
    """A JSON number (rows are parsed JSON: numbers are plain ints and floats, never bools)."""
    return type(value) is float or type(value) is int


def _stored_decision(row: Mapping[str, Any]) -> bool | None:
    """The countability the current rules stored on the row (None: not theirs to read)."""
    stored = row.get("official_score_countable")
    if row.get("rules_version") == RULES_VERSION and type(stored) is bool:
        return stored
    return None


def needs_judgement(row: Mapping[str, Any]) -> bool:
    """Whether ``build_compare`` judges ``row`` by the ledger rules (``judge_row``), which read
    keys beyond ``ROW_KEYS``: a row whose score is not decided by the current rules, or one that
    does not count for a reason other than being archived, unfinished or not completed."""
    if row.get("archive_state") == "archived":
        return False
    decision = _stored_decision(row)
    if _numeric(row.get("official_score")):
        if decision is None:
            return True
        if decision:
            return False
    return row.get("status") not in NOT_RUN


def _verdict(row: Mapping[str, Any]) -> str | None:
    """None when the run counts, else why not in the words of the coverage report.

    Countable as the ledger decides it (§5.11), on an active row with a numeric score: rows
    written by the current rules carry the decision; older ones (imported from loopx) are
    judged the way ``run-ledger-aggregate`` judges them.
    """
    if row.get("archive_state") == "archived":
        return "archived"
    # The ledger rules, imported only when a row needs them: a compare whose facts are all
    # kept (``benchledger.projections.read_models.compare_facts``) judges nothing.

    judged = None
    if _numeric(row.get("official_score")):
        decision = _stored_decision(row)
        if decision is None:
            judged = judge_row(dict(row))
            decision = judged.countable and judged.bucket in COUNTABLE_BUCKETS
        if decision:
            return None
    status = row.get("status")
    if status in NOT_FINISHED:
        return "running"
    if status in NOT_COMPLETED:
        return "not_completed"
    bucket = (judged or judge_row(dict(row))).bucket
    if bucket == "verifier_no_reward":
        return "verifier_error_without_reward"
    if bucket in ("missing", "setup_runner_infra") and row.get("official_score") is None:
        return "score_missing" if bucket == "missing" else "setup_or_infra_without_score"
    return "uncountable"
