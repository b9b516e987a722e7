"""Runs over time, per arm: by when the runner ran them (first view) and by when the ledger
recorded them (second view), with archive and restore events marked on the second.

A curve is the cumulative number of runs each arm has recorded (``recorded_at``; archived runs
count, they were recorded). Large ledgers are thinned to at most ``MAX_POINTS`` points per arm,
taken at evenly spaced ranks, so the chart stays a few kilobytes whatever the ledger size while
every point still lies on the true curve.

Markers come from the event log (``ledger_runs_archived`` / ``ledger_runs_restored``, with
their positions); runs that arrived already archived (an imported loopx ledger) have no such
event, so their archive batches are marked from the rows' own ``archived_at``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from benchledger.ledger.rules.row.archive_state import is_archived
from benchledger.ledger.rules.row.timestamps import instant
from benchledger.projections.reports.html.grid import arm_of

MAX_POINTS = 400


@dataclass(frozen=True)
class Marker:
    at: float
    kind: str  # "archived" or "restored"
    runs: int
    position: int | None  # None: archived before import, known only from the rows


@dataclass(frozen=True)
class ArchiveEvent:
    """An archive or restore event of the ledger's stream, reduced to one benchmark."""

    kind: str
    at: float
    position: int
    run_ids: frozenset[str]
    batch_ids: frozenset[str]


@dataclass
class Timeline:
    series: dict[str, tuple[list[float], list[int]]] = field(default_factory=dict)
    markers: list[Marker] = field(default_factory=list)
    # the same runs by when the runner started them (``run_window.started_at``); the first view
    ran: dict[str, tuple[list[float], list[int]]] = field(default_factory=dict)
    without_run_time: int = 0  # runs whose record kept no runner start time

    @property
    def ran_empty(self) -> bool:
        return not any(times for times, _ in self.ran.values())

    @property
    def empty(self) -> bool:
        return not any(times for times, _ in self.series.values())


def build_timeline(
    rows: Sequence[dict], arms: Sequence[str], events: Sequence[ArchiveEvent]
) -> Timeline:
    timeline = Timeline()
    for arm in arms:
        mine = [r for r in rows if arm_of(r) == arm]
        times = sorted(t for r in mine if math.isfinite(t := _at(r)))
        timeline.series[arm] = _thinned(times)
        ran = sorted(t for r in mine if math.isfinite(t := _ran(r)))
        timeline.ran[arm] = _thinned(ran)
        timeline.without_run_time += len(mine) - len(ran)
    timeline.markers = [
        Marker(e.at, e.kind, len(e.run_ids), e.position) for e in events if e.run_ids
    ] + _imported_batches(rows, {b for e in events for b in e.batch_ids})
    timeline.markers.sort(key=lambda m: (m.at, m.kind))
    return timeline


def _at(row: dict) -> float:
    return instant(row.get("recorded_at"))


def _ran(row: dict) -> float:
    window = row.get("run_window")
    return instant(window.get("started_at")) if isinstance(window, dict) else math.nan


def _thinned(times: list[float]) -> tuple[list[float], list[int]]:
    """(time, cumulative count) at evenly spaced ranks; the first and last rank always kept."""
    n = len(times)
    if n <= MAX_POINTS:
        ranks = list(range(n))
    else:
        step = (n - 1) / (MAX_POINTS - 1)
        ranks = sorted({round(k * step) for k in range(MAX_POINTS)})
    return [times[i] for i in ranks], [i + 1 for i in ranks]


def _imported_batches(rows: Sequence[dict], covered: set[str]) -> list[Marker]:
    """Archive batches the event log has no event for (the rows came in archived)."""
    batches: dict[str, list[float]] = {}
    for row in rows:
        batch = row.get("archive_batch_id")
        if not is_archived(row) or not isinstance(batch, str) or batch in covered:
            continue
        at = instant(row.get("archived_at"))
        if math.isfinite(at):
            batches.setdefault(batch, []).append(at)
    return [Marker(min(times), "archived", len(times), None) for times in batches.values()]
