"""The statistics of ``compare`` against numbers derived by hand (closed forms written below)
and against a brute-force bootstrap."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from benchledger.projections.reports.compare import stats as cs

# Student-t 0.975 quantiles from printed tables (2, 3 and 4 degrees of freedom).
T975 = {2: 4.302652729911275, 3: 3.182446305284263, 4: 2.7764451051977987}
# z(0.975) + z(0.8) from normal tables.
Z_SUM = 1.959963984540054 + 0.8416212335729143


def test_case_policies_fold_attempts_as_declared() -> None:
    attempts = [0.0, 1.0, 0.5, 1.0]
    assert cs.CasePolicy.parse("mean").value(attempts) == pytest.approx(0.625)
    assert cs.CasePolicy.parse("best-of").value(attempts) == 1.0
    assert cs.CasePolicy.parse("first").value(attempts) == 0.0
    assert cs.CasePolicy.parse("latest").value(attempts) == 1.0
    assert cs.CasePolicy.parse("mean").value([]) is None


def test_pass_at_k_is_the_unbiased_estimator() -> None:
    policy = cs.CasePolicy.parse("pass@k:2")
    assert policy.label == "pass@k:2"
    # n = 4, c = 1: 1 - C(3,2)/C(4,2) = 1 - 3/6
    assert policy.value([1.0, 0.0, 0.0, 0.0]) == pytest.approx(0.5)
    # n = 5, c = 2, k = 2: 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert policy.value([0.0, 1.0, 0.0, 1.0, 0.0]) == pytest.approx(0.7)
    # n - c < k: every draw of k holds a pass
    assert policy.value([1.0, 0.0]) == 1.0
    assert policy.value([0.0, 0.0, 0.0]) == 0.0
    assert policy.value([1.0]) is None  # fewer attempts than k


@pytest.mark.parametrize("text", ["pass@k:0", "pass@k:", "pass@k:x", "median", "pass@2"])
def test_unknown_policies_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="--per-case must be"):
        cs.CasePolicy.parse(text)


def test_t_interval_closed_form() -> None:
    # values 0, 1, 1, 0.5: mean 0.625; squared deviations sum 0.6875; var = 0.6875/3
    summary = cs.t_interval([0.0, 1.0, 1.0, 0.5], 0.95)
    sd = math.sqrt(0.6875 / 3)
    se = sd / 2
    assert summary.n == 4
    assert summary.mean == pytest.approx(0.625)
    assert summary.sd == pytest.approx(sd)
    assert summary.se == pytest.approx(se)
    assert summary.ci_low == pytest.approx(0.625 - T975[3] * se)
    assert summary.ci_high == pytest.approx(0.625 + T975[3] * se)


def test_t_interval_needs_two_cases_for_an_error_bar() -> None:
    one = cs.t_interval([0.7], 0.95)
    assert (one.n, one.mean, one.se, one.ci_low) == (1, 0.7, None, None)
    assert cs.t_interval([], 0.95).mean is None


def test_paired_p_value_closed_form_for_two_degrees_of_freedom() -> None:
    # differences 0.5, 0, 0.5: mean 1/3, var 1/12, se 1/6, t = 2; with 2 df the two-sided
    # p-value is 1 - |t| / sqrt(t^2 + 2)
    summary = cs.t_interval([0.5, 0.0, 0.5], 0.95)
    assert summary.se == pytest.approx(1 / 6)
    assert cs.paired_p_value(summary) == pytest.approx(1 - 2 / math.sqrt(6))
    assert summary.ci_low == pytest.approx(1 / 3 - T975[2] / 6)


def test_paired_p_value_without_spread() -> None:
    assert cs.paired_p_value(cs.t_interval([0.0, 0.0, 0.0], 0.95)) == 1.0
    assert cs.paired_p_value(cs.t_interval([1.0, 1.0], 0.95)) is None
    assert cs.paired_p_value(cs.t_interval([1.0], 0.95)) is None


def test_holm_step_down() -> None:
    # sorted 0.01, 0.03, 0.04 -> 3*0.01, max(0.03, 2*0.03), max(0.06, 1*0.04)
    assert cs.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert cs.holm([0.5, None, 0.9]) == [pytest.approx(1.0), None, pytest.approx(1.0)]
    assert cs.holm([]) == []


def test_mcnemar_exact_binomial() -> None:
    assert cs.mcnemar_exact(5, 0) == pytest.approx(2 * 0.5**5)
    # b = 3, c = 1: P(X <= 1 | n = 4) = 5/16, two-sided 10/16
    assert cs.mcnemar_exact(3, 1) == pytest.approx(10 / 16)
    assert cs.mcnemar_exact(0, 0) == 1.0
    assert cs.mcnemar_exact(2, 2) == pytest.approx(1.0)


def _quantile(sorted_values: list[float], q: float) -> float:
    """numpy's default ('linear') quantile, written out."""
    position = q * (len(sorted_values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def test_bootstrap_matches_a_loop_over_the_documented_draws() -> None:
    values = [0.5, 0.0, 0.5, -0.25, 1.0]
    resamples, seed = 700, 11
    distinct = sorted(set(values))  # -0.25, 0, 0.5, 1 with counts 1, 1, 2, 1
    shares = [values.count(v) / len(values) for v in distinct]
    rng = np.random.default_rng(seed)
    means = []
    for _ in range(resamples):
        counts = rng.multinomial(len(values), shares)
        means.append(sum(int(k) * v for k, v in zip(counts, distinct, strict=True)) / len(values))
    means.sort()
    low, high = cs.bootstrap_interval(values, resamples, seed, 0.95)
    assert low == pytest.approx(_quantile(means, 0.025))
    assert high == pytest.approx(_quantile(means, 0.975))


def test_bootstrap_agrees_with_resampling_case_indices() -> None:
    """Same distribution as the textbook bootstrap that draws case indices (other stream)."""
    values = [0.0, 1.0, 1.0, 0.5, 0.25, 1.0, 0.0, 0.75]
    rng = np.random.default_rng(99)
    means = sorted(
        sum(values[int(i)] for i in rng.integers(0, len(values), size=len(values))) / len(values)
        for _ in range(20000)
    )
    low, high = cs.bootstrap_interval(values, 20000, 5, 0.95)
    assert low == pytest.approx(_quantile(means, 0.025), abs=0.02)
    assert high == pytest.approx(_quantile(means, 0.975), abs=0.02)


def test_bootstrap_converges_to_the_exhaustive_resampling_distribution() -> None:
    values = [0.0, 1.0, 1.0, 0.5]
    n = len(values)
    exact = sorted(
        sum(values[i] for i in picks) / n for picks in itertools.product(range(n), repeat=n)
    )
    low, high = cs.bootstrap_interval(values, 20000, 3, 0.95)
    assert low == pytest.approx(_quantile(exact, 0.025), abs=0.02)
    assert high == pytest.approx(_quantile(exact, 0.975), abs=0.02)


def test_bootstrap_is_reproducible_and_can_be_off() -> None:
    values = [0.1, 0.4, 0.3]
    assert cs.bootstrap_interval(values, 500, 7, 0.95) == cs.bootstrap_interval(
        values, 500, 7, 0.95
    )
    assert cs.bootstrap_interval(values, 0, 7, 0.95) is None
    assert cs.bootstrap_interval([], 100, 7, 0.95) is None


def test_variance_split_between_and_within() -> None:
    # case means 0.5, 1, 0: var 0.25; within: variances 0.5, 0, 0 -> 1/6; mean 1/k = 1/2
    split = cs.variance_split([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    assert split.within == pytest.approx(1 / 6)
    assert split.between == pytest.approx(0.25 - (1 / 6) * 0.5)
    assert split.mean_inverse_attempts == pytest.approx(0.5)


def test_variance_split_without_repeated_attempts_cannot_separate() -> None:
    split = cs.variance_split([[1.0], [0.0], [0.5]])
    assert split.within is None
    assert split.between == pytest.approx(0.25)


def test_power_plan_closed_forms() -> None:
    diffs = cs.t_interval([0.5, 0.0, 0.5], 0.95)  # sd sqrt(1/12), se 1/6, n 3
    within_sum, inverse, effect = 1 / 3, 0.5, 0.05
    plan = cs.power_plan(diffs, effect, within_sum=within_sum, mean_inverse_attempts=inverse)
    sd = math.sqrt(1 / 12)
    assert plan.mde == pytest.approx(Z_SUM / 6)
    assert plan.cases_needed == math.ceil((Z_SUM * sd / effect) ** 2)
    between = max(0.0, 1 / 12 - within_sum * inverse)  # 1/12 - 1/6 < 0 -> 0
    assert plan.attempts_per_case == math.ceil(within_sum / (3 * effect**2 / Z_SUM**2 - between))
    assert not plan.attempts_limited_by_cases


def test_power_plan_when_cases_are_the_bottleneck() -> None:
    diffs = cs.t_interval([1.0, 0.0, 1.0, 0.0], 0.95)  # large between-case spread
    plan = cs.power_plan(diffs, 0.01, within_sum=0.01, mean_inverse_attempts=0.5)
    assert plan.attempts_per_case is None and plan.attempts_limited_by_cases


def test_power_is_never_planned_from_a_zero_or_one_case_spread() -> None:
    """A difference of exactly −1 on 3 cases has no spread: the binomial worst case (variance
    1/2 for a paired difference of rates) stands in, or nothing when values are unbounded."""
    flat = cs.t_interval([-1.0, -1.0, -1.0], 0.95)
    plan = cs.power_plan(flat, 0.05, within_sum=None, mean_inverse_attempts=None)
    assert plan.basis == "binomial_worst_case" and plan.reason == "no spread in 3 paired cases"
    assert plan.mde == pytest.approx(Z_SUM * math.sqrt(0.5 / 3))
    assert plan.cases_needed == math.ceil((Z_SUM * math.sqrt(0.5) / 0.05) ** 2)  # 1570
    one = cs.power_plan(cs.t_interval([1.0], 0.95), 0.1, within_sum=None,
                        mean_inverse_attempts=None)  # fmt: skip
    assert one.basis == "binomial_worst_case" and one.mde == pytest.approx(Z_SUM * math.sqrt(0.5))
    unbounded = cs.power_plan(flat, 0.05, within_sum=None, mean_inverse_attempts=None,
                              bounded=False)  # fmt: skip
    assert (unbounded.mde, unbounded.cases_needed) == (None, None)
    assert unbounded.reason == "not estimable: no spread in 3 paired cases"


def test_pareto_front() -> None:
    points = [(0.5, 1.0), (0.6, 2.0), (0.4, 3.0), None, (0.6, 1.5)]
    assert cs.pareto_front(points) == [True, False, False, None, True]


@pytest.mark.parametrize("df", [1, 2, 3, 7, 30, 250, 6000])
def test_t_distribution_agrees_with_scipy(df: int) -> None:
    from scipy import stats

    for q in (0.9, 0.95, 0.975, 0.995):
        assert cs.t_quantile(q, df) == pytest.approx(float(stats.t.ppf(q, df)), rel=1e-9)
    for t in (0.0, 0.3, 1.0, 2.0, 4.5, -2.5):
        expected = float(2 * stats.t.sf(abs(t), df))
        assert cs.t_two_sided_p(t, df) == pytest.approx(expected, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize(("b", "c"), [(0, 1), (3, 1), (7, 2), (10, 10), (0, 25), (40, 13)])
def test_mcnemar_agrees_with_scipy_binomtest(b: int, c: int) -> None:
    from scipy import stats

    assert cs.mcnemar_exact(b, c) == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue)


def test_z_sum_agrees_with_scipy() -> None:
    from scipy import stats

    assert cs.z_sum() == pytest.approx(float(stats.norm.ppf(0.975) + stats.norm.ppf(0.8)))
    assert cs.z_sum() == pytest.approx(Z_SUM)


@pytest.mark.parametrize("n", [1, 3, 5, 12, 29])
def test_clopper_pearson_and_wilson_agree_with_scipy(n: int) -> None:
    import numpy as np
    from scipy import stats

    from benchledger.projections.reports.compare import intervals

    for k in range(n + 1):
        exact = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
        assert intervals.clopper_pearson(k, n, 0.95) == pytest.approx(
            (exact.low, exact.high), abs=1e-9
        )
        score = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
        low, high = intervals.wilson(np.array([k]), n, 0.95)
        assert (low[0], high[0]) == pytest.approx((score.low, score.high), abs=1e-9)
