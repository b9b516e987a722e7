"""One arm per setting: compare never pools runs of one agent that ran differently.

Runs of one arm that recorded different agent versions, or timeout multipliers other than 1
(``facts.run_setting``), are separate arms by default, labelled with the setting ("codex
0.46.0"); runs that recorded none join them only when the arm has a single recorded setting
(they may be of it). ``--pool-versions`` keeps one arm, and the document's banner says so
(docs/compare.md, "No silent pooling").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.requests.compare import CompareRequest
from benchledger.projections.reports.compare.facts import RunFacts, run_setting

NOT_RECORDED = "not recorded"


def settings_of(by_arm: Mapping[str, Mapping[str, list[RunFacts]]]) -> dict[str, list[str]]:
    """Each arm's distinct settings (agent version, timeout multipliers other than 1)."""
    return {
        arm: sorted({run.setting or NOT_RECORDED for runs in cases.values() for run in runs})
        for arm, cases in by_arm.items()
    }


def label(arm: str, setting: str) -> str:
    """The arm of one setting: "codex 0.46.0", or "codex (not recorded)"."""
    return f"{arm} ({setting})" if setting == NOT_RECORDED else f"{arm} {setting}"


def split_by_setting(
    by_arm: dict[str, dict[str, list[RunFacts]]], settings: Mapping[str, list[str]]
) -> dict[str, dict[str, list[RunFacts]]]:
    """An arm whose runs recorded different settings becomes one arm per setting, labelled
    with it ("codex 0.46.0"), its runs that recorded none one more ("codex (not recorded)");
    an arm of one recorded setting keeps its name (a run that recorded none may be of it)."""
    out: dict[str, dict[str, list[RunFacts]]] = {}
    for arm, cases in by_arm.items():
        if len(set(settings[arm]) - {NOT_RECORDED}) < 2:
            out[arm] = cases
            continue
        for case, runs in cases.items():
            for run in runs:
                named = label(arm, run.setting or NOT_RECORDED)
                out.setdefault(named, defaultdict(list))[case].append(run)
    return out


def named_arms(request: CompareRequest, settings: Mapping[str, list[str]]) -> CompareRequest:
    """``--arm codex`` of a split arm names each of its settings; ``--reference`` must name
    one of them."""
    split = {
        arm: [label(arm, s) for s in found]
        for arm, found in settings.items()
        if len(set(found) - {NOT_RECORDED}) > 1
    }
    if not split:
        return request
    reference = request.reference
    if reference in split:
        raise InputError(
            f"arm {reference} ran with several settings ({', '.join(split[reference])}): "
            "name one as --reference, or pass --pool-versions"
        )
    arms = tuple(named for arm in request.arms for named in split.get(arm, [arm]))
    return replace(request, arms=arms)


def arm_labels(rows: Sequence[Mapping[str, Any]], pool_versions: bool = False) -> dict[str, str]:
    """Run id -> the arm compare puts the run under, for the runs of split arms (another view
    of the same rows, such as the report's grid, then shows the arms compare shows)."""
    settings: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        settings[row_arm(row)].add(run_setting(row) or NOT_RECORDED)
    split = {arm for arm, found in settings.items() if len(found - {NOT_RECORDED}) > 1}
    if pool_versions or not split:
        return {}
    return {
        str(row.get("run_id")): label(arm, run_setting(row) or NOT_RECORDED)
        for row in rows
        if (arm := row_arm(row)) in split
    }


def row_arm(row: Mapping[str, Any]) -> str:
    arm = row.get("arm_id")
    return arm if isinstance(arm, str) and arm else "unknown_arm"
