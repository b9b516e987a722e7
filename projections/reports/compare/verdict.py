"""The one line a user came to ``compare`` for, and the note that says when the data are few.

Both are built from the finished arm and pair blocks of the document, so the line can never
say something the numbers below it do not: the difference, its interval and the method that
gave it, the paired cases it rests on, and whether that many cases could have detected the
difference the user plans for (``--effect``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchledger.ledger.core.readable import plural
from benchledger.projections.reports.compare.intervals import MANY_CASES, SHORT_NAMES


def _signed(value: float) -> str:
    """A difference with its sign, the minus sign typeset (−0.40, +0.10, 0.00)."""
    text = f"{value:+.2f}"
    if text in ("+0.00", "-0.00"):
        return "0.00"
    return text.replace("-", "−")


def _plain(value: float) -> str:
    return f"{value:.2f}".replace("-", "−")


def _interval(block: Mapping[str, Any], level: str) -> str:
    if block.get("ci_low") is None or block.get("ci_high") is None:
        return "no interval"
    method = SHORT_NAMES.get(block.get("interval_method") or "", block.get("interval_method"))
    return f"{level} CI {_plain(block['ci_low'])} to {_plain(block['ci_high'])}, {method}"


def _pair_sentence(pair: Mapping[str, Any], level: str, effect: float | None) -> str:
    head = f"{pair['arm_id']} − {pair['reference']}"
    n = pair["n_pairs"]
    if not n or pair.get("mean_diff") is None:
        return f"{head}: no case counted in both arms"
    cases = f"{n} paired case" + ("" if n == 1 else "s")
    low, high = pair.get("ci_low"), pair.get("ci_high")
    if low is not None and low > 0:
        finding = f"{pair['arm_id']} is higher"
    elif high is not None and high < 0:
        finding = f"{pair['arm_id']} is lower"
    else:
        finding = "no difference shown"
    power = pair.get("power") or {}
    mde, needed = power.get("mde_80"), power.get("cases_needed_for_effect")
    if effect and mde is not None and mde > effect:
        more = f" (≈ {needed} cases would)" if needed else ""
        finding += f"; too few to detect a {effect:g} difference{more}"
    interval = _interval(pair, level)
    return f"{head}: {_signed(pair['mean_diff'])} ({interval}), {cases} — {finding}"


def verdict_line(
    arms: Sequence[Mapping[str, Any]],
    paired: Sequence[Mapping[str, Any]],
    confidence: float,
    effect: float | None,
) -> str:
    """One line: each arm against the reference, or the only arm's mean when there is one."""
    level = f"{round(confidence * 100, 2):g} %"
    if not paired:
        arm = arms[0]
        if arm.get("mean") is None:
            return f"{arm['arm_id']}: no countable case — nothing to compare"
        return (
            f"{arm['arm_id']}: {_plain(arm['mean'])} ({_interval(arm, level)}), "
            f"{arm['n_cases']} cases — one arm, nothing compared"
        )
    return "; ".join(_pair_sentence(pair, level, effect) for pair in paired)


def small_sample_note(
    arms: Sequence[Mapping[str, Any]], paired: Sequence[Mapping[str, Any]]
) -> str | None:
    """Below ``MANY_CASES`` cases (in an arm or a pair): what the intervals can and cannot do."""
    counts = [a["n_cases"] for a in arms] + [p["n_pairs"] for p in paired]
    fewest = min(counts) if counts else 0
    if fewest >= MANY_CASES:
        return None
    return (
        f"Small sample: {plural(fewest, 'case')}, fewer than {MANY_CASES}. The intervals keep "
        "their level at any number of cases (exact or betting methods) and are wide for that "
        "reason; the t-interval and the bootstrap, shown for reference, do not keep it here."
    )
