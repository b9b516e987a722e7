"""``benchmark parity-check`` and ``benchmark case-analysis-candidates`` through the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchledger.ledger.rules.operations.case_analysis import build_candidate_report
from tests.support_planned_cli import invoke, stored_events

PRODUCT_CALLS = {
    "status": 1, "quota_should_run": 2, "todo_list": 1, "history": 1, "check": 1,
    "todo_claim": 1, "case_result": 1,
}  # fmt: skip


def product_record() -> dict:
    return {
        "schema_version": "benchmark_run_v0",
        "benchmark_id": "terminal-bench@2.0",
        "mode": "codex_loopx_treatment",
        "interaction_counters": {"loopx_cli_calls": dict(PRODUCT_CALLS)},
        "product_mode_lifecycle_contract": {
            "case_active_state_path": "/app/.codex/goals/case-1/ACTIVE_GOAL_STATE.md",
            "case_active_state_initialized_before_agent": True,
        },
        "agent_activity": {"tool_call_count": 12},
        "raw_debug_blob": {"anything": "dropped by compaction"},
    }


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# --- parity-check -------------------------------------------------------------------------------


def test_parity_full_product_evidence_json(tmp_path):
    path = write(tmp_path / "run.json", product_record())
    call = invoke(["benchmark", "parity-check", "--benchmark-run-json", str(path),
                   "--format", "json"])  # fmt: skip
    assert call.code == 0, call.stderr
    check = call.payload["codex_app_parity_posthoc_check"]
    assert call.payload["ok"] is True
    assert check["claim_level"] == "full_product_path_evidence_present"
    assert check["full_product_claim_allowed"] is True
    assert check["read_boundary"]["raw_logs_read"] is False


@pytest.mark.parametrize(
    "wrap",
    [
        lambda r: {"generated_at": "2026-05-02T00:00:00Z", "benchmark_run": r},
        lambda r: {"schema_version": "harbor_job_result_reducer_v0", "compact_benchmark_run": r},
        lambda r: {"schema_version": "benchmark_run_batch_v0", "benchmark_runs": [r]},
    ],
)
def test_parity_accepts_the_documented_wrappers(tmp_path, wrap):
    path = write(tmp_path / "run.json", wrap(product_record()))
    call = invoke(["benchmark", "parity-check", "--benchmark-run-json", str(path),
                   "--format", "json"])  # fmt: skip
    assert call.code == 0, call.stderr
    assert call.payload["codex_app_parity_posthoc_check"]["full_product_claim_allowed"] is True


def test_parity_reads_stdin_and_renders_markdown():
    record = {**product_record(), "product_mode_lifecycle_contract": {}}
    call = invoke(["benchmark", "parity-check", "--benchmark-run-json", "-"],
                  input_text=json.dumps(record))  # fmt: skip
    assert call.code == 0, call.stderr
    assert call.stdout.startswith("# Codex App Parity Posthoc Check\n")
    assert "- claim_status: not_allowed" in call.stdout
    assert "- claim_level: product_mode_surrogate_missing_posthoc_evidence" in call.stdout
    assert "canonical_case_active_state_path" in call.stdout


def test_parity_global_format_applies():
    call = invoke(["--format", "json", "benchmark", "parity-check", "--benchmark-run-json", "-"],
                  input_text=json.dumps(product_record()))  # fmt: skip
    assert call.payload["ok"] is True


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "file not found: missing.json"),
        ("[1, 2]", "ledger input JSON must contain an object"),
        ("{not json", "ledger input JSON must contain an object: unexpected character, "
                      "expected a string key (at line 1, column 2)"),
        ('{"schema_version": "something_else"}',
         "--benchmark-run-json did not contain a compactable benchmark_run_v0 object"),
        (json.dumps({"schema_version": "benchmark_run_batch_v0",
                     "benchmark_runs": [product_record(), product_record()]}),
         "--benchmark-run-json holds 2 benchmark runs; parity-check reads one"),
    ],
)  # fmt: skip
def test_parity_errors_exit_1_with_the_invalid_envelope(tmp_path, monkeypatch, content, message):
    monkeypatch.chdir(tmp_path)
    if content is not None:
        (tmp_path / "missing.json").write_text(content, encoding="utf-8")
    call = invoke(["benchmark", "parity-check", "--benchmark-run-json", "missing.json",
                   "--format", "json"])  # fmt: skip
    assert call.code == 1
    assert call.stderr.strip() == f"error: {message}"
    assert call.payload["ok"] is False and call.payload["error"] == message
    check = call.payload["codex_app_parity_posthoc_check"]
    assert check == {"full_product_claim_allowed": False,
                     "claim_level": "invalid_or_unreadable_compact_benchmark_run"}  # fmt: skip


def test_parity_error_never_shows_an_absolute_path(tmp_path):
    call = invoke(["benchmark", "parity-check", "--benchmark-run-json",
                   str(tmp_path / "nope.json")])  # fmt: skip
    assert call.code == 1
    assert call.stderr.strip() == "error: file not found: nope.json"


def test_parity_requires_the_flag():
    call = invoke(["benchmark", "parity-check"])
    assert call.code == 2 and "--benchmark-run-json" in call.stderr


def test_parity_on_a_planned_codex_loopx_record_from_the_store(tmp_path):
    """A planned record is product mode by name but has no evidence: no claim."""
    db = f"sqlite:///{tmp_path / 'store.db'}"
    run = invoke(["benchmark", "run", "terminal-bench", "--goal-id", "p", "--mode", "codex-loopx",
                  "--no-global-sync", "--execute", "--format", "json"],
                 db=db, runtime_root=tmp_path / "rt")  # fmt: skip
    assert run.code == 0, run.stderr
    call = invoke(["benchmark", "parity-check", "--benchmark-run-json",
                   run.payload["json_path"], "--format", "json"])  # fmt: skip
    check = call.payload["codex_app_parity_posthoc_check"]
    assert check["product_mode"] is True
    assert check["claim_level"] == "product_mode_surrogate_missing_posthoc_evidence"
    assert "loopx_cli_trace_present" in check["missing_evidence"]


# --- case-analysis-candidates -------------------------------------------------------------------


@pytest.fixture
def project(fixtures_dir, tmp_path, monkeypatch) -> Path:
    """A project dir (the cwd) with the loopx ledger and a small hand-written analysis."""
    src = fixtures_dir / "loopx-ledger" / "benchmark-run-ledger.json"
    shutil.copyfile(src, tmp_path / "benchmark-run-ledger.json")
    (tmp_path / "benchmark-run-ledger.json").chmod(0o644)
    write(tmp_path / "benchmark-case-analysis.json", {
        "schema_version": "benchmark_case_analysis_v0",
        "cases": [{"benchmark_id": "skillsbench@1.1", "case_id": "citation-check",
                   "classification": "hand_written", "decision": "kept"}],
    })  # fmt: skip
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _ledger_and_analysis(project: Path) -> tuple[dict, dict]:
    return (
        json.loads((project / "benchmark-run-ledger.json").read_text("utf-8")),
        json.loads((project / "benchmark-case-analysis.json").read_text("utf-8")),
    )


def test_candidates_default_paths_match_the_pure_report(project):
    db = project / "never-created.db"
    call = invoke(["--db", f"sqlite:///{db}", "benchmark", "case-analysis-candidates",
                   "--format", "json"])  # fmt: skip
    assert call.code == 0, call.stderr
    ledger, analysis = _ledger_and_analysis(project)
    expected, _ = build_candidate_report(ledger, analysis)
    assert call.payload["report"] == expected
    assert call.payload["run_ledger_path"] == "benchmark-run-ledger.json"
    assert call.payload["case_analysis_path"] == "benchmark-case-analysis.json"
    assert call.payload["read_boundary"]["compact_only"] is True
    keys = {(c["benchmark_id"], c["case_id"]) for c in call.payload["report"]["candidates"]}
    assert ("skillsbench@1.1", "citation-check") not in keys
    assert not db.exists(), "a read-only report never opens the store"


def test_candidates_proposals_limit_and_markdown(project):
    call = invoke(["benchmark", "case-analysis-candidates", "--include-proposed-records",
                   "--proposal-limit", "2", "--format", "json"])  # fmt: skip
    report = call.payload["report"]
    assert report["proposed_record_count"] == 2 == len(report["proposed_records"])
    md = invoke(["benchmark", "case-analysis-candidates"]).stdout
    assert md.startswith("# Benchmark Case Analysis Candidates\n")
    assert "| Priority | Class | Benchmark | Case | Decision | Runs | Recommended Handling |" in md


def test_candidates_explicit_paths(project, tmp_path_factory):
    other = tmp_path_factory.mktemp("elsewhere")
    shutil.move(project / "benchmark-case-analysis.json", other / "analysis.json")
    call = invoke(["benchmark", "case-analysis-candidates", "--run-ledger-path",
                   "benchmark-run-ledger.json", "--case-analysis-path",
                   str(other / "analysis.json"), "--format", "json"])  # fmt: skip
    assert call.code == 0, call.stderr
    assert call.payload["case_analysis_path"] == str(other / "analysis.json")


@pytest.mark.parametrize(
    ("args", "remove", "message"),
    [
        (["--apply-accepted"], None,
         "--apply-accepted requires --acceptance-policy generated-safe"),
        (["--apply-accepted", "--acceptance-policy", "generated-safe"], None,
         "--apply-accepted requires --output-case-analysis-path"),
        ([], "benchmark-run-ledger.json", "file not found: benchmark-run-ledger.json"),
        ([], "benchmark-case-analysis.json", "file not found: benchmark-case-analysis.json"),
    ],
)  # fmt: skip
def test_candidates_errors(project, args, remove, message):
    if remove:
        (project / remove).unlink()
    call = invoke(["benchmark", "case-analysis-candidates", *args, "--format", "json"])
    assert call.code == 1
    assert call.stderr.strip() == f"error: {message}"
    assert call.payload["ok"] is False and call.payload["error"] == message
    assert set(call.payload) >= {"run_ledger_path", "case_analysis_path", "read_boundary"}


def test_candidates_not_an_object(project):
    (project / "benchmark-case-analysis.json").write_text("[]", encoding="utf-8")
    call = invoke(["benchmark", "case-analysis-candidates"])
    assert call.code == 1
    assert call.stderr.strip() == "error: benchmark-case-analysis.json must contain a JSON object"


def test_candidates_bad_policy_is_a_usage_error(project):
    call = invoke(["benchmark", "case-analysis-candidates", "--acceptance-policy", "yolo"])
    assert call.code == 2


def test_apply_accepted_goes_through_an_event_then_the_files(project):
    db = f"sqlite:///{project / 'store.db'}"
    out_md = project / "out" / "analysis.md"
    out_md.parent.mkdir()
    out_md.write_text("# old\n\n## Treatment Policy Control Set\n\nkeep me\n", encoding="utf-8")
    args = [
        "benchmark",
        "case-analysis-candidates",
        "--acceptance-policy",
        "generated-safe",
        "--apply-accepted",
        "--output-case-analysis-path",
        "out/analysis.json",
        "--output-case-analysis-markdown-path",
        "out/analysis.md",
        "--format",
        "json",
    ]
    before = (project / "benchmark-case-analysis.json").read_bytes()
    call = invoke(args, db=db)
    assert call.code == 0, call.stderr
    upsert = call.payload["report"]["accepted_upsert"]
    assert upsert["output_written"] is True and upsert["markdown_written"] is True
    assert upsert["added_count"] > 0
    assert call.payload["events"]["appended"] == 1
    assert (project / "benchmark-case-analysis.json").read_bytes() == before

    [event] = stored_events(db, "case_analysis_accepted")
    written = json.loads((project / "out" / "analysis.json").read_text("utf-8"))
    assert event["payload"]["document"] == written
    assert event["stream"] == "case_analysis/out/analysis.json"
    assert event["payload"]["output_path"] == "out/analysis.json"
    assert event["payload"]["added_count"] == upsert["added_count"]
    assert str(project) not in json.dumps(event["payload"]), "no absolute paths in the event"
    added = [
        c
        for c in written["cases"]
        if c.get("evidence_status") == "generated_from_compact_benchmark_run_ledger"
    ]
    assert len(added) == upsert["added_count"]
    assert written["cases"][0]["classification"] == "hand_written"
    markdown = out_md.read_text("utf-8")
    assert markdown.startswith("# Benchmark Case Analysis\n")
    assert markdown.endswith("## Treatment Policy Control Set\n\nkeep me\n")
    [export] = stored_events(db, "export_written")
    assert {f["kind"] for f in export["payload"]["files"]} == {
        "case_analysis_json",
        "case_analysis_markdown",
    }

    again = invoke(args, db=db)
    assert again.code == 0, again.stderr
    assert again.payload["events"] == {**call.payload["events"], "appended": 0,
                                       "already_recorded": True}  # fmt: skip
    assert len(stored_events(db, "case_analysis_accepted")) == 1
    assert json.loads((project / "out" / "analysis.json").read_text("utf-8")) == written
    verify = invoke(["verify", "--format", "json"], db=db)
    assert verify.code == 0, verify.stdout
