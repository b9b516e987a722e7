"""The per-goal run store: record JSON, stems, ``index.jsonl`` rows, Markdown and envelopes.

In benchledger these files are projections of ``run_appended`` events, rendered after commit;
this module computes their exact content so rendering and replay produce the same bytes. Paths
stored in files are relative to the runtime root (RT) because the files are public, while the
command payload (stdout) may show absolute paths.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from ledger.errors import InputError
from ledger.jsonfmt import json_like_stdlib, json_line_like_stdlib
from ledger.markdown import code_span

SCHEMA_VERSION = "benchmark_run_v0"
HEALTH_CHECK = "benchmark_run_v0 compact event public-safe"
DEFAULT_CLASSIFICATION = "benchmark_run_v0"
DEFAULT_RECOMMENDED_ACTION = "review the compact benchmark run before the next run"
MARKDOWN_TITLE = "# Benchmark Run Append"

DELIVERY_BATCH_SCALES = ("test_only", "single_surface", "multi_surface", "implementation")
DELIVERY_BATCH_SCALE_ALIASES = {
    "single_segment": "single_surface",
    "bounded_segment": "single_surface",
}
DELIVERY_BATCH_SCALE_CHOICES = DELIVERY_BATCH_SCALES + tuple(DELIVERY_BATCH_SCALE_ALIASES)
DELIVERY_OUTCOMES = ("surface_only", "outcome_gap", "outcome_progress", "primary_goal_outcome")


# --- time and stems (§5.1, §5.2) ---------------------------------------------------------------


def format_generated_at(moment: datetime) -> str:
    """UTC, second precision, ``Z``: loopx wrote local time with an offset, which sorts badly."""
    if moment.tzinfo is None:
        raise ValueError("generated_at needs an aware datetime")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_NON_STEM = re.compile(r"[^0-9A-Za-z-]+")


def stem_base(generated_at: str) -> str:
    """``2026-11-30T17:46:48Z`` → ``2026-11-30T17-46-48Z``: a timestamp safe as a file name."""
    return _NON_STEM.sub("-", generated_at).strip("-") or "run"


def stem_candidates(generated_at: str) -> Iterable[str]:
    base = stem_base(generated_at)
    yield base
    suffix = 2
    while True:
        yield f"{base}-{suffix}"
        suffix += 1


def allocate_stems(generated_at: str, count: int, existing: Iterable[str]) -> list[str]:
    """Stems for ``count`` records of one command, in output order, none of them in ``existing``.

    ``existing`` is every stem already taken in the goal's runs directory (from the run-history
    read model plus any file already on disk, e.g. written by loopx). Two runs in the same second
    get ``-2``, ``-3``…; concurrent commands are kept apart by the goal stream's optimistic
    concurrency: the loser re-reads ``existing`` and allocates again.
    """
    taken = set(existing)
    stems: list[str] = []
    for candidate in stem_candidates(generated_at):
        if len(stems) == count:
            break
        if candidate in taken:
            continue
        stems.append(candidate)
        taken.add(candidate)
    return stems


def allocate_stem(generated_at: str, existing: Iterable[str]) -> str:
    return allocate_stems(generated_at, 1, existing)[0]


def stems_on_disk(file_names: Iterable[str]) -> set[str]:
    """Stems taken by files in a runs directory: a ``.json`` or ``.md`` blocks the pair (§5.2)."""
    taken: set[str] = set()
    for name in file_names:
        for suffix in (".json", ".md"):
            if name.endswith(suffix) and not name.startswith("."):
                taken.add(name[: -len(suffix)])
    taken.discard("index")
    return taken


# --- paths -------------------------------------------------------------------------------------


def runs_dir_rel(goal_id: str) -> str:
    return f"goals/{goal_id}/runs"


def record_paths_rel(goal_id: str, stem: str) -> tuple[str, str]:
    """(json, markdown) paths relative to RT, as stored in ``index.jsonl``."""
    base = f"{runs_dir_rel(goal_id)}/{stem}"
    return f"{base}.json", f"{base}.md"


def index_path_rel(goal_id: str) -> str:
    return f"{runs_dir_rel(goal_id)}/index.jsonl"


# --- delivery labels (§5.5) --------------------------------------------------------------------


def normalize_delivery_batch_scale(value: str | None) -> str | None:
    """Accept the two loopx library aliases too; the loopx CLI rejected them (a quirk we fix)."""
    if not value:
        return None
    value = DELIVERY_BATCH_SCALE_ALIASES.get(value, value)
    if value not in DELIVERY_BATCH_SCALES:
        raise InputError(
            f"delivery_batch_scale must be one of: {', '.join(DELIVERY_BATCH_SCALE_CHOICES)}"
        )
    return value


def normalize_delivery_outcome(value: str | None) -> str | None:
    if not value:
        return None
    if value not in DELIVERY_OUTCOMES:
        raise InputError(f"delivery_outcome must be one of: {', '.join(DELIVERY_OUTCOMES)}")
    return value


# --- the record (§5.1) -------------------------------------------------------------------------


def build_run_record(
    benchmark_run: Mapping[str, Any],
    *,
    goal_id: str,
    generated_at: str,
    classification: str | None = None,
    recommended_action: str | None = None,
    delivery_batch_scale: str | None = None,
    delivery_outcome: str | None = None,
) -> dict[str, Any]:
    """The ``<stem>.json`` body. It never holds its own path, so replay can move RT freely."""
    if (
        not isinstance(benchmark_run, Mapping)
        or benchmark_run.get("schema_version") != SCHEMA_VERSION
    ):
        raise InputError("benchmark run must have schema_version=benchmark_run_v0")
    record: dict[str, Any] = {
        "generated_at": generated_at,
        "goal_id": goal_id,
        "classification": classification or DEFAULT_CLASSIFICATION,
        "recommended_action": recommended_action or DEFAULT_RECOMMENDED_ACTION,
        "health_check": HEALTH_CHECK,
        "benchmark_run": dict(benchmark_run),
    }
    scale = normalize_delivery_batch_scale(delivery_batch_scale)
    outcome = normalize_delivery_outcome(delivery_outcome)
    if scale:
        record["delivery_batch_scale"] = scale
    if outcome:
        record["delivery_outcome"] = outcome
    return record


def render_record_json(record: Mapping[str, Any]) -> str:
    """A run record's file text, byte-identical to what loopx's ``json.dumps`` wrote."""
    return json_like_stdlib(dict(record)).decode("utf-8", "surrogatepass")


# --- index.jsonl (§5.3) ------------------------------------------------------------------------


def index_row(record: Mapping[str, Any], *, goal_id: str, stem: str) -> dict[str, Any]:
    json_path, markdown_path = record_paths_rel(goal_id, stem)
    return {**record, "json_path": json_path, "markdown_path": markdown_path}


def render_index_line(row: Mapping[str, Any]) -> str:
    return json_line_like_stdlib(dict(row)) + "\n"


def read_index(lines: Iterable[str], *, exists: Callable[[str], bool]) -> dict[str, Any]:
    """Read an ``index.jsonl`` back: tolerant of torn or foreign lines, newest first.

    ``exists`` answers for a stored path (RT-relative from benchledger, absolute from loopx);
    it is passed in so this stays pure.
    """
    merged: dict[tuple[Any, Any, Any], dict[str, Any]] = {}
    raw_count = 0
    for line in lines:
        row = _parse_index_line(line)
        if row is None:
            continue
        raw_count += 1
        key = (row.get("generated_at"), row.get("json_path"), row.get("markdown_path"))
        merged.setdefault(key, {}).update(row)
    records = []
    for row in merged.values():
        row["json_exists"] = bool(row.get("json_path")) and exists(str(row["json_path"]))
        row["markdown_exists"] = bool(row.get("markdown_path")) and exists(
            str(row["markdown_path"])
        )
        records.append(row)
    records.sort(key=_generated_at_sort_key, reverse=True)
    return {"records": records, "raw_index_records": raw_count, "unique_runs": len(records)}


def _parse_index_line(line: str) -> dict[str, Any] | None:
    if not line.strip():
        return None
    try:
        row = json.loads(line)
    except ValueError:
        return None
    return row if isinstance(row, dict) else None


def _generated_at_sort_key(row: Mapping[str, Any]) -> tuple[float, str]:
    """Compare instants, not strings: loopx rows carry local offsets, ours carry ``Z``."""
    text = str(row.get("generated_at") or "")
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return (float("-inf"), text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment.timestamp(), text)


# --- Markdown (§5.4) ---------------------------------------------------------------------------

_HEAD_KEYS = ("ok", "dry_run", "appended", "goal_id", "classification", "generated_at")
_OPTIONAL_KEYS = ("json_path", "index_path", "recommended_action")
_RUN_KEYS = (
    "schema_version",
    "benchmark_id",
    "case_id",
    "arm_id",
    "run_status",
    "source_runner",
    "mode",
)


def render_append_markdown(payload: Mapping[str, Any]) -> str:
    """Markdown for the command's stdout and (via ``render_record_markdown``) ``<stem>.md``."""
    lines = [MARKDOWN_TITLE, ""]
    lines += [_bullet(key, payload.get(key)) for key in _HEAD_KEYS]
    lines += [_bullet(key, payload[key]) for key in _OPTIONAL_KEYS if payload.get(key) is not None]
    for run in payload_runs(payload):
        lines += ["", "## Benchmark Run", ""]
        lines += [_bullet(key, run.get(key)) for key in _RUN_KEYS if run.get(key) is not None]
        lines += _planned_lines(run)
        if isinstance(run.get("progress"), Mapping):
            lines.append(_progress_line(run))
        if isinstance(run.get("metrics"), Mapping):
            lines.append(_metrics_line(run))
    if payload.get("error"):
        lines += ["", _bullet("error", payload["error"])]
    return "\n".join(lines) + "\n"


def render_record_markdown(record: Mapping[str, Any], *, goal_id: str, stem: str) -> str:
    """``<stem>.md``: the view of one appended record at write time (no sync or rollout results)."""
    json_path, _ = record_paths_rel(goal_id, stem)
    view = {
        "ok": True,
        "dry_run": False,
        "appended": True,
        "goal_id": record.get("goal_id"),
        "classification": record.get("classification"),
        "generated_at": record.get("generated_at"),
        "json_path": json_path,
        "index_path": index_path_rel(goal_id),
        "recommended_action": record.get("recommended_action"),
        "benchmark_run": record.get("benchmark_run"),
    }
    return render_append_markdown(view)


def payload_runs(payload: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The run records of a ``benchmark run`` payload (one source, one or several records)."""
    runs = payload.get("benchmark_runs")
    if isinstance(runs, list):
        return [run for run in runs if isinstance(run, Mapping)]
    run = payload.get("benchmark_run")
    return [run] if isinstance(run, Mapping) else []


def _planned_lines(run: Mapping[str, Any]) -> list[str]:
    """A planned run's point is its launch command and whether anything blocks it."""
    lines = []
    preflight = run.get("preflight") if isinstance(run.get("preflight"), Mapping) else {}
    if preflight:
        lines.append(_bullet("ready", preflight.get("ready")))
        lines.append(_bullet("first_blocker", preflight.get("first_blocker")))
    preview = run.get("launch_preview") if isinstance(run.get("launch_preview"), Mapping) else {}
    if preview.get("command"):
        lines.append(f"- launch command: {code_span(str(preview['command']))}")
    return lines


def _progress_line(run: Mapping[str, Any]) -> str:
    progress = run.get("progress") if isinstance(run.get("progress"), Mapping) else {}
    completed = _scalar(progress.get("n_completed_trials"))
    total = _scalar(progress.get("n_total_trials"))
    return f"- progress: completed={completed} total={total}"


def _metrics_line(run: Mapping[str, Any]) -> str:
    metrics = run.get("metrics") if isinstance(run.get("metrics"), Mapping) else {}
    parts = " ".join(
        f"{key}={_scalar(metrics.get(key))}"
        for key in ("input_tokens", "output_tokens", "cost_usd")
    )
    return f"- metrics: {parts}"


def _bullet(key: str, value: Any) -> str:
    return f"- {key}: {code_span(_scalar(value))}"


def _scalar(value: Any) -> str:
    """JSON spelling for booleans and null so the Markdown reads like the JSON output."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# --- envelopes (§6) ----------------------------------------------------------------------------


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
    ``projections.rollout.rollout_payload_fields`` (or its error form), merged as given.
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
        payload["benchmark_run"] = dict(records[0])
    payload["benchmark_runs"] = [dict(record) for record in records]
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
