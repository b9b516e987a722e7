"""Upserting one row into the rows of its case: replace by run id, backfill a logical
duplicate, else append (docs/formats/ledger_v0.md §6.1).

Why a module of its own: the upsert command, merge and aggregate sources all land rows through
this one rule, so "which stored row does a new row become" is decided in one place.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchledger.ledger.rules.row.archive_state import ARCHIVE_FIELDS, is_archived
from benchledger.ledger.rules.row.build import SKIP_REASON_NON_TERMINAL
from benchledger.ledger.rules.row.copies import NATIVE_GOAL_FIELDS
from benchledger.ledger.rules.row.ordering import sort_rows
from benchledger.ledger.rules.row.scoring import is_terminal
from benchledger.ledger.rules.row.timestamps import earlier_timestamp

LOGICAL_KEYS = ("run_group_id", "arm_id", "job_name", "mode")
LOGICAL_OUTCOME_KEYS = (
    "status",
    "score_status",
    "official_passed",
    "failure_class",
    "official_score",
)
BACKFILL_FIELDS = (
    "artifact_refs",
    "solution_quality_signals",
    "round_reward_count",
    "round_success_observed",
    "max_rounds_budget",
    "app_server_goal_round_semantics",
    *NATIVE_GOAL_FIELDS,
    "official_feedback_blinded",
    "reward_feedback_forwarded",
    "task_setup_preflight",
    "task_staging",
    "run_key",
    "pass_at_k",
)


def _blank(value: Any) -> bool:
    """Backfill treats ``{}`` as empty too (§6.1), unlike row key dropping."""
    return value is None or value == "" or value == [] or value == {}


# ---------------------------------------------------------------------------------------------
# §6.1 upsert
# ---------------------------------------------------------------------------------------------


@dataclass  # not frozen: cheaper to build and create; nothing hashes or mutates it
class UpsertResult:
    """What one upsert did to one case.

    ``action`` is ``replaced``, ``backfilled``, ``appended``, ``archived_kept`` or ``skipped``
    (non-terminal row, §5.8); ``row`` is the stored row afterwards; ``touched_run_id`` the
    existing row it landed on; ``rows`` the case's runs afterwards, sorted (§6.3).
    """

    action: str
    row: dict
    touched_run_id: str | None
    rows: list[dict]
    skip_reason: str | None = None

    @property
    def updated(self) -> bool:
        return self.action != "skipped"


def logical_key(row: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """The four identity texts of logical backfill, or None when any is empty."""
    values = tuple(row.get(key) for key in LOGICAL_KEYS)
    return None if any(not value for value in values) else values


def same_logical_run(stored: Mapping[str, Any], new: Mapping[str, Any], key: tuple) -> bool:
    return logical_key(stored) == key and all(
        stored.get(name) == new.get(name) for name in LOGICAL_OUTCOME_KEYS
    )


def upsert_row(existing_rows: Sequence[dict], new_row: dict) -> UpsertResult:
    """Upsert one row into the rows of its case (the only rows it can land on, §6.1).

    Cost is O(rows of the case): the store hands over one case, never the whole ledger.
    """
    if not is_terminal(new_row):
        return UpsertResult(
            "skipped", dict(new_row), None, list(existing_rows), SKIP_REASON_NON_TERMINAL
        )
    rows = list(existing_rows)
    run_id = new_row.get("run_id")
    for index, stored in enumerate(rows):
        if run_id and stored.get("run_id") == run_id:
            merged, action = replace_row(stored, new_row)
            rows[index] = merged
            return UpsertResult(action, merged, stored.get("run_id"), sort_rows(rows))
    key = logical_key(new_row)
    if key is not None:
        for index, stored in enumerate(rows):
            if same_logical_run(stored, new_row, key):
                filled = backfill_row(stored, new_row)
                rows[index] = filled
                return UpsertResult("backfilled", filled, stored.get("run_id"), sort_rows(rows))
    appended = dict(new_row)
    rows.append(appended)
    return UpsertResult("appended", appended, None, sort_rows(rows))


def replace_row(stored: Mapping[str, Any], new_row: Mapping[str, Any]) -> tuple[dict, str]:
    merged = dict(new_row)
    recorded = earlier_timestamp(stored.get("recorded_at"), new_row.get("recorded_at"))
    if recorded:
        merged["recorded_at"] = recorded
    if is_archived(stored) and "archive_state" not in new_row:
        for key in ARCHIVE_FIELDS:
            if key in stored:
                merged[key] = stored[key]
        # The carried-over row is rebuilt as loopx 0.4.8 rebuilds it: keys left empty (None,
        # "" or []) are dropped, so a re-landed archived row says only what it knows.
        return {key: value for key, value in merged.items() if not _empty(value)}, "archived_kept"
    return merged, "replaced"


def _empty(value: Any) -> bool:
    """Row key dropping: ``{}`` is a value here, unlike in backfill (``_blank``)."""
    return value is None or value == "" or value == []


def backfill_row(stored: Mapping[str, Any], new_row: Mapping[str, Any]) -> dict:
    filled = dict(stored)
    for key in BACKFILL_FIELDS:
        if _blank(filled.get(key)) and not _blank(new_row.get(key)):
            filled[key] = new_row[key]
    if new_row.get("last_upserted_at"):
        filled["last_upserted_at"] = new_row["last_upserted_at"]
    return filled
