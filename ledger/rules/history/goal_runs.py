"""Write-side rules of the per-goal run history: stems, paths, delivery labels, the record.

A ``run_appended`` event carries the record built here; the files under ``goals/<id>/runs`` are
projections of those events (``projections.publishing.goal_runs`` renders them). Paths are relative
to the
runtime root because the files are public.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from benchledger.ledger.core.errors import InputError

SCHEMA_VERSION = "benchmark_run_v0"
HEALTH_CHECK = "benchmark_run_v0 compact event public-safe"
DEFAULT_CLASSIFICATION = "benchmark_run_v0"
DEFAULT_RECOMMENDED_ACTION = "review the compact benchmark run before the next run"
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


def goal_dir_rel(goal_id: str) -> str:
    """Everything published for the goal lives below here (runs, index, rollout log)."""
    return f"goals/{goal_id}"


def runs_dir_rel(goal_id: str) -> str:
    return f"{goal_dir_rel(goal_id)}/runs"


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
