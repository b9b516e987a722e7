"""``benchmark parity-check`` and ``benchmark case-analysis-candidates`` (cli.md §13-14).

Both read files the user names and report on them; the rules live in ``ledger/parity.py`` and
``ledger/case_analysis.py``. Only ``case-analysis-candidates --apply-accepted`` changes
anything, and it does so through the event store: the accepted document is appended as a
``case_analysis_accepted`` event, and the output files are written from it after the commit.

The case-analysis command reads the ledger JSON *file* (``--run-ledger-path``, default
``benchmark-run-ledger.json`` in the project root), as loopx did, and refuses a missing one
(``file not found: <name>``) instead of rendering it from the store: a read-only report should
not create or migrate a database, and ``benchledger render`` already brings the file up to date.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from commands.benchmark_group import benchmark
from commands.output import emit, format_option, resolve_format

READ_BOUNDARY = {
    "compact_only": True,
    "raw_logs_read": False,
    "task_text_read": False,
    "trajectory_read": False,
    "docker_invoked": False,
    "model_api_invoked": False,
    "upload_invoked": False,
}


# --- shared file helpers ------------------------------------------------------------------------


def display_name(given: str | Path) -> str:
    """How an error names a file: as the user spelled a relative path, else only its name."""
    text = str(given)
    path = Path(text).expanduser()
    return path.name if path.is_absolute() or text.startswith("~") else text


def read_input_bytes(given: str, *, stdin_ok: bool = False) -> bytes:
    from ledger.input_files import COMPACT_JSON_LIMIT, read_input_file, read_stream

    if stdin_ok and given == "-":
        import sys

        return read_stream(sys.stdin.buffer, shown="standard input", limit=COMPACT_JSON_LIMIT)
    path = Path(given).expanduser()
    return read_input_file(path, shown=display_name(given), limit=COMPACT_JSON_LIMIT)


def read_json_object(path: Path, display: str) -> dict[str, Any]:
    from ledger.errors import InputError
    from ledger.input_files import COMPACT_JSON_LIMIT, read_input_file
    from ledger.json_input import parse_json

    raw = read_input_file(path, shown=display, limit=COMPACT_JSON_LIMIT)
    data = parse_json(raw, what=f"{display} is not valid JSON")
    if not isinstance(data, dict):
        raise InputError(f"{display} must contain a JSON object")
    return data


def _with_payload(err: Exception, payload: dict[str, Any]) -> Exception:
    details = getattr(err, "details", None)
    if isinstance(details, dict):
        details.setdefault("payload", payload)
    return err


# --- parity-check (cli.md §13, history_registry_rollout.md §10) ---------------------------------


@benchmark.command("parity-check")
@click.option(
    "--benchmark-run-json",
    required=True,
    metavar="PATH|-",
    help="A compact benchmark_run_v0 record (or a goal run record / wrapper); '-' reads stdin.",
)
@format_option
@click.pass_context
def parity_check_command(
    ctx: click.Context, benchmark_run_json: str, output_format: str | None
) -> None:
    """[loopx] Can this run back a "full loopx product path" claim? Read-only.

    The record is compacted first, so only evidence that survives compaction counts.

      benchledger benchmark parity-check --benchmark-run-json runs/2026-05-02T09-14-07Z.json
    """
    from ledger.errors import BenchledgerError
    from ledger.parity import parity_check_error_payload, render_parity_markdown

    fmt = resolve_format(ctx, output_format)
    try:
        payload = parity_payload(benchmark_run_json)
    except BenchledgerError as err:
        raise _with_payload(err, parity_check_error_payload(err.message)) from None
    emit(payload, fmt, "Codex App Parity Posthoc Check", markdown=render_parity_markdown)


def parity_payload(given: str) -> dict[str, Any]:
    """Resolve and compact the input (benchmark_run_v0.md §2), then check the one record."""
    from ledger.errors import InputError
    from ledger.parity import parity_check_payload
    from ledger.rules.compact_input import resolve_compact_input

    records, _kind = resolve_compact_input(read_input_bytes(given, stdin_ok=True), context="parity")
    if len(records) != 1:
        raise InputError(
            f"--benchmark-run-json holds {len(records)} benchmark runs; parity-check reads one"
        )
    return parity_check_payload(records[0])


# --- case-analysis-candidates (cli.md §14, history_registry_rollout.md §11) ----------------------


@benchmark.command("case-analysis-candidates")
@click.option("--run-ledger-path", default=None, help="Ledger JSON (default: project root's).")
@click.option(
    "--case-analysis-path",
    default=None,
    help="Case-analysis JSON (default: benchmark-case-analysis.json beside the ledger).",
)
@click.option(
    "--include-proposed-records", is_flag=True, help="Add an upsert proposal per candidate."
)
@click.option("--proposal-limit", type=int, default=None, help="Cap the proposals (default: none).")
@click.option(
    "--acceptance-policy",
    type=click.Choice(["proposal-only", "generated-safe"]),
    default="proposal-only",
    show_default=True,
    help="generated-safe accepts only decisions whose meaning is unambiguous.",
)
@click.option(
    "--apply-accepted",
    is_flag=True,
    help="Record the accepted entries (an event) and write the updated copy.",
)
@click.option("--output-case-analysis-path", default=None, help="Where the updated copy goes.")
@click.option(
    "--output-case-analysis-markdown-path", default=None, help="Also render it as Markdown here."
)
@format_option
@click.pass_context
def case_analysis_candidates_command(
    ctx: click.Context, output_format: str | None, **opts: Any
) -> None:
    """[loopx] Ledger cases the case analysis does not cover yet, ranked by their decision.

    Read-only unless --apply-accepted; the input analysis is never modified.

      benchledger benchmark case-analysis-candidates --include-proposed-records

      benchledger benchmark case-analysis-candidates --acceptance-policy generated-safe
        --apply-accepted --output-case-analysis-path analysis.next.json
    """
    from ledger.case_analysis import render_candidates_markdown
    from ledger.errors import BenchledgerError

    fmt = resolve_format(ctx, output_format)
    root = ctx.find_root().obj or {}
    shown = {
        "run_ledger_path": opts["run_ledger_path"],
        "case_analysis_path": opts["case_analysis_path"],
    }
    try:
        paths = resolve_case_analysis_paths(opts, registry=root.get("registry"))
        shown = {
            "run_ledger_path": paths.ledger_display,
            "case_analysis_path": paths.analysis_display,
        }
        payload = case_analysis_payload(opts, paths, db=root.get("db"))
    except BenchledgerError as err:
        error = {"ok": False, **shown, "read_boundary": dict(READ_BOUNDARY), "error": err.message}
        raise _with_payload(err, error) from None
    emit(payload, fmt, "Benchmark Case Analysis Candidates", markdown=render_candidates_markdown)


class CaseAnalysisPaths:
    """Every path the command touches, resolved once against the project root."""

    def __init__(self, project: Path, opts: dict[str, Any]) -> None:
        from ledger.case_analysis import DEFAULT_CASE_ANALYSIS_NAME
        from ledger.ledger_target import resolve_ledger_target

        self.project = project
        target = resolve_ledger_target(opts.get("run_ledger_path"), project_dir=project)
        self.ledger = target.json_path
        self.ledger_display = target.display_path
        given = opts.get("case_analysis_path")
        self.analysis = (
            Path(given).expanduser().absolute()
            if given
            else self.ledger.parent / DEFAULT_CASE_ANALYSIS_NAME
        )
        self.analysis_display = given or DEFAULT_CASE_ANALYSIS_NAME
        output = opts.get("output_case_analysis_path")
        markdown = opts.get("output_case_analysis_markdown_path")
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


def resolve_case_analysis_paths(opts: dict[str, Any], *, registry: str | None) -> CaseAnalysisPaths:
    """Flag rules first (cli.md §14 order), then the paths; file existence comes next."""
    import os

    from ledger.case_analysis import validate_case_analysis_options
    from ledger.registry import build_command_context

    validate_case_analysis_options(opts)
    context = build_command_context(
        registry_flag=registry, runtime_root_flag=None, cwd=Path.cwd(), env=os.environ
    )
    return CaseAnalysisPaths(context.project_root or Path.cwd(), opts)


def case_analysis_payload(
    opts: dict[str, Any], paths: CaseAnalysisPaths, *, db: str | None
) -> dict[str, Any]:
    from ledger.case_analysis import build_candidate_report

    ledger = read_json_object(paths.ledger, paths.ledger_display)
    analysis = read_json_object(paths.analysis, paths.analysis_display)
    report, updated = build_candidate_report(
        ledger,
        analysis,
        acceptance_policy=opts["acceptance_policy"],
        include_proposed_records=bool(opts["include_proposed_records"]),
        proposal_limit=opts["proposal_limit"],
        apply=bool(opts["apply_accepted"]),
    )
    payload: dict[str, Any] = {
        "ok": True,
        "report": report,
        "run_ledger_path": paths.ledger_display,
        "case_analysis_path": paths.analysis_display,
        "read_boundary": dict(READ_BOUNDARY),
    }
    if updated is not None:
        payload.update(apply_accepted(updated, report, paths, db=db))
    return payload


def apply_accepted(
    updated: dict[str, Any], report: dict[str, Any], paths: CaseAnalysisPaths, *, db: str | None
) -> dict[str, Any]:
    """Append the event, then write the files from its payload (never the other way round)."""
    from commands.runtime import command_metadata, open_store
    from ledger.handlers.case_analysis_apply import plan_case_analysis_accept

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
    opened = open_store(db)
    try:
        result = opened.store.append(
            [plan.event],
            metadata=command_metadata(),
            idempotency_key=plan.idempotency_key,
        )
        document = result.events[0].payload["document"]
        exports = write_outputs(document, paths)
        from projections.render import record_exports

        record_exports(opened, exports)
    finally:
        opened.close()
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
    import hashlib
    import json

    from ledger.case_analysis import render_analysis_markdown
    from ledger.errors import InputError
    from projections.files import atomic_write

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


COMMANDS = [benchmark]
