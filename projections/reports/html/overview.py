"""The overview of one benchmark, as ``benchledger compare`` states it.

``compare_benchmark`` is the single point where the report meets ``compare``: it asks for the
same document ``benchledger compare --benchmark-id B --format json`` prints (default options,
the same rows) and shapes it for the page and the charts. Nothing here recomputes a statistic.
When compare refuses (incomparable runs, no countable arm), the overview shows its message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from benchledger.ledger.core.errors import BenchledgerError
from benchledger.ledger.requests.compare import CompareRequest
from benchledger.projections.reports.html.charts import CostPoint, Interval

COST_BASES = {"cost_usd_per_case": "cost per case (USD)", "tokens_per_case": "tokens per case"}


@dataclass
class Overview:
    benchmark_id: str
    document: dict[str, Any] | None = None
    refusal: str | None = None
    forest: list[Interval] = field(default_factory=list)
    cost_points: list[CostPoint] = field(default_factory=list)
    cost_basis: str | None = None
    # compare's value of each (arm, case) under its per-case policy: what the grid shows
    case_values: dict[str, dict[str, float | None]] = field(default_factory=dict)
    policy: str = "mean"

    @property
    def arm_order(self) -> list[str]:
        return [a["arm_id"] for a in (self.document or {}).get("arms", [])]


def compare_benchmark(rows: Sequence[dict], benchmark_id: str) -> Overview:
    """compare's document for ``benchmark_id`` (its default request), or its refusal."""
    from benchledger.projections.reports.compare.document import build_compare_with_cases

    request = CompareRequest(benchmark_id=benchmark_id)
    try:
        document, refusal, values = build_compare_with_cases(rows, request)
    except BenchledgerError as err:
        return Overview(benchmark_id, refusal=err.message)
    policy = request.per_case
    if document is None:
        return Overview(benchmark_id, refusal=refusal, case_values=values, policy=policy)
    overview = Overview(benchmark_id, document=document, case_values=values, policy=policy)
    overview.forest = [
        Interval(p["arm_id"], p["mean_diff"], p["ci_low"], p["ci_high"])
        for p in document.get("paired", [])
        if None not in (p.get("mean_diff"), p.get("ci_low"), p.get("ci_high"))
    ]
    overview.cost_basis, overview.cost_points = _cost_points(document.get("arms", []))
    return overview


def _cost_points(arms: Sequence[dict[str, Any]]) -> tuple[str | None, list[CostPoint]]:
    """Arms placed on compare's own Pareto basis (dollars, else tokens); none when unjudged."""
    bases = {(a.get("cost") or {}).get("pareto_basis") for a in arms} - {None}
    if len(bases) != 1:
        return None, []
    basis = bases.pop()
    points = [
        CostPoint(a["arm_id"], a["cost"][basis], a["mean"], bool(a.get("pareto")))
        for a in arms
        if a.get("mean") is not None and a["cost"].get(basis) is not None
    ]
    return basis, points
