"""Everything the page shows, gathered from one connection inside the render transaction.

Each view reuses the code that already owns its rule: the overview is ``compare``'s document,
the grid buckets are ``run-ledger-aggregate``'s, and the case decisions and repair backlog are
the rows and fields the Markdown ledger view lists (``ledger_v0``); this module only selects
benchmarks and packs the results for the page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.rules.row.timestamps import instant
from benchledger.ledger.store.events import LEDGER_RUNS_ARCHIVED, LEDGER_RUNS_RESTORED
from benchledger.projections.publishing.ledger_v0 import (
    active_cases,
    backlog_rows,
    backlog_sort_key,
    build_document,
    product_pair_status,
    profile_summary,
    routing_class,
)
from benchledger.projections.read_models.ledger_queries import LedgerQueries
from benchledger.projections.reports.html.artifacts import artifact_links
from benchledger.projections.reports.html.audit import Audit, build_audit
from benchledger.projections.reports.html.grid import (
    BUCKET_LABELS,
    RUN_COLUMNS,
    build_grid,
    grid_arms,
)
from benchledger.projections.reports.html.overview import Overview, compare_benchmark
from benchledger.projections.reports.html.packing import StringTable
from benchledger.projections.reports.html.timeline import ArchiveEvent, Timeline, build_timeline

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
    from benchledger.ledger.store.event_store import EventStore
DECISION_COLUMNS = (
    "benchmark",
    "case",
    "decision",
    "arms (compare's case values)",
    "product pair",
    "case routing",
    "runs",
)
BACKLOG_COLUMNS = (
    "priority",
    "benchmark",
    "case",
    "arm",
    "repair class",
    "failure",
    "repair profile",
    "next action",
)


@dataclass
class BenchmarkSection:
    benchmark_id: str
    slug: str
    overview: Overview
    timeline: Timeline
    case_count: int
    active_runs: int
    archived_runs: int


@dataclass
class ReportContents:
    ledger_id: str
    sections: list[BenchmarkSection]
    audit: Audit
    data: dict[str, Any] = field(default_factory=dict)
    facts: dict[str, list[list[Any] | None]] = field(default_factory=dict)  # by grid slug
    lists: dict[str, Any] = field(default_factory=dict)  # decisions and backlog, own strings
    link_counts: dict[str, int] | None = None  # --link-artifacts: ``ArtifactLinks.counts``


def gather(
    store: EventStore,
    conn: Connection,
    ledger_id: str,
    benchmark_ids: Sequence[str] = (),
    link_artifacts: bool = False,
) -> ReportContents:
    """Read the ledger and build every view; unknown ``benchmark_ids`` are a user error.
    ``link_artifacts``: each cell's run links to its files on this disk (``artifacts``)."""
    from benchledger.projections.reports.compare.document import arm_labels, matches_benchmark

    queries = LedgerQueries(conn)
    rows = list(queries.all_rows(ledger_id))
    present = sorted({str(r.get("benchmark_id") or "") for r in rows} - {""})
    chosen = _chosen(present, benchmark_ids, ledger_id)
    links = artifact_links(store, conn, rows) if link_artifacts else None
    events = _archive_events(store, conn, ledger_id)
    strings = StringTable()
    sections, grids, facts = [], [], {}
    values: dict[str, dict[str, dict[str, float | None]]] = {}  # benchmark -> arm -> case
    for i, benchmark_id in enumerate(chosen):
        own = [r for r in rows if r.get("benchmark_id") == benchmark_id]
        # compare's own row set (``compare_rows``: every version of an id without one, archived
        # rows included), taken from the rows already read instead of parsing them again.
        theirs = [r for r in rows if matches_benchmark(r.get("benchmark_id"), benchmark_id)]
        overview = compare_benchmark(theirs, benchmark_id)
        values[benchmark_id] = overview.case_values
        # the grid and the timeline show compare's arms: one per setting of a split arm
        labels = arm_labels(theirs)
        if labels:
            own = [{**r, "arm_id": labels.get(str(r.get("run_id")), r.get("arm_id"))} for r in own]
        arms = grid_arms(own, overview.arm_order)
        grid = build_grid(
            own,
            benchmark_id,
            arms,
            strings,
            overview.case_values,
            overview.policy,
            links.for_row if links is not None else None,
        )
        grids.append({"benchmark": strings.ref(benchmark_id), "slug": f"b{i}", **grid.page})
        facts[f"b{i}"] = grid.facts
        timeline = build_timeline(own, arms, [_for_benchmark(e, benchmark_id) for e in events])
        archived = sum(1 for r in own if r.get("archive_state") == "archived")
        sections.append(
            BenchmarkSection(
                benchmark_id=benchmark_id,
                slug=f"b{i}",
                overview=overview,
                timeline=timeline,
                case_count=len({r.get("case_id") for r in own}),
                active_runs=len(own) - archived,
                archived_runs=archived,
            )
        )
    document = build_document(rows, updated_at="", update_policy=None)
    cases = [c for c in active_cases(document) if c[0] in set(chosen)]
    data = {
        "buckets": [{"key": k, "label": v} for k, v in BUCKET_LABELS.items()],
        "run_columns": RUN_COLUMNS,
        "grids": grids,
        "decision_columns": DECISION_COLUMNS,
        "backlog_columns": BACKLOG_COLUMNS,
        "strings": strings.strings,
        "artifacts_linked": link_artifacts,
    }
    list_strings = StringTable()
    lists = {
        "strings": list_strings.strings,
        "decisions": _decisions(cases, list_strings, values),
        "backlog": _backlog(cases, list_strings),
    }
    audit = build_audit(store, conn, ledger_id, benchmark_ids, link_artifacts)
    link_counts = links.counts if links is not None else None
    return ReportContents(ledger_id, sections, audit, data, facts, lists, link_counts)


def _chosen(present: list[str], wanted: Sequence[str], ledger_id: str) -> list[str]:
    if not present:
        raise InputError(f"ledger {ledger_id} has no runs to report")
    unknown = [b for b in wanted if b not in present]
    if unknown:
        raise InputError(
            f"no benchmark {unknown[0]} in ledger {ledger_id} (it has: {', '.join(present)})"
        )
    return [b for b in present if b in wanted] if wanted else present


_Change = tuple[str, float, int, list[dict]]  # kind, time, position, rows changed


def _archive_events(store: EventStore, conn: Connection, ledger_id: str) -> list[_Change]:
    """The ledger's archive and restore events, with the rows each one changed."""
    found = []
    for event in store.read(
        stream=f"ledger/{ledger_id}",
        event_types=(LEDGER_RUNS_ARCHIVED, LEDGER_RUNS_RESTORED),
        conn=conn,
    ):
        rows = [r for r in (event.payload or {}).get("rows", []) if isinstance(r, dict)]
        kind = "archived" if event.event_type == LEDGER_RUNS_ARCHIVED else "restored"
        found.append((kind, instant(event.recorded_at), event.position, rows))
    return found


def _for_benchmark(event: _Change, benchmark_id: str) -> ArchiveEvent:
    kind, at, position, rows = event
    mine = [r for r in rows if r.get("benchmark_id") == benchmark_id]
    return ArchiveEvent(
        kind=kind,
        at=at,
        position=position,
        run_ids=frozenset(str(r.get("run_id")) for r in mine),
        batch_ids=frozenset(str(b) for r in mine if (b := r.get("archive_batch_id"))),
    )


def _decisions(
    cases: list, strings: StringTable, values: dict[str, dict[str, dict[str, float | None]]]
) -> list[list[int | None]]:
    """One line per case with an active run, as the Markdown's Case Decisions table, plus each
    arm's case value as compare counts it. The ledger's decision pairs a baseline with a
    treatment; a case that several arms ran without those roles is not "single arm": it is
    named for the arms and the best of them."""
    ref = strings.ref
    lines = []
    for bid, cid, node, active, archived in cases:
        decision = node.get("latest_decision") if isinstance(node, dict) else None
        decision = decision if isinstance(decision, dict) else {}
        runs = f"{len(active)} active / {archived} archived" if archived else str(len(active))
        arms = {
            arm: by_case[cid]
            for arm, by_case in values.get(bid, {}).items()
            if by_case.get(cid) is not None
        }
        verdict = decision.get("decision")
        if verdict == "single_arm_recorded" and len(arms) > 1:
            verdict = _several_arms(arms)
        lines.append(
            [
                ref(bid),
                ref(cid),
                ref(verdict),
                ref(" · ".join(f"{arm} {value:.2f}" for arm, value in arms.items())),
                ref(product_pair_status(decision)),
                ref(routing_class(decision)),
                ref(runs),
            ]
        )
    return lines


def _several_arms(arms: dict[str, float | None]) -> str:
    scored = {arm: value for arm, value in arms.items() if value is not None}
    top = max(scored.values())
    best = [arm for arm, value in scored.items() if value == top]
    if len(best) == len(scored):
        return f"{len(scored)}_arms_recorded: all at {top:.2f}"
    return f"{len(scored)}_arms_recorded: best {', '.join(best)} ({top:.2f})"


def _backlog(cases: list, strings: StringTable) -> list[list[int | None]]:
    """The Markdown's Repair Backlog: the same rows, in the same order."""
    entries = [
        (backlog_sort_key(bid, cid, row), bid, cid, row)
        for bid, cid, _node, active, _archived in cases
        for row in backlog_rows(active)
    ]
    entries.sort(key=lambda e: e[0])
    ref = strings.ref
    return [
        [
            ref(row.get("repair_priority")),
            ref(bid),
            ref(cid),
            ref(row.get("arm_id")),
            ref(row.get("repair_class")),
            ref(row.get("failure_class")),
            ref(profile_summary(row)),
            ref(row.get("next_action")),
        ]
        for _key, bid, cid, row in entries
    ]
