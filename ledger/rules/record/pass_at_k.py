"""The unbiased pass@k estimator (docs/formats/benchmark_run_v0.md §4.4), in one place for every
source adapter and the comparison statistics.
"""

from __future__ import annotations

from math import comb


def pass_at_k(n: int, c: int) -> dict[str, float]:
    """Unbiased pass@k over n scored attempts with c passes (§4.4).

    k ranges over powers of two from 2 and multiples of 5, up to n.
    """
    ks: set[int] = set(range(5, n + 1, 5))
    k = 2
    while k <= n:
        ks.add(k)
        k *= 2
    return {str(k): pass_at_k_estimate(n, c, k) for k in sorted(ks)}


def pass_at_k_estimate(n: int, c: int, k: int) -> float:
    """1 − C(n−c, k) / C(n, k): the chance that k of the n attempts include a pass (k ≤ n)."""
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)
