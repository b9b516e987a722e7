"""The typed request of ``benchmark compare`` (cli.md): which arms of one benchmark, and how.

Built once at the click layer (or by the report's overview, which compares with the defaults)
and read by ``projections.reports.compare.document.build_compare``; every field is echoed in the
document.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CompareRequest:
    """What to compare and how; every field is echoed in the document."""

    benchmark_id: str
    arms: tuple[str, ...] = ()
    reference: str | None = None
    metric: str = "score"
    per_case: str = "mean"
    bootstrap: int = 2000
    seed: int = 0
    effect: float | None = 0.05
    allow_incomparable: bool = False
    confidence: float = 0.95
    pool_versions: bool = False  # one arm for runs of different agent versions / settings
