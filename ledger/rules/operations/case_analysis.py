"""``benchmark case-analysis-candidates``: which ledger cases deserve a written analysis? (§11)

[loopx-specific] The case-analysis file is curated by hand; the ledger grows by itself. This
module finds ledger cases the analysis does not cover yet, ranks them by what their latest
decision says, and (optionally) proposes records for them. Only the ``generated-safe`` policy may
accept a proposal, and only for decisions whose meaning is unambiguous; everything else stays a
proposal for a human. Pure: the ledger and analysis dicts come in, the report and an updated copy
of the analysis come out; the caller reads and writes files.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.markdown import table_code, table_text
from benchledger.ledger.rules.row.values import as_mapping
from benchledger.ledger.sources.common import analysis_slug

REPORT_SCHEMA = "benchmark_case_analysis_candidate_report_v0"
PROPOSAL_SCHEMA = "benchmark_case_analysis_upsert_proposal_v0"
ACCEPTANCE_SCHEMA = "benchmark_case_analysis_acceptance_policy_v0"
MARKDOWN_TITLE = "Benchmark Case Analysis Candidates"
ACCEPTANCE_POLICIES: tuple[str, ...] = ("proposal-only", "generated-safe")
DEFAULT_ACCEPTANCE_POLICY = "proposal-only"
DEFAULT_CASE_ANALYSIS_NAME = "benchmark-case-analysis.json"
TERMINAL_BENCH_ID = "terminal-bench@2.0"
EVIDENCE_STATUS = "generated_from_compact_benchmark_run_ledger"
HAND_WRITTEN_HEADING = "## Treatment Policy Control Set"
NO_RUN_DECISIONS = frozenset({"", "no_runs_recorded"})
_PRIORITY_ORDER = {"P0": 0, "P1": 1, "P2": 2}

#: candidate class -> (accepted classification, minimum runs) under ``generated-safe``.
GENERATED_SAFE: dict[str, tuple[str, int]] = {
    "paired_no_uplift_candidate": ("generated_no_uplift_asset", 2),
    "baseline_solved_non_regression_candidate": (
        "generated_baseline_solved_non_regression_asset",
        2,
    ),
    "baseline_solved_control_candidate": ("generated_baseline_solved_control_asset", 1),
}

_HANDLING = {
    "paired_no_uplift_candidate": "write up when the missing uplift changes routing or policy",
    "baseline_solved_non_regression_candidate": "keep as a non-regression guard for the treatment",
    "infrastructure_alignment_candidate": "record the alignment lesson if it is reusable",
    "baseline_failure_treatment_candidate": "attribute the baseline failure or pair it first",
    "setup_or_runner_gap_defer": "defer until the run reaches scoring",
    "baseline_solved_control_candidate": "use as a baseline-solved control when coverage needs it",
    "single_arm_coverage_or_baseline_candidate": "keep as coverage unless it teaches a lesson",
    "needs_manual_classification": "classify by hand from the compact ledger fields",
}


# --- inputs -------------------------------------------------------------------------------------


def validate_case_analysis_options(opts: Mapping[str, Any]) -> None:
    """Flag rules in docs/formats/cli.md §14 order (file existence is the caller's next check)."""
    policy = opts.get("acceptance_policy") or DEFAULT_ACCEPTANCE_POLICY
    if policy not in ACCEPTANCE_POLICIES:
        raise InputError(f"unsupported case-analysis acceptance policy: {policy}")
    if opts.get("apply_accepted") and policy != "generated-safe":
        raise InputError("--apply-accepted requires --acceptance-policy generated-safe")
    if opts.get("apply_accepted") and not opts.get("output_case_analysis_path"):
        raise InputError("--apply-accepted requires --output-case-analysis-path")
    limit = opts.get("proposal_limit")
    if limit is not None and (isinstance(limit, bool) or limit < 0):
        raise InputError("--proposal-limit must be zero or a positive integer")


def _text(value: Any) -> str:
    return " ".join(str(value or "").split())


def analysis_keys(analysis: Mapping[str, Any]) -> set[tuple[str, str]]:
    """(benchmark, case) pairs the analysis already covers, coverage rows included."""
    keys: set[tuple[str, str]] = set()
    for case in analysis.get("cases") or []:
        if (
            isinstance(case, Mapping)
            and _text(case.get("benchmark_id"))
            and _text(case.get("case_id"))
        ):
            keys.add((_text(case["benchmark_id"]), _text(case["case_id"])))
    coverage = analysis.get("terminal_bench_current_protocol_coverage")
    rows = coverage.get("rows") if isinstance(coverage, Mapping) else None
    for row in rows or []:
        if isinstance(row, Mapping) and _text(row.get("case_id")):
            keys.add((TERMINAL_BENCH_ID, _text(row["case_id"])))
    return keys


def _active_run_ids(case: Mapping[str, Any]) -> list[str]:
    runs = [run for run in case.get("runs") or [] if isinstance(run, Mapping)]
    active = [run for run in runs if run.get("archive_state") != "archived"]
    return [_text(run.get("run_id")) for run in active]


# --- classification -----------------------------------------------------------------------------


def classify_decision(decision: str, run_count: int) -> tuple[str, str]:
    """(candidate class, priority), first match in the order of §11."""
    if decision == "paired_no_score_uplift":
        return "paired_no_uplift_candidate", "P1"
    if decision == "paired_baseline_solved_treatment_preserved":
        return "baseline_solved_non_regression_candidate", "P2"
    if decision.startswith("paired_treatment_") and (
        "alignment_required" in decision or "preflight_required" in decision
    ):
        return "infrastructure_alignment_candidate", "P1"
    if decision == "baseline_failed_treatment_candidate":
        return "baseline_failure_treatment_candidate", "P1"
    if "runner_or_setup" in decision or "setup" in decision:
        return "setup_or_runner_gap_defer", "P2"
    if decision == "baseline_passed_not_current_treatment_priority":
        return "baseline_solved_control_candidate", "P2"
    if decision == "single_arm_recorded":
        return "single_arm_coverage_or_baseline_candidate", "P1" if run_count > 1 else "P2"
    return "needs_manual_classification", "P1"


def find_candidates(ledger: Mapping[str, Any], analysis: Mapping[str, Any]) -> list[dict]:
    """Ledger cases the analysis does not cover whose latest decision says something."""
    covered = analysis_keys(analysis)
    candidates = []
    benchmarks = ledger.get("benchmarks")
    for benchmark_id, benchmark in (benchmarks if isinstance(benchmarks, Mapping) else {}).items():
        cases = benchmark.get("cases") if isinstance(benchmark, Mapping) else None
        for case_id, case in (cases if isinstance(cases, Mapping) else {}).items():
            latest = case.get("latest_decision") if isinstance(case, Mapping) else None
            decision = _text(latest.get("decision")) if isinstance(latest, Mapping) else ""
            if decision in NO_RUN_DECISIONS or (benchmark_id, case_id) in covered:
                continue
            run_ids = _active_run_ids(case)
            candidate_class, priority = classify_decision(decision, len(run_ids))
            candidates.append(
                {
                    "benchmark_id": benchmark_id,
                    "case_id": case_id,
                    "latest_decision": decision,
                    "run_count": len(run_ids),
                    "recent_run_ids": [run_id for run_id in run_ids[-3:] if run_id],
                    "candidate_class": candidate_class,
                    "promotion_priority": priority,
                    "recommended_handling": _HANDLING[candidate_class],
                    "raw_logs_recorded": False,
                    "raw_task_text_recorded": False,
                    "raw_trajectory_recorded": False,
                }
            )
    candidates.sort(
        key=lambda item: (
            _PRIORITY_ORDER.get(item["promotion_priority"], 99),
            item["candidate_class"],
            item["benchmark_id"],
            item["case_id"],
        )
    )
    return candidates


# --- proposals and acceptance -------------------------------------------------------------------


def analysis_id(benchmark_id: str, case_id: str, candidate_class: str) -> str:
    return (
        f"{analysis_slug(benchmark_id)}__{analysis_slug(case_id)}__{analysis_slug(candidate_class)}"
    )


def acceptance_verdict(candidate: Mapping[str, Any], policy: str) -> dict[str, Any]:
    """Whether ``policy`` accepts this candidate, with the reasons when it does not."""
    verdict: dict[str, Any] = {"schema_version": ACCEPTANCE_SCHEMA, "policy": policy}
    if policy != "generated-safe":
        return {**verdict, "accepted": False, "status": "proposal_only_not_applied",
                "reason_codes": ["proposal_only_policy"]}  # fmt: skip
    rule = GENERATED_SAFE.get(candidate["candidate_class"])
    reasons: list[str] = []
    if rule is None:
        reasons.append("candidate_class_requires_manual_review")
    elif candidate["run_count"] < rule[1]:
        reasons.append(
            "paired_candidate_needs_two_runs" if rule[1] == 2 else "candidate_needs_one_run"
        )
    if reasons or rule is None:
        return {**verdict, "accepted": False, "status": "proposal_only_not_applied",
                "reason_codes": reasons}  # fmt: skip
    return {
        **verdict,
        "accepted": True,
        "status": "accepted_generated_not_applied",
        "accepted_classification": rule[0],
        "reason_codes": ["generated_safe_policy_matched"],
    }


def _source_boundary(accepted: bool) -> dict[str, Any]:
    return {
        "inputs": ["compact benchmark run ledger", "case-analysis keys"],
        "raw_logs_recorded": False,
        "raw_task_text_recorded": False,
        "raw_trajectory_recorded": False,
        "absolute_paths_recorded": False,
        "proposal_only": not accepted,
    }


def proposal(candidate: Mapping[str, Any], policy: str) -> dict[str, Any]:
    verdict = acceptance_verdict(candidate, policy)
    accepted = verdict["accepted"]
    bid, cid, cls = candidate["benchmark_id"], candidate["case_id"], candidate["candidate_class"]
    decision = candidate["latest_decision"]
    return {
        "schema_version": PROPOSAL_SCHEMA,
        "analysis_id": analysis_id(bid, cid, cls),
        "benchmark_id": bid,
        "case_id": cid,
        "classification": verdict["accepted_classification"] if accepted else f"{cls}_proposal",
        "candidate_class": cls,
        "latest_ledger_decision": decision,
        "promotion_priority": candidate["promotion_priority"],
        "source_run_ids": list(candidate["recent_run_ids"]),
        "source_run_count": candidate["run_count"],
        "capability_signal": f"{bid}/{cid}: ledger decision {decision} over "
        f"{candidate['run_count']} active run(s)",
        "control_plane_signal": f"{candidate['promotion_priority']} proposal from compact "
        "ledger fields only",
        "recommended_next_action": candidate["recommended_handling"],
        "acceptance_policy": verdict,
        "source_boundary": _source_boundary(accepted),
    }


def accepted_case_record(item: Mapping[str, Any]) -> dict[str, Any]:
    """The analysis entry an accepted proposal becomes."""
    return {
        "analysis_id": item["analysis_id"],
        "benchmark_id": item["benchmark_id"],
        "case_id": item["case_id"],
        "classification": item["classification"],
        "decision": item["latest_ledger_decision"],
        "evidence_status": EVIDENCE_STATUS,
        "source_run_ids": list(item["source_run_ids"]),
        "source_run_count": item["source_run_count"],
        "capability_signal": item["capability_signal"],
        "control_plane_signal": item["control_plane_signal"],
        "routing_guidance": {"repeat_policy": item["recommended_next_action"]},
        "source_boundary": {**_source_boundary(True), "generated_case_analysis": True},
    }


def apply_accepted(
    analysis: Mapping[str, Any], proposals: list[dict[str, Any]]
) -> tuple[dict[str, Any], int, int]:
    """A copy of the analysis with accepted, not-yet-keyed records appended; the input is kept."""
    updated = copy.deepcopy(dict(analysis))
    cases = updated.setdefault("cases", [])
    if not isinstance(cases, list):
        raise InputError("case-analysis file must contain a cases list")
    covered = analysis_keys(updated)
    added = skipped = 0
    for item in proposals:
        key = (item["benchmark_id"], item["case_id"])
        if not item["acceptance_policy"]["accepted"] or key in covered:
            skipped += 1
            continue
        cases.append(accepted_case_record(item))
        covered.add(key)
        added += 1
    return updated, added, skipped


# --- the report ---------------------------------------------------------------------------------


def build_candidate_report(
    ledger: Mapping[str, Any],
    analysis: Mapping[str, Any],
    *,
    acceptance_policy: str = DEFAULT_ACCEPTANCE_POLICY,
    include_proposed_records: bool = False,
    proposal_limit: int | None = None,
    apply: bool = False,
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(report, updated analysis or None). ``apply`` implies proposals (as ``--apply-accepted``)."""
    candidates = find_candidates(ledger, analysis)
    proposals = [proposal(candidate, acceptance_policy) for candidate in candidates]
    if proposal_limit is not None:
        proposals = proposals[: max(0, proposal_limit)]
    accepted = [item for item in proposals if item["acceptance_policy"]["accepted"]]
    report: dict[str, Any] = {
        "schema_version": REPORT_SCHEMA,
        "candidate_count": len(candidates),
        "candidates": candidates,
        "acceptance_policy": {
            "policy": acceptance_policy,
            "accepted_record_count": len(accepted),
            "manual_review_record_count": len(proposals) - len(accepted),
        },
        "proposed_record_count": len(proposals) if include_proposed_records or apply else 0,
        "accepted_record_count": len(accepted),
        "source_boundary": _source_boundary(apply),
    }
    if include_proposed_records or apply:
        report["proposed_records"] = proposals
    if not apply:
        return report, None
    updated, added, skipped = apply_accepted(analysis, proposals)
    report["accepted_upsert"] = {
        "output_written": False,
        "markdown_written": False,
        "added_count": added,
        "skipped_count": skipped,
    }
    return report, updated


def render_candidates_markdown(payload: Mapping[str, Any]) -> str:
    report = as_mapping(payload.get("report"))
    lines = [f"# {MARKDOWN_TITLE}", ""]
    lines.append(f"- candidate_count: {report.get('candidate_count', 0)}")
    lines.append(f"- accepted_record_count: {report.get('accepted_record_count', 0)}")
    if payload.get("error"):
        lines.append(f"- error: {payload['error']}")
    lines += [
        "",
        "| Priority | Class | Benchmark | Case | Decision | Runs | Recommended Handling |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for item in report.get("candidates") or []:
        cells = (
            item["promotion_priority"],
            item["candidate_class"],
            item["benchmark_id"],
            item["case_id"],
            item["latest_decision"],
            str(item["run_count"]),
            item["recommended_handling"],
        )
        lines.append("| " + " | ".join(table_text(cell) for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def _score_cell(value: Any) -> str:
    """0.0 renders as ``0.0`` (loopx 0.4.8 rendered empty backticks for a falsy score)."""
    if value is None or value == "" or isinstance(value, bool):
        return "n/a"
    return table_code(str(value))


def render_analysis_markdown(analysis: Mapping[str, Any], existing_markdown: str | None) -> str:
    """A summary table of the analysis, keeping the hand-written tail of the old Markdown."""
    lines = [
        "# Benchmark Case Analysis",
        "",
        "| Benchmark | Case | Class | Baseline | Treatment | Delta | Decision |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for case in analysis.get("cases") or []:
        if not isinstance(case, Mapping):
            continue
        scores = as_mapping(case.get("scores"))
        cells = (
            table_code(_text(case.get("benchmark_id"))),
            table_code(_text(case.get("case_id"))),
            table_text(_text(case.get("classification")).replace("_", " ") or "-"),
            _score_cell(scores.get("baseline_official_score")),
            _score_cell(scores.get("treatment_official_score")),
            _score_cell(scores.get("official_score_delta")),
            table_code(_text(case.get("decision"))),
        )
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    if existing_markdown and HAND_WRITTEN_HEADING in existing_markdown:
        text += "\n" + existing_markdown[existing_markdown.index(HAND_WRITTEN_HEADING) :]
    return text
