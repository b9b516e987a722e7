"""Per-goal run store content and envelopes (docs/formats/history_registry_rollout.md §5, §6)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.handlers.benchmark_run_payload import error_payload, success_payload
from benchledger.ledger.rules.history.goal_runs import (
    HEALTH_CHECK,
    allocate_stem,
    allocate_stems,
    build_run_record,
    format_generated_at,
    normalize_delivery_batch_scale,
    normalize_delivery_outcome,
    stem_base,
    stems_on_disk,
)
from benchledger.projections.publishing.goal_runs import (
    index_row,
    read_index,
    render_append_markdown,
    render_index_line,
    render_record_json,
    render_record_markdown,
)

# the spec's example record (docs/formats/history_registry_rollout.md §5.1)
SPEC_RECORD = Path("spec-examples/goal-run-record.json")
RUN = {
    "schema_version": "benchmark_run_v0",
    "benchmark_id": "terminal-bench@2.0",
    "case_id": "fix-git",
    "arm_id": "baseline",
    "run_status": "completed",
    "source_runner": "harbor",
    "mode": "harbor_job_result",
    "progress": {"n_total_trials": 1, "n_completed_trials": 1},
    "metrics": {"input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.05},
}


def _spec_record_example(fixtures_dir: Path) -> dict:
    """The spec's example record (§5.1), with its elided benchmark_run replaced by a real one."""
    example = json.loads((fixtures_dir / SPEC_RECORD).read_text(encoding="utf-8"))
    example["benchmark_run"] = dict(RUN)
    return example


def test_record_matches_spec_example(fixtures_dir: Path) -> None:
    example = _spec_record_example(fixtures_dir)
    record = build_run_record(
        RUN,
        goal_id="demo",
        generated_at=example["generated_at"],
        classification="my_custom_class_v0",
        recommended_action="compare with baseline arm next",
        delivery_batch_scale="single_surface",
        delivery_outcome="outcome_progress",
    )
    assert record == example
    assert list(record) == list(example)
    assert "json_path" not in record


def test_record_defaults_and_precondition() -> None:
    record = build_run_record(RUN, goal_id="demo", generated_at="2026-11-30T17:47:17Z")
    assert record["classification"] == "benchmark_run_v0"
    assert record["recommended_action"] == "review the compact benchmark run before the next run"
    assert record["health_check"] == HEALTH_CHECK
    assert "delivery_batch_scale" not in record and "delivery_outcome" not in record
    with pytest.raises(
        InputError, match=r"^benchmark run must have schema_version=benchmark_run_v0$"
    ):
        build_run_record({"schema_version": "other"}, goal_id="demo", generated_at="x")


def test_record_json_is_pretty_with_non_ascii_and_newline() -> None:
    record = build_run_record(
        {**RUN, "case_id": "données-météo-分析"}, goal_id="g", generated_at="t"
    )
    text = render_record_json(record)
    assert text.endswith("}\n") and "\n  " in text
    assert "données-météo-分析" in text
    assert json.loads(text) == record


def test_generated_at_is_utc_seconds_z() -> None:
    local = datetime(2026, 12, 1, 1, 46, 48, 999999, tzinfo=timezone(timedelta(hours=8)))
    assert format_generated_at(local) == "2026-11-30T17:46:48Z"


# --- stems (§5.2) ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("generated_at", "stem"),
    [
        ("2026-11-30T17:46:48Z", "2026-11-30T17-46-48Z"),
        ("2026-11-30T17:46:48+08:00", "2026-11-30T17-46-48-08-00"),
        ("::weird..", "weird"),
        (":::", "run"),
    ],
)
def test_stem_base(generated_at: str, stem: str) -> None:
    assert stem_base(generated_at) == stem


def test_same_second_runs_get_distinct_stems() -> None:
    ts = "2026-11-30T17:46:48Z"
    first = allocate_stem(ts, set())
    second = allocate_stem(ts, {first})
    third = allocate_stem(ts, {first, second})
    assert [first, second, third] == [
        "2026-11-30T17-46-48Z",
        "2026-11-30T17-46-48Z-2",
        "2026-11-30T17-46-48Z-3",
    ]


def test_multi_record_ingest_takes_consecutive_suffixes_skipping_taken() -> None:
    ts = "2026-11-30T17:46:48Z"
    taken = {"2026-11-30T17-46-48Z", "2026-11-30T17-46-48Z-3"}
    assert allocate_stems(ts, 3, taken) == [
        "2026-11-30T17-46-48Z-2",
        "2026-11-30T17-46-48Z-4",
        "2026-11-30T17-46-48Z-5",
    ]
    assert allocate_stems(ts, 0, taken) == []


def test_stems_on_disk_counts_json_or_markdown_alone() -> None:
    names = ["a.json", "b.md", "index.jsonl", "index.jsonl.lock", ".x.json.tmp", "c.json", "c.md"]
    assert stems_on_disk(names) == {"a", "b", "c"}
    # an orphan .md blocks its pair, as in loopx's execute path
    assert allocate_stem("b", stems_on_disk(names)) == "b-2"


# --- index.jsonl (§5.3) ------------------------------------------------------------------------


def test_index_row_uses_rt_relative_paths() -> None:
    record = build_run_record(RUN, goal_id="demo", generated_at="2026-11-30T17:46:48Z")
    row = index_row(record, goal_id="demo", stem="2026-11-30T17-46-48Z")
    assert row["json_path"] == "goals/demo/runs/2026-11-30T17-46-48Z.json"
    assert row["markdown_path"] == "goals/demo/runs/2026-11-30T17-46-48Z.md"
    line = render_index_line(row)
    assert line.endswith("\n") and line.count("\n") == 1 and ", " not in line
    assert json.loads(line) == row


def test_read_index_merges_skips_and_sorts_newest_first() -> None:
    rows = [
        {
            "generated_at": "2026-11-30T17:46:48Z",
            "json_path": "goals/g/runs/a.json",
            "markdown_path": "goals/g/runs/a.md",
            "classification": "old",
        },
        {
            "generated_at": "2026-11-30T18:00:00+08:00",
            "json_path": "/abs/loopx/b.json",
            "markdown_path": "/abs/loopx/b.md",
        },
        {
            "generated_at": "2026-11-30T17:46:48Z",
            "json_path": "goals/g/runs/a.json",
            "markdown_path": "goals/g/runs/a.md",
            "classification": "new",
        },
    ]
    lines = [json.dumps(rows[0]), "", "{torn", "[1]", json.dumps(rows[1]), json.dumps(rows[2])]
    present = {"goals/g/runs/a.json", "/abs/loopx/b.md"}
    result = read_index(lines, exists=present.__contains__)
    assert result["raw_index_records"] == 3
    assert result["unique_runs"] == 2
    newest, older = result["records"]
    # 17:46:48Z is later than 18:00+08:00 (= 10:00Z): instants, not strings, decide
    assert newest["classification"] == "new"
    assert (newest["json_exists"], newest["markdown_exists"]) == (True, False)
    assert older["json_path"] == "/abs/loopx/b.json"
    assert (older["json_exists"], older["markdown_exists"]) == (False, True)


# --- delivery labels (§5.5) --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("", None),
        ("test_only", "test_only"),
        ("multi_surface", "multi_surface"),
        ("single_segment", "single_surface"),
        ("bounded_segment", "single_surface"),
    ],
)
def test_delivery_batch_scale(value: str | None, expected: str | None) -> None:
    assert normalize_delivery_batch_scale(value) == expected


def test_delivery_label_errors() -> None:
    with pytest.raises(InputError, match="delivery_batch_scale must be one of"):
        normalize_delivery_batch_scale("huge")
    with pytest.raises(InputError, match="delivery_outcome must be one of"):
        normalize_delivery_outcome("win")
    assert normalize_delivery_outcome("primary_goal_outcome") == "primary_goal_outcome"


# --- Markdown (§5.4) ---------------------------------------------------------------------------


def test_record_markdown() -> None:
    record = build_run_record(
        RUN, goal_id="demo", generated_at="2026-11-30T17:46:48Z", classification="c_v0"
    )
    text = render_record_markdown(record, goal_id="demo", stem="2026-11-30T17-46-48Z")
    lines = text.splitlines()
    assert lines[0] == "# Benchmark Run Append"
    assert "- ok: `true`" in lines and "- dry_run: `false`" in lines
    assert "- appended: `true`" in lines
    assert "- json_path: `goals/demo/runs/2026-11-30T17-46-48Z.json`" in lines
    assert "- index_path: `goals/demo/runs/index.jsonl`" in lines
    assert lines.count("## Benchmark Run") == 1
    for bullet in ("- case_id: `fix-git`", "- arm_id: `baseline`", "- run_status: `completed`"):
        assert bullet in lines
    assert "- progress: completed=1 total=1" in lines
    assert "- metrics: input_tokens=1200 output_tokens=300 cost_usd=0.05" in lines
    assert "error" not in text


def test_stdout_markdown_multi_record_and_error() -> None:
    payload = {
        "ok": False,
        "dry_run": True,
        "appended": False,
        "goal_id": "g",
        "classification": "c",
        "benchmark_runs": [RUN, {**RUN, "case_id": "other", "progress": {}, "metrics": {}}],
        "error": "boom",
    }
    text = render_append_markdown(payload)
    assert text.count("## Benchmark Run") == 2
    assert "- progress: completed=- total=-" in text
    assert text.rstrip().endswith("- error: `boom`")
    assert "json_path" not in text


# --- envelopes (§6) ----------------------------------------------------------------------------


def _success(records: list[dict], dry_run: bool, **extra: object) -> dict:
    paths = [f"/rt/goals/g/runs/s{i}.json" for i in range(len(records))]
    return success_payload(
        dry_run=dry_run,
        registry=".benchledger/registry.json",
        runtime_root="/rt",
        goal_id="g",
        classification="c",
        recommended_action="a",
        generated_at="2026-11-30T17:46:48Z",
        records=records,
        json_paths=paths,
        markdown_paths=[p.replace(".json", ".md") for p in paths],
        index_path="/rt/goals/g/runs/index.jsonl",
        benchmark_cli={"benchmark": "terminal-bench"},
        global_sync={"ok": True, "dry_run": dry_run, "skipped": True, "reason": "x"},
        **extra,
    )


def test_success_envelope_single_record_execute() -> None:
    payload = _success(
        [RUN],
        dry_run=False,
        delivery_outcome="outcome_gap",
        rollout={"rollout_event": {"event_id": "e"}},
    )
    assert payload["ok"] is True and payload["appended"] is True
    assert payload["appended_count"] == 1
    assert payload["benchmark_run"] == RUN and payload["benchmark_runs"] == [RUN]
    assert payload["json_path"] == payload["json_paths"][0]
    assert payload["markdown_path"].endswith("s0.md")
    assert payload["health_check"] == HEALTH_CHECK
    assert payload["delivery_outcome"] == "outcome_gap"
    assert payload["rollout_event"] == {"event_id": "e"}
    assert "benchmark_run_ledger" not in payload and "delivery_batch_scale" not in payload


def test_success_envelope_multi_record_dry_run() -> None:
    payload = _success([RUN, RUN], dry_run=True)
    assert payload["dry_run"] is True and payload["appended"] is False
    assert payload["appended_count"] == 0
    for key in ("benchmark_run", "json_path", "markdown_path"):
        assert key not in payload
    assert len(payload["benchmark_runs"]) == 2 and len(payload["markdown_paths"]) == 2


def test_error_envelope() -> None:
    base = dict(dry_run=True, registry=None, runtime_root="/rt", goal_id="g", classification="c")
    payload = error_payload(**base, error="goal id is required")
    assert payload == {"ok": False, "appended": False, "error": "goal id is required", **base}
    written = error_payload(**base, error="x", appended=True, json_paths=["/rt/a.json"])
    assert written["appended"] is True and written["json_paths"] == ["/rt/a.json"]


def test_now_helper_roundtrip() -> None:
    assert format_generated_at(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2026-01-02T03:04:05Z"
    with pytest.raises(ValueError):
        format_generated_at(datetime(2026, 1, 2))
