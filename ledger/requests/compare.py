"""The typed request of ``benchmark compare`` (docs/formats/cli.md): which arms of one benchmark,
and how.

Built once at the click layer (or by the report's overview, which compares with the defaults)
and read by ``projections.reports.compare.document.build_compare``; every field is echoed in the
document.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchledger.ledger.core.errors import InputError

# Past this many resamples the bootstrap interval stops changing in any digit a report shows
# (the Monte-Carlo error of a percentile shrinks as 1/sqrt(resamples)), while time and memory
# grow with every one: ``--bootstrap 1e9`` asked numpy for ~15 GiB of draws.
MAX_BOOTSTRAP = 100_000


def check_bootstrap(resamples: int) -> int:
    """``resamples`` when 0 (off) to MAX_BOOTSTRAP; otherwise one line saying why not."""
    if not 0 <= resamples <= MAX_BOOTSTRAP:
        raise InputError(
            f"--bootstrap must be 0 (off) to {MAX_BOOTSTRAP:,} resamples, not {resamples:,}: "
            "more does not change the interval's shown digits (its Monte-Carlo error shrinks "
            "as 1/sqrt(resamples)) but costs time and memory with each one"
        )
    return resamples


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

    def __post_init__(self) -> None:
        check_bootstrap(self.bootstrap)
