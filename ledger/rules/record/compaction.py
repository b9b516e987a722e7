"""Compaction of one raw record into ``benchmark_run_v0`` (docs/formats/benchmark_run_v0.md §5).

Every adapter hands a raw record to ``compact_run``; the compacted dict is the contract that is
printed, stored and upserted. Compaction is idempotent: everything it derives (``case_ids``,
``pass_at_k``, ``validation``, ``solution_quality_signals``, ``public_safety``) is derived from
fields that survive compaction, and counts that compaction shrinks carry forward.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchledger.ledger.core.safety import clist_status, ctext, ctext_status
from benchledger.ledger.rules.record.fields import (
    _TRIAL_ROWS,
    BODY_SPEC,
    IDENTITY_SPEC,
    IDENTITY_TAIL_SPEC,
    MAX_DROPPED_FIELDS,
    MAX_TRIALS,
    NEUTRAL_CHECK_PREFIXES,
    NEUTRAL_CHECKS,
    RECORD_SCHEMA_VERSION,
    T140,
    VALIDATION_DERIVED,
    VALIDATION_KEPT_BOOLS,
)
from benchledger.ledger.rules.record.kinds import (
    BOOL,
    MAX_LIST_ITEMS,
    NNINT,
    Drops,
    is_mapping,
    present,
    shape,
    shape_rows,
)
from benchledger.ledger.rules.record.pass_at_k import pass_at_k
from benchledger.ledger.rules.record.quality_signals import solution_quality_signals
from benchledger.ledger.rules.row.values import as_list


def compact_run(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Compact one raw record (docs/formats/benchmark_run_v0.md §5).

    Returns ``{"schema_version": "benchmark_run_v0"}`` alone when nothing compactable was
    found; callers treat that as "not a record" (``is_compactable``).
    """
    if not isinstance(raw, Mapping):
        return {"schema_version": RECORD_SCHEMA_VERSION}
    drops: Drops = []
    # The trials first, as kept: the case falls back on the first kept trial's task id, so a
    # record compacted again (its empty trials gone) keeps the same case (idempotence, §5).
    trial_drops: Drops = []
    trials = _trials(raw, trial_drops)
    out: dict[str, Any] = {"schema_version": RECORD_SCHEMA_VERSION}
    out.update(shape(raw, IDENTITY_SPEC, drops, ""))
    out.update(_case_identity(raw, trials.get("trials", []), drops))
    out.update(shape(raw, IDENTITY_TAIL_SPEC, drops, ""))
    out.update(shape(raw, BODY_SPEC, drops, ""))
    _put(out, "agent", _agent_with_kwargs(raw.get("agent"), out.get("agent"), drops))
    out.update(_pass_at_k_fields(out.get("score_aggregation")))
    out.update(trials)
    drops += trial_drops
    _put(out, "validation", _validation(raw.get("validation"), drops))
    if len(out) == 1:
        return out
    out["solution_quality_signals"] = solution_quality_signals(out)
    _put(out, "public_safety", _public_safety(raw.get("public_safety"), drops))
    return out


def is_compactable(record: Mapping[str, Any]) -> bool:
    """A compacted record is usable when anything besides ``schema_version`` survived."""
    return any(key != "schema_version" for key in record)


def _put(out: dict[str, Any], key: str, value: Any) -> None:
    if present(value):
        out[key] = value
    else:
        out.pop(key, None)


def _case_identity(raw: Mapping[str, Any], trials: list[dict], drops: Drops) -> dict[str, Any]:
    """``case_id`` = first usable of case_id, task_id, the first kept trial's task_id (of the
    compacted ``trials``), case_ids items; ``case_ids`` = case_id first, then the input list
    without duplicates (§4.1)."""
    raw_ids = raw.get("case_ids")
    id_items = raw_ids if isinstance(raw_ids, list) else ([] if raw_ids is None else [raw_ids])
    first_trial = trials[0] if trials else {}
    case_id, unsafe = ctext_status(raw.get("case_id"), 120)
    if unsafe:
        drops.append("case_id")
    for candidate in (raw.get("task_id"), first_trial.get("task_id"), *id_items):
        if case_id is None:
            case_id = ctext(candidate, 120)
    ids: list[str] = [] if case_id is None else [case_id]
    for index, item in enumerate(id_items):
        if len(ids) >= MAX_LIST_ITEMS:
            break
        text, unsafe = ctext_status(item, 160)
        if unsafe:
            drops.append(f"case_ids[{index}]")
        if text is not None and text not in ids:
            ids.append(text)
    out: dict[str, Any] = {}
    if case_id is not None:
        out["case_id"] = case_id
    if ids:
        out["case_ids"] = ids
    return out


def _agent_with_kwargs(raw_agent: Any, agent: dict | None, drops: Drops) -> dict | None:
    """``agent.kwargs_keys``: sorted kwarg names, from a names list or a kwargs object.

    Values are never read; sorting before the cap keeps re-compaction stable.
    """
    if not isinstance(raw_agent, Mapping):
        return agent
    names = raw_agent.get("kwargs_keys")
    if not isinstance(names, list):
        kwargs = raw_agent.get("kwargs")
        names = list(kwargs) if isinstance(kwargs, Mapping) else []
    kept: set[str] = set()
    for index, name in enumerate(names):
        if not isinstance(name, str):
            continue
        text, unsafe = ctext_status(name, 160)
        if unsafe:
            drops.append(f"agent.kwargs_keys[{index}]")
        if text is not None:
            kept.add(text)
    agent = dict(agent or {})
    _put(agent, "kwargs_keys", sorted(kept)[:MAX_LIST_ITEMS])
    return agent


def _pass_at_k_fields(aggregation: Mapping[str, Any] | None) -> dict[str, Any]:
    """``pass_at_k`` is derived from the aggregation counts, never copied (§4.4).

    Deriving it means a stale or hand-edited value cannot disagree with the counts beside it.
    """
    if not aggregation or aggregation.get("binary_rewards") is not True:
        return {}
    n = aggregation.get("scored_attempt_count")
    c = aggregation.get("passed_attempt_count")
    if not isinstance(n, int) or not isinstance(c, int) or n < 2 or not 0 <= c <= n:
        return {}
    return {"pass_at_k": pass_at_k(n, c), "pass_at_k_basis": "scored_attempts_only"}


def _trials(raw: Mapping[str, Any], drops: Drops) -> dict[str, Any]:
    """Compact attempts (§4.8, §5 step 5); ``trial_count`` keeps the real attempt count."""
    raw_trials = raw.get("trials")
    raw_count = NNINT(raw.get("trial_count"), drops, "trial_count")
    if not isinstance(raw_trials, list):
        return {} if raw_count is None else {"trial_count": raw_count}
    kept: list[dict] = []
    cut = False
    for index, item in enumerate(raw_trials):
        if not is_mapping(item):
            continue
        if len(kept) >= MAX_TRIALS:
            cut = True
            break
        trial = shape_rows(item, _TRIAL_ROWS, drops, f"trials[{index}].")
        if trial:
            kept.append(trial)
    trial_count = max(len(raw_trials), raw_count or 0)
    out: dict[str, Any] = {"trial_count": trial_count}
    if kept:
        out["trials"] = kept
    carried = raw.get("trials_truncated") is True and trial_count > len(kept)
    if cut or carried:
        out["trials_truncated"] = True
    return out


def _is_neutral_check(name: str) -> bool:
    return name in NEUTRAL_CHECKS or name.startswith(NEUTRAL_CHECK_PREFIXES)


def _validation(raw: Any, drops: Drops) -> dict[str, Any] | None:
    """``all_passed``/``failed_checks`` derived from the raw boolean checks (§4.11).

    The input's own ``failed_checks`` and a false ``all_passed`` are carried forward, because the
    raw checks that produced them do not survive compaction.
    """
    if not isinstance(raw, Mapping):
        return None
    failed: list[Any] = []
    checks_seen = False
    for name, value in raw.items():
        if name in VALIDATION_DERIVED or not isinstance(value, bool):
            continue
        checks_seen = True
        if value is False and isinstance(name, str) and not _is_neutral_check(name):
            failed.append(name)
    prior_failed = raw.get("failed_checks")
    if isinstance(prior_failed, list):
        failed.extend(prior_failed)
    elif isinstance(prior_failed, str):
        failed.append(prior_failed)
    prior_all = raw.get("all_passed")
    out: dict[str, Any] = {}
    if checks_seen or failed or isinstance(prior_all, bool):
        out["all_passed"] = not failed and prior_all is not False
    names, dropped = clist_status(list(dict.fromkeys(failed)), MAX_LIST_ITEMS, 160)
    if dropped:
        drops.append("validation.failed_checks")
    _put(out, "failed_checks", names)
    out.update(
        shape(
            raw,
            {
                "validation_scope": T140,
                "official_verifier_status": T140,
                **{key: BOOL for key in VALIDATION_KEPT_BOOLS},
            },
            drops,
            "validation.",
        )
    )
    return out


def _public_safety(raw: Any, drops: Drops) -> dict[str, Any] | None:
    """Name dropped fields (never values); earlier drops are carried so re-compaction is stable."""
    prior = raw if isinstance(raw, Mapping) else {}
    prior_fields = [
        name for name in as_list(prior.get("dropped_fields")) if ctext(name, 200) == name
    ]
    prior_count = NNINT(prior.get("dropped_field_count"), drops, "")
    prior_count = max(prior_count or 0, len(prior_fields))
    fields = list(dict.fromkeys([*prior_fields, *drops]))[:MAX_DROPPED_FIELDS]
    count = prior_count + len(drops)
    if not count:
        return None
    return {"dropped_field_count": count, "dropped_fields": fields}
