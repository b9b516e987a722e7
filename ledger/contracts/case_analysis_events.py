"""Payload of ``case_analysis_accepted`` (stream ``case_analysis/<output key>``): an accepted
case-analysis document, stored whole so replay can re-render the output file
(docs/formats/history_registry_rollout.md §11).
"""

from __future__ import annotations

from typing import Literal

from benchledger.ledger.contracts.base import Closed, Count, JsonObject


class CaseAnalysisAcceptedV1(Closed):
    schema_version: Literal["benchledger_case_analysis_accepted_v0"]
    output_key: str
    output_path: str
    markdown_path: str | None
    source_run_ledger: str
    source_case_analysis: str
    acceptance_policy: str | None
    accepted_analysis_ids: list[str]
    added_count: Count
    skipped_count: Count
    document: JsonObject
