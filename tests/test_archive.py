"""Archive and restore (docs/formats/ledger_v0.md §9)."""

from __future__ import annotations

import copy

import pytest

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.rules.operations.archive import (
    archive_rows,
    default_archive_batch_id,
    restore_rows,
)
from benchledger.ledger.rules.row.rows import document_rows
from tests.support_ledger_rows import stored_row
from tests.support_ledger_rules import NOW, load_fixture_ledger


def _archive_rows() -> list[dict]:
    return [
        stored_row(run_id="r1", case_id="c1", arm_id="arm_a", run_group_id="batch-old-1"),
        stored_row(run_id="r2", case_id="c1", arm_id="arm_b", run_group_id="batch-old-2"),
        stored_row(run_id="r3", case_id="c2", arm_id="arm_a", run_group_id="batch-new-1"),
        stored_row(run_id="r4", case_id="c3", arm_id="arm_a", run_group_id="keep-me-old"),
        stored_row(run_id="r5", benchmark_id="other@1", run_group_id="batch-old-9"),
    ]


MISSING_BENCHMARK = "--benchmark-id is required (or --run-id, whose runs name their benchmark)"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"benchmark_id": " ", "reason": "r", "case_ids": ["c1"]}, MISSING_BENCHMARK),
        ({"benchmark_id": "b@1", "reason": "", "case_ids": ["c1"]}, "archive reason is required"),
        (
            {"benchmark_id": "b@1", "reason": "r"},
            "provide a run/case/arm filter, or pass --archive-all-matching-benchmark",
        ),
        (
            {"benchmark_id": "b@1", "reason": "see /Users/me/x", "case_ids": ["c1"]},
            "--reason is not public-safe",
        ),
    ],
)
def test_archive_validation(kwargs: dict, message: str) -> None:
    with pytest.raises(InputError) as caught:
        archive_rows(_archive_rows(), now=NOW, **kwargs)
    assert str(caught.value) == message


def test_archive_filters_and_keep_patterns() -> None:
    result = archive_rows(
        _archive_rows(),
        benchmark_id="b@1",
        reason="superseded",
        run_group_contains=["old"],
        keep_run_group_contains=["keep-me"],
        arm_ids=["arm_a", "arm_b"],
        now=NOW,
    )
    payload = result.payload
    assert result.changed_run_ids == ["r1", "r2"]
    assert payload["matched_run_count"] == 2
    assert payload["newly_archived_run_count"] == 2
    assert payload["kept_run_count"] == 1
    assert payload["archive_batch_id"] == default_archive_batch_id(
        "b@1", "superseded", (), ["arm_a", "arm_b"], ["old"], ["keep-me"]
    )
    archived = {r["run_id"]: r for r in result.rows if r.get("archive_state") == "archived"}
    assert set(archived) == {"r1", "r2"}
    assert {r["archived_at"] for r in archived.values()} == {NOW}
    assert len(result.rows) == 5  # never deleted
    assert payload["archived_samples"][0] == {
        "run_id": "r1",
        "case_id": "c1",
        "arm_id": "arm_a",
        "run_group_id": "batch-old-1",
        "official_score": 0.0,
        "failure_class": "official_verifier_solution_failure",
    }


def test_archive_rerun_is_already_archived_and_batch_id_deterministic() -> None:
    first = archive_rows(_archive_rows(), benchmark_id="b@1", reason="r", case_ids=["c1"], now=NOW)
    again = archive_rows(
        first.rows, benchmark_id="b@1", reason="r", case_ids=["c1"], now="2027-01-01T00:00:00Z"
    )
    assert (
        again.payload["newly_archived_run_count"],
        again.payload["already_archived_run_count"],
    ) == (0, 2)
    assert again.payload["archive_batch_id"] == first.payload["archive_batch_id"]
    assert again.rows == first.rows


def test_archive_all_matching_benchmark_and_sample_truncation() -> None:
    rows = [stored_row(run_id=f"r{i:02d}", case_id=f"c{i}") for i in range(25)]
    result = archive_rows(
        rows, benchmark_id="b@1", reason="r", archive_all_matching_benchmark=True, now=NOW
    )
    assert result.payload["newly_archived_run_count"] == 25
    assert len(result.payload["archived_samples"]) == 20 and result.payload["truncated"] is True


def test_archive_then_restore_returns_rows_exactly(fixtures_dir) -> None:
    rows = document_rows(load_fixture_ledger(fixtures_dir))
    before = copy.deepcopy(rows)
    archived = archive_rows(
        rows,
        benchmark_id="terminal-bench@2.0",
        reason="tidy up",
        case_ids=["fix-git", "mteb-retrieve"],
        now=NOW,
    )
    assert archived.changed_run_ids
    assert rows == before  # inputs untouched
    restored = restore_rows(
        archived.rows,
        benchmark_id="terminal-bench@2.0",
        reason="archived by mistake",
        archive_batch_id=archived.payload["archive_batch_id"],
    )
    assert restored.payload["restored_run_count"] == len(archived.changed_run_ids)
    assert restored.rows == before


def test_restore_leaves_other_batches_archived() -> None:
    rows = [
        stored_row(
            run_id="r1", archive_state="archived", archive_batch_id="older", archive_reason="x"
        )
    ]
    rows.append(stored_row(run_id="r2", case_id="c9"))
    archived = archive_rows(rows, benchmark_id="b@1", reason="r", case_ids=["c1", "c9"], now=NOW)
    restored = restore_rows(
        archived.rows,
        benchmark_id="b@1",
        reason="undo",
        archive_batch_id=archived.payload["archive_batch_id"],
    )
    assert restored.rows == rows
    everything = restore_rows(archived.rows, benchmark_id="b@1", reason="undo", case_ids=["c1"])
    assert everything.payload["restored_run_count"] == 1
    assert "archive_state" not in everything.rows[0]


def test_archive_and_restore_by_run_id() -> None:
    """``--run-id`` (issue 34): one run archived by its id, the others of its case untouched;
    a batch id of its own; an id that is no run of the benchmark is named, not "0 matched"."""
    rows = _archive_rows()
    target = rows[0]["run_id"]
    result = archive_rows(rows, benchmark_id="b@1", reason="r", run_ids=[target], now=NOW)
    archived = [r["run_id"] for r in result.rows if r.get("archive_state") == "archived"]
    assert archived == [target] and result.changed_run_ids == [target]
    by_case = archive_rows(rows, benchmark_id="b@1", reason="r", case_ids=["c1"], now=NOW)
    assert result.payload["archive_batch_id"] != by_case.payload["archive_batch_id"]
    assert default_archive_batch_id("b@1", "r", ["c1"]) == by_case.payload["archive_batch_id"]
    back = restore_rows(result.rows, benchmark_id="b@1", reason="back", run_ids=[target])
    assert back.rows == rows
    with pytest.raises(InputError, match=r"^run id nope is not a run of benchmark b@1"):
        archive_rows(rows, benchmark_id="b@1", reason="r", run_ids=["nope"], now=NOW)
