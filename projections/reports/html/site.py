"""Rendering the report and writing its directory.

The directory is built beside the target and swapped in by rename, so a reader sees the old
report or the new one, never a mix; a failure leaves the old one untouched. ``--out`` may name
a new directory, an empty one, or an earlier report (it holds our marker); anything else is
refused, and a user's file in an earlier report is kept (``report_dir``). The digest of
``index.html``, which lists every asset's digest, goes into an ``export_written`` event like
every other published file, inside the same transaction that read the ledger.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from markupsafe import Markup

from benchledger.ledger.core.errors import InputError
from benchledger.projections.publishing.render import finish_exports, render_lock
from benchledger.projections.reports.html import charts
from benchledger.projections.reports.html.contents import gather
from benchledger.projections.reports.html.grid import RUN_COLUMNS
from benchledger.projections.reports.html.overview import COST_BASES
from benchledger.projections.reports.html.packing import StringTable, public_text
from benchledger.projections.reports.html.report_dir import inspect_out_dir, write_directory

if TYPE_CHECKING:
    from benchledger.projections.reports.html.contents import ReportContents
STATIC_ASSETS = ("report.css", "report.js")
CHUNK_CASES = 100  # cases per run-facts file (also the grid's page size)
TEXT_COLUMNS = tuple(
    RUN_COLUMNS.index(name)
    for name in ("run_id", "recorded_at", "status", "failure_class", "repair_priority",
                 "repair_class", "next_action", "job_name")
)  # fmt: skip
REFS_COLUMN = RUN_COLUMNS.index("artifact_refs")
EXTRA_HINT = "benchledger report needs the report extra: pip install 'benchledger[report]'"


@dataclass(frozen=True)
class ReportRequest:
    ledger_id: str
    out_dir: Path
    benchmark_ids: tuple[str, ...] = ()
    link_artifacts: bool = False  # local file links in the cells (``artifacts``), opt-in


@dataclass
class WrittenReport:
    """The files recorded as exported, and with ``link_artifacts`` what was linked."""

    exports: list[dict[str, str]]
    link_counts: dict[str, int] | None = None


def write_report(opened: Any, request: ReportRequest, version: str) -> WrittenReport:
    """Read, render, swap the directory in and record the export."""
    require_report_extra()
    check_out_dir(request.out_dir)
    with render_lock(opened) as uow:
        contents = gather_request(opened.store, uow.conn, request)
        files = render_files(contents, version)
        write_directory(request.out_dir, files)
        index = files["index.html"]
        exports = [
            {
                "path": str(request.out_dir / "index.html"),
                "kind": "report_html",
                "sha256": hashlib.sha256(index).hexdigest(),
            }
        ]
        finish_exports(uow, exports)
    return WrittenReport(exports, contents.link_counts)


def gather_request(store: Any, conn: Any, request: ReportRequest) -> ReportContents:
    """``gather`` with the request's options (the live and the past report alike)."""
    return gather(store, conn, request.ledger_id, request.benchmark_ids, request.link_artifacts)


def require_report_extra() -> None:
    """One clear line instead of an import error when the ``report`` extra is missing."""
    for module in ("jinja2", "matplotlib"):
        try:
            __import__(module)
        except ImportError:
            raise InputError(EXTRA_HINT) from None


def check_out_dir(out_dir: Path) -> None:
    """Refuse, before anything is read or written, a target the report must not replace: a
    link, a file, or a non-empty directory that is not a report we wrote (``report_dir``)."""
    inspect_out_dir(out_dir)


def render_files(contents: ReportContents, version: str) -> dict[str, bytes]:
    """Every file of the report by its path inside the directory, ``index.html`` first."""

    files, chart_refs = chart_files(contents.sections)
    for slug, facts in contents.facts.items():
        files.update(fact_chunks(slug, facts, _arm_count(contents, slug)))
    lists = orjson.dumps(contents.lists)
    files["assets/lists.js"] = b"window.BENCHLEDGER_LISTS(" + lists + b");\n"
    for name in STATIC_ASSETS:
        asset = resources.files("benchledger.projections.reports.html").joinpath("assets", name)
        files[f"assets/{name}"] = asset.read_bytes()
    html = (
        _environment()
        .get_template("index.html.j2")
        .render(
            ledger_id=contents.ledger_id,
            sections=contents.sections,
            audit=contents.audit,
            charts=chart_refs,
            cost_labels={s.slug: _cost_label(s.overview.cost_basis) for s in contents.sections},
            version=version,
            artifacts_linked=bool(contents.data.get("artifacts_linked")),
            data=page_data_json(orjson.dumps({**contents.data, **_page_extras(files)})),
        )
    )
    return {"index.html": html.encode("utf-8"), **files}


def _page_extras(files: dict[str, bytes]) -> dict[str, Any]:
    """The chunk size, and the sha256 of every asset: the export event records the digest of
    ``index.html`` alone (its path never changes, while the set of assets does), and through
    this table that digest pins every asset too."""
    digests = {name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())}
    return {"chunk_cases": CHUNK_CASES, "asset_sha256": digests}


def chart_files(sections: Sequence[Any]) -> tuple[dict[str, bytes], dict[str, dict[str, Any]]]:
    """Each benchmark's forest, cost and timeline SVG (a chart with nothing to show is left
    out), and per benchmark the file each chart is in (None when left out)."""
    files: dict[str, bytes] = {}
    refs: dict[str, dict[str, Any]] = {}
    for section in sections:
        overview = section.overview
        metric = _metric(overview)
        drawn = {
            "forest": overview.forest
            and charts.forest_svg(overview.forest, _reference(overview), metric),
            "cost": overview.cost_points
            and charts.cost_svg(overview.cost_points, _cost_label(overview.cost_basis), metric),
            "timeline_ran": not section.timeline.ran_empty
            and charts.timeline_svg(section.timeline, ran=True),
            "timeline": not section.timeline.empty and charts.timeline_svg(section.timeline),
        }
        refs[section.slug] = {}
        for kind, svg in drawn.items():
            name = None
            if svg:
                name = f"assets/{section.slug}-{kind}.svg"
                files[name] = svg
            refs[section.slug][kind] = name
    return files, refs


def _arm_count(contents: ReportContents, slug: str) -> int:
    return next(len(g["arms"]) for g in contents.data["grids"] if g["slug"] == slug)


def fact_chunks(slug: str, facts: list[Any], arms: int) -> dict[str, bytes]:
    """The grid's run facts, ``CHUNK_CASES`` cases per script, loaded when a cell is opened:
    the page itself stays small and opens fast however many runs the ledger holds. Each chunk
    interns its text (failure classes, next actions and artifact keys repeat run after run)."""

    size = CHUNK_CASES * max(1, arms)  # a benchmark whose runs are all archived has no arm
    chunks = {}
    for k in range(0, max(1, -(-len(facts) // size))):
        strings = StringTable()
        packed = [_packed_run(run, strings) for run in facts[k * size : (k + 1) * size]]
        args = orjson.dumps([slug, k, strings.strings, packed])[1:-1]
        chunks[f"assets/runs-{slug}-{k}.js"] = b"window.BENCHLEDGER_RUNS(" + args + b");\n"
    return chunks


def _packed_run(run: list[Any] | None, strings: StringTable) -> list[Any] | None:
    """A run's facts with every text replaced by its index in the chunk's table."""
    if run is None:
        return None
    packed = list(run)
    for i in TEXT_COLUMNS:
        packed[i] = strings.ref(run[i])
    packed[REFS_COLUMN] = [
        [strings.ref(key), strings.ref(value)] for key, value in run[REFS_COLUMN]
    ]
    return packed


def page_data_json(data: bytes) -> Any:
    """The page's data as JSON inside a ``<script type="application/json">`` block.

    ``JSON.parse`` of a data block is many times faster than compiling the same data as a
    script (over a second for 30,000 runs), and a data block never runs. ``<`` is written as
    ``\\u003c`` (it can only occur inside JSON strings), so no text can close the block.
    """

    return Markup(data.replace(b"<", b"\\u003c").decode("utf-8"))


def _reference(overview: Any) -> str:
    return str((overview.document or {}).get("reference") or "")


def _metric(overview: Any) -> str:
    document = overview.document or {}
    return f"{document.get('metric', 'score')} ({document.get('per_case_policy', 'mean')} per case)"


def _cost_label(basis: str | None) -> str:
    return COST_BASES.get(basis or "", "cost")


def _environment() -> Any:
    """Jinja2 with autoescape on: every value on the page is escaped, and every text value
    passes the public-safety filter on its way out (``finalize``), whatever its source."""
    import jinja2

    def finalize(value: Any) -> Any:
        if isinstance(value, str) and not isinstance(value, Markup):
            return public_text(value)
        return value

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("benchledger.projections.reports.html", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=finalize,
    )
    env.globals.update(num=number_cell, when=_when)
    return env


def number_cell(value: Any, field: str, digits: int = 3) -> Any:
    """A number as shown (rounded) with its exact value in ``data-value`` (compare's JSON)."""

    if value is None:
        return Markup('<span data-field="{}" data-value="null">–</span>').format(field)
    exact = orjson.dumps(value).decode()
    return Markup('<span data-field="{}" data-value="{}">{}</span>').format(
        field, exact, shown_number(value, field, digits)
    )


def shown_number(value: int | float, field: str, digits: int = 3) -> str:
    """Integers as they are, others to ``digits`` places; a p-value that rounds to zero is
    shown as ``< 0.001`` rather than a misleading 0."""
    if isinstance(value, int):
        return str(value)
    if field.startswith("p_") and 0 <= value < 10**-digits:
        return f"< {10**-digits:.{digits}f}"
    return f"{value:.{digits}f}"


def _when(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC")
