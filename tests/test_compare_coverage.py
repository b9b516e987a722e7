"""Coverage of compare's 95 % intervals, by simulation against known true rates.

Benchmarks are drawn with a known population pass rate: each case has its own difficulty
(a Beta-distributed pass probability around the rate, so cases vary), each attempt passes with
the case's probability, and a case's value is the mean of its attempts (the default policy).
The truth is the population rate (for pairs, the difference of the two arms' rates; the arms'
difficulties are correlated through a Gaussian copula, as two agents on the same cases are).
For every cell (cases × attempts × rate level) the test runs ``intervals.arm_intervals`` and
``intervals.paired_intervals`` — the code compare runs — on thousands of benchmarks at once,
prints the coverage table (docs/compare.md holds a copy) and fails if any cell covers the truth
less than 93 % of the time or any interval leaves [0, 1] ([−1, 1] for differences).
"""

from __future__ import annotations

import numpy as np
import pytest

from benchledger.projections.reports.compare import intervals

stats = pytest.importorskip("scipy.stats")

DRAWS = 2000
CASES = (3, 5, 10, 30, 100)
ATTEMPTS = (1, 3, 5)
# (reference rate, arm rate): near 0, near 0.5, near 1
LEVELS = {"near 0": (0.05, 0.10), "near 0.5": (0.45, 0.55), "near 1": (0.95, 0.90)}
SPREAD = 4.0  # Beta concentration a + b: case difficulties vary widely
CORRELATION = 0.6
FLOOR = 0.93


def _case_rates(rng: np.random.Generator, rates: tuple[float, float], n: int) -> np.ndarray:
    """(2, DRAWS, n) per-case pass probabilities of the reference and the arm."""
    cov = [[1.0, CORRELATION], [CORRELATION, 1.0]]
    latent = rng.multivariate_normal([0, 0], cov, size=(DRAWS, n))  # (DRAWS, n, 2)
    u = stats.norm.cdf(latent)
    out = np.empty((2, DRAWS, n))
    for side, rate in enumerate(rates):
        out[side] = stats.beta.ppf(u[..., side], rate * SPREAD, (1 - rate) * SPREAD)
    return out


def _coverage_table() -> list[tuple[int, int, str, float, float, float, float]]:
    rng = np.random.default_rng(20261206)
    table = []
    for n in CASES:
        for k in ATTEMPTS:
            for level, rates in LEVELS.items():
                p = _case_rates(rng, rates, n)
                values = rng.binomial(k, p) / k  # (2, DRAWS, n)
                ref, arm = values
                low, high, _ = intervals.arm_intervals(ref, 0.95)
                arm_cover = np.mean((low <= rates[0]) & (rates[0] <= high))
                arm_range = np.all((low >= 0) & (high <= 1) & (low < high))
                d_low, d_high, _ = intervals.paired_intervals(arm, ref, 0.95)
                truth = rates[1] - rates[0]
                pair_cover = np.mean((d_low <= truth) & (truth <= d_high))
                pair_range = np.all((d_low >= -1) & (d_high <= 1) & (d_low < d_high))
                width = float(np.mean(high - low))
                d_width = float(np.mean(d_high - d_low))
                assert arm_range and pair_range, (n, k, level)
                table.append((n, k, level, float(arm_cover), width, float(pair_cover), d_width))
    return table


def test_intervals_cover_the_truth_in_every_cell(capsys: pytest.CaptureFixture[str]) -> None:
    table = _coverage_table()
    lines = [
        "| cases | attempts | rate | arm coverage | arm width | paired coverage | paired width |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    lines += [
        f"| {n} | {k} | {level} | {a:.3f} | {aw:.2f} | {p:.3f} | {pw:.2f} |"
        for n, k, level, a, aw, p, pw in table
    ]
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    low = [(n, k, level, a, p) for n, k, level, a, _, p, _ in table if min(a, p) < FLOOR]
    assert not low, low
