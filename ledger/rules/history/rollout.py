"""Rollout records: the public-safe per-goal lifecycle log ``rollout-event-log.jsonl``.

Other loopx tools tail this log, so the ``loopx_rollout_event_v0`` shape is kept exactly. Every
text goes through the same public-safety filter as run records (loopx used a separate marker
list); a text that fails rejects the whole event with ``InputError``, which the command reports
as ``rollout_event_log_error`` while the run itself stays appended. The ``event_id`` is a content
hash, so rendering the log again from the store yields the same lines.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.safety import cut_text_status

SCHEMA_VERSION = "loopx_rollout_event_v0"
SUMMARY_SCHEMA_VERSION = "loopx_rollout_event_summary_v0"
EVENT_KINDS = frozenset(
    {
        "benchmark_launch",
        "benchmark_status",
        "codex_session_observed",
        "capability_gap",
        "compact_blocker",
        "compact_case_result",
        "evidence_log_read",
        "failure_attribution",
        "pr_merge",
        "pr_review_ack",
        "quota_monitor_poll",
        "quota_should_run",
        "quota_spend",
        "quota_void",
        "refresh_state",
        "research_evidence",
        "research_hypothesis",
        "todo_add",
        "todo_archive_completed",
        "todo_claim",
        "todo_complete",
        "todo_supersede",
        "todo_update",
        "validation",
    }
)
BOUNDARY = {
    "raw_task_text_recorded": False,
    "raw_logs_recorded": False,
    "raw_trajectory_recorded": False,
    "raw_session_transcript_recorded": False,
    "credential_values_recorded": False,
    "absolute_paths_recorded": False,
}
FORBIDDEN_KEY_PARTS = (
    "credential",
    "local_path",
    "log",
    "path",
    "raw",
    "secret",
    "stderr",
    "stdout",
    "task_text",
    "token",
    "trace",
    "trajectory",
    "transcript",
)
APPEND_ERROR_MESSAGE = "rollout event append failed; primary command payload remains authoritative"

ID_LIMIT = 160
SUMMARY_LIMIT = 500
DELIVERY_OUTCOME_LIMIT = 180
LABEL_LIMIT = 80
DETAIL_TEXT_LIMIT = 240

_SUB_OBJECTS = {
    "lane": ("lane_id", "agent_role"),
    "state_transition": ("from_state", "to_state"),
    "handoff": ("to_agent_id",),
}
_VIEW_KEYS = (
    "event_id",
    "recorded_at",
    "event_kind",
    "status",
    "agent_id",
    "todo_id",
    "benchmark_id",
    "case_id",
    "run_id",
    "lane",
    "state_transition",
    "causality",
    "code_refs",
    "handoff",
    "classification",
    "delivery_outcome",
    "summary",
)


# --- texts, refs, details (§8.2) ---------------------------------------------------------------


def format_recorded_at(moment: datetime) -> str:
    """UTC with microseconds and ``Z``: several events of one command stay ordered."""
    if moment.tzinfo is None:
        raise ValueError("recorded_at needs an aware datetime")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def clean_text(value: Any, limit: int, *, field: str) -> str | None:
    """Collapse whitespace, refuse unsafe text, cut to ``limit`` with ``...``; empty → None.

    A short plain ``str`` goes through a cache: the rollout event of every run of an ingest
    cleans the same goal, benchmark, status, label and detail texts (~20 per event)."""
    if value is None:
        return None
    if type(value) is str and len(value) <= _CACHED_TEXT_MAX:
        text, safe = _cleaned_short(value, limit)
    else:
        text, safe = _cleaned(str(value), limit)
    if not safe:
        raise InputError(f"rollout event {field} is not public-safe")
    return text


def _cleaned(raw: str, limit: int) -> tuple[str | None, bool]:
    """``clean_text``'s text and whether it passed the filter, before and after the cut."""
    text, unsafe = cut_text_status(raw, limit, "...", trim=True)
    return text, not unsafe


# Texts up to this length are remembered by ``_cleaned_short`` (longer ones are rarely repeated
# and would make the cache hold on to large strings), as ``ledger.core.safety`` does.
_CACHED_TEXT_MAX = 256


@lru_cache(maxsize=1 << 14)
def _cleaned_short(raw: str, limit: int) -> tuple[str | None, bool]:
    """``_cleaned`` of a plain ``str`` of at most ``_CACHED_TEXT_MAX`` characters, memoised
    (a pure function of it)."""
    return _cleaned(raw, limit)


def normalize_event_kind(kind: str) -> str:
    normalized = str(kind or "").strip().lower().replace("-", "_")
    if normalized not in EVENT_KINDS:
        raise InputError(f"unsupported rollout event_kind: {normalized or '<empty>'}")
    return normalized


def clean_ref(value: Any, *, field: str) -> str | None:
    """A ref is a relative path inside the project: never absolute, never ``~``, never ``..``."""
    text = clean_text(value, ID_LIMIT, field=field)
    if text is None:
        return None
    parts = text.replace("\\", "/").split("/")
    if text[0] in "~/\\" or ".." in parts or (len(text) > 1 and text[1] == ":"):
        raise InputError(f"rollout event {field} must be a relative path without '..'")
    return text


def clean_refs(values: Any, *, field: str) -> list[str]:
    items = values if isinstance(values, (list, tuple)) else [values] if values else []
    refs = [clean_ref(item, field=field) for item in items]
    return list(dict.fromkeys(ref for ref in refs if ref))


def clean_details(details: Mapping[str, Any] | None, *, field: str = "details") -> dict[str, Any]:
    """Flat scalars only, under keys that cannot name raw material; empty strings become null."""
    cleaned: dict[str, Any] = {}
    for key, value in (details or {}).items():
        key_text = str(key)
        if _forbidden_key(key_text):
            raise InputError(f"rollout event {field} key is not allowed: {key_text}")
        cleaned[key_text] = _detail_value(value, field=f"{field}.{key_text}")
    return cleaned


@lru_cache(maxsize=1024)
def _forbidden_key(key_text: str) -> bool:
    """Whether a details key could name raw material. Cached: every run of an ingest has the
    same few keys, and testing each against every forbidden part was ~0.3 s of 10,000 runs."""
    lowered = key_text.lower()
    return any(part in lowered for part in FORBIDDEN_KEY_PARTS)


def _detail_value(value: Any, *, field: str) -> Any:
    if value is None or isinstance(value, bool) or isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InputError(f"rollout event {field} must be a finite number")
        return value
    if isinstance(value, str):
        return clean_text(value, DETAIL_TEXT_LIMIT, field=field)
    raise InputError(f"rollout event {field} must be a scalar")


# --- building an event (§8.1, §8.3) ------------------------------------------------------------


def build_event(
    *,
    goal_id: str,
    event_kind: str,
    recorded_at: str,
    agent_id: str | None = None,
    todo_id: str | None = None,
    benchmark_id: str | None = None,
    case_id: str | None = None,
    run_id: str | None = None,
    status: str | None = None,
    classification: str | None = None,
    delivery_outcome: str | None = None,
    summary: str | None = None,
    lane: Mapping[str, Any] | None = None,
    state_transition: Mapping[str, Any] | None = None,
    causality: Mapping[str, Any] | None = None,
    code_refs: Mapping[str, Any] | None = None,
    handoff: Mapping[str, Any] | None = None,
    labels: Iterable[Any] | None = None,
    artifact_refs: Iterable[Any] | None = None,
    source_refs: Iterable[Any] | None = None,
    details: Mapping[str, Any] | None = None,
    private_source: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A validated event with its ``event_id``; optional fields appear only when non-empty."""
    event: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "goal_id": clean_text(goal_id, ID_LIMIT, field="goal_id"),
        "event_kind": normalize_event_kind(event_kind),
        "recorded_at": recorded_at,
        "boundary": dict(BOUNDARY),
    }
    if not event["goal_id"]:
        raise InputError("rollout event goal_id is required")
    scalars = {
        "agent_id": (agent_id, ID_LIMIT),
        "todo_id": (todo_id, ID_LIMIT),
        "benchmark_id": (benchmark_id, ID_LIMIT),
        "case_id": (case_id, ID_LIMIT),
        "run_id": (run_id, ID_LIMIT),
        "status": (status, ID_LIMIT),
        "classification": (classification, ID_LIMIT),
        "delivery_outcome": (delivery_outcome, DELIVERY_OUTCOME_LIMIT),
        "summary": (summary, SUMMARY_LIMIT),
    }
    for name, (value, limit) in scalars.items():
        _put(event, name, clean_text(value, limit, field=name))
    for name, sub_object in (
        ("lane", lane),
        ("state_transition", state_transition),
        ("handoff", handoff),
    ):
        _put(event, name, _sub_object(name, sub_object))
    _put(event, "causality", _causality(causality))
    _put(event, "code_refs", _code_refs(code_refs))
    _put(event, "labels", _labels(labels))
    _put(event, "artifact_refs", clean_refs(list(artifact_refs or []), field="artifact_refs"))
    _put(event, "source_refs", _source_refs(source_refs))
    _put(event, "details", clean_details(details))
    _put(event, "private_source", _private_source(private_source))
    event["event_id"] = compute_event_id(event)
    return event


def compute_event_id(event: Mapping[str, Any]) -> str:
    body = {key: value for key, value in event.items() if key != "event_id"}
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=True).encode("ascii"))
    return digest.hexdigest()[:16]


def _sub_object(name: str, value: Mapping[str, Any] | None) -> dict[str, Any]:
    if not value:
        return {}
    cleaned = {
        key: clean_text(value.get(key), ID_LIMIT, field=f"{name}.{key}")
        for key in _SUB_OBJECTS[name]
    }
    return {key: text for key, text in cleaned.items() if text}


def _causality(value: Mapping[str, Any] | None) -> dict[str, Any]:
    if not value:
        return {}
    result: dict[str, Any] = {}
    for key in ("caused_by", "source_event_id", "gate_id", "decision_id"):
        _put(result, key, clean_text(value.get(key), ID_LIMIT, field=f"causality.{key}"))
    for key in ("blocks", "unblocks"):
        _put(result, key, clean_refs(value.get(key), field=f"causality.{key}"))
    return result


def _code_refs(value: Mapping[str, Any] | None) -> dict[str, Any]:
    if not value:
        return {}
    result: dict[str, Any] = {}
    for key in ("commit_ref", "pr_ref", "revert_of"):
        _put(result, key, clean_ref(value.get(key), field=f"code_refs.{key}"))
    return result


def _labels(values: Iterable[Any] | None) -> list[str]:
    labels = (clean_text(value, LABEL_LIMIT, field="labels") for value in values or [])
    return list(dict.fromkeys(label for label in labels if label))


def _source_refs(values: Iterable[Any] | None) -> list[Any]:
    """Strings follow the ref policy; objects are flat scalar maps under the details key rules."""
    refs: list[Any] = []
    for value in values or []:
        if isinstance(value, Mapping):
            cleaned = {
                key: item
                for key, item in clean_details(value, field="source_refs").items()
                if item is not None
            }
            if cleaned:
                refs.append(cleaned)
        else:
            ref = clean_ref(value, field="source_refs")
            if ref:
                refs.append(ref)
    return refs


def _private_source(value: Mapping[str, Any] | None) -> dict[str, Any]:
    if not value:
        return {}
    kind = clean_text(value.get("kind"), ID_LIMIT, field="private_source.kind")
    if not kind:
        return {}
    result: dict[str, Any] = {"kind": kind, "raw_values_recorded": False}
    count = value.get("count")
    if isinstance(count, int) and not isinstance(count, bool):
        result["count"] = count
    return result


def _put(target: dict[str, Any], key: str, value: Any) -> None:
    if value not in (None, "", [], {}):
        target[key] = value


# --- the log file (§8.1, §8.3) -----------------------------------------------------------------


def render_event_line(event: Mapping[str, Any]) -> str:
    return json.dumps(event, sort_keys=True, ensure_ascii=False) + "\n"


def parse_log(lines: Iterable[str]) -> list[dict[str, Any]]:
    """Events of our schema, in file order; torn, malformed or foreign lines are skipped."""
    events = []
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("schema_version") == SCHEMA_VERSION:
            events.append(event)
    return events


def plan_append(
    existing: Sequence[Mapping[str, Any]], event: Mapping[str, Any]
) -> dict[str, Any] | None:
    """Idempotent append: return the stored event when already present, None when it is new.

    The same id with a different body means two writers disagree about one event, which is
    refused rather than silently duplicated.
    """
    event_id = event.get("event_id")
    body = _body(event)
    for stored in existing:
        if stored.get("event_id") != event_id:
            continue
        if _body(stored) == body:
            return dict(stored)
        raise InputError(f"conflicting rollout event_id: {event_id}")
    return None


def _body(event: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in event.items() if key != "event_id"}


# --- events written by `benchmark run` (§8.4) --------------------------------------------------

_NO_ATTRIBUTION = {"", "none", "no_score_failure"}


def benchmark_run_status(run: Mapping[str, Any]) -> str:
    """First match of the §8.4 status ladder for one compact record."""
    attribution = str(run.get("score_failure_attribution") or run.get("failure_attribution") or "")
    if attribution not in _NO_ATTRIBUTION:
        return "precise_blocker"
    passed, score_status, score = _score_view(run)
    if passed is True:
        return "passed"
    if passed is False:
        return "failed"
    if score_status == "not_run" or run.get("run_status") in {"planned", "fixture"}:
        return "not_run"
    runner = run.get("runner_return_status") or run.get("terminal_state")
    if runner:
        return str(runner)
    if _is_number(score):
        return "scored"
    return "appended"


def _score_view(run: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    """(passed, status, value) from ``official_task_score``, else the top-level fields."""
    task = run.get("official_task_score")
    if isinstance(task, Mapping):
        return task.get("passed"), task.get("status") or task.get("kind"), task.get("value")
    return (
        run.get("official_score_passed"),
        run.get("official_score_status"),
        run.get("official_score"),
    )


def benchmark_run_case_id(run: Mapping[str, Any]) -> str | None:
    trials = run.get("trials")
    first_trial = (
        trials[0] if isinstance(trials, list) and trials and isinstance(trials[0], Mapping) else {}
    )
    for value in (
        run.get("case_id"),
        run.get("task_id"),
        first_trial.get("task_id"),
        run.get("scenario_id"),
    ):
        if value:
            return str(value)
    return None


def benchmark_run_event(
    run: Mapping[str, Any],
    *,
    goal_id: str,
    run_id: str,
    action: str,
    recorded_at: str,
    history_stem: str | None = None,
    classification: str | None = None,
    delivery_outcome: str | None = None,
) -> dict[str, Any]:
    """The lifecycle event for one appended record; ``run_id`` is its ledger identity (§5.15)."""
    status = benchmark_run_status(run)
    benchmark_id = run.get("benchmark_id")
    case_id = benchmark_run_case_id(run)
    summary = (
        "benchmark_run compact lifecycle event recorded: "
        f"benchmark={benchmark_id or 'unknown'} case={case_id or 'unknown'} status={status}"
    )
    return build_event(
        goal_id=goal_id,
        event_kind="compact_blocker" if status == "precise_blocker" else "compact_case_result",
        recorded_at=recorded_at,
        benchmark_id=benchmark_id,
        case_id=case_id,
        run_id=run_id,
        status=status,
        classification=classification,
        delivery_outcome=delivery_outcome,
        summary=summary,
        labels=_run_labels(run),
        details=_run_details(run, action=action, history_stem=history_stem),
    )


def _run_labels(run: Mapping[str, Any]) -> list[Any]:
    keys = (
        "mode",
        "source_runner",
        "runner_return_status",
        "official_score_status",
        "score_failure_attribution",
        "failure_attribution",
    )
    return [run.get(key) for key in keys if run.get(key)]


def _run_details(
    run: Mapping[str, Any], *, action: str, history_stem: str | None
) -> dict[str, Any]:
    passed, score_status, score = _score_view(run)
    reported = run.get("progress")
    progress = reported if isinstance(reported, Mapping) else {}
    details = {
        "command": "benchmark",
        "action": action,
        "mode": run.get("mode"),
        "source_runner": run.get("source_runner"),
        "runner_status": run.get("runner_return_status") or run.get("terminal_state"),
        "score_status": run.get("official_score_status") or score_status,
        "official_score": score if _is_number(score) else None,
        "official_passed": passed if isinstance(passed, bool) else None,
        "failure_attribution": run.get("score_failure_attribution")
        or run.get("failure_attribution"),
        "trial_count": _positive_int(run.get("trial_count")),
        "progress_completed": _positive_int(progress.get("n_completed_trials")),
        "progress_total": _positive_int(progress.get("n_total_trials")),
        "history_stem": history_stem,
    }
    return {key: (None if value == "" else value) for key, value in details.items()}


def _positive_int(value: Any) -> int | None:
    """Missing and zero counts become null, as loopx consumers expect."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value:
        return None
    return int(value) if float(value).is_integer() else None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


# --- payload fields (§8.4) ---------------------------------------------------------------------


def event_receipt(event: Mapping[str, Any]) -> dict[str, Any]:
    return {
        key: event.get(key)
        for key in ("schema_version", "event_id", "event_kind", "recorded_at", "status")
    }


def rollout_payload_fields(events: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``rollout_event`` for one appended record, ``rollout_events`` for several."""
    if not events:
        return {}
    if len(events) == 1:
        return {"rollout_event": event_receipt(events[0])}
    return {"rollout_events": [event_receipt(event) for event in events]}


def rollout_error_fields(error: BaseException) -> dict[str, Any]:
    """Best effort: the run is stored; the payload names the failure type but not its text,
    which could echo a rejected value."""
    return {
        "rollout_event_log_error": {
            "recorded": False,
            "error_type": type(error).__name__,
            "message": APPEND_ERROR_MESSAGE,
        }
    }


# --- summary (§8.5) ----------------------------------------------------------------------------


def summarize_rollout_events(
    events: Sequence[Mapping[str, Any]], limit: int = 12
) -> dict[str, Any]:
    views = [event_view(event) for event in events]
    return {
        "schema_version": SUMMARY_SCHEMA_VERSION,
        "event_count": len(views),
        "counts_by_kind": dict(Counter(str(event.get("event_kind")) for event in events)),
        "counts_by_status": dict(
            Counter(str(event["status"]) for event in events if event.get("status"))
        ),
        "latest_event": views[-1] if views else None,
        "recent_events": views[-limit:] if limit > 0 else [],
        "boundary": dict(BOUNDARY),
    }


def event_view(event: Mapping[str, Any]) -> dict[str, Any]:
    return {key: event[key] for key in _VIEW_KEYS if key in event}
