"""The ``benchmark run`` command's envelopes (docs/formats/cli.md §6): what the handler returns to
print.

Dry run and execute share one shape so scripts parse both alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchledger.ledger.rules.history.goal_runs import (
    HEALTH_CHECK,
    normalize_delivery_batch_scale,
    normalize_delivery_outcome,
)


def success_payload(
    *,
    dry_run: bool,
    registry: str | None,
    runtime_root: str,
    goal_id: str,
    classification: str,
    recommended_action: str,
    generated_at: str,
    records: Sequence[Mapping[str, Any]],
    json_paths: Sequence[str],
    markdown_paths: Sequence[str],
    index_path: str,
    benchmark_cli: Mapping[str, Any],
    global_sync: Mapping[str, Any],
    delivery_batch_scale: str | None = None,
    delivery_outcome: str | None = None,
    discovery: Mapping[str, Any] | None = None,
    selection: Mapping[str, Any] | None = None,
    benchmark_run_ledger: Mapping[str, Any] | None = None,
    rollout: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The §6.1 envelope; dry run and execute share one shape so scripts parse both alike.

    ``records`` are the compact ``benchmark_run_v0`` records; ``rollout`` is the dict built by
    ``ledger.rules.history.rollout.rollout_payload_fields`` (or its error form), merged as given.
    """
    appended = not dry_run
    payload: dict[str, Any] = {
        "ok": True,
        "dry_run": dry_run,
        "appended": appended,
        "registry": registry,
        "runtime_root": runtime_root,
        "goal_id": goal_id,
        "classification": classification,
        "recommended_action": recommended_action,
        "generated_at": generated_at,
        "health_check": HEALTH_CHECK,
    }
    if len(records) == 1:
        payload["json_path"] = json_paths[0]
        payload["markdown_path"] = markdown_paths[0]
    payload["index_path"] = index_path
    if len(records) == 1:
        payload["benchmark_run"] = _own(records[0])
    payload["benchmark_runs"] = [_own(record) for record in records]
    payload["json_paths"] = list(json_paths)
    payload["markdown_paths"] = list(markdown_paths)
    payload["appended_count"] = len(records) if appended else 0
    _put_if(payload, "delivery_batch_scale", normalize_delivery_batch_scale(delivery_batch_scale))
    _put_if(payload, "delivery_outcome", normalize_delivery_outcome(delivery_outcome))
    _put_if(payload, "skillsbench_result_discovery", discovery)
    _put_if(payload, "selection", selection)
    payload["benchmark_cli"] = dict(benchmark_cli)
    _put_if(payload, "benchmark_run_ledger", benchmark_run_ledger)
    payload["global_sync"] = dict(global_sync)
    if rollout:
        payload.update(rollout)
    return payload


def error_payload(
    *,
    dry_run: bool,
    registry: str | None,
    runtime_root: str,
    goal_id: str,
    classification: str,
    error: str,
    appended: bool = False,
    json_paths: Sequence[str] = (),
) -> dict[str, Any]:
    """The §6.2 envelope. ``appended`` tells the truth: true when run events already committed."""
    payload: dict[str, Any] = {
        "ok": False,
        "dry_run": dry_run,
        "appended": appended,
        "registry": registry,
        "runtime_root": runtime_root,
        "goal_id": goal_id,
        "classification": classification,
        "error": error,
    }
    if appended:
        payload["json_paths"] = list(json_paths)
    return payload


def _put_if(payload: dict[str, Any], key: str, value: Any) -> None:
    if value:
        payload[key] = dict(value) if isinstance(value, Mapping) else value


def _own(record: Mapping[str, Any]) -> dict[str, Any]:
    """The payload's own copy of a record."""
    return dict(record)
