"""A batch landing rows on one case (``CaseLanding``) lands and decides them exactly as
``upsert_row`` followed by ``decide_case`` on the whole case does (docs/formats/ledger_v0.md
§6.1, §6.3, §7), and a large batch no longer re-reads the case for every row."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import benchledger.ledger.rules.row.case_landing as case_landing
from benchledger.ledger.rules.row.case_decision import decide_case
from benchledger.ledger.rules.row.case_landing import CaseLanding
from benchledger.ledger.rules.row.upsert import upsert_row

_BRIDGE = "worker_bridge_connected_official_score_failure"

_rows = st.fixed_dictionaries(
    {
        "run_id": st.sampled_from(["r0", "r1", "r2", "r3", "r4", "r5"]),
        "benchmark_id": st.just("b@1"),
        "case_id": st.just("c1"),
        "run_group_id": st.sampled_from(["g1", "g2"]),
        "arm_id": st.sampled_from(["a_baseline", "a_treatment", "plain", "baseline_treatment"]),
        "job_name": st.sampled_from(["job1", "job2", ""]),
        "mode": st.just("m1"),
        "status": st.sampled_from(["completed", "completed", "completed", "running"]),
        "score_status": st.sampled_from(["passed", "failed"]),
        "official_score": st.sampled_from([0.0, 1.0, None]),
        "official_passed": st.sampled_from([True, False, None]),
        "failure_scope": st.sampled_from(["passed", "case_or_solution", "runner_setup"]),
        "recorded_at": st.sampled_from(
            ["2026-06-01T00:00:00Z", "2026-06-01T08:00:00+08:00", "2026-06-02T00:00:00Z", "?"]
        ),
    },
    optional={
        "arm_role": st.sampled_from(["baseline", "treatment", "other"]),
        "archive_state": st.just("archived"),
        "repair_class": st.sampled_from(
            ["case_exception_research", "case_timeout_research", "runner_setup_timeout"]
        ),
        "repair_priority": st.sampled_from(["P1", "P2"]),
        "failure_class": st.sampled_from([_BRIDGE, "official_verifier_solution_failure"]),
        "failure_labels": st.just([_BRIDGE]),
        "artifact_refs": st.just(["runs/x.json"]),
        "notes": st.sampled_from(["a", "b"]),
    },
)


def _unique_run_ids(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stored rows as the store holds them: one per run id (its primary key)."""
    return list({row["run_id"]: row for row in rows}.values())


def _reference(stored: list[dict], batch: list[dict]) -> list[tuple]:
    """What the plan did before ``CaseLanding``: upsert into the whole case, then decide it."""
    rows, seen = list(stored), []
    for new in batch:
        result = upsert_row(rows, new)
        if not result.updated:
            seen.append((result.action, result.row, None, None, {}, result.skip_reason))
            continue
        before = next((r for r in rows if r.get("run_id") == result.touched_run_id), None)
        rows = result.rows
        decision = decide_case(rows)
        seen.append((result.action, result.row, result.touched_run_id, before, decision, None))
    return seen


def _landed(stored: list[dict], batch: list[dict]) -> list[tuple]:
    case = CaseLanding(list(stored))
    seen = []
    for new in batch:
        landing = case.land(new)
        seen.append(
            (
                landing.action,
                landing.row,
                landing.touched_run_id,
                landing.before,
                landing.decision,
                landing.skip_reason,
            )
        )
    return seen


@settings(max_examples=400, deadline=None)
@given(stored=st.lists(_rows, max_size=5), batch=st.lists(_rows, min_size=1, max_size=12))
def test_a_batch_lands_and_decides_as_upsert_row_and_decide_case(
    stored: list[dict], batch: list[dict]
) -> None:
    stored = _unique_run_ids(stored)
    assert _landed(stored, batch) == _reference(stored, batch)


def test_a_paired_case_decides_from_the_latest_baseline_and_treatment() -> None:
    """Replacing the latest treatment with an earlier-recorded run moves "latest" back."""
    base = {"benchmark_id": "b@1", "case_id": "c1", "mode": "m1", "status": "completed"}
    baseline = {**base, "run_id": "b1", "arm_id": "x_baseline", "job_name": "j1",
                "official_score": 0.0, "failure_scope": "case_or_solution",
                "recorded_at": "2026-06-01T00:00:00Z"}  # fmt: skip
    early = {**base, "run_id": "t1", "arm_id": "x_treatment", "job_name": "j2",
             "official_score": 1.0, "failure_scope": "passed",
             "recorded_at": "2026-06-02T00:00:00Z"}  # fmt: skip
    late = {**early, "run_id": "t2", "job_name": "j3", "official_score": 0.0,
            "failure_scope": "case_or_solution", "recorded_at": "2026-06-03T00:00:00Z"}  # fmt: skip
    batch = [baseline, early, late]
    landed = _landed([], batch)
    assert [d["decision"] for *_, d, _ in landed] == [
        "baseline_failed_treatment_candidate",
        "paired_treatment_improved",
        "paired_no_score_uplift",
    ]
    assert landed == _reference([], batch)


def test_landing_a_row_does_not_read_the_other_rows_of_its_case(monkeypatch) -> None:
    """After the first landing, a landing computes one row's sort key, not the case's."""
    rows = [
        {"run_id": f"r{i:03d}", "benchmark_id": "b@1", "case_id": "c1", "run_group_id": "g",
         "arm_id": "plain", "job_name": f"j{i}", "mode": "m", "status": "completed",
         "recorded_at": "2026-06-01T00:00:00Z"}
        for i in range(200)
    ]  # fmt: skip
    case = CaseLanding([])
    case.land(rows[0])
    keys_computed = []
    real = case_landing.row_sort_key
    monkeypatch.setattr(
        case_landing, "row_sort_key", lambda row: keys_computed.append(row) or real(row)
    )
    for row in rows[1:]:
        case.land(row)
    assert len(keys_computed) == len(rows) - 1
    assert case.land(rows[-1]).decision == decide_case(rows)


def test_a_logical_duplicate_backfills_the_first_matching_run_in_row_order() -> None:
    """Two stored runs are the same logical run as the new row: the first in §6.3 order (the
    earlier recorded) is backfilled, in the store's order on the first landing as after it."""
    base = {"benchmark_id": "b@1", "case_id": "c1", "run_group_id": "g", "arm_id": "plain",
            "job_name": "j", "mode": "m", "status": "completed", "official_score": 1.0}  # fmt: skip
    later = {**base, "run_id": "r1", "recorded_at": "2026-06-02T00:00:00Z"}
    earlier = {**base, "run_id": "r2", "recorded_at": "2026-06-01T00:00:00Z"}
    other = {**base, "run_id": "r3", "job_name": "k", "recorded_at": "2026-06-03T00:00:00Z"}
    new = {**base, "run_id": "r9", "artifact_refs": ["runs/x.json"]}
    batch = [other, new, {**new, "run_id": "r8", "run_key": "k8"}]
    landed = _landed([later, earlier], batch)
    assert [(action, touched) for action, _, touched, *_ in landed] == [
        ("appended", None),
        ("backfilled", "r2"),
        ("backfilled", "r2"),
    ]
    assert landed == _reference([later, earlier], batch)
