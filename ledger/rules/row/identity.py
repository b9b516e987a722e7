"""Row identity (docs/formats/ledger_v0.md §5.1-§5.5, §5.15): benchmark, case, arm, role, run id.

Identity decides which stored row a new run replaces, so it is derived only from identity fields,
never from paths or times, and an explicit arm is always respected (§13 #2, #3).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from benchledger.ledger.rules.row.values import (
    as_list,
    as_mapping,
    as_str,
    compact_text,
    ledger_text,
    text_list,
)

HISTORICAL_ARM = "historical_nonproduct_invalid_for_comparison"


_TB_MARKERS = (
    "_codex_goal_mode_baseline",
    "_codex_loopx_treatment",
    "_codex_loopx",
    "_hardened_codex_baseline",
    "_baseline",
    "_treatment",
)


def derive_benchmark_id(record: Mapping[str, Any], *, post_launch: bool = False) -> str:
    text = ledger_text(record.get("benchmark_id"), 120)
    if text:
        return text
    return "terminal-bench@2.0" if post_launch else "unknown-benchmark"


def parse_terminal_bench_case(job_name: str | None, benchmark_id: str | None) -> str | None:
    """[loopx-specific] recover the case from a Terminal-Bench job name (§5.2 step 3)."""
    job = as_str(job_name)
    if not job or not (benchmark_id == "terminal-bench@2.0" or job.startswith("terminal_bench_")):
        return None
    if job.startswith("terminal_bench_"):
        job = job[len("terminal_bench_") :]
    segments = job.split("_")
    while segments and segments[0].isdigit():
        segments.pop(0)
    name = "_".join(segments)
    for marker in _TB_MARKERS:
        position = name.find(marker)
        if position > 0:
            return name[:position].replace("_", "-")
    return None


def derive_case_ids(record: Mapping[str, Any], benchmark_id: str) -> list[str]:
    """First non-empty source of case ids, ``case_id`` always first (§5.2)."""
    direct = [record.get("case_id")]
    listed = record.get("case_ids")
    direct.extend(listed if isinstance(listed, list) else [listed])
    ids = text_list([item for item in direct if item is not None], 64, 140)
    if not ids:
        trials = as_list(record.get("trials"))
        ids = text_list([as_mapping(trial).get("task_id") for trial in trials], 64, 140)
    if not ids:
        parsed = parse_terminal_bench_case(record.get("job_name"), benchmark_id)
        ids = text_list([parsed], 1, 140)
    if not ids:
        ids = text_list([record.get("job_name")], 1, 140)
    return ids or ["unknown-case"]


_HISTORICAL_ROUTES = frozenset({"loopx-blind-loop-treatment", "loopx-prompt-polling-test"})
_HISTORICAL_MODES = frozenset(
    {
        "skillsbench_loopx_blind_loop_treatment",
        "skillsbench_loopx_prompt_polling_test",
        "loopx_prompt_polling_test",
    }
)
_JOB_ARM_TOKENS = (
    "codex_app_server_goal_baseline",
    "codex_goal_mode_baseline",
    "hardened_codex_baseline",
    "codex_loopx_treatment",
    "loopx_automation_loop_treatment",
)


def route_of(src: Mapping[str, Any]) -> str:
    return as_str(src.get("route")) or as_str(
        as_mapping(src.get("benchmark_loop_contract")).get("route")
    )


def infer_arm(src: Mapping[str, Any]) -> str | None:
    """[loopx-specific] arm inference from mode, route and job name (§5.3 table)."""
    mode = as_str(src.get("mode"))
    arm = _inferred_arm(src, mode, route_of(src), as_str(src.get("job_name")))
    return arm or ledger_text(mode, 120)


def loopx_arm_inference(row: Mapping[str, Any]) -> str:
    """The same table as loopx applies it to a stored row: compacted texts, the top-level
    route only, and the mode (else ``unknown_arm``) when nothing else matches."""
    mode = compact_text(row.get("mode"), 120)
    route = compact_text(row.get("route"), 120)
    arm = _inferred_arm(row, mode, route, compact_text(row.get("job_name"), 160))
    return arm or mode or "unknown_arm"


def _inferred_arm(src: Mapping[str, Any], mode: str, route: str, job: str) -> str | None:
    if (
        route in _HISTORICAL_ROUTES
        or mode in _HISTORICAL_MODES
        or src.get("historical_route_read_only") is True
        or compact_text(src.get("skillsbench_route_semantics"), 120) == HISTORICAL_ARM
    ):
        return HISTORICAL_ARM
    by_mode = _arm_from_mode(mode)
    if by_mode:
        return by_mode
    for token in _JOB_ARM_TOKENS:
        if token in job:
            return token
    if job.endswith("_baseline") or "_baseline_" in job:
        return "baseline"
    if job.endswith("_treatment") or "_treatment_" in job:
        return "treatment"
    return None


def _arm_from_mode(mode: str) -> str | None:
    if mode == "skillsbench_codex_app_server_goal_baseline":
        return "codex_app_server_goal_baseline"
    if mode == "codex_goal_mode_baseline":
        return "codex_goal_mode_baseline"
    if mode in ("hardened_codex_baseline", "hardened-codex"):
        return "hardened_codex_baseline"
    if "automation_loop" in mode and "loopx" in mode:
        return "loopx_automation_loop_treatment"
    if "curated_skills" in mode:
        return "curated_skills_baseline"
    if mode in ("no_skills_baseline", "skillsbench_no_skills_baseline"):
        return "no_skills_baseline"
    if "loopx" in mode:
        return "codex_loopx_treatment"
    return None


def resolve_arm(src: Mapping[str, Any], explicit: str | None) -> tuple[str, str, list[str]]:
    """(arm, arm_source, warnings): an explicit arm is always respected (§5.3 decision)."""
    inferred = infer_arm(src)
    if explicit:
        warnings = ["explicit_arm_on_historical_route"] if inferred == HISTORICAL_ARM else []
        return explicit, "explicit", warnings
    adapter = ledger_text(src.get("arm_id"), 120)
    if adapter:
        return adapter, "adapter", []
    if inferred:
        return inferred, "inferred", []
    return "unknown_arm", "unknown", []


def derive_arm_role(src: Mapping[str, Any], arm_id: str, explicit: str | None = None) -> str:
    """baseline / treatment / other, used by decisions instead of arm-name guessing (§5.4)."""
    if explicit:
        return explicit
    stored = src.get("arm_role")
    if stored in ("baseline", "treatment", "other"):
        return stored
    if "baseline" in arm_id:
        return "baseline"
    if "treatment" in arm_id:
        return "treatment"
    contract = as_mapping(src.get("benchmark_loop_contract"))
    haystack = " ".join(
        [
            arm_id,
            as_str(src.get("mode")),
            as_str(src.get("route")),
            as_str(contract.get("route")),
            as_str(contract.get("protocol_id")),
        ]
    )
    if "raw-codex-autonomous-max5" in haystack:
        return "baseline"
    if "loopx-product-mode" in haystack:
        return "treatment"
    return "other"


def derive_run_id(
    *,
    benchmark_id: str,
    case_id: str,
    arm_id: str,
    run_group_id: str,
    job_name: str,
    identity_key: str,
) -> str:
    """Stable id: identity fields and a run key or content digest, never paths or times (§5.15)."""
    material = "|".join([benchmark_id, case_id, arm_id, run_group_id, job_name, identity_key])
    return hashlib.sha1(material.encode("utf-8")).hexdigest()[:12]


def content_identity_key(record: Mapping[str, Any]) -> str:
    canonical = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "content:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


# The generic arms loopx replaces with a more specific inferred arm whenever it has one.
GENERIC_ARMS = frozenset({"baseline", "treatment"})


def resolve_stored_arm(row: Mapping[str, Any]) -> str:
    """The arm of a stored row that has no explicit or adapter source, as loopx reads it.

    A historical (non-product) route always wins, because such rows must never be paired; a
    bare ``baseline``/``treatment`` gives way to a more specific inferred arm; otherwise the
    stored arm stands, and only a row without one takes the inferred arm.
    """
    inferred = loopx_arm_inference(row)
    if inferred == HISTORICAL_ARM:
        return inferred
    stored = compact_text(row.get("arm_id"), 120)
    if stored in GENERIC_ARMS and inferred != "unknown_arm":
        return inferred
    return stored or inferred


def renormalise_arm(row: dict[str, Any]) -> None:
    """§6.4 arm rule: explicit and adapter arms are never rewritten; an arm benchledger inferred
    is inferred again (the table may have changed); a stored arm without a source (a loopx row)
    is resolved as loopx resolves it on load (``resolve_stored_arm``)."""
    source = row.get("arm_source")
    if source in ("explicit", "adapter"):
        return
    if source in ("inferred", "unknown"):
        arm = infer_arm(row) or "unknown_arm"
    else:
        arm = resolve_stored_arm(row)
    row["arm_id"] = arm
    row["arm_source"] = "unknown" if arm == "unknown_arm" else "inferred"
