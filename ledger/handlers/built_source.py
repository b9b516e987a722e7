"""What every ``benchmark run`` source ends as: a ``BuiltSource`` (compact records, what was
read for idempotency, the classification label and the ``benchmark_cli`` block), built the same
way whichever runner's reader produced the records (``benchmark_run_sources`` picks the reader).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.handlers.benchmark_cli import build_benchmark_cli
from benchledger.ledger.requests.benchmark_run import BenchmarkRunRequest
from benchledger.ledger.rules.record.compaction import compact_run
from benchledger.ledger.rules.row.classification import (
    ClassificationInput,
    classification_label,
)
from benchledger.ledger.sources.base import RecordProvenance, SourceIngest

Progress = Callable[[int, int], None]


@dataclass
class BuiltSource:
    """What a source adapter produced, already compacted."""

    records: list[dict[str, Any]]
    provenance: dict[str, Any]
    content_digest: str
    classification: str
    benchmark_cli: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    adapter_recommended_action: str | None = None
    discovery: dict[str, Any] | None = None
    selection: dict[str, Any] | None = None
    semantic_options: dict[str, Any] = field(default_factory=dict)
    record_dirs: dict[str, frozenset[str]] = field(default_factory=dict)
    record_provenance: dict[str, dict[str, Any]] = field(default_factory=dict)
    local_root: str | None = None  # the resolved directory the source was read from

    def provenance_for(self, record: dict[str, Any]) -> dict[str, Any]:
        """What one record's ``run_built`` event carries (its own files, not the whole job's),
        and where on this machine they were read: ``local_root`` stays in the store's event,
        never in a record or a published file; only ``report --link-artifacts`` reads it
        (docs/report.md)."""
        provenance = self._record_provenance(record.get("run_key"))
        if self.local_root is None:
            return provenance
        return {**provenance, "local_root": self.local_root}

    @cached_property
    def _record_provenance(self) -> RecordProvenance:
        return RecordProvenance(self.provenance, self.record_dirs, self.record_provenance)


def compact_records(raw_records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    records = [compact_run(r) for r in raw_records]
    if not records or any(len(r) <= 1 for r in records):
        raise InputError("benchmark command did not produce a compactable benchmark_run_v0")
    return records


def _classification(request: BenchmarkRunRequest) -> str:

    return classification_label(
        ClassificationInput(
            benchmark=request.benchmark_name or "",  # the label asks only "skillsbench?"
            mode=request.mode or "loopx-managed-codex",
            classification=request.classification,
            skillsbench_route=request.skillsbench_route,
            skillsbench_result=bool(
                request.skillsbench_result_json or request.skillsbench_result_root
            ),
            harbor_job_dir=bool(request.harbor_job_dir),
            active_user_observation_fixture=bool(request.active_user_observation_fixture),
            active_user_assisted_treatment=bool(request.active_user_assisted_treatment),
            active_cli_bridge=bool(request.active_cli_bridge),
            worker_cli_bridge_fixture=bool(request.worker_cli_bridge_fixture),
            cli_bridge_contract=bool(request.cli_bridge_contract),
            preflight_guard=bool(request.preflight_guard),
            fake_worker=bool(request.fake_worker),
        )
    )


def built_source(
    ingest: SourceIngest,
    request: BenchmarkRunRequest,
    *,
    semantic: dict[str, Any],
    skillsbench_result_ingested: bool = False,
    discovery: dict | None = None,
    selection: dict | None = None,
) -> BuiltSource:
    records = compact_records(ingest.records)
    return BuiltSource(
        records=records,
        provenance=ingest.provenance,
        content_digest=ingest.content_digest,
        classification=_classification(request),
        benchmark_cli=build_benchmark_cli(
            request, records, skillsbench_result_ingested=skillsbench_result_ingested
        ),
        warnings=list(ingest.warnings),
        discovery=discovery,
        selection=selection,
        semantic_options=semantic,
        record_dirs=ingest.record_dirs,
        record_provenance=ingest.record_provenance,
        local_root=None if ingest.root is None else str(ingest.root.resolve()),
    )


def given_path(value: str | None, option: str) -> Path:
    """The path an option names; ``build_source`` picks a source only when its option is set."""
    if not value:
        raise InputError(f"{option} is required for this source")
    return Path(value)
