"""Planned runs, decided by the options alone: a Terminal-Bench run plan and a SkillsBench
skeleton, as a ``BuiltSource`` whose content digest is that of the options."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from benchledger.ledger.handlers.built_source import BuiltSource, built_source
from benchledger.ledger.requests.benchmark_run import BenchmarkRunRequest, require_option_names
from benchledger.ledger.sources.base import SourceIngest
from benchledger.ledger.sources.planned.preflight import make_which
from benchledger.ledger.sources.planned.records import build_planned_terminal_bench_records
from benchledger.ledger.sources.planned.run_options import PLANNED_OPTION_NAMES, PlannedRunOptions
from benchledger.ledger.sources.planned.skillsbench_routes import (
    build_planned_skillsbench_records,
)
from benchledger.ledger.store.chain import canonical_json

_PLANNED_OPTIONS = require_option_names(PLANNED_OPTION_NAMES)
_REPEATABLE = frozenset({"include_task_name", "arm_map", "agent_kwarg", "auth_env_name"})


def planned_run_options(request: BenchmarkRunRequest) -> PlannedRunOptions:
    """What the planner reads of the request (same names), once its options were validated."""
    values = {name: getattr(request, name) for name in _PLANNED_OPTIONS}
    for name in _REPEATABLE:
        value = values[name]
        values[name] = (value,) if isinstance(value, str) else tuple(value or ())
    return PlannedRunOptions(**values)


def build_planned_terminal_bench(
    request: BenchmarkRunRequest, *, env: Mapping[str, str]
) -> BuiltSource:
    """The run plan, with the executables it names looked up on ``env``'s ``PATH``."""
    raw = build_planned_terminal_bench_records(
        planned_run_options(request), env=env, which=make_which(env)
    )
    return _planned(raw, request, kind="terminal_bench_planned")


def build_skillsbench_skeleton(request: BenchmarkRunRequest) -> BuiltSource:
    tasks = list(request.include_task_name or ()) or None
    raw = build_planned_skillsbench_records(
        dataset=request.dataset,
        tasks=tasks,
        route=request.skillsbench_route,
        model=request.model,
        agent=request.agent,
    )
    return _planned(raw, request, kind="skillsbench_skeleton")


def _planned(raw: list[dict[str, Any]], request: BenchmarkRunRequest, *, kind: str) -> BuiltSource:
    """Planned records are decided by the options alone, so the options are the content."""
    semantic = {
        k: (list(v) if isinstance(v, tuple) else v)
        for k, v in sorted(request.option_items())
        if k not in {"execute", "dry_run", "format", "jobs"} and v not in (None, False, (), [])
    }
    digest = hashlib.sha256(canonical_json({"kind": kind, "records": raw}).encode()).hexdigest()
    ingest = SourceIngest(raw, {"kind": kind, "options": semantic, "files": {}}, [])
    built = built_source(ingest, request, semantic=semantic)
    built.content_digest = digest
    return built
