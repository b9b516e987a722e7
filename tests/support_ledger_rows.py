"""Stored ledger rows for the tests of the ledger operations (upsert, archive, merge,
aggregate, drift): one normalised row with sensible defaults, and a ledger document of rows."""

from __future__ import annotations

from benchledger.ledger.rules.row.build import normalize_row


def stored_row(**fields) -> dict:
    """A stored, normalised row with sensible defaults (a countable failed run)."""
    base = {
        "run_id": "r0",
        "benchmark_id": "b@1",
        "case_id": "c1",
        "case_ids": ["c1"],
        "run_group_id": "g1",
        "arm_id": "a_baseline",
        "job_name": "job1",
        "mode": "m1",
        "status": "completed",
        "score_status": "failed",
        "official_score": 0.0,
        "official_passed": False,
        "failure_class": "official_verifier_solution_failure",
        "recorded_at": "2026-06-01T00:00:00Z",
    }
    base.update(fields)
    return normalize_row({k: v for k, v in base.items() if v is not None})


def ledger_doc(rows: list[dict]) -> dict:
    benchmarks: dict = {}
    for row in rows:
        node = benchmarks.setdefault(row["benchmark_id"], {"cases": {}})
        node["cases"].setdefault(row["case_id"], {"runs": []})["runs"].append(row)
    return {"schema_version": "benchmark_run_ledger_v0", "benchmarks": benchmarks}
