"""The Markdown view of a ``benchmark_run_compare_v0`` document: the same facts, for people.

Every number shown is in the JSON; nothing is computed here except rounding for display. The
per-case policy and, when the guard was overridden, the banner are always printed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchledger.ledger.core.markdown import code_span, table_text


def _text(value: Any) -> str:
    """A value as plain text, in a table cell or not: the backslash escapes ``table_text``
    adds before a pipe or a backtick are CommonMark escapes, valid outside tables too."""
    return table_text(str(value))


def _num(value: Any, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool) or isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def _interval(low: Any, high: Any) -> str:
    return "-" if low is None or high is None else f"[{_num(low)}, {_num(high)}]"


def _method(value: Any) -> str:
    return "-" if value is None else f"`{value}`"


def _basis(power: Mapping[str, Any]) -> str:
    """Where the power figures come from; the worst case and "not estimable" say why."""
    basis, note = power.get("basis"), power.get("note")
    if basis is None:
        return _text(note) if note else "-"
    return f"{basis} ({_text(note)})" if note else basis


def _p(value: Any) -> str:
    if value is None:
        return "-"
    return "<0.0001" if value < 0.0001 else f"{value:.4f}"


def render_compare_markdown(doc: Mapping[str, Any]) -> str:
    level = round(doc["confidence"] * 100, 2)
    lines = [f"**Verdict:** {_text(doc['verdict'])}", ""]
    if doc.get("small_sample_note"):
        lines += [f"> {_text(doc['small_sample_note'])}", ""]
    lines += [f"# Benchmark Compare: {_text(doc['benchmark_id'])}", ""]
    if doc.get("banner"):
        lines += [f"> **{_text(doc['banner'])}**", ""]
    boot = doc["bootstrap"]
    lines += [
        f"- schema_version: `{doc['schema_version']}`",
        f"- metric: `{doc['metric']}`",
        f"- per-case policy: `{doc['per_case_policy']}` (one value per case from its countable "
        "attempts; the case is the unit of analysis)",
        f"- reference: {code_span(str(doc['reference']))}",
        f"- intervals: {level:g} %, the method chosen by the data and named in each row "
        "(docs/compare.md, Intervals); bootstrap (for reference, not the interval): "
        f"{boot['resamples']} resamples of cases, seed {boot['seed']}",
        "",
        "## Arms",
        "",
        "| Arm | Cases | Attempts | Mean | SE | CI | CI method | Var between cases "
        "| Var within cases | Tokens/case | USD/case | Pareto |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for arm in doc["arms"]:
        cost = arm["cost"]
        pareto = "-" if arm["pareto"] is None else ("yes" if arm["pareto"] else "no")
        lines.append(
            f"| {_text(arm['arm_id'])} | {arm['n_cases']} | {arm['n_attempts']} "
            f"| {_num(arm['mean'])} | {_num(arm['se'])} "
            f"| {_interval(arm['ci_low'], arm['ci_high'])} | {_method(arm['interval_method'])} "
            f"| {_num(arm['var_between_cases'])} | {_num(arm['var_within_cases'])} "
            f"| {_num(cost['tokens_per_case'], 0)} | {_num(cost['cost_usd_per_case'])} | {pareto} |"
        )
    lines += _paired_section(doc)
    lines += _coverage_section(doc)
    lines += _comparability_section(doc)
    return "\n".join(lines)


def _paired_section(doc: Mapping[str, Any]) -> list[str]:
    if not doc["paired"]:
        return ["", "## Paired against the reference", "", "Only one arm: nothing to pair."]
    effect = doc["power"]["effect"]
    lines = [
        "",
        "## Paired against the reference",
        "",
        "Cases countable in both arms only; difference = arm − reference.",
        "",
        "| Arm | Pairs | Mean diff | SE | CI | CI method | Bootstrap CI | p | p (Holm) "
        f"| McNemar b/c (p) | MDE at 80 % power | Cases for {_num(effect)} "
        f"| Attempts/case for {_num(effect)} | Power basis |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for pair in doc["paired"]:
        mc = pair["mcnemar"]
        mcnemar = "-" if mc is None else f"{mc['b']}/{mc['c']} ({_p(mc['p_value'])})"
        power = pair["power"]
        attempts = _num(power["attempts_per_case_for_effect"])
        if power["attempts_limited_by_cases"]:
            attempts = "not reachable: add cases"
        boot = pair["bootstrap"]
        lines.append(
            f"| {_text(pair['arm_id'])} | {pair['n_pairs']} | {_num(pair['mean_diff'])} "
            f"| {_num(pair['se'])} | {_interval(pair['ci_low'], pair['ci_high'])} "
            f"| {_method(pair['interval_method'])} "
            f"| {_interval(boot['ci_low'], boot['ci_high'])} | {_p(pair['p_value'])} "
            f"| {_p(pair['p_holm'])} | {mcnemar} | {_num(power['mde_80'])} "
            f"| {_num(power['cases_needed_for_effect'])} | {attempts} | {_basis(power)} |"
        )
    return lines


def _coverage_section(doc: Mapping[str, Any]) -> list[str]:
    lines = ["", "## Coverage", ""]
    for arm in doc["arms"]:
        cov = arm["coverage"]
        lines.append(
            f"- {code_span(str(arm['arm_id']))}: {cov['cases_included']} of {cov['cases_total']} "
            f"cases, {cov['runs_included']} runs"
            + _counts(", runs left out", cov["runs_excluded"])
            + _counts(", unscored attempts (not zeros)", cov["attempts_unscored"])
            + (
                f", {cov['runs_without_attempt_detail']} runs without attempt detail "
                "(one attempt each)"
                if cov["runs_without_attempt_detail"]
                else ""
            )
        )
        for reason, cases in cov["excluded"].items():
            lines.append(f"  - {reason}: {', '.join(_text(c) for c in cases)}")
    return lines


def _counts(label: str, counts: Mapping[str, int]) -> str:
    if not counts:
        return ""
    return f"{label}: " + ", ".join(f"{k} {v}" for k, v in counts.items())


def _comparability_section(doc: Mapping[str, Any]) -> list[str]:
    comp = doc["comparability"]
    lines = ["", "## Comparability", ""]
    if comp["ok"]:
        lines.append(
            "- benchmark version, dataset, task digests and timeout policy agree "
            "wherever both arms recorded them"
        )
    for m in comp["mismatches"]:
        where = f"{m['arm_id']} vs {m['reference']}" if m["reference"] else f"within {m['arm_id']}"
        cases = ", ".join(_text(c["case_id"]) for c in m["cases"])
        lines.append(f"- {m['kind']} differs {_text(where)}: {cases}")
    if "runners" in comp:
        shown = "; ".join(
            f"{_text(arm)}: {', '.join(names) or '-'}" for arm, names in comp["runners"].items()
        )
        lines.append(f"- runner differs: {shown}")
    for runner, rule in (comp.get("runner_rules") or {}).items():
        lines.append(f"- {_text(runner)} arms: {_text(rule)}")
    return lines + _settings_lines(doc)


def _settings_lines(doc: Mapping[str, Any]) -> list[str]:
    """Agent versions and timeout multipliers: every difference inside an arm (pooled) and
    between each paired arm and the reference."""
    settings = doc["comparability"].get("settings") or {}
    lines = []
    for arm, found in settings.items():
        if len(found) > 1:
            shown = ", ".join(_text(s) for s in found)
            lines.append(f"- settings differ within {code_span(str(arm))} (pooled): {shown}")
    reference = settings.get(doc["reference"])
    for pair in doc["paired"]:
        mine = settings.get(pair["arm_id"])
        if mine is not None and reference is not None and mine != reference:
            lines.append(
                f"- settings differ between {code_span(str(pair['arm_id']))} and "
                f"{code_span(str(doc['reference']))}: {_text(', '.join(mine))} vs "
                f"{_text(', '.join(reference))}"
            )
    return lines
