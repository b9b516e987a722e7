"""Timeout policy of a planned Terminal-Bench run (docs/formats/cli.md §7.3,
docs/formats/benchmark_run_v0.md §4.7).

loopx 0.4.8 validated multipliers only when it happened to build a preview, let ``nan``/``inf``
through, silently defaulted agent multipliers to 8 for some modes, and then dropped the preview in
compaction. Here the policy is explicit: what the user gave (or a named preset) is what is
recorded, validated in every mode, and ``official_comparable`` says whether the run can be
compared with official (1x) results at all.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.rules.record.vocabulary import MULTIPLIER_KEYS

#: Record key -> the CLI flag (benchledger and Harbor 0.25 `harbor run` spell them the same).
MULTIPLIER_FLAGS: dict[str, str] = {key: "--" + key.replace("_", "-") for key in MULTIPLIER_KEYS}

#: Named presets (``--timeout-preset``); a preset is recorded as ``source: preset:<name>``.
TIMEOUT_PRESETS: dict[str, dict[str, float]] = {
    "official": dict.fromkeys(MULTIPLIER_KEYS, 1.0),
    "long-horizon-8x": {"agent_timeout_multiplier": 8.0, "agent_setup_timeout_multiplier": 8.0},
}

#: The setup-timeout repair profile (docs/formats/cli.md §6.6) is a preset in all but name; naming
# it keeps it
#: from looking like a silent default.
REPAIR_PROFILE_PRESET = "setup-timeout-repair-profile"
REPAIR_PROFILE_MULTIPLIERS: dict[str, float] = {
    "agent_timeout_multiplier": 8.0,
    "agent_setup_timeout_multiplier": 8.0,
}

#: Known agent-phase base timeouts (seconds) per dataset; other datasets record no seconds.
AGENT_TIMEOUT_BASE_SECONDS: dict[str, float] = {"terminal-bench@2.0": 900.0}

#: [loopx-specific] tiers of the effective agent timeout.
TRUE_LONG_TASK_SECONDS = 1800.0
HOURS_SCALE_SECONDS = 3600.0


def validate_multiplier(flag: str, value: Any) -> None:
    """Reject a multiplier Harbor would misbehave on; NaN and infinity pass a plain ``> 0``."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"{flag} must be a finite number greater than zero")
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"{flag} must be a finite number greater than zero")


def validate_multipliers(values: Mapping[str, Any]) -> None:
    """Validate the five multipliers in flag order so the first bad flag is the one reported."""
    for key in MULTIPLIER_KEYS:
        validate_multiplier(MULTIPLIER_FLAGS[key], values.get(key))


def format_multiplier(value: float) -> str:
    """Shortest number form for argv: 8.0 -> ``8``, 0.25 -> ``0.25``."""
    number = float(value)
    if number.is_integer():
        return str(int(number))
    return repr(number)


def given_multipliers(values: Mapping[str, Any]) -> dict[str, float]:
    """The multipliers actually given, as floats, in key order (absent = not set)."""
    return {key: float(values[key]) for key in MULTIPLIER_KEYS if values.get(key) is not None}


def effective_multipliers(multipliers: Mapping[str, float]) -> dict[str, float]:
    """Every key present; an unset one is 1.0 (each phase's own multiplier defaults to 1.0)."""
    return {key: float(multipliers.get(key, 1.0)) for key in MULTIPLIER_KEYS}


def agent_phase_multiplier(multipliers: Mapping[str, float]) -> float:
    """Harbor's rule: the agent multiplier overrides ``timeout_multiplier`` for the agent phase."""
    if "agent_timeout_multiplier" in multipliers:
        return float(multipliers["agent_timeout_multiplier"])
    return float(multipliers.get("timeout_multiplier", 1.0))


def agent_timeout_tier(seconds: float) -> str:
    """[loopx-specific] label that tells a reader whether this is a long-horizon run."""
    if seconds >= HOURS_SCALE_SECONDS:
        return "hours_scale"
    if seconds >= TRUE_LONG_TASK_SECONDS:
        return "true_long_task"
    return "standard"


def build_timeout_policy(
    multipliers: Mapping[str, float], *, source: str, dataset: str | None
) -> dict[str, Any]:
    """The ``timeout_policy`` block; multipliers must already be validated."""
    given = {key: float(multipliers[key]) for key in MULTIPLIER_KEYS if key in multipliers}
    effective = effective_multipliers(given)
    policy: dict[str, Any] = {
        "multipliers": given,
        "effective_multipliers": effective,
        "official_comparable": all(value == 1.0 for value in effective.values()),
        "source": source,
    }
    base = AGENT_TIMEOUT_BASE_SECONDS.get(dataset or "")
    if base is not None:
        seconds = base * agent_phase_multiplier(given)
        policy["agent_timeout_seconds_base"] = base
        policy["agent_timeout_seconds_effective"] = seconds
        policy["agent_timeout_tier"] = agent_timeout_tier(seconds)
    return policy


def resolve_timeout_policy(
    *,
    preset: str | None,
    repair_profile: bool,
    multipliers: Mapping[str, float | None],
    dataset: str | None,
) -> dict[str, Any]:
    """Pick the one source of multipliers for a planned run and build its policy.

    Exactly one source applies (options validation rejects mixing a preset with explicit
    multipliers): ``--timeout-preset``, else the repair profile, else the flags as given.
    """
    if preset:
        return build_timeout_policy(
            TIMEOUT_PRESETS[preset], source=f"preset:{preset}", dataset=dataset
        )
    given = given_multipliers(multipliers)
    if repair_profile:
        merged = {**REPAIR_PROFILE_MULTIPLIERS, **given}
        return build_timeout_policy(
            merged, source=f"preset:{REPAIR_PROFILE_PRESET}", dataset=dataset
        )
    return build_timeout_policy(given, source="cli_preview", dataset=dataset)
