"""The ``benchmark_cli`` block of a ``benchmark run`` envelope (docs/formats/cli.md §5.5): an echo
of what
the invocation asked for and a plain statement of what it did not do (no runner, no Codex, no
auth values read), shared by the planned, Harbor and SkillsBench routes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchledger.ledger.requests.benchmark_run import BenchmarkRunRequest, require_option_names
from benchledger.ledger.sources.planned.options import (
    DEFAULT_CODEX_INSTALL_STRATEGY,
    DEFAULT_MODE,
    SKILLSBENCH_DEFAULT_ROUTE,
)

_ECHOED_FLAGS = require_option_names(
    (
        "fake_worker",
        "preflight_guard",
        "require_task_material_ready",
        "cli_bridge_contract",
        "worker_cli_bridge_fixture",
        "active_cli_bridge",
        "active_user_assisted_treatment",
        "active_user_observation_fixture",
        "setup_timeout_repair_profile",
        "worker_materialization_probe_only",
    )
)


def _preview_requested(opts: BenchmarkRunRequest) -> bool:
    """Any option that shapes timeouts or Codex setup in the preview, including named presets."""
    values = (
        *opts.multipliers().values(),
        opts.codex_preflight_timeout_sec,
        opts.worker_codex_materialization_strategy,
        opts.timeout_preset,
    )
    install = opts.codex_install_strategy
    return (
        any(value is not None for value in values)
        or bool(opts.setup_timeout_repair_profile)
        or (install is not None and install != DEFAULT_CODEX_INSTALL_STRATEGY)
    )


def build_benchmark_cli(
    opts: BenchmarkRunRequest,
    records: Sequence[Mapping[str, Any]],
    *,
    skillsbench_result_ingested: bool = False,
) -> dict[str, Any]:
    """The envelope's echo of what the invocation asked for and what it did not do."""
    benchmark = opts.benchmark_name or "terminal-bench"
    # ``planned_modes.mode_of``, spelled out: an ingest should not import the planned-mode
    # table (its dataclass and rows) only for this default.
    requested = opts.mode or DEFAULT_MODE
    first_mode = str(records[0].get("mode") or requested) if records else requested
    route = opts.skillsbench_route
    if benchmark == "skillsbench":
        ingest = bool(opts.skillsbench_result_json or opts.skillsbench_result_root)
        route = route or (None if ingest else SKILLSBENCH_DEFAULT_ROUTE)
        mode, source = route or "benchflow_observed", "skillsbench_route"
    elif opts.harbor_job_dir:
        mode, source = first_mode, "harbor_job_result"
    elif opts.active_user_assisted_treatment:
        mode, source = first_mode, "cli_arg"
    else:
        mode, source = requested, "cli_arg"
    block: dict[str, Any] = {
        "benchmark": benchmark,
        "mode": mode,
        "requested_mode": requested,
        "skillsbench_route": route if benchmark == "skillsbench" else None,
        "mode_source": source,
        **{flag: opts.given(flag) for flag in _ECHOED_FLAGS},
        "harbor_job_result_ingested": bool(opts.harbor_job_dir),
        "skillsbench_result_ingested": skillsbench_result_ingested,
        "skillsbench_result_root_ingested": bool(opts.skillsbench_result_root),
        "timeout_multiplier_preview_requested": _preview_requested(opts),
        # benchledger never fills in multipliers behind the user's back (docs/formats/cli.md §6.3).
        "timeout_multiplier_preview_defaulted": False,
        "cli_bridge_trace_observed": False,
        "record_count": len(records),
        "real_runner_invoked": False,
        "real_codex_invoked": False,
        "auth_values_read": False,
        "submit_eligible": False,
    }
    return block
