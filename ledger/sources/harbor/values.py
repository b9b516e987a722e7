"""Harbor values as later steps want them: the few safe coercions (object, text, finite
number), trial timings from Harbor's stamps, usage figures and timeout multipliers
(docs/formats/harbor.md §4). Pure functions of parsed JSON; nothing here reads a file."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from benchledger.ledger.rules.record.vocabulary import MULTIPLIER_KEYS as _MULTIPLIERS

_PHASES = ("environment_setup", "agent_setup", "agent_execution", "verifier")
_AGENT_TIMEOUT_OVERRIDES = ("override_timeout_sec", "override_setup_timeout_sec", "max_timeout_sec")
_METRIC_KEYS = (
    ("n_input_tokens", "input_tokens"),
    ("n_cache_tokens", "cache_tokens"),
    ("n_output_tokens", "output_tokens"),
    ("cost_usd", "cost_usd"),
)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _number(value: Any) -> float | int | None:
    """A finite int/float; booleans are not numbers (docs/formats/benchmark_run_v0.md §1)."""
    if type(value) is float:  # the common case first
        return value if math.isfinite(value) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if math.isfinite(value) else None


def _last_segment(path: Any) -> str | None:
    """The last non-empty segment of a ``/`` or ``\\`` path (``a/b//`` -> ``b``); None for
    none. Runs on every trial: string methods, no regex look-up."""
    if not isinstance(path, str):
        return None
    return path.replace("\\", "/").rstrip("/").rpartition("/")[2] or None


def _stamp_epoch(stamp: str) -> float | None:
    """Epoch seconds; naive stamps are read as UTC, which only matters for order and durations."""
    try:
        dt = _fromisoformat(stamp)
    except ValueError:
        return None
    return (dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt).timestamp()


_fromisoformat = datetime.fromisoformat
# The trial itself (its wall time, under "") and then its phases: (record key, result key).
_TIMED_BLOCKS = (("", None), *((phase, phase) for phase in _PHASES))


def _trial_times(res: dict[str, Any]) -> tuple[dict[str, float], float | None, float | None]:
    """(phase durations, wall seconds, start epoch) of one trial result.

    A span is ``finished_at - started_at``, never negative, None unless both are stamps; Harbor
    stamps carry microseconds, and milliseconds keep sums free of float noise. Harbor's phases
    abut (each phase ends when the next starts, the trial starts with its first phase), so most
    stamps appear twice; ``epochs`` parses each distinct one once (a bad one is remembered as
    None). This runs once per trial, so the five spans are written out in one loop.
    """
    epochs: dict[str, float | None] = {}
    timing: dict[str, float] = {}
    wall = None
    for phase, key in _TIMED_BLOCKS:
        block = res if key is None else res.get(key)
        if not isinstance(block, dict):
            continue
        start, end = block.get("started_at"), block.get("finished_at")
        if not isinstance(start, str) or not isinstance(end, str):
            continue
        first = epochs[start] if start in epochs else epochs.setdefault(start, _stamp_epoch(start))
        last = epochs[end] if end in epochs else epochs.setdefault(end, _stamp_epoch(end))
        if first is None or last is None:
            continue
        seconds = last - first
        seconds = round(seconds, 3) if seconds > 0.0 else 0.0
        if key is None:
            wall = seconds
        else:
            timing[phase] = seconds
    started = res.get("started_at")
    if isinstance(started, str):
        started = epochs[started] if started in epochs else _stamp_epoch(started)
    else:
        started = None
    return timing, wall, started


def _usage_of(agent_result: Any) -> dict[str, Any] | None:
    """An AgentResult's numeric token and cost figures under record names; None without one."""
    if not isinstance(agent_result, dict):
        return None
    usage = {}
    for key, out in _METRIC_KEYS:
        value = agent_result.get(key)
        if type(value) is float:  # _number's own first case, written out (costs)
            if math.isfinite(value):
                usage[out] = value
        elif type(value) is int:  # token counts: always finite, and a bool is no int here
            usage[out] = value
        elif value is not None and _number(value) is not None:
            usage[out] = value
    return usage


def _model_from_info(agent_info: dict[str, Any]) -> str | None:
    info = _dict(agent_info.get("model_info"))
    name, provider = _text(info.get("name")), _text(info.get("provider"))
    if name and provider:
        return f"{provider}/{name}"
    return name


def _multipliers(block: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for key in _MULTIPLIERS:
        value = block.get(key)
        if value is None:  # Harbor writes null for every multiplier left at its default
            continue
        value = _number(value)
        if value is not None and value > 0:
            out[key] = float(value)
    return out


def _effective(multipliers: dict[str, float]) -> dict[str, float]:
    return {key: multipliers.get(key, 1.0) for key in _MULTIPLIERS}
