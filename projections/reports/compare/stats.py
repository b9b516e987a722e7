"""The statistics behind ``benchledger compare``: no I/O, numbers in, numbers out.

Follows E. Miller, "Adding Error Bars to Evals" (2024): the case is the unit of analysis (a
case's attempts are correlated, so they are folded into one case value first and the standard
error is taken over cases — the clustered standard error with the case as cluster); arms are
compared on paired differences over the cases both arms ran; the variance of a case mean splits
into a between-case part and a within-case (attempt) part divided by the attempts, which is what
tells whether more attempts or more cases would help; power uses the normal approximation.

numpy (bootstrap, quantiles) and mpmath (the Student-t distribution) are imported here only, so
no command other than ``compare`` loads them. scipy would give the same numbers (the tests check
that it does) but importing ``scipy.stats`` alone takes longer than the whole comparison is
allowed to (bench/README.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from statistics import NormalDist

import mpmath
import numpy as np

from benchledger.ledger.rules.record.pass_at_k import pass_at_k_estimate

POWER = 0.8
ALPHA = 0.05


@dataclass(frozen=True)
class CasePolicy:
    """How a case's attempts become one value: mean, pass@k, best-of, first or latest."""

    name: str
    k: int | None = None

    @classmethod
    def parse(cls, text: str) -> CasePolicy:
        if text in ("mean", "best-of", "first", "latest"):
            return cls(text)
        if text.startswith("pass@k:"):
            k = text.removeprefix("pass@k:")
            if k.isdigit() and int(k) >= 1:
                return cls("pass@k", int(k))
        raise ValueError(
            f"--per-case must be mean, pass@k:K (K >= 1), best-of, first or latest, not {text!r}"
        )

    @property
    def label(self) -> str:
        return f"pass@k:{self.k}" if self.name == "pass@k" else self.name

    def value(self, attempts: Sequence[float]) -> float | None:
        """The case value, or None when the attempts cannot give one (pass@k with n < k)."""
        if not attempts:
            return None
        if self.name == "mean":
            return math.fsum(attempts) / len(attempts)
        if self.name == "best-of":
            return max(attempts)
        if self.name == "first":
            return attempts[0]
        if self.name == "latest":
            return attempts[-1]
        n, c = len(attempts), sum(1 for a in attempts if a >= 1)
        if self.k is None or n < self.k:
            return None
        return pass_at_k_estimate(n, c, self.k)


@dataclass(frozen=True)
class Interval:
    """Mean of case values with its standard error and a Student-t interval (n − 1 df)."""

    n: int
    mean: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    sd: float | None


def t_interval(values: Sequence[float], confidence: float) -> Interval:
    n = len(values)
    if n == 0:
        return Interval(0, None, None, None, None, None)
    data = np.asarray(values, dtype=float)
    mean = float(data.mean())
    if n < 2:
        return Interval(n, mean, None, None, None, None)
    sd = float(data.std(ddof=1))
    se = sd / math.sqrt(n)
    half = t_quantile((1 + confidence) / 2, n - 1) * se
    return Interval(n, mean, se, mean - half, mean + half, sd)


def t_two_sided_p(t: float, df: int) -> float:
    """P(|T| ≥ |t|) for Student's t with ``df`` degrees of freedom."""
    return float(_two_sided(mpmath.mpf(t), df))


def t_quantile(q: float, df: int) -> float:
    """The t value below which a share ``q`` (> 1/2) of the distribution lies, by root finding on
    the exact tail from the normal quantile as the first guess."""
    tail = mpmath.mpf(2 * (1 - q))
    start = NormalDist().inv_cdf(q)
    root = mpmath.findroot(lambda t: _two_sided(t, df) - tail, start)
    return float(root)


def _two_sided(t: mpmath.mpf, df: int) -> mpmath.mpf:
    """I_x(df/2, 1/2) with x = df/(df+t²); for x near 1 (many cases, small t) through the
    complement 1 − I_{1−x}(1/2, df/2), whose series converges in a few terms instead of
    thousands."""
    t2 = t * t
    x = df / (df + t2)
    if x < 0.5:
        return mpmath.betainc(mpmath.mpf(df) / 2, 0.5, 0, x, regularized=True)
    return 1 - mpmath.betainc(0.5, mpmath.mpf(df) / 2, 0, t2 / (df + t2), regularized=True)


def paired_p_value(interval: Interval) -> float | None:
    """Two-sided one-sample t-test of the mean difference against 0.

    With no spread (every difference equal) the test is undefined unless every difference is 0,
    where nothing differs and p = 1.
    """
    if interval.n < 2 or interval.mean is None or interval.se is None:
        return None
    if interval.se == 0:
        return 1.0 if interval.mean == 0 else None
    return t_two_sided_p(interval.mean / interval.se, interval.n - 1)


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment over the p-values that exist (None stays None)."""
    present = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(present)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, index) in enumerate(present):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[index] = running
    return adjusted


def mcnemar_exact(b: int, c: int) -> float:
    """Exact McNemar: two-sided binomial test of b discordant pairs out of n = b + c at p = 1/2.

    The distribution is symmetric, so the two-sided p-value is 2·P(X ≤ min(b, c)), at most 1,
    summed in exact integers.
    """
    n = b + c
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / 2**n)


BOOTSTRAP_BLOCK = 4096  # resamples drawn at once


def bootstrap_interval(
    values: Sequence[float], resamples: int, seed: int, confidence: float
) -> tuple[float, float] | None:
    """Percentile interval of the mean over cases resampled with replacement.

    Drawing n cases with replacement is drawing how many times each distinct value comes up:
    a multinomial over the distinct values with their shares as probabilities. Resample b is
    the b-th ``numpy.random.default_rng(seed).multinomial(n, shares)`` (values sorted); its mean
    is counts · values / n. The same distribution as drawing case indices, at a cost that grows
    with the distinct values instead of the cases. The interval is ``numpy.quantile`` (linear)
    of the resample means at (1 ± level)/2.
    """
    n = len(values)
    if n == 0 or resamples < 1:
        return None
    distinct, counts = np.unique(np.asarray(values, dtype=float), return_counts=True)
    rng = np.random.default_rng(seed)
    # Drawn a block at a time (the same stream, so the same numbers as one draw of every
    # resample): memory is one block of counts, not resamples x distinct values.
    means = np.concatenate(
        [
            rng.multinomial(n, counts / n, size=min(BOOTSTRAP_BLOCK, resamples - start))
            @ distinct
            / n
            for start in range(0, resamples, BOOTSTRAP_BLOCK)
        ]
    )
    alpha = 1 - confidence
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


@dataclass(frozen=True)
class VarianceSplit:
    """Between-case variance of true case means and mean within-case (attempt) variance.

    ``within`` pools the sample variances (n − 1) of cases with at least two attempts;
    ``between`` = var(case means) − within · mean(1/k), floored at 0 (Miller: the variance of a
    case mean is σ²_between + σ²_within / k). Without any repeated case the two cannot be told
    apart: ``within`` is None and ``between`` is the whole variance of the case means.
    """

    between: float | None
    within: float | None
    mean_inverse_attempts: float | None


def variance_split(cases: Sequence[Sequence[float]]) -> VarianceSplit:
    cases = [c for c in cases if c]
    if not cases:
        return VarianceSplit(None, None, None)
    sizes = np.array([len(c) for c in cases])
    flat = np.array(list(chain.from_iterable(cases)), dtype=float)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    means = np.add.reduceat(flat, starts) / sizes
    squares = np.add.reduceat((flat - np.repeat(means, sizes)) ** 2, starts)
    repeated = sizes >= 2
    within = float(np.mean(squares[repeated] / (sizes[repeated] - 1))) if repeated.any() else None
    if len(cases) < 2:
        return VarianceSplit(None, within, None)
    inverse = float(np.mean(1 / sizes))
    total = float(means.var(ddof=1))
    if within is None:
        return VarianceSplit(total, None, inverse)
    return VarianceSplit(max(0.0, total - within * inverse), within, inverse)


def z_sum(alpha: float = ALPHA, power: float = POWER) -> float:
    """z(1 − α/2) + z(power): the distance, in standard errors, a detectable effect must span."""
    normal = NormalDist()
    return normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(power)


# The variance of a paired difference of two pass rates in the binomial worst case: each arm's
# attempts Bernoulli(1/2), the arms independent: 1/4 + 1/4.
WORST_CASE_PAIRED_VARIANCE = 0.5


@dataclass(frozen=True)
class PowerPlan:
    mde: float | None
    cases_needed: int | None
    attempts_per_case: int | None
    attempts_limited_by_cases: bool
    basis: str | None = None  # observed_sd, binomial_worst_case, or None: not estimable
    reason: str | None = None  # why not estimable, or why the worst case stands in


def power_plan(
    diffs: Interval,
    effect: float | None,
    *,
    within_sum: float | None,
    mean_inverse_attempts: float | None,
    bounded: bool = True,
) -> PowerPlan:
    """Minimum detectable difference for the cases in hand, and what would detect ``effect``.

    ``cases_needed`` keeps today's spread of paired differences; ``attempts_per_case`` keeps
    today's cases and asks how many attempts per case (in both arms) would shrink the within-case
    part enough: n·δ²/z² ≥ σ²_between,d + (σ²_w,arm + σ²_w,ref)/K. When the between-case part
    alone is too large no K suffices (``attempts_limited_by_cases``).

    A spread of zero, or from fewer than two cases, says nothing about the next case: for case
    values in [0, 1] (``bounded``) the binomial worst case (``WORST_CASE_PAIRED_VARIANCE``)
    stands in; otherwise nothing is estimable, and ``reason`` says why.
    """
    if diffs.n == 0:
        return PowerPlan(None, None, None, False, None, "no paired case")
    z = z_sum()
    if diffs.n < 2 or diffs.sd is None or diffs.sd == 0:
        why = "one paired case" if diffs.n < 2 else f"no spread in {diffs.n} paired cases"
        if not bounded:
            return PowerPlan(None, None, None, False, None, f"not estimable: {why}")
        sd = math.sqrt(WORST_CASE_PAIRED_VARIANCE)
        mde = z * sd / math.sqrt(diffs.n)
        needed = max(2, math.ceil((z * sd / abs(effect)) ** 2)) if effect else None
        return PowerPlan(mde, needed, None, False, "binomial_worst_case", why)
    assert diffs.se is not None
    mde = z * diffs.se
    if not effect:
        return PowerPlan(mde, None, None, False, "observed_sd")
    cases_needed = max(2, math.ceil((z * diffs.sd / abs(effect)) ** 2))
    if within_sum is None or mean_inverse_attempts is None:
        return PowerPlan(mde, cases_needed, None, False, "observed_sd")
    between = max(0.0, diffs.sd**2 - within_sum * mean_inverse_attempts)
    room = diffs.n * effect**2 / z**2 - between
    if room <= 0:
        return PowerPlan(mde, cases_needed, None, True, "observed_sd")
    return PowerPlan(mde, cases_needed, max(1, math.ceil(within_sum / room)), False, "observed_sd")


def pareto_front(points: Sequence[tuple[float, float] | None]) -> list[bool | None]:
    """Which (score, cost) points no other point beats: score at least as high and cost at
    most as low, one of them strictly. A point without both numbers is not judged (None)."""
    out: list[bool | None] = []
    for i, point in enumerate(points):
        if point is None:
            out.append(None)
            continue
        score, cost = point
        dominated = any(
            other is not None
            and j != i
            and other[0] >= score
            and other[1] <= cost
            and (other[0] > score or other[1] < cost)
            for j, other in enumerate(points)
        )
        out.append(not dominated)
    return out
