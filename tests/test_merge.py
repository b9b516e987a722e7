"""Merging source ledgers, and reading a document's rows (docs/formats/ledger_v0.md §6.4, §10)."""

from __future__ import annotations

import pytest

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.rules.operations.merge import merge_ledgers
from benchledger.ledger.rules.row.rows import document_rows
from tests.support_ledger_rows import ledger_doc, stored_row


def test_document_rows_errors_and_dedupe() -> None:
    with pytest.raises(InputError, match="must be a JSON object"):
        document_rows([])
    with pytest.raises(InputError, match="schema_version=benchmark_run_ledger_v0"):
        document_rows({"schema_version": "v1"})
    doc = ledger_doc([stored_row(notes="first"), stored_row(notes="second")])
    rows = document_rows(doc)
    assert len(rows) == 1 and rows[0]["notes"] == "second"


def test_merge_upserts_sources_in_order_with_skip_reasons() -> None:
    target = [stored_row(run_id="t1", recorded_at="2026-05-01T00:00:00Z", notes="target")]
    planned = stored_row(run_id="p1", case_id="c5")
    planned["status"] = "planned"
    source_a = ledger_doc(
        [
            stored_row(
                run_id="t1",
                recorded_at="2026-06-01T00:00:00Z",
                notes="from a",
                official_score=1.0,
                official_passed=True,
                score_status="passed",
                failure_class="none",
            ),
            stored_row(run_id="n1", case_id="c2", run_group_id="wanted-1", job_name="j2"),
            stored_row(run_id="o1", benchmark_id="other@1"),
            planned,
        ]
    )
    source_b = ledger_doc(
        [stored_row(run_id="n2", case_id="c3", run_group_id="other-group", job_name="j3")]
    )
    result = merge_ledgers(
        target, [source_a, source_b], benchmark_ids=["b@1"], run_group_contains=["g1", "wanted"]
    )
    merged = {r["run_id"]: r for r in result.rows}
    assert set(merged) == {"t1", "n1"}
    assert merged["t1"]["notes"] == "from a" and merged["t1"]["official_score"] == 1.0
    assert merged["t1"]["recorded_at"] == "2026-05-01T00:00:00Z"
    payload = result.payload
    assert payload["source_run_count"] == 5
    assert payload["merged_run_count"] == 2
    assert payload["considered_run_count"] == 2  # a skipped non-terminal row is not considered
    assert payload["skipped_by_reason"] == {
        "benchmark_filter": 1,
        "non_terminal": 1,
        "run_group_filter": 1,
    }
    assert payload["skipped_run_count"] == 3
    assert payload["new_run_id_count"] == 1
    assert payload["target_run_count"] == 2
    assert payload["source_paths_recorded"] is False
    assert [o.action for o in result.outcomes] == ["replaced", "appended"]


def test_merge_keeps_archived_target_archived() -> None:
    target = [stored_row(archive_state="archived", archive_reason="x", archive_batch_id="b1")]
    result = merge_ledgers(target, [ledger_doc([stored_row(notes="newer")])])
    assert result.rows[0]["archive_state"] == "archived"
    assert result.outcomes[0].action == "archived_kept"


def test_merge_upserts_a_case_in_recorded_order_so_the_earlier_twin_survives() -> None:
    """Two equivalent runs of one logical run, the later listed first: the earlier lands, the
    later only backfills it (loopx upserts a case's runs sorted by ``recorded_at``)."""
    late = stored_row(run_id="late", recorded_at="2026-06-02T00:00:00Z", max_rounds_budget=5)
    early = stored_row(run_id="early", recorded_at="2026-06-01T00:00:00Z")
    result = merge_ledgers([], [ledger_doc([late, early])])
    assert [row["run_id"] for row in result.rows] == ["early"]
    assert result.rows[0]["max_rounds_budget"] == 5
    assert [o.action for o in result.outcomes] == ["appended", "backfilled"]
    assert result.payload["new_run_id_count"] == 1


def test_a_signature_reads_each_value_as_loopx_does() -> None:
    """``new_signature_count`` counts signatures as loopx 0.4.8 writes them: a score stored as
    ``0`` and one stored as ``0.0`` differ (found by the differential suite: loopx counted 7,
    benchledger 6), whitespace runs collapse, and a long value is cut with ``...``."""
    from benchledger.ledger.rules.row.build import drift_signature

    zero_int, zero_float = (
        drift_signature({"official_score": 0}),
        drift_signature({"official_score": 0.0}),
    )
    assert zero_int[6] == "0" and zero_float[6] == "0.0"
    long_case = "c" * 200
    signature = drift_signature({"case_id": long_case, "arm_id": " a \n b ", "mode": 3})
    assert signature[1] == "c" * 157 + "..." and signature[2] == "a b" and signature[3] == "3"
    target = [stored_row(run_id="t1", official_score=0.0, score_status="failed")]
    source = ledger_doc([stored_row(run_id="t2", official_score=0, score_status="failed")])
    merged = merge_ledgers(target, [source])
    assert merged.payload["new_signature_count"] == 1
