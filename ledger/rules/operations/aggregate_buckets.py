"""The bucket of one active run in ``run-ledger-aggregate`` (docs/formats/ledger_v0.md §11, first
match).

Rows benchledger wrote follow §11 with its "(new)" rules; rows read from a loopx ledger follow
loopx 0.4.8's rules exactly (docs/loopx-compat.md), so an imported ledger aggregates as loopx
aggregates it. Selection and the payload live in ``benchledger.ledger.rules.operations.aggregate``.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchledger.ledger.rules.record.vocabulary import RUNNER_FAILURE_SCOPES
from benchledger.ledger.rules.row.build import RULES_VERSION
from benchledger.ledger.rules.row.countability import countability
from benchledger.ledger.rules.row.scoring import attempt_flag, labels_of
from benchledger.ledger.rules.row.timestamps import instant
from benchledger.ledger.rules.row.values import as_number, compact_text

# ---------------------------------------------------------------------------------------------
# §11 aggregate
# ---------------------------------------------------------------------------------------------

BUCKET_PRECEDENCE = (
    "pass",
    "partial",
    "official_zero",
    "uncountable_official_score",
    "verifier_no_reward",
    "setup_runner_infra",
    "missing",
)
BUCKET_RANK = {name: rank for rank, name in enumerate(reversed(BUCKET_PRECEDENCE))}
COUNTABLE_BUCKETS = frozenset({"pass", "partial", "official_zero"})
BLOCKED_BUCKETS = frozenset(
    {"setup_runner_infra", "verifier_no_reward", "uncountable_official_score"}
)
_SETUP_ATTEMPT_FLAGS = (
    "case_attempt_countable",
    "solver_attempt_countable",
    "verifier_attempt_countable",
)
_SETUP_CLASS_TOKENS = ("infrastructure", "setup", "preflight", "compose", "docker", "runner")
_SETUP_LABEL_TOKENS = ("infra", "setup", "compose", "docker", "runner")


@dataclass(frozen=True)
class Judged:
    """One active row with its bucket, so selection never re-derives it."""

    row: dict
    bucket: str
    countable: bool
    reason: str
    score: float | None
    effective_class: str

    def best_key(self) -> tuple:
        score = self.score if self.score is not None else -1.0
        row = self.row
        return (
            BUCKET_RANK[self.bucket],
            score,
            instant(row.get("recorded_at")),
            str(row.get("run_group_id") or ""),
            str(row.get("run_id") or ""),
        )


def effective_failure_class(row: Mapping[str, Any]) -> str:
    """The first meaningful failure text of a row (its class, attribution, attempt class or
    label, first blocker), else its first failure label."""
    for key in (
        "failure_class",
        "score_failure_attribution",
        "attempt_failure_class",
        "attempt_failure_label",
        "first_blocker",
    ):
        value = compact_text(row.get(key), 120)
        if value and value not in ("none", "None", "null"):
            return value
    for label in _failure_labels(row):
        if label not in ("none", "None", "null"):
            return label
    return ""


def _failure_labels(row: Mapping[str, Any]) -> list[str]:
    """``failure_labels`` then ``failure_attribution_labels``: each list's first 16 distinct
    non-empty labels, then de-duplicated across both."""
    out: list[str] = []
    for key in ("failure_labels", "failure_attribution_labels"):
        value = row.get(key)
        distinct: list[str] = []
        for item in value if isinstance(value, list) else []:
            text = compact_text(item, 120)
            if text and text not in distinct:
                distinct.append(text)
            if len(distinct) >= 16:
                break
        out.extend(label for label in distinct if label not in out)
    return out


def _stored_countability(row: dict) -> tuple[bool, str]:
    """Rows normalised by these rules already carry countability (§5.11 recomputes it on every
    load); older rows are recomputed here."""
    countable = row.get("official_score_countable")
    reason = row.get("official_score_countability_reason")
    if row.get("rules_version") == RULES_VERSION and isinstance(countable, bool) and reason:
        return countable, str(reason)
    if not row.get("rules_version"):  # a loopx row: loopx's checks, as its aggregate applies them
        countable, reason, _ = countability(row, loopx_reading=True)
        return countable, reason
    countable, reason, _ = countability(
        row, status=str(row.get("status") or ""), scope=str(row.get("failure_scope") or "")
    )
    return countable, reason


def _loopx_row(row: Mapping[str, Any]) -> bool:
    """A row benchledger did not write (imported from loopx): loopx's bucket rules apply to it,
    the "(new)" ones of §11 only to rows benchledger wrote (they carry ``rules_version``)."""
    return not row.get("rules_version")


def _has_setup_signal(scope: Any, eff: str, labels: list[str]) -> bool:
    """§11's setup signal: a setup scope, or a setup token in the effective class or a label."""
    return (
        scope in RUNNER_FAILURE_SCOPES
        or any(token in eff for token in _SETUP_CLASS_TOKENS)
        or any(token in label for label in labels for token in _SETUP_LABEL_TOKENS)
    )


def _no_reward_signal(scope: Any, eff: str, labels: list[str], loopx_row: bool) -> bool:
    """§11 (3): a verifier-reward label or class; scope ``verifier_or_infra`` only for rows
    benchledger wrote (new)."""
    return (
        "verifier_no_reward" in labels
        or "verifier_reward_missing" in labels
        or "reward_missing" in eff
        or "verifier_no_reward" in eff
        or (not loopx_row and scope == "verifier_or_infra")
    )


def judge_row(row: dict) -> Judged:
    """Bucket of one active run (§11, first match)."""
    loopx_row = _loopx_row(row)
    labels = _failure_labels(row) if loopx_row else labels_of(row)
    effective = effective_failure_class(row)
    eff = effective
    scope = row.get("failure_scope")
    setup_signal = _has_setup_signal(scope, eff, labels)
    countable, reason = _stored_countability(row)
    score = as_number(row.get("official_score"))
    number = float(score) if score is not None else None

    def judged(bucket: str) -> Judged:
        return Judged(row, bucket, countable, reason, number, effective)

    if (
        row.get("official_score_bool_fallback_used") is True
        and setup_signal
        and any(attempt_flag(row, name) is False for name in _SETUP_ATTEMPT_FLAGS)
    ):
        return judged("setup_runner_infra")
    if number is not None:
        if not countable:
            return judged("uncountable_official_score")
        return judged("pass" if number >= 1 else "partial" if number > 0 else "official_zero")
    if _no_reward_signal(scope, eff, labels, loopx_row):
        return judged("verifier_no_reward")
    return judged("setup_runner_infra" if setup_signal else "missing")
