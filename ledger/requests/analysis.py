"""The typed request of ``benchmark case-analysis-candidates`` (docs/formats/cli.md §14)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CaseAnalysisRequest:
    run_ledger_path: str | None = None
    case_analysis_path: str | None = None
    include_proposed_records: bool = False
    proposal_limit: int | None = None
    acceptance_policy: str = "proposal-only"
    apply_accepted: bool = False
    output_case_analysis_path: str | None = None
    output_case_analysis_markdown_path: str | None = None
