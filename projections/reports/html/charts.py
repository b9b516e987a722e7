"""The report's charts, drawn server-side by matplotlib as SVG files.

SVG drawn here needs no script and fetches nothing when the page opens, and an ``<img>`` cannot
run code or load anything from outside the report directory. Text stays text
(``svg.fonttype = none``) and the output is deterministic (fixed id salt, no date), so the same
ledger state always yields the same bytes. matplotlib is imported only when a chart is drawn.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from benchledger.projections.reports.html.packing import public_text
from benchledger.projections.reports.html.timeline import Timeline

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

WIDTH = 7.2
ARM_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")
MARKER_COLOURS = {"archived": "#7f7f7f", "restored": "#17becf"}


@dataclass(frozen=True)
class Interval:
    """One row of a forest plot: an estimate with its 95 % interval."""

    label: str
    estimate: float
    low: float
    high: float


@dataclass(frozen=True)
class CostPoint:
    label: str
    cost: float
    score: float
    pareto: bool


def colour(index: int) -> str:
    return ARM_COLOURS[index % len(ARM_COLOURS)]


@contextmanager
def _figure(height: float) -> Iterator[Any]:
    import matplotlib
    from matplotlib.figure import Figure

    style: dict[RcKeyType, Any] = {
        "svg.fonttype": "none",
        "svg.hashsalt": "benchledger-report",
        "font.family": "sans-serif",
        "font.size": 9,
        "axes.spines.top": False,
        "axes.spines.right": False,
    }
    with matplotlib.rc_context(style):
        yield Figure(figsize=(WIDTH, height), layout="constrained")


def _svg(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    return buffer.getvalue()


def forest_svg(rows: Sequence[Interval], reference: str, title: str) -> bytes:
    """Each arm's difference from the reference with its interval; a line at no difference."""
    with _figure(0.9 + 0.38 * len(rows)) as fig:
        ax = fig.subplots()
        ys = list(range(len(rows)))[::-1]
        for y, row in zip(ys, rows, strict=True):
            ax.plot([row.low, row.high], [y, y], color="#333333", linewidth=1.6)
            ax.plot([row.estimate], [y], marker="s", color="#1f77b4", markersize=6)
        ax.axvline(0.0, color="#999999", linewidth=0.8, linestyle="--")
        ax.set_yticks(ys, [public_text(r.label) for r in rows])
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.set_xlabel(public_text(f"{title}: arm minus {reference}"))
        return _svg(fig)


LABEL_STEP = 11.0  # points between stacked labels: more than a label's line height
NEAR = 0.12  # share of the axis span within which two points' labels would collide


def label_offsets(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """Where each point's label goes (offset in points): beside its point, and for points
    close to ones already labelled (six arms at the same cost and score), stacked one line
    further down each, so no two labels print on top of each other."""
    if not points:
        return []
    xs, ys = [x for x, _ in points], [y for _, y in points]
    span_x = (max(xs) - min(xs)) or 1.0
    span_y = (max(ys) - min(ys)) or 1.0
    placed: list[tuple[float, float, int]] = []  # x, y, line of each labelled point
    offsets = []
    for x, y in points:
        taken = {
            line
            for px, py, line in placed
            if abs(px - x) / span_x < NEAR and abs(py - y) / span_y < NEAR
        }
        line = next(k for k in range(len(points) + 1) if k not in taken)
        placed.append((x, y, line))
        offsets.append((6.0, 4.0 - LABEL_STEP * line))
    return offsets


def cost_svg(points: Sequence[CostPoint], cost_label: str, score_label: str) -> bytes:
    """Each arm as a point; the Pareto frontier (cheaper or better, nothing dominating) drawn."""
    with _figure(3.2) as fig:
        ax = fig.subplots()
        offsets = label_offsets([(p.cost, p.score) for p in points])
        for i, p in enumerate(points):
            label = public_text(p.label)
            ring = {"edgecolors": "#111111", "linewidths": 1.8} if p.pareto else {}
            ax.scatter([p.cost], [p.score], s=52, color=colour(i), zorder=3, label=label, **ring)
            ax.annotate(label, (p.cost, p.score), textcoords="offset points", xytext=offsets[i])
        frontier = sorted((p for p in points if p.pareto), key=lambda p: p.cost)
        if len(frontier) > 1:
            ax.step(
                [p.cost for p in frontier],
                [p.score for p in frontier],
                where="post",
                color="#555555",
                linewidth=1.0,
                linestyle="--",
                label="Pareto frontier",
            )
        ax.set_xlabel(cost_label)
        ax.set_ylabel(score_label)
        ax.margins(x=0.25, y=0.2)
        return _svg(fig)


def timeline_svg(timeline: Timeline, ran: bool = False) -> bytes:
    """Cumulative runs per arm, by when they were recorded (archive and restore events as
    vertical lines) or, with ``ran``, by when the runner started them."""
    with _figure(2.9) as fig:
        ax = fig.subplots()
        series = timeline.ran if ran else timeline.series
        for i, (arm, (times, counts)) in enumerate(series.items()):
            if times:
                label = public_text(arm)
                ax.step(_dates(times), counts, where="post", color=colour(i), label=label)
        seen: set[str] = set()
        for marker in () if ran else timeline.markers:
            ax.axvline(
                _dates([marker.at])[0],
                color=MARKER_COLOURS.get(marker.kind, "#7f7f7f"),
                linewidth=0.8,
                linestyle=":",
                label=None if marker.kind in seen else f"{marker.kind} (event)",
            )
            seen.add(marker.kind)
        ax.set_ylabel("runs started" if ran else "runs recorded")
        ax.yaxis.get_major_locator().set_params(integer=True)
        _pad_short_span(ax, [t for times, _ in series.values() for t in times])
        ax.legend(loc="upper left", fontsize=8, frameon=False)
        fig.autofmt_xdate()
        return _svg(fig)


def _pad_short_span(ax: Any, times: Sequence[float]) -> None:
    """Runs recorded within an hour (one ingest) get an hour either side, not years."""
    if times and max(times) - min(times) < 3600:
        ax.set_xlim(*_dates([min(times) - 3600, max(times) + 3600]))


def _dates(times: Sequence[float]) -> list[datetime]:
    return [datetime.fromtimestamp(t, UTC) for t in times]
