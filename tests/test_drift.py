"""The drift check: history runs matched by id or signature (docs/formats/ledger_v0.md §12), and the
aggregate and the check on 30,000 rows (correct at scale; speed lives in bench/)."""

from __future__ import annotations

from benchledger.ledger.rules.operations.aggregate import aggregate
from benchledger.ledger.rules.operations.drift import drift_check
from benchledger.ledger.rules.row.build import build_row
from benchledger.ledger.rules.row.rows import document_rows
from tests.support_ledger_rules import NOW, bare_record, load_fixture_ledger, record


def _history(run: dict, generated_at: str, name: str) -> dict:
    return {
        "generated_at": generated_at,
        "goal_id": "g",
        "benchmark_run": run,
        "json_path": f"goals/g/runs/{name}.json",
    }


def test_drift_check_matches_by_id_or_signature_and_reports_missing() -> None:
    in_ledger = record()
    by_signature = record(run_key="harbor:other-key", job_name="job-sig")
    missing = record(run_key="harbor:missing", case_id="regex-log", case_ids=["regex-log"])
    planned = bare_record(case_id="c", run_status="planned")
    ledger = [
        build_row(in_ledger, recorded_at="2026-06-01T00:00:00Z", now=NOW)[0],
        {**build_row(by_signature, now=NOW)[0], "run_id": "renamed", "run_group_id": "regrouped"},
    ]
    history = [
        _history(missing, "2026-06-03T00:00:00Z", "3"),
        _history(planned, "2026-06-02T12:00:00Z", "2b"),
        _history(by_signature, "2026-06-02T00:00:00Z", "2"),
        _history(in_ledger, "2026-06-01T00:00:00Z", "1"),
        {"generated_at": "2026-05-01T00:00:00Z", "note": "no benchmark run"},
    ]
    payload = drift_check(history, ledger, ledger_path="/abs/path/ledger.json", now=NOW)
    assert payload["checked_history_run_count"] == 4
    assert payload["terminal_history_run_count"] == 3
    assert payload["non_terminal_skipped_count"] == 1
    assert payload["matched_history_run_count"] == 2
    assert payload["missing_ledger_run_count"] == 1 and payload["drift_detected"] is True
    item = payload["missing_runs"][0]
    assert item["case_id"] == "regex-log" and item["generated_at"] == "2026-06-03T00:00:00Z"
    assert "--run-ledger-path <benchmark-run-ledger.json>" in item["catch_up_command_template"]
    assert "--recorded-at 2026-06-03T00:00:00Z --execute" in item["catch_up_command_template"]
    # the catch-up command, run as shown, produces the id the check looks for
    catch_up, _ = build_row(
        missing,
        run_group_id=item_group(item),
        arm_id=item["arm_id"],
        recorded_at=item["generated_at"],
        now=NOW,
    )
    assert catch_up["run_id"] == item["run_id"]
    assert payload["read_boundary"]["compact_only"] is True


def item_group(item: dict) -> str:
    return item["catch_up_command_template"].split("--run-group-id ")[1].split(" ")[0]


def test_drift_check_limits() -> None:
    history = [
        _history(record(run_key=f"k{i}"), f"2026-06-0{i + 1}T00:00:00Z", str(i)) for i in range(5)
    ]
    payload = drift_check(history, [], limit=2, history_limit=4, now=NOW)
    assert payload["checked_history_run_count"] == 4
    assert len(payload["missing_runs"]) == 2 and payload["truncated"] is True
    assert payload["ledger_run_count"] == 0
    clamped = drift_check(history, [], limit=-1, history_limit=-5, now=NOW)
    assert (clamped["limit"], clamped["checked_history_run_count"]) == (0, 0)
    assert clamped["drift_detected"] is False


# ---------------------------------------------------------------------------------------------


def _scaled_rows(fixtures_dir, count: int) -> list[dict]:
    templates = document_rows(load_fixture_ledger(fixtures_dir))
    rows = []
    for index in range(count):
        row = dict(templates[index % len(templates)])
        row["benchmark_id"] = "perf@1"
        row["case_id"] = f"case-{index // 5:05d}"
        row["run_id"] = f"{index:012x}"
        row["run_group_id"] = f"group-{index % 7}"
        rows.append(row)
    return rows


def test_aggregate_and_drift_on_30000_rows(fixtures_dir) -> None:
    """Correctness at scale; the speed targets live in bench/ledger_scaling.py, not here."""
    rows = _scaled_rows(fixtures_dir, 30_000)
    # A loopx ledger's rows are read as loopx reads them (countability recomputed), not
    # re-normalised by benchledger's rules.
    assert "rules_version" not in rows[0] and rows[0]["official_score_countability_reason"]
    payload = aggregate(rows, benchmark_id="perf@1")
    assert payload["canonical_total"] > 1000
    history = [
        _history(record(run_key=f"k{i}"), "2026-06-01T00:00:00Z", str(i)) for i in range(500)
    ]
    drift = drift_check(history, rows, now=NOW)
    assert drift["missing_ledger_run_count"] == 500
