"""``build_compare`` over small hand-made ledgers; every expected number is derived in a comment.

Ledger used by most tests (benchmark ``tb@2``), attempts as rewards in attempt order:

| case | A (reference)  | B                     |
| c1   | 1, 0   -> 0.5  | 1, 1   -> 1           |
| c2   | 1, 1   -> 1    | 1, 1   -> 1           |
| c3   | 0, 0   -> 0    | 1, 0   -> 0.5         |
| c4   | 1      -> 1    | (no run)              |
| c5   | (no run)       | archived run only     |
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.requests.compare import CompareRequest
from benchledger.ledger.rules.row.build import RULES_VERSION
from benchledger.projections.reports.compare import intervals
from benchledger.projections.reports.compare.document import build_compare, render_compare_markdown

T975 = {2: 4.302652729911275, 3: 3.182446305284263}
Z_SUM = 1.959963984540054 + 0.8416212335729143
BENCH = "tb@2"


def attempt(reward: float | None, index: int, reason: str = "verifier_failed") -> dict:
    if reward is None:
        return {"attempt_index": index, "unscored_reason": reason}
    return {"attempt_index": index, "primary_reward": reward, "passed": reward == 1.0}


def run(arm: str, case: str, rewards: list[float | None], **extra: Any) -> dict[str, Any]:
    scored = [r for r in rewards if r is not None]
    row: dict[str, Any] = {
        "run_id": f"{arm}-{case}-{extra.pop('n', 0)}",
        "benchmark_id": extra.pop("benchmark_id", BENCH),
        "case_id": case,
        "arm_id": arm,
        "recorded_at": extra.pop("recorded_at", "2026-05-01T00:00:00Z"),
        "status": "completed",
        "rules_version": RULES_VERSION,  # countability below is the rules' stored decision
        "attempt_outcomes": [attempt(r, i + 1) for i, r in enumerate(rewards)],
        "comparability": {
            "task_digests": [f"sha256:{case}"],
            "dataset_sources": ["tb"],
            "timeout_official_comparable": True,
        },
    }
    if scored:
        row.update(
            official_score=sum(scored) / len(scored),
            official_passed=all(r == 1.0 for r in scored),
            official_score_countable=True,
        )
    row.update(extra)
    return row


def ledger() -> list[dict[str, Any]]:
    return [
        run("A", "c1", [1, 0]),
        run("A", "c2", [1, 1]),
        run("A", "c3", [0, 0]),
        run("A", "c4", [1]),
        run("B", "c1", [1, 1]),
        run("B", "c2", [1, 1]),
        run("B", "c3", [1, 0]),
        run("B", "c5", [1], archive_state="archived"),
    ]


def compare(rows: list[dict], **options: Any) -> dict[str, Any]:
    return build_compare(rows, CompareRequest(benchmark_id=BENCH, **options))


def test_arm_summary_over_cases() -> None:
    doc = compare(ledger())
    assert doc["schema_version"] == "benchmark_run_compare_v0"
    assert doc["per_case_policy"] == "mean" and doc["metric"] == "score"
    assert doc["reference"] == "A" and [a["arm_id"] for a in doc["arms"]] == ["A", "B"]
    a = doc["arms"][0]
    # case values 0.5, 1, 0, 1: mean 0.625, squared deviations 0.6875, var 0.6875/3
    se = math.sqrt(0.6875 / 3) / 2
    assert (a["n_cases"], a["n_attempts"]) == (4, 7)
    assert a["mean"] == pytest.approx(0.625)
    assert a["se"] == pytest.approx(se)
    # case means over attempts, bounded in [0, 1]: the betting interval (any n), in case order
    assert a["interval_method"] == "betting_waudby_smith_ramdas"
    low, high = intervals.betting_intervals(np.array([[0.5, 1.0, 0.0, 1.0]]), 0.95)
    assert (a["ci_low"], a["ci_high"]) == (low[0], high[0])
    assert 0 <= a["ci_low"] < 0.625 < a["ci_high"] <= 1
    # within: variances 0.5, 0, 0 over the three repeated cases -> 1/6; mean 1/k = (3/2+1)/4
    assert a["var_within_cases"] == pytest.approx(1 / 6)
    assert a["var_between_cases"] == pytest.approx(0.6875 / 3 - (1 / 6) * (2.5 / 4))


def test_coverage_names_every_exclusion() -> None:
    doc = compare(ledger())
    a, b = doc["arms"]
    assert a["coverage"]["excluded"] == {"missing": ["c5"]}
    assert b["coverage"]["excluded"] == {"archived": ["c5"], "missing": ["c4"]}
    assert b["coverage"]["runs_excluded"] == {"archived": 1}
    assert (b["coverage"]["cases_total"], b["coverage"]["cases_included"]) == (5, 3)


def test_paired_difference_closed_forms() -> None:
    pair = compare(ledger())["paired"][0]
    # common cases c1, c2, c3; B - A = 0.5, 0, 0.5: mean 1/3, var 1/12, se 1/6, t = 2, 2 df
    assert (pair["arm_id"], pair["reference"], pair["n_pairs"]) == ("B", "A", 3)
    assert pair["mean_diff"] == pytest.approx(1 / 3)
    assert pair["se"] == pytest.approx(1 / 6)
    # differences mapped to (d + 1)/2 in [0, 1], the betting interval, mapped back
    assert pair["interval_method"] == "betting_waudby_smith_ramdas"
    low, high = intervals.betting_intervals(np.array([[0.75, 0.5, 0.75]]), 0.95)
    assert pair["ci_low"] == pytest.approx(2 * low[0] - 1)
    assert pair["ci_high"] == pytest.approx(2 * high[0] - 1)
    assert -1 <= pair["ci_low"] < 1 / 3 < pair["ci_high"] <= 1
    assert pair["p_value"] == pytest.approx(1 - 2 / math.sqrt(6))  # t-distribution, 2 df
    assert pair["p_holm"] == pytest.approx(pair["p_value"])  # one comparison
    assert pair["mcnemar"] is None  # metric score
    boot = pair["bootstrap"]
    assert (boot["n"], boot["seed"]) == (2000, 0)
    assert 0 <= boot["ci_low"] <= 1 / 3 <= boot["ci_high"] <= 0.5


def test_power_for_the_pair() -> None:
    power = compare(ledger(), effect=0.05)["paired"][0]["power"]
    assert power["mde_80"] == pytest.approx(Z_SUM / 6)
    assert power["cases_needed_for_effect"] == math.ceil((Z_SUM * math.sqrt(1 / 12) / 0.05) ** 2)
    # within variances over the common cases: A (0.5, 0, 0) -> 1/6, B (0, 0, 0.5) -> 1/6;
    # each case has 2 attempts per arm, so the attempt part of var(d) is (1/6 + 1/6)/2 = 1/6,
    # more than var(d) = 1/12: the between part is 0 and K = (1/3) / (3 * 0.05^2 / z^2)
    assert power["attempts_per_case_for_effect"] == math.ceil((1 / 3) / (3 * 0.05**2 / Z_SUM**2))


def test_unscored_attempts_are_counted_not_zeroed() -> None:
    rows = [
        run("A", "c1", [1, None]),
        run("A", "c2", [0]),
        run("B", "c1", [1]),
        run("B", "c2", [1]),
    ]
    doc = compare(rows)
    a = doc["arms"][0]
    assert a["mean"] == pytest.approx(0.5)  # c1 = 1 (its unscored attempt is not a 0), c2 = 0
    assert a["n_attempts"] == 2
    assert a["coverage"]["attempts_unscored"] == {"verifier_failed": 1}


def test_pass_metric_with_first_policy_gives_mcnemar() -> None:
    doc = compare(ledger(), metric="pass", per_case="first")
    # first attempts: A c1 1, c2 1, c3 0, c4 1; B c1 1, c2 1, c3 1 -> pairs (ref, arm)
    # (1,1), (1,1), (0,1): b = 0 (ref pass, arm fail), c = 1; exact two-sided p = 1
    pair = doc["paired"][0]
    assert doc["per_case_policy"] == "first"
    assert pair["mcnemar"] == {"b": 0, "c": 1, "p_value": pytest.approx(1.0)}
    assert doc["arms"][0]["mean"] == pytest.approx(0.75)


def test_pass_at_k_policy() -> None:
    doc = compare(ledger(), metric="pass", per_case="pass@k:2")
    a = doc["arms"][0]
    # A: c1 n=2 c=1 -> 1; c2 -> 1; c3 n=2 c=0 -> 1 - C(2,2)/C(2,2) = 0; c4 has 1 attempt < k
    assert a["mean"] == pytest.approx(2 / 3)
    assert a["coverage"]["excluded"]["fewer_attempts_than_k"] == ["c4"]
    with pytest.raises(InputError, match="use it with --metric pass"):
        compare(ledger(), metric="score", per_case="pass@k:2")


def test_best_of_and_latest_policies() -> None:
    assert compare(ledger(), per_case="best-of")["arms"][0]["mean"] == pytest.approx(0.75)
    # latest attempts of A: c1 0, c2 1, c3 0, c4 1
    assert compare(ledger(), per_case="latest")["arms"][0]["mean"] == pytest.approx(0.5)


def test_attempts_follow_run_order_then_attempt_index() -> None:
    rows = [
        run("A", "c1", [0], n=2, recorded_at="2026-05-02T00:00:00Z"),
        run("A", "c1", [1], n=1, recorded_at="2026-05-01T00:00:00Z"),
        run("A", "c2", [1]),
    ]
    doc = compare(rows, per_case="first")
    assert doc["arms"][0]["mean"] == pytest.approx(1.0)  # c1's first attempt is the May 1 one
    assert doc["arms"][0]["coverage"]["runs_included"] == 3


def test_exclusion_reasons_for_uncountable_runs() -> None:
    rows = [
        run("A", "c1", [1]),
        run("A", "c2", [1]),
        run("A", "c3", [1]),
        run("A", "c4", [1]),
        run("B", "c1", [None], failure_scope="verifier_or_infra", failure_class="verifier_failed"),
        run("B", "c2", [1], status="cancelled", official_score_countable=False),
        run("B", "c3", [0.5], official_score_countable=False, failure_class="x_uncountable"),
        run("B", "c4", [1]),
    ]
    excluded = compare(rows)["arms"][1]["coverage"]["excluded"]
    assert excluded == {
        "not_completed": ["c2"],
        "uncountable": ["c3"],
        "verifier_error_without_reward": ["c1"],
    }


def test_rows_without_attempt_detail_count_as_one_attempt() -> None:
    legacy = run("A", "c1", [])
    legacy.pop("attempt_outcomes")
    legacy.update(official_score=0.25, official_passed=False, official_score_countable=True)
    doc = compare([legacy, run("A", "c2", [1, 1])])
    a = doc["arms"][0]
    assert a["mean"] == pytest.approx((0.25 + 1) / 2)
    assert a["coverage"]["runs_without_attempt_detail"] == 1


def test_default_arms_skip_arms_without_countable_runs_and_reference_goes_first() -> None:
    rows = [*ledger(), run("C", "c1", [None])]
    assert [a["arm_id"] for a in compare(rows)["arms"]] == ["A", "B"]
    doc = compare(rows, reference="B")
    assert [a["arm_id"] for a in doc["arms"]] == ["B", "A"]
    assert doc["paired"][0]["mean_diff"] == pytest.approx(-1 / 3)


def test_holm_across_arms() -> None:
    rows = [*ledger(), run("D", "c1", [0, 0]), run("D", "c2", [0, 1]), run("D", "c3", [1, 1])]
    doc = compare(rows)
    p_b, p_d = (p["p_value"] for p in doc["paired"])
    # D - A = -0.5, -0.5, 1: mean 0; p = 1
    assert p_d == pytest.approx(1.0)
    low, high = sorted([p_b, p_d])
    assert [p["p_holm"] for p in doc["paired"]] == [
        pytest.approx(min(1.0, 2 * p_b)),
        pytest.approx(max(min(1.0, 2 * low), high)),
    ]


def test_unknown_arm_and_empty_benchmark_are_refused() -> None:
    with pytest.raises(InputError, match="no runs of arm Z"):
        compare(ledger(), arms=("A", "Z"))
    with pytest.raises(InputError, match="no ledger rows for benchmark"):
        build_compare(ledger(), CompareRequest(benchmark_id="other"))


def test_comparability_guard_refuses_and_lists_each_mismatch() -> None:
    rows = ledger()
    rows[4]["comparability"] = {**rows[4]["comparability"], "task_digests": ["sha256:changed"]}
    rows[5]["comparability"] = {**rows[5]["comparability"], "timeout_official_comparable": False}
    with pytest.raises(InputError) as refused:
        compare(rows)
    message = refused.value.message
    assert "\n" not in message
    assert "task_digest differs B vs A on 1 case: c1" in message
    assert "timeout_policy differs B vs A on 1 case: c2" in message
    assert "--allow-incomparable" in message
    doc = compare(rows, allow_incomparable=True)
    assert doc["banner"] and "task_digest" in doc["banner"]
    assert doc["comparability"]["ok"] is False
    kinds = [m["kind"] for m in doc["comparability"]["mismatches"]]
    assert kinds == ["task_digest", "timeout_policy"]
    assert doc["banner"] in render_compare_markdown(doc)


def test_benchmark_versions_are_compared_when_the_id_has_no_version() -> None:
    rows = [run("A", "c1", [1]), run("B", "c1", [1], benchmark_id="tb@3"), run("A", "c2", [0])]
    rows.append(run("B", "c2", [1], benchmark_id="tb@3"))
    doc = build_compare(rows, CompareRequest(benchmark_id="tb", allow_incomparable=True))
    mismatch = doc["comparability"]["mismatches"][0]
    assert mismatch["kind"] == "benchmark_version"
    assert mismatch["cases"][0] == {
        "case_id": "c1",
        "arm_values": ["3"],
        "reference_values": ["2"],
    }


def test_facts_recorded_on_one_side_only_are_not_mismatches() -> None:
    rows = ledger()
    for row in rows[:4]:
        row.pop("comparability")
    assert compare(rows)["comparability"] == {
        "ok": True,
        "allowed_incomparable": False,
        "mismatches": [],
        "settings": {"A": ["not recorded"], "B": ["not recorded"]},
    }


def test_cost_per_case_and_pareto_front() -> None:
    rows = ledger()
    for row in rows:
        cheap = row["arm_id"] == "A"
        row["usage"] = {"input_tokens": 100, "output_tokens": 10 if cheap else 50,
                        "cost_usd": 1.0 if cheap else 3.0}  # fmt: skip
    a, b = compare(rows)["arms"]
    # a run's usage is summed over its attempts; a case's cost is the mean over its attempts:
    # A's c1-c3 ran 2 attempts (110/2 = 55 tokens, $0.5), c4 one (110, $1)
    assert a["cost"]["tokens_per_case"] == (55 * 3 + 110) / 4
    assert a["cost"]["cost_usd_per_case"] == (0.5 * 3 + 1.0) / 4
    assert b["cost"]["recorded_cases"] == 3 and b["cost"]["cost_usd_per_case"] == 1.5
    # A: 0.625 at $0.625; B: mean of 1, 1, 0.5 = 0.8333 at $1.5 -> neither dominates
    assert (a["pareto"], b["pareto"]) == (True, True)
    assert a["cost"]["pareto_basis"] == "cost_usd_per_case"
    rows[0]["usage"]["cost_usd"] = 15.0  # A's c1 now costs 7.5 an attempt: A averages 2.375
    a, b = compare(rows)["arms"]
    assert (a["pareto"], b["pareto"]) == (False, True)


def test_a_second_job_on_a_case_does_not_double_its_cost() -> None:
    """Issue 32: cost per case was summed over a case's runs, so a second job doubled an arm's
    cost and flipped the Pareto verdict. B costs $1 an attempt, A $1.5; B ran every case twice."""
    rows = []
    for case in ("c1", "c2", "c3"):
        paid = {"input_tokens": 1, "output_tokens": 1}
        rows.append(run("A", case, [1], usage={**paid, "cost_usd": 1.5}))
        for job in (0, 1):
            moment = f"2026-05-0{job + 1}T00:00:00Z"
            rows.append(run("B", case, [1], n=job, recorded_at=moment,
                            usage={**paid, "cost_usd": 1.0}))  # fmt: skip
    a, b = compare(rows)["arms"]
    assert b["coverage"]["runs_included"] == 6
    assert (a["cost"]["cost_usd_per_case"], b["cost"]["cost_usd_per_case"]) == (1.5, 1.0)
    assert b["cost"]["tokens_per_case"] == 2.0
    assert (a["pareto"], b["pareto"]) == (False, True)  # same mean, B cheaper


def test_mixed_agent_versions_are_separate_arms_unless_pooled() -> None:
    """Issue 32: runs of codex 0.46.0 and 0.50.0 merged into one arm and "agree"d."""

    def versioned(case: str, version: str, reward: float, multiplier: float = 1.0) -> dict:
        row = run("codex", case, [reward], n=version)
        row["comparability"] = {**row["comparability"], "agent_version": version}
        if multiplier != 1.0:
            row["comparability"]["timeout_multipliers"] = {"agent_timeout_multiplier": multiplier}
        return row

    rows = [versioned(f"c{i}", "0.46.0", 1.0) for i in range(5)]
    rows += [versioned(f"c{i}", "0.50.0", 1.0 if i < 2 else 0.0) for i in range(5)]
    doc = compare(rows, metric="pass")
    assert [a["arm_id"] for a in doc["arms"]] == ["codex 0.46.0", "codex 0.50.0"]
    assert doc["verdict"].startswith("codex 0.50.0 − codex 0.46.0: −0.60 (95 % CI")
    assert doc["banner"] is None
    assert doc["comparability"]["settings"] == {
        "codex 0.46.0": ["0.46.0"], "codex 0.50.0": ["0.50.0"]}  # fmt: skip
    text = render_compare_markdown(doc)
    assert "- settings differ between `codex 0.50.0` and `codex 0.46.0`: 0.50.0 vs 0.46.0" in text
    # --arm names every setting of a split arm; --reference must name one
    named = compare(rows, metric="pass", arms=("codex",))
    assert [a["arm_id"] for a in named["arms"]] == ["codex 0.46.0", "codex 0.50.0"]
    with pytest.raises(InputError, match="arm codex ran with several settings"):
        compare(rows, metric="pass", reference="codex")
    pooled = compare(rows, metric="pass", pool_versions=True)
    assert [a["arm_id"] for a in pooled["arms"]] == ["codex"]
    assert pooled["arms"][0]["n_attempts"] == 10
    assert pooled["banner"] == "SETTINGS POOLED (--pool-versions): codex: 0.46.0, 0.50.0"
    assert "- settings differ within `codex` (pooled): 0.46.0, 0.50.0" in (
        render_compare_markdown(pooled)
    )
    # a timeout multiplier other than 1 splits too, and is shown in the label
    slow = rows[:5] + [versioned(f"c{i}", "0.46.0", 0.0, 8.0) for i in range(5)]
    labels = [a["arm_id"] for a in compare(slow, metric="pass")["arms"]]
    assert labels == ["codex 0.46.0", "codex 0.46.0, agent_timeout_multiplier=8"]


def test_without_cost_nobody_is_judged() -> None:
    a, b = compare(ledger())["arms"]
    assert a["pareto"] is None and a["cost"]["pareto_basis"] is None
    assert a["cost"]["tokens_per_case"] is None


def test_document_is_deterministic_and_json_ready() -> None:
    import json

    first = json.dumps(compare(ledger(), seed=5))
    assert first == json.dumps(compare(list(reversed(ledger())), seed=5))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"per_case": "median"}, "--per-case must be"),
        ({"metric": "reward"}, "--metric must be"),
        ({"confidence": 1.5}, "--confidence"),
        ({"bootstrap": -1}, "--bootstrap"),
        ({"effect": 0.0}, "--effect"),
        ({"seed": -1}, "--seed"),
    ],
)
def test_bad_requests_are_refused(options: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        compare(ledger(), **options)


def test_markdown_states_the_policy_and_the_numbers() -> None:
    doc = compare(ledger(), per_case="best-of")
    text = render_compare_markdown(doc)
    assert "per-case policy: `best-of`" in text
    assert "| A | 4 | 7 | 0.7500 |" in text
    assert "- missing: c4" in text and "- archived: c5" in text


def test_markdown_keeps_odd_ids_inside_their_cells() -> None:
    odd = "B|x`y\nz"
    rows = [{**row, "arm_id": odd} if row["arm_id"] == "B" else row for row in ledger()]
    text = render_compare_markdown(compare(rows))
    arm_rows = [line for line in text.splitlines() if line.startswith("| B")]
    # one line per table (arms, paired); the pipe is escaped, so every row keeps its 12 or 14
    # cells: 13 or 15 unescaped pipes
    assert len(arm_rows) == 2
    for line in arm_rows:
        assert line.startswith("| B\\|x\\`y z |")
        assert line.replace("\\|", "").count("|") in (13, 15)
    assert "- ``B|x`y z``: 3 of 5 cases" in text  # a code span fenced past the backtick


def test_the_compare_doc_documents_every_key_of_the_document() -> None:
    """``docs/compare.md``'s ``benchmark_run_compare_v0`` table names every key compare writes,
    and the method strings as the document spells them."""
    from pathlib import Path

    doc_text = (Path(__file__).resolve().parents[1] / "docs" / "compare.md").read_text("utf-8")
    section = doc_text[doc_text.index("`schema_version: benchmark_run_compare_v0`") :]
    rows = ledger()
    for row in rows:
        row["usage"] = {"input_tokens": 1, "output_tokens": 1, "cost_usd": 1.0}
    rows[4]["comparability"] = {**rows[4]["comparability"], "task_digests": ["sha256:other"]}
    doc = compare(rows, metric="pass", per_case="first", allow_incomparable=True)

    def keys(value: Any) -> set[str]:
        if isinstance(value, dict):
            return set(value) | {k for v in value.values() for k in keys(v)}
        if isinstance(value, list):
            return {k for v in value for k in keys(v)}
        return set()

    reasons = {r for arm in doc["arms"] for r in arm["coverage"]["excluded"]}
    arms = set(doc["comparability"]["settings"])  # keyed by arm: data, not keys
    data_keys = keys(doc) - reasons - arms  # exclusion reasons are data (the Coverage bullet)
    missing = sorted(k for k in data_keys if f"`{k}`" not in section and f"`{k}[]`" not in section)
    assert not missing, missing
    for method in (doc["interval_method"], doc["power"]["method"], doc["bootstrap"]["method"]):
        assert f"`{method}`" in section


def pass_fail_pair(outcomes: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """One attempt per case: (reference, arm) verdicts as rewards 1/0."""
    rows = []
    for i, (ref, arm) in enumerate(outcomes):
        rows += [run("old", f"c{i}", [ref]), run("new", f"c{i}", [arm])]
    return rows


def test_a_five_case_pass_fail_pair_gets_a_verdict_a_bounded_interval_and_a_note() -> None:
    """Issue 32: 2/5 once gave [-0.28, 1.08] and the t-interval of the difference left [-1, 1]."""
    rows = pass_fail_pair([(1, 0), (1, 0), (1, 1), (0, 0), (1, 1)])
    doc = compare(rows, metric="pass", reference="old")
    assert list(doc)[0] == "verdict"
    assert doc["verdict"].startswith("new − old: −0.40 (95 % CI −1.00 to 0.58, betting")
    assert (
        "5 paired cases — no difference shown; too few to detect a 0.05 difference"
        in (doc["verdict"])
    )
    assert doc["small_sample_note"].startswith("Small sample: 5 cases, fewer than 30.")
    old, new = doc["arms"]
    assert old["interval_method"] == new["interval_method"] == "clopper_pearson_exact"
    # 2 of 5: Clopper–Pearson [0.0527, 0.8534] (scipy's binomtest agrees, test_compare_stats)
    assert (new["ci_low"], new["ci_high"]) == pytest.approx((0.052745, 0.853367), abs=1e-6)
    pair = doc["paired"][0]
    assert -1 <= pair["ci_low"] < pair["mean_diff"] < pair["ci_high"] <= 1
    text = render_compare_markdown(doc)
    assert text.startswith(f"**Verdict:** {doc['verdict']}\n\n> Small sample: 5 cases")
    assert "`betting_waudby_smith_ramdas`" in text and "`clopper_pearson_exact`" in text


def test_an_all_pass_arm_never_gets_a_zero_width_interval() -> None:
    """5/5 once gave [1.000, 1.000]; three −1 differences gave "MDE 0.0000" and "cases: 2"."""
    doc = compare(pass_fail_pair([(1, 0)] * 3 + [(1, 1)] * 2), metric="pass", reference="old")
    old = doc["arms"][0]
    assert old["mean"] == 1.0 and 0 < old["ci_low"] < old["ci_high"] == 1.0
    flat = compare(pass_fail_pair([(1, 0)] * 3), metric="pass", reference="old")
    pair = flat["paired"][0]
    assert pair["mean_diff"] == -1.0 and -1 <= pair["ci_low"] < -1 + 1e-9 < pair["ci_high"] <= 1
    assert pair["ci_high"] > -1 + 0.1  # three cases cannot pin the difference at −1
    power = pair["power"]
    assert power["basis"] == "binomial_worst_case"
    assert power["note"] == "no spread in 3 paired cases"
    assert power["mde_80"] > 1 and power["cases_needed_for_effect"] == 1570


def test_benchflow_arms_say_which_of_benchflow_s_two_result_rules_counts() -> None:
    """BenchFlow picks a task's result two ways (docs/formats/benchflow.md §4): compare names
    the one the ledger follows whenever an arm's runs came from BenchFlow, and only then."""
    rows = ledger()
    plain = compare(rows)
    assert "runner_rules" not in plain["comparability"]
    for row in rows:
        row["run_key"] = f"benchflow:job:{row['run_id']}"
    doc = compare(rows)
    rule = doc["comparability"]["runner_rules"]["benchflow"]
    assert "newest scored" in rule and "bench eval metrics" in rule
    assert "- benchflow arms: a task's result is its newest scored one" in (
        render_compare_markdown(doc)
    )
