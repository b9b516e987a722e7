"""The cost chart's labels: six arms at one cost and score once printed on top of each other."""

from __future__ import annotations

import itertools

from benchledger.projections.reports.html.charts import (
    LABEL_STEP,
    CostPoint,
    cost_svg,
    label_offsets,
)


def test_labels_of_coinciding_points_are_stacked_apart() -> None:
    offsets = label_offsets([(0.5, 0.8)] * 6)
    ys = [y for _x, y in offsets]
    assert len(set(ys)) == 6
    for a, b in itertools.combinations(ys, 2):
        assert abs(a - b) >= LABEL_STEP  # at least a line apart: no overlap


def test_labels_of_distant_points_stay_beside_them() -> None:
    assert label_offsets([(0.0, 0.0), (1.0, 1.0), (0.0, 1.0)]) == [(6.0, 4.0)] * 3
    near = label_offsets([(0.0, 0.0), (1.0, 1.0), (0.01, 0.02)])
    assert near[0] == near[1] == (6.0, 4.0) and near[2] == (6.0, 4.0 - LABEL_STEP)


def test_the_cost_chart_draws_six_coinciding_arms() -> None:
    points = [CostPoint(f"arm-{i}", 1.0, 0.5, i == 0) for i in range(6)]
    svg = cost_svg(points, "cost per case (USD)", "mean").decode()
    assert svg.startswith("<?xml") and svg.count("arm-") >= 6


def test_the_timeline_plots_when_runs_ran_with_ingest_time_as_the_second_view() -> None:
    """Issue 32: the timeline plotted the moment of ingest (one vertical line per import)."""
    from benchledger.ledger.rules.row.timestamps import instant
    from benchledger.projections.reports.html.timeline import build_timeline

    ingest = "2026-06-01T00:00:00Z"
    rows = [
        {"run_id": "a", "arm_id": "A", "recorded_at": ingest,
         "run_window": {"started_at": "2026-05-01T10:00:00Z"}},
        {"run_id": "b", "arm_id": "A", "recorded_at": ingest,
         "run_window": {"started_at": "2026-05-03T10:00:00Z"}},
        {"run_id": "c", "arm_id": "A", "recorded_at": ingest},  # kept no runner time
    ]  # fmt: skip
    timeline = build_timeline(rows, ["A"], [])
    assert timeline.ran["A"] == (
        [instant("2026-05-01T10:00:00Z"), instant("2026-05-03T10:00:00Z")],
        [1, 2],
    )
    assert timeline.series["A"] == ([instant(ingest)] * 3, [1, 2, 3])
    assert timeline.without_run_time == 1 and not timeline.ran_empty
