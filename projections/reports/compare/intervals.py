"""Which interval ``compare`` reports, by a stated rule, so that no interval lies about its data.

The rule (docs/compare.md, "Intervals"), for an arm's case values and for paired differences:

* values not all inside [0, 1] (a score on another scale): the Student-t interval over cases
  (Miller 2024), the only method here that needs no bounds;
* every case value 0 or 1 (a pass/fail metric with one attempt per case):
  an arm gets Clopper–Pearson below ``MANY_CASES`` cases (exact: coverage guaranteed at any n)
  and Wilson's score interval (Wilson 1927) from there; a pair gets the betting interval below
  ``MANY_CASES`` and Newcombe's hybrid score interval for paired proportions (Newcombe 1998,
  method 10) from there;
* other case values in [0, 1] (means over attempts, partial scores), and pairs of them: the
  betting interval of Waudby-Smith and Ramdas (2023) at any n. The t-interval over cases
  (Miller's clustered SE) under-covers these skewed, bounded values even at 100 cases (0.90–0.93
  near a rate of 0 or 1 in the simulation) and has zero width when every value is the same.

The betting interval and Clopper–Pearson hold their level for any distribution on [0, 1] at any
n, which the t-interval and the bootstrap do not with 3–10 cases (``tests/test_compare_coverage.py``
simulates it). Paired differences d ∈ [−1, 1] are mapped to (d + 1)/2 ∈ [0, 1] and back.

Every function works on a batch: one row of ``values`` per sample, so the coverage simulation
runs the very code compare runs, thousands of samples at once. numpy and mpmath only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from statistics import NormalDist

import numpy as np

from benchledger.projections.reports.compare import stats as cs

MANY_CASES = 30
BISECTIONS = 40
BET_CAP = 0.5  # c of Waudby-Smith and Ramdas: a bet never risks more than half the capital

T_OVER_CASES = "student_t_over_cases"
CLOPPER_PEARSON = "clopper_pearson_exact"
WILSON = "wilson_score"
NEWCOMBE = "newcombe_paired_score"
BETTING = "betting_waudby_smith_ramdas"
METHODS = (T_OVER_CASES, CLOPPER_PEARSON, WILSON, NEWCOMBE, BETTING)
SHORT_NAMES = {
    T_OVER_CASES: "Student t",
    CLOPPER_PEARSON: "Clopper–Pearson",
    WILSON: "Wilson",
    NEWCOMBE: "Newcombe",
    BETTING: "betting, Waudby-Smith–Ramdas",
}


def _bounded(values: np.ndarray, low: float, high: float) -> bool:
    return bool(values.size) and bool(np.all((values >= low) & (values <= high)))


def _binary(values: np.ndarray) -> np.ndarray:
    """Per row: every value exactly 0 or 1."""
    return np.all((values == 0) | (values == 1), axis=1)


def arm_intervals(
    values: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(low, high, method per row) for the mean of each row of ``values`` (shape (D, n), n ≥ 1).

    Rows of values outside [0, 1] get the t-interval, NaN where it is undefined (n < 2)."""
    n = values.shape[1]
    if not _bounded(values, 0.0, 1.0):
        low, high = _t_bounds(values, confidence, None)
        return low, high, [T_OVER_CASES] * len(values)
    binary = _binary(values)
    low = np.empty(len(values))
    high = np.empty(len(values))
    methods = [""] * len(values)
    if binary.any():
        passes = values[binary].sum(axis=1).round().astype(int)
        if n < MANY_CASES:
            table = np.array([clopper_pearson(k, n, confidence) for k in range(n + 1)])
            low[binary], high[binary] = table[passes, 0], table[passes, 1]
            name = CLOPPER_PEARSON
        else:
            low[binary], high[binary] = wilson(passes, n, confidence)
            name = WILSON
        for i in np.flatnonzero(binary):
            methods[i] = name
    _continuous(values, ~binary, confidence, low, high, methods, (0.0, 1.0))
    return low, high, methods


def paired_intervals(
    arm: np.ndarray, reference: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(low, high, method per row) for the mean of ``arm − reference`` (shapes (D, n), paired by
    column)."""
    n = arm.shape[1]
    diffs = arm - reference
    if not (_bounded(arm, 0.0, 1.0) and _bounded(reference, 0.0, 1.0)):
        low, high = _t_bounds(diffs, confidence, None)
        return low, high, [T_OVER_CASES] * len(diffs)
    binary = _binary(arm) & _binary(reference)
    low = np.empty(len(diffs))
    high = np.empty(len(diffs))
    methods = [""] * len(diffs)
    if binary.any() and n >= MANY_CASES:
        a, r = arm[binary], reference[binary]
        low[binary], high[binary] = newcombe_paired(
            (a * r).sum(axis=1),
            (a * (1 - r)).sum(axis=1),
            ((1 - a) * r).sum(axis=1),
            n,
            confidence,
        )
        for i in np.flatnonzero(binary):
            methods[i] = NEWCOMBE
        rest = ~binary
    else:
        rest = np.ones(len(diffs), dtype=bool)
    _continuous(diffs, rest, confidence, low, high, methods, (-1.0, 1.0))
    return low, high, methods


def _continuous(
    values: np.ndarray,
    rows: np.ndarray,
    confidence: float,
    low: np.ndarray,
    high: np.ndarray,
    methods: list[str],
    span: tuple[float, float],
) -> None:
    """Fill ``rows`` (a mask) of ``low``/``high`` with the betting interval of the values
    mapped from ``span`` onto [0, 1] and back."""
    if not rows.any():
        return
    lo, hi = span
    unit = (values[rows] - lo) / (hi - lo)
    b_low, b_high = betting_intervals(unit, confidence)
    low[rows] = lo + b_low * (hi - lo)
    high[rows] = lo + b_high * (hi - lo)
    for i in np.flatnonzero(rows):
        methods[i] = BETTING


def _t_bounds(
    values: np.ndarray, confidence: float, span: tuple[float, float] | None
) -> tuple[np.ndarray, np.ndarray]:
    n = values.shape[1]
    if n < 2:
        nan = np.full(len(values), np.nan)
        return nan, nan.copy()
    mean = values.mean(axis=1)
    half = cs.t_quantile((1 + confidence) / 2, n - 1) * values.std(axis=1, ddof=1) / math.sqrt(n)
    low, high = mean - half, mean + half
    if span is not None:
        low, high = np.clip(low, *span), np.clip(high, *span)
    return low, high


# ------------------------------------------------------------------------------- proportions


def _binomial_tail(k: int, n: int, p: float) -> float:
    """P(X ≥ k) for X ~ Binomial(n, p), summed exactly term by term (n < ``MANY_CASES``)."""
    return math.fsum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


def _solve(f: object, target: float) -> float:
    """The p in [0, 1] where the increasing function ``f`` reaches ``target`` (bisection)."""
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if f(mid) < target:  # type: ignore[operator]
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def clopper_pearson(k: int, n: int, confidence: float) -> tuple[float, float]:
    """Clopper and Pearson's exact interval for k passes in n: coverage ≥ the level at any n."""
    tail = (1 - confidence) / 2
    low = 0.0 if k == 0 else _solve(lambda p: _binomial_tail(k, n, p), tail)
    high = 1.0 if k == n else _solve(lambda p: _binomial_tail(k + 1, n, p), 1 - tail)
    return low, high


def wilson(passes: np.ndarray, n: int, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval (1927): inside [0, 1], never zero width."""
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    p = np.asarray(passes, dtype=float) / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def newcombe_paired(
    both: np.ndarray, arm_only: np.ndarray, reference_only: np.ndarray, n: int, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe's (1998) method 10 for p_arm − p_reference on paired 0/1 outcomes: the Wilson
    limits of each proportion, combined with the phi correlation of the 2 × 2 table."""
    neither = n - both - arm_only - reference_only
    p1 = (both + arm_only) / n
    p2 = (both + reference_only) / n
    l1, u1 = wilson(both + arm_only, n, confidence)
    l2, u2 = wilson(both + reference_only, n, confidence)
    margins = (both + arm_only) * (reference_only + neither)
    margins = (margins * (both + reference_only) * (arm_only + neither)).astype(float)
    cross = both * neither - arm_only * reference_only
    phi = np.where(margins > 0, cross / np.sqrt(np.where(margins > 0, margins, 1.0)), 0.0)
    d = p1 - p2
    below = (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    above = (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2
    below, above = np.sqrt(np.maximum(0.0, below)), np.sqrt(np.maximum(0.0, above))
    return np.clip(d - below, -1.0, 1.0), np.clip(d + above, -1.0, 1.0)


# ----------------------------------------------------------------------------------- betting


def betting_intervals(values: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Waudby-Smith and Ramdas (2023), hedged capital: the means m ∈ [0, 1] at which a gambler
    betting against "the mean is m" does not end with 1/α times their capital. Valid (Markov's
    inequality: the capital's expectation under the true mean is 1) for any distribution on
    [0, 1] at any n, and never zero width.

    Bets are predictable: λ_t = √(2 log(2/α) / (n σ̂²_{t−1})) from the values before t (in the
    given order: compare's cases by id), capped at c/m upwards and c/(1 − m) downwards; the
    capital is max(K⁺, K⁻)/2. Each end is found by bisection between the sample mean and the
    end of [0, 1] to 2⁻⁴⁰, keeping the rejected side (the interval is never narrowed).
    """
    alpha = 1 - confidence
    d, n = values.shape
    steps = np.arange(1, n + 1)
    mu = (0.5 + np.cumsum(values, axis=1)) / (steps + 1)  # μ̂_t
    prev_mu = np.concatenate([np.full((d, 1), 0.5), mu[:, :-1]], axis=1)
    sigma2 = (0.25 + np.cumsum((values - prev_mu) ** 2, axis=1)) / (steps + 1)  # σ̂²_t
    prev_sigma2 = np.concatenate([np.full((d, 1), 0.25), sigma2[:, :-1]], axis=1)
    lam = np.sqrt(2 * math.log(2 / alpha) / (n * prev_sigma2))  # (d, n)
    threshold = math.log(2 / alpha)  # max(K⁺, K⁻)/2 ≥ 1/α

    def rejected(m: np.ndarray) -> np.ndarray:
        centred = values - m[:, None]
        with np.errstate(divide="ignore"):
            up_cap = np.where(m > 0, BET_CAP / np.where(m > 0, m, 1), np.inf)[:, None]
            down_cap = np.where(m < 1, BET_CAP / np.where(m < 1, 1 - m, 1), np.inf)[:, None]
        up = np.log1p(np.minimum(lam, up_cap) * centred).sum(axis=1)
        down = np.log1p(-np.minimum(lam, down_cap) * centred).sum(axis=1)
        return np.maximum(up, down) >= threshold

    mean = values.mean(axis=1)
    return _edge(rejected, mean, 0.0), _edge(rejected, mean, 1.0)


def _edge(rejected: Callable[[np.ndarray], np.ndarray], mean: np.ndarray, end: float) -> np.ndarray:
    """Per row, the boundary between the accepted sample mean and a rejected ``end``; ``end``
    itself where it is not rejected."""
    outer = np.full(mean.shape, end)
    inner = mean.copy()
    open_end = ~rejected(outer)
    for _ in range(BISECTIONS):
        mid = (outer + inner) / 2
        out = rejected(mid)
        outer = np.where(out, mid, outer)
        inner = np.where(out, inner, mid)
    return np.where(open_end, end, outer)
