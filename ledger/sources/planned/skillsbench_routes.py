"""SkillsBench routes, their contract flags, and the planned (no-run) record builder.

A route names *how* a SkillsBench case is (or would be) run: which harness, whether the agent sees
skills, whether loopx runs inside the case. The same table feeds two places: the planned record
built when nothing was run (docs/formats/benchflow.md §7.3), and the labels an ingested BenchFlow
result gets
when the caller says which route produced it (§6.2). Keeping both here means a route can never
mean one thing when planned and another when ingested.

loopx 0.4.8 recorded a never-run skeleton as a failed trial with reward 0, which its ledger then
counted as a broken case. A planned record here carries no trial, no reward, no progress and no
metrics, and `run_status: "planned"` keeps it out of the ledger.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from benchledger.ledger.core.errors import UsageError
from benchledger.ledger.sources.planned.skillsbench_route_names import (
    DEFAULT_DATASET,
    DEFAULT_ROUTE,
    DEFAULT_TASK,
)

DEFAULT_AGENT = "codex"
DEFAULT_MODEL = "gpt-5.5"
PLANNER_SOURCE_RUNNER = "benchledger_planner"
ORACLE_SEMANTICS = "skillsbench_oracle_solution_validation_no_model"


@dataclass(frozen=True)
class Route:
    """One row of the route table (docs/formats/benchflow.md §7.1)."""

    name: str
    mode_suffix: str
    skeleton_source_runner: str
    first_blocker: str
    goal_mode: bool
    acp: bool
    inner_loopx: bool
    product_mode: bool
    blind: bool
    semantics_changed: bool
    comparable_to_treatment: bool
    arm_id: str
    arm_role: str

    @property
    def mode(self) -> str:
        """Full mode name; the table lists it without the shared `skillsbench_` prefix."""
        return f"skillsbench_{self.mode_suffix}"

    @property
    def semantics_token(self) -> str:
        """A fixed token per route; the spec asks for one but does not spell it (benchledger's)."""
        return f"{self.mode}_route"

    @property
    def expects_skills(self) -> bool:
        """Only the curated-skills route shows skills to the agent; the rest run without."""
        return self.name == "curated-skills-baseline"


_SKEL = "skillsbench_adapter_skeleton_no_real_case"

# fmt: off
ROUTES: dict[str, Route] = {
    r.name: r
    for r in (
        Route("codex-acp-blind-loop-baseline", "codex_acp_blind_loop_baseline",
              "loopx_skillsbench_codex_acp_blind_loop_baseline_skeleton", _SKEL,
              False, True, False, False, True, False, True, "baseline", "baseline"),
        Route("codex-cli-goal-baseline", "codex_cli_goal_baseline",
              "loopx_skillsbench_host_codex_cli_goal_worker",
              "skillsbench_codex_cli_goal_tui_compact_proof_missing",
              True, False, False, False, False, False, True, "baseline", "baseline"),
        Route("codex-app-server-goal-baseline", "codex_app_server_goal_baseline",
              "loopx_skillsbench_host_codex_app_server_goal_worker",
              "skillsbench_app_server_goal_worker_compact_proof_missing",
              True, False, False, False, False, False, True,
              "codex_app_server_goal_baseline", "baseline"),
        Route("curated-skills-baseline", "curated_skills_baseline",
              "loopx_skillsbench_curated_skills_baseline_skeleton", _SKEL,
              False, True, False, False, False, False, False,
              "curated_skills_baseline", "baseline"),
        Route("raw-codex-autonomous-max5", "raw_codex_autonomous_max5_baseline",
              "loopx_skillsbench_raw_codex_autonomous_max5_skeleton", _SKEL,
              False, True, False, True, False, False, True,
              "skillsbench_raw_codex_autonomous_max5_baseline", "baseline"),
        Route("loopx-product-mode", "loopx_product_mode_treatment",
              "loopx_skillsbench_canonical_product_lifecycle_driver", "none",
              False, True, True, True, False, True, True, "codex_loopx_treatment", "treatment"),
        Route("loopx-goal-start-product-mode", "loopx_goal_start_product_mode_treatment",
              "loopx_skillsbench_slash_command_treatment", "none",
              False, True, True, True, False, True, True, "codex_loopx_treatment", "treatment"),
        Route("loopx-turn-agent-cli", "loopx_turn_agent_cli_treatment",
              "loopx_skillsbench_turn_agent_cli_runtime", "none",
              False, True, True, True, False, False, True, "codex_loopx_treatment", "treatment"),
    )
}
# fmt: on

ROUTE_NAMES: tuple[str, ...] = tuple(ROUTES)

_NATIVE_GOAL_STATUS = {
    "codex-cli-goal-baseline": "requires_cli_slash_goal_compact_proof",
    "codex-app-server-goal-baseline": "requires_thread_goal_set_get_and_turn_start_compact_proof",
}


def get_route(name: str) -> Route:
    """The parser already limits choices; this guards direct callers with the same exit code 2."""
    try:
        return ROUTES[name]
    except KeyError:
        raise UsageError(f"unknown --skillsbench-route: {name}") from None


def route_contract_fields(route: Route, *, oracle: bool = False) -> dict[str, Any]:
    """Top-level contract flags a route implies (§7.1). An oracle run makes no claim at all."""
    goal_status = _NATIVE_GOAL_STATUS.get(route.name, "not_requested")
    fields: dict[str, Any] = {
        "native_goal_mode_confirmation_status": goal_status,
        "skillsbench_route_semantics": ORACLE_SEMANTICS if oracle else route.semantics_token,
        "official_feedback_blinded": True,
        "reward_feedback_forwarded": False,
        "historical_route_read_only": False,
        "leaderboard_evidence": False,
        "benchmark_loop_contract": {"route": route.name},
    }
    claims = {
        "codex_acp_protocol_used": route.acp,
        "loopx_inside_case": route.inner_loopx,
        "product_mode": route.product_mode,
        "blind_loop": route.blind,
        "case_semantics_changed_by_harness": route.semantics_changed,
        "official_score_comparable_to_loopx_treatment": route.comparable_to_treatment,
        "official_score_comparable_to_native_codex": True,
    }
    if route.expects_skills:
        claims["curated_skills_visible"] = True
    if oracle:
        claims = {key: False for key in claims}
    fields.update(claims)
    return fields


def route_mismatch_warnings(
    route: Route, *, agent: str | None, skill_mode: str | None
) -> list[str]:
    """Checks loopx never made: the caller's route claim against what the result itself says."""
    warnings: list[str] = []
    if skill_mode in ("with-skill", "no-skill"):
        if (skill_mode == "with-skill") != route.expects_skills:
            warnings.append("route_skill_mode_mismatch")
    if agent and "codex" not in agent.lower():
        warnings.append("route_agent_mismatch")
    return warnings


_JOB_NAME_JUNK = re.compile(r"(?:[^\w.\-]|_)+")


def planned_job_name(dataset: str, task: str, route: str) -> str:
    """docs/formats/cli.md §7.2 rule: keep Unicode letters (loopx lowercased and lost them)."""
    return _JOB_NAME_JUNK.sub("_", f"{dataset}_{task}_{route}")


def planned_run_key(*, benchmark_id: str, task: str, route: str, agent: str, model: str) -> str:
    """Stable identity of a plan, so re-planning the same launch is recognised as the same run."""
    material = "|".join((benchmark_id, task, route, agent, model)).encode("utf-8")
    return "planned:" + hashlib.sha256(material).hexdigest()[:16]


def build_planned_skillsbench_record(
    *,
    dataset: str | None = None,
    task: str | None = None,
    route: str | None = None,
    agent: str | None = None,
    model: str | None = None,
) -> dict[str, Any]:
    """One planned record for one case: what would be launched, with nothing claimed as run."""
    benchmark_id = dataset or DEFAULT_DATASET
    case_id = task or DEFAULT_TASK
    spec = get_route(route or DEFAULT_ROUTE)
    agent_name = agent or DEFAULT_AGENT
    model_name = model or DEFAULT_MODEL
    record: dict[str, Any] = {
        "schema_version": "benchmark_run_v0",
        "source_runner": PLANNER_SOURCE_RUNNER,
        "run_status": "planned",
        "benchmark_id": benchmark_id,
        "case_id": case_id,
        "case_ids": [case_id],
        "job_name": planned_job_name(benchmark_id, case_id, spec.name),
        "mode": spec.mode,
        "first_blocker": spec.first_blocker,
        "arm_id": spec.arm_id,
        "arm_role": spec.arm_role,
        "agent": {"name": agent_name, "model": model_name},
        "official_task_score": {"kind": "not_run"},
        "official_score_status": "not_run",
        "real_run": False,
        "submit_eligible": False,
        "run_key": planned_run_key(
            benchmark_id=benchmark_id,
            task=case_id,
            route=spec.name,
            agent=agent_name,
            model=model_name,
        ),
    }
    record.update(route_contract_fields(spec, oracle=agent_name == "oracle"))
    return record


def build_planned_skillsbench_records(
    *,
    dataset: str | None = None,
    tasks: list[str] | tuple[str, ...] | None = None,
    route: str | None = None,
    agent: str | None = None,
    model: str | None = None,
) -> list[dict[str, Any]]:
    """`--include-task-name` is repeatable (new): one planned record per requested case."""
    names = list(dict.fromkeys(tasks or [DEFAULT_TASK]))
    return [
        build_planned_skillsbench_record(
            dataset=dataset, task=name, route=route, agent=agent, model=model
        )
        for name in names
    ]
