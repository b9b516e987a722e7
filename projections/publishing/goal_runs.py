"""The per-goal run files: record JSON, ``index.jsonl`` rows and Markdown.

These files are projections of ``run_appended`` events, rendered after commit (the record and
its stem are decided on the write side, ``benchledger.ledger.rules.history.goal_runs``);
this module computes their exact content so rendering and replay produce the same bytes. Paths
stored in files are relative to the runtime root (RT) because the files are public, while the
command payload (stdout) may show absolute paths.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import orjson

from benchledger.ledger.core.jsonfmt import (
    json_like_stdlib,
    json_line_like_stdlib,
    orjson_like_stdlib,
)
from benchledger.ledger.core.markdown import code_span
from benchledger.ledger.rules.history.goal_runs import index_path_rel, record_paths_rel
from benchledger.ledger.rules.row.values import as_mapping
from benchledger.ledger.store.chain import CanonicalJson

MARKDOWN_TITLE = "# Benchmark Run Append"
#: How a value is spelled in a run section: loopx's JSON spelling in files, words on a terminal.
Scalar = Callable[[Any], str]


def render_record_json(record: Mapping[str, Any], *, plain: bool | None = None) -> str:
    """A run record's file text, byte-identical to what loopx's ``json.dumps`` wrote
    (``plain``: ``orjson_prints_as_stdlib(record)`` when the caller already knows it)."""
    return json_like_stdlib(dict(record), plain=plain).decode("utf-8", "surrogatepass")


def render_record_json_bytes(record: Mapping[str, Any], *, plain: bool | None = None) -> bytes:
    """``render_record_json(...).encode()``, the file's bytes: orjson's are valid UTF-8 already,
    so they are used as they are instead of being decoded and encoded again (10,000 records
    of ~6 KB each)."""
    data = orjson_like_stdlib(dict(record), plain=plain)
    if data is not None:
        return data
    return render_record_json(record, plain=plain).encode()


# --- index.jsonl (§5.3) ------------------------------------------------------------------------


def index_row(record: Mapping[str, Any], *, goal_id: str, stem: str) -> dict[str, Any]:
    json_path, markdown_path = record_paths_rel(goal_id, stem)
    return {**record, "json_path": json_path, "markdown_path": markdown_path}


def render_index_line(row: Mapping[str, Any], *, plain: bool | None = None) -> str:
    return json_line_like_stdlib(dict(row), plain=plain) + "\n"


def render_canonical_index_line(record: CanonicalJson, *, goal_id: str, stem: str) -> str:
    """``render_index_line(index_row(...))`` of the record ``record``'s text holds: the line
    is that text with the two paths appended, which is what dumping the record parsed back
    from it (its keys sorted) plus the paths gives, without dumping it again: when orjson
    prints it as ``json`` does, and neither path is a key it may already hold."""
    spliced = _spliced_index_line(record, goal_id=goal_id, stem=stem)
    if spliced is not None:
        return spliced.decode()
    row = index_row(orjson.loads(record.text), goal_id=goal_id, stem=stem)
    return render_index_line(row, plain=record.plain)


def render_canonical_index_line_bytes(record: CanonicalJson, *, goal_id: str, stem: str) -> bytes:
    """``render_canonical_index_line(...).encode()``: the spliced line stays bytes, so the
    index of 10,000 runs (~40 MB) is joined as bytes instead of decoded line by line, joined
    as text and encoded again (~30 ms)."""
    spliced = _spliced_index_line(record, goal_id=goal_id, stem=stem)
    if spliced is not None:
        return spliced
    return render_canonical_index_line(record, goal_id=goal_id, stem=stem).encode()


def _spliced_index_line(record: CanonicalJson, *, goal_id: str, stem: str) -> bytes | None:
    """The record's text with the two paths appended, or None when that would not be the line
    (``render_canonical_index_line``)."""
    text = record.text
    if not record.plain or text == b"{}" or b'"json_path"' in text or b'"markdown_path"' in text:
        return None
    json_path, markdown_path = record_paths_rel(goal_id, stem)
    paths = orjson.dumps({"json_path": json_path, "markdown_path": markdown_path})
    return text[:-1] + b"," + paths[1:] + b"\n"


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


def render_append_markdown(payload: Mapping[str, Any], *, scalar: Scalar | None = None) -> str:
    """Markdown for ``<stem>.md`` (via ``render_record_markdown``) in loopx's spelling, and
    for the command's ``--verbose`` stdout with ``scalar`` spelling values for a person
    (``ledger.core.readable.word``: no ``true``, no float noise)."""
    scalar = scalar or _scalar
    lines = [MARKDOWN_TITLE, ""]
    lines += [_bullet(key, payload.get(key), scalar) for key in _HEAD_KEYS]
    lines += [
        _bullet(key, payload[key], scalar) for key in _OPTIONAL_KEYS if payload.get(key) is not None
    ]
    for run in payload_runs(payload):
        lines += run_section_lines(run, scalar)
    if payload.get("error"):
        lines += ["", _bullet("error", payload["error"], scalar)]
    return "\n".join(lines) + "\n"


def run_section_lines(run: Mapping[str, Any], scalar: Scalar | None = None) -> list[str]:
    """One run's ``## Benchmark Run`` section (a blank line first)."""
    scalar = scalar or _scalar
    lines = ["", "## Benchmark Run", ""]
    lines += [_bullet(key, run.get(key), scalar) for key in _RUN_KEYS if run.get(key) is not None]
    lines += _planned_lines(run, scalar)
    if isinstance(run.get("progress"), Mapping):
        lines.append(_progress_line(run, scalar))
    if isinstance(run.get("metrics"), Mapping):
        lines.append(_metrics_line(run, scalar))
    return lines


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


def _planned_lines(run: Mapping[str, Any], scalar: Scalar) -> list[str]:
    """A planned run's point is its launch command and whether anything blocks it."""
    lines = []
    preflight = as_mapping(run.get("preflight"))
    if preflight:
        lines.append(_bullet("ready", preflight.get("ready"), scalar))
        lines.append(_bullet("first_blocker", preflight.get("first_blocker"), scalar))
    preview = as_mapping(run.get("launch_preview"))
    if preview.get("command"):
        lines.append(f"- launch command: {code_span(str(preview['command']))}")
    return lines


def _progress_line(run: Mapping[str, Any], scalar: Scalar) -> str:
    progress = as_mapping(run.get("progress"))
    completed = scalar(progress.get("n_completed_trials"))
    total = scalar(progress.get("n_total_trials"))
    return f"- progress: completed={completed} total={total}"


def _metrics_line(run: Mapping[str, Any], scalar: Scalar) -> str:
    metrics = as_mapping(run.get("metrics"))
    parts = " ".join(
        f"{key}={scalar(metrics.get(key))}" for key in ("input_tokens", "output_tokens", "cost_usd")
    )
    return f"- metrics: {parts}"


def _bullet(key: str, value: Any, scalar: Scalar) -> str:
    return f"- {key}: {code_span(scalar(value))}"


def _scalar(value: Any) -> str:
    """JSON spelling for booleans and null so the Markdown reads like the JSON output."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
