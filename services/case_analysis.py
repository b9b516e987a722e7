"""``benchmark case-analysis-candidates``: ledger cases the case analysis does not cover yet.

Read-only unless ``--apply-accepted``: then the accepted document is appended as a
``case_analysis_accepted`` event, and the output files are written from it after the commit.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.ledger_target import resolve_ledger_target
from benchledger.ledger.core.read_boundary import LEDGER_READ_BOUNDARY as READ_BOUNDARY
from benchledger.ledger.core.registry import build_command_context
from benchledger.ledger.handlers.case_analysis_apply import plan_case_analysis_accept
from benchledger.ledger.requests.analysis import CaseAnalysisRequest
from benchledger.ledger.rules.operations.case_analysis import (
    DEFAULT_CASE_ANALYSIS_NAME,
    build_candidate_report,
    render_analysis_markdown,
    validate_case_analysis_options,
)
from benchledger.projections.publishing.files import atomic_write
from benchledger.services.analysis_inputs import read_json_object
from benchledger.services.store_session import open_store


class CaseAnalysisPaths:
    """Every path the command touches, resolved once against the project root."""

    def __init__(self, project: Path, request: CaseAnalysisRequest) -> None:
        self.project = project
        target = resolve_ledger_target(request.run_ledger_path, project_dir=project)
        self.ledger = target.json_path
        self.ledger_display = target.display_path
        given = request.case_analysis_path
        self.analysis = (
            Path(given).expanduser().absolute()
            if given
            else self.ledger.parent / DEFAULT_CASE_ANALYSIS_NAME
        )
        self.analysis_display = given or DEFAULT_CASE_ANALYSIS_NAME
        output = request.output_case_analysis_path
        markdown = request.output_case_analysis_markdown_path
        self.output = Path(output).expanduser().absolute() if output else None
        self.markdown = Path(markdown).expanduser().absolute() if markdown else None

    def key(self, path: Path) -> str:
        """A stream-safe id for an output file: relative to the project when inside it."""
        real = path.resolve()
        project = self.project.resolve()
        if real.is_relative_to(project):
            return real.relative_to(project).as_posix()
        return "external/" + real.name

    def shown(self, path: Path | None) -> str | None:
        if path is None:
            return None
        real, project = path.resolve(), self.project.resolve()
        return real.relative_to(project).as_posix() if real.is_relative_to(project) else path.name


def resolve_case_analysis_paths(
    request: CaseAnalysisRequest, *, registry: str | None
) -> CaseAnalysisPaths:
    """Flag rules first (docs/formats/cli.md §14 order), then the paths; file existence comes
    next."""

    validate_case_analysis_options(asdict(request))
    context = build_command_context(
        registry_flag=registry, runtime_root_flag=None, cwd=Path.cwd(), env=os.environ
    )
    return CaseAnalysisPaths(context.project_root or Path.cwd(), request)


def case_analysis_payload(
    request: CaseAnalysisRequest,
    paths: CaseAnalysisPaths,
    *,
    db: str | None,
    metadata: dict[str, Any],
) -> dict[str, Any]:
    ledger = read_json_object(paths.ledger, paths.ledger_display)
    analysis = read_json_object(paths.analysis, paths.analysis_display)
    report, updated = build_candidate_report(
        ledger,
        analysis,
        acceptance_policy=request.acceptance_policy,
        include_proposed_records=request.include_proposed_records,
        proposal_limit=request.proposal_limit,
        apply=request.apply_accepted,
    )
    payload: dict[str, Any] = {
        "ok": True,
        "report": report,
        "run_ledger_path": paths.ledger_display,
        "case_analysis_path": paths.analysis_display,
        "read_boundary": dict(READ_BOUNDARY),
    }
    if updated is not None:
        payload.update(apply_accepted(updated, report, paths, db=db, metadata=metadata))
    return payload


def apply_accepted(
    updated: dict[str, Any],
    report: dict[str, Any],
    paths: CaseAnalysisPaths,
    *,
    db: str | None,
    metadata: dict[str, Any],
) -> dict[str, Any]:
    """Append the event, then write the files from its payload (never the other way round)."""
    if paths.output is None:  # validate_case_analysis_options makes this unreachable
        raise ValueError("--apply-accepted requires --output-case-analysis-path")
    plan = plan_case_analysis_accept(
        updated,
        report,
        output_key=paths.key(paths.output),
        output_path=paths.shown(paths.output) or "",
        markdown_path=paths.shown(paths.markdown),
        source_ledger=paths.ledger_display,
        source_case_analysis=paths.analysis_display,
    )
    with open_store(db) as opened:
        result = opened.store.append(
            [plan.event],
            metadata=metadata,
            idempotency_key=plan.idempotency_key,
        )
        document = result.events[0].payload["document"]
        exports = write_outputs(document, paths)
        from benchledger.projections.publishing.render import record_exports

        record_exports(opened, exports)
    report["accepted_upsert"].update(
        output_written=True, markdown_written=paths.markdown is not None
    )
    return {
        "output_case_analysis_path": paths.shown(paths.output),
        "output_case_analysis_markdown_path": paths.shown(paths.markdown),
        "events": {
            "appended": 0 if result.already_recorded else len(result.events),
            "already_recorded": result.already_recorded,
            "position": result.events[0].position,
        },
    }


def write_outputs(document: dict[str, Any], paths: CaseAnalysisPaths) -> list[dict[str, str]]:
    """Atomic writes after the commit; a failure says the event is kept and a rerun retries."""

    if paths.output is None:
        return []
    files: list[tuple[Path, str, bytes]] = []
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    files.append((paths.output, "case_analysis_json", text.encode("utf-8")))
    if paths.markdown is not None:
        existing = _existing_markdown(paths)
        markdown = render_analysis_markdown(document, existing)
        files.append((paths.markdown, "case_analysis_markdown", markdown.encode("utf-8")))
    exports = []
    for path, kind, data in files:
        try:
            atomic_write(path, data)
        except OSError as exc:
            raise InputError(
                f"case_analysis_accepted was recorded but writing {paths.shown(path)} failed "
                f"({exc.strerror or type(exc).__name__}); run the command again to retry"
            ) from None
        exports.append(
            {"path": str(path), "kind": kind, "sha256": hashlib.sha256(data).hexdigest()}
        )
    return exports


def _existing_markdown(paths: CaseAnalysisPaths) -> str | None:
    """The hand-written tail lives in the output Markdown, else in the input's ``.md`` twin."""
    candidates = [paths.markdown, paths.analysis.with_suffix(".md")]
    for candidate in candidates:
        if candidate is not None and candidate.is_file():
            try:
                return candidate.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return None
    return None
