"""BenchFlow 0.7.11 adapter against BenchFlow's own verdicts (fixtures/benchflow/manifest.json)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from benchledger.ledger.core.errors import InputError, SourceError, UsageError
from benchledger.ledger.sources.benchflow.options import BenchflowReadOptions
from benchledger.ledger.sources.benchflow.tree import (
    benchflow_verdict,
    discover_benchflow_results,
    read_benchflow_result,
    read_benchflow_root,
    scan_benchflow_root,
    select_result,
)
from benchledger.ledger.sources.planned.skillsbench_routes import (
    ROUTE_NAMES,
    build_planned_skillsbench_record,
    build_planned_skillsbench_records,
    planned_job_name,
)
from tests.support_benchflow_source import load_manifest, materialize, result_id, result_params

RESULTS = result_params()
CASES = load_manifest()["cases"]
TIMING_KEYS = {
    "environment_setup": "environment_setup_time_sec",
    "agent_setup": "agent_setup_time_sec",
    "agent_execution": "agent_execution_time_sec",
    "verifier": "verifier_time_sec",
    "total": "total_time_sec",
}
TOKEN_KEYS = {
    "input_tokens": "total_input_tokens",
    "output_tokens": "total_output_tokens",
    "cache_tokens": "total_cache_read_tokens",
    "cost_usd": "total_cost_usd",
}


@pytest.fixture(scope="session")
def tree(fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture set with its empty dirs and mtimes restored (git keeps neither)."""
    return materialize(fixtures_dir, tmp_path_factory.mktemp("bf") / "benchflow")


def _case_root(tree: Path, case: dict[str, Any]) -> Path:
    return tree / case["root"]


def _rel_to_case(rel: str, case: dict[str, Any]) -> str:
    return Path(rel).relative_to(case["root"]).as_posix()


def _record_for(records: list[dict], selected_rel: str) -> dict:
    matches = [r for r in records if r["selection"].get("selected_relative_path") == selected_rel]
    assert len(matches) == 1, selected_rel
    return matches[0]


def _raw(tree: Path, rel: str) -> dict:
    return json.loads((tree / rel).read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------------------------
# Every result.json in the manifest


@pytest.mark.parametrize(
    ("case_id", "rel", "info", "case"), RESULTS, ids=[result_id(*p) for p in RESULTS]
)
def test_every_result_counted_as_benchflow_counts_it(tree, case_id, rel, info, case):
    scan = scan_benchflow_root(_case_root(tree, case))
    found = {c.relative_path for c in scan.candidates}
    rel_case = _rel_to_case(rel, case)
    if info["counted_by_benchflow"]:
        assert rel_case in found
        assert rel_case not in scan.ignored_relative_paths
    else:
        assert rel_case not in found
        assert scan.ignored_relative_paths[rel_case] == "nested_below_trial_dir"
        assert scan.ignored_nested_count >= 1


@pytest.mark.parametrize(
    ("case_id", "rel", "info", "case"), RESULTS, ids=[result_id(*p) for p in RESULTS]
)
def test_every_result_verdict_score_timing_tokens(tree, case_id, rel, info, case):
    path = tree / rel
    if not info["counted_by_benchflow"]:
        with pytest.raises(InputError, match="reviewer child result"):
            read_benchflow_result(BenchflowReadOptions(path))
        return
    if info.get("unreadable"):
        record = read_benchflow_result(BenchflowReadOptions(path)).records[0]
        assert record["run_status"] == "corrupt"
        assert record["trials"][0]["status"] == "result_corrupt"
        assert record["official_task_score"]["kind"] == "skillsbench_verifier_reward_missing"
        assert "official_score" not in record
        return
    raw = _raw(tree, rel)
    ingest = read_benchflow_result(BenchflowReadOptions(path))
    assert len(ingest.records) == 1
    record = ingest.records[0]
    trial = record["trials"][0]
    outcome = info["benchflow_score_outcome"]
    # verdict and score
    assert benchflow_verdict(raw) == outcome
    assert record["runner_verdict"] == trial["runner_verdict"] == outcome
    assert trial["passed"] is (outcome == "passed")
    assert record.get("official_score") == info["reward"]
    assert trial.get("primary_reward") == info["reward"]
    if info["reward"] is None:
        assert record["official_task_score"]["kind"] == "skillsbench_verifier_reward_missing"
        assert record["official_score_status"] == "missing"
        assert trial["unscored_reason"]
    else:
        assert record["official_task_score"]["passed"] is (outcome == "passed")
        assert record["official_score_status"] == "completed"
    # identity
    assert record["case_id"] == info["task_name"]
    assert trial["trial_name"] == info["rollout_name"]
    assert record["agent"]["name"] == info["agent"]
    assert record["agent"].get("model") == info["model"]
    assert trial["error_category"] if info["error_category"] else "error_category" not in trial
    assert trial.get("error_category") == info["error_category"]
    assert trial.get("verifier_error_category") == info["verifier_error_category"]
    if info.get("dataset_name"):
        assert record["benchmark_id"] == f"{info['dataset_name']}@{info['dataset_version']}"
    # timing: every numeric phase BenchFlow wrote
    expected_timing = {k: v for k, v in raw["timing"].items() if isinstance(v, (int, float))}
    assert record["timing"] == trial["timing"] == expected_timing
    assert record["wall_time_seconds"] == raw["timing"]["total"]
    # tokens and cost from agent_result (loopx always wrote zeros)
    usage = raw["agent_result"]
    expected_metrics = {
        key: usage[src]
        for key, src in (
            ("input_tokens", "n_input_tokens"),
            ("cache_tokens", "n_cache_read_tokens"),
            ("output_tokens", "n_output_tokens"),
            ("cost_usd", "cost_usd"),
        )
        if usage.get(src) is not None
    }
    assert record.get("metrics", {}) == expected_metrics
    assert record["metrics_coverage"] == {
        "attempts_with_usage": 1 if expected_metrics else 0,
        "attempts_total": 1,
    }
    assert record["agent_activity"]["tool_call_count"] == raw["n_tool_calls"]
    assert record["agent_activity"]["trajectory_steps"] == raw["trajectory_summary"]["steps"]
    assert trial["task_digest"] == raw["task_digest"]
    assert record["skill_mode"] == raw["skill_mode"]


# ---------------------------------------------------------------------------------------------
# Discovery and selection


SELECTION_CASES = [c for c in CASES if c["result_files"]]


@pytest.mark.parametrize("case", SELECTION_CASES, ids=[c["case_id"] for c in SELECTION_CASES])
def test_discovery_picks_what_benchflow_picks(tree, case):
    ingest = read_benchflow_root(BenchflowReadOptions(_case_root(tree, case)))
    by_task = {r["case_id"]: r for r in ingest.records}
    assert len(by_task) == len(ingest.records), "one record per task"
    for task, rel in case["benchflow_selection"].items():
        record = by_task[task]
        assert record["selection"]["selected_relative_path"] == _rel_to_case(rel, case)
        assert record["selection"]["policy"] == "benchflow_canonical"
        assert record["selection"]["tie_breaker"] == "scored_then_newest_mtime_then_path"
    # tasks BenchFlow itself drops still get a record (errored or corrupt), never a silent gap
    for task, record in by_task.items():
        if task in case["benchflow_selection"]:
            continue
        assert record.get("official_score") is None
        assert record["runner_verdict"] in ("errored", "result_corrupt")
    assert ingest.provenance["selection_policy"] == "benchflow_canonical"


def test_candidates_filter_by_task(tree):
    case = next(c for c in CASES if c["case_id"] == "23_multi_task_root")
    found = discover_benchflow_results(_case_root(tree, case), task="pdf-table-extract")
    assert [c.task for c in found] == ["pdf-table-extract"]
    tasks = ("citation-check", "3d-scan-volume")
    options = BenchflowReadOptions(_case_root(tree, case), tasks=tasks)
    ingest = read_benchflow_root(options)
    assert sorted(r["case_id"] for r in ingest.records) == ["3d-scan-volume", "citation-check"]


def test_same_task_twice_policies(tree):
    case = next(c for c in CASES if c["case_id"] == "24_same_task_twice")
    root = _case_root(tree, case)
    candidates = discover_benchflow_results(root)
    assert len(candidates) == 2
    preferred = _rel_to_case(case["benchflow_preferred_result"], case)
    newest = _rel_to_case(case["newest_result"], case)
    assert select_result(candidates).relative_path == preferred
    assert select_result(candidates, "benchflow_canonical").relative_path == preferred
    assert select_result(candidates, "newest").relative_path == newest

    canonical = read_benchflow_root(BenchflowReadOptions(root)).records[0]
    assert canonical["official_score"] == 1.0
    assert [c["relative_path"] for c in canonical["selection"]["candidates"]] == sorted(
        [preferred, newest]
    )
    newest_record = read_benchflow_root(BenchflowReadOptions(root, policy="newest")).records[0]
    assert newest_record["selection"]["tie_breaker"] == "newest_mtime_then_path"
    assert newest_record["runner_verdict"] == "verifier_errored"
    assert "official_score" not in newest_record

    all_attempts = read_benchflow_root(BenchflowReadOptions(root, policy="all_attempts")).records[0]
    assert all_attempts["trial_count"] == 2
    assert [t["attempt_index"] for t in all_attempts["trials"]] == [1, 2]
    assert all_attempts["score_aggregation"]["policy"] == "mean_of_scored_attempts"
    assert all_attempts["score_aggregation"]["scored_attempt_count"] == 1
    assert all_attempts["score_aggregation"]["unscored_reasons"] == {"verifier_error_no_reward": 1}
    assert all_attempts["official_score"] == 1.0
    assert "selected_relative_path" not in all_attempts["selection"]
    assert all_attempts["run_key"] == (
        "benchflow:2026-03-02__23-48-00:skillsbench@1.1:citation-check:codex-acp:gpt-5.5"
    )


def test_unknown_policy_is_an_input_error(tree):
    case = next(c for c in CASES if c["case_id"] == "01_pass")
    with pytest.raises(InputError, match="unknown selection policy"):
        read_benchflow_root(BenchflowReadOptions(_case_root(tree, case), policy="best"))


def test_reviewer_child_ignored_and_review_scoring_decides(tree):
    case = next(c for c in CASES if c["case_id"] == "26_review_scoring")
    ingest = read_benchflow_root(BenchflowReadOptions(_case_root(tree, case)))
    (record,) = ingest.records
    assert record["selection"]["ignored_nested_count"] == 1
    assert record["selection"]["candidate_count"] == 1
    assert record["official_score"] == 0.8
    assert record["official_task_score"]["passed"] is True
    assert record["official_score_source"] == "benchflow_review_scoring"
    assert record["timing"]["review"] == 1018.8


def test_explicit_file_and_root_give_the_same_run(tree):
    case = next(c for c in CASES if c["case_id"] == "01_pass")
    rel = next(iter(case["result_files"]))
    by_file = read_benchflow_result(BenchflowReadOptions(tree / rel)).records[0]
    by_root = read_benchflow_root(BenchflowReadOptions(_case_root(tree, case))).records[0]
    assert (
        by_file["run_key"]
        == by_root["run_key"]
        == "benchflow:2026-03-02__09-37-00:citation-check__6517cb81"
    )
    assert by_file["run_group_id"] == by_root["run_group_id"] == "2026-03-02__09-37-00"
    assert by_file["selection"]["policy"] == "explicit_result_json"


def test_location_does_not_change_records_or_digest(tree, tmp_path):
    case = next(c for c in CASES if c["case_id"] == "23_multi_task_root")
    elsewhere = tmp_path / "elsewhere" / "copy"
    shutil.copytree(_case_root(tree, case), elsewhere, copy_function=shutil.copy2)
    first = read_benchflow_root(BenchflowReadOptions(_case_root(tree, case)))
    second = read_benchflow_root(BenchflowReadOptions(elsewhere))
    assert first.records == second.records
    assert first.content_digest == second.content_digest


# ---------------------------------------------------------------------------------------------
# Job summaries: BenchFlow's own counts and totals


SUMMARY_CASES = [
    (c, rel, counts)
    for c in CASES
    for rel, counts in c["summaries"].items()
    if Path(rel).parent.name != "jobs" and c["result_files"]
]


@pytest.mark.parametrize(
    ("case", "rel", "counts"), SUMMARY_CASES, ids=[c["case_id"] for c, _, _ in SUMMARY_CASES]
)
def test_job_summary_counts_and_totals(tree, case, rel, counts):
    records = read_benchflow_root(BenchflowReadOptions(_case_root(tree, case))).records
    for record in records:
        metric = record["runner_job"]["runner_metric"]
        for key in ("total", "passed", "failed", "errored", "verifier_errored", "score_ratio"):
            assert metric[key] == counts[key]
        assert record["runner_job"]["job_status"] == "completed"
        assert record["job_name"] == counts["job_name"]
    if case.get("alterations"):
        return  # summary written before the file was altered (README): totals are stale
    summary = _raw(tree, rel)
    readable = [r for r in records if r["run_status"] == "completed"]
    for phase, key in TIMING_KEYS.items():
        ours = sum(r.get("timing", {}).get(phase, 0) for r in readable)
        assert round(ours, 1) == pytest.approx(summary[key]), phase
    # BenchFlow's token totals leave out results carrying an agent or verifier error
    clean = [
        r
        for r in readable
        if not any(t.get("error_category") or t.get("verifier_error_category") for t in r["trials"])
    ]
    for ours_key, key in TOKEN_KEYS.items():
        ours = sum(r.get("metrics", {}).get(ours_key, 0) for r in clean)
        assert ours == pytest.approx(summary[key]), ours_key


def test_missing_summary_is_a_warning_not_an_error(tree):
    case = next(c for c in CASES if c["case_id"] == "22_deep_nested_renamed")
    (record,) = read_benchflow_root(BenchflowReadOptions(_case_root(tree, case))).records
    assert "benchflow_summary_missing" in record["ingest_warnings"]
    assert "job_status" not in record["runner_job"]
    assert record["job_name"] == "output"
    assert record["trials"][0]["trial_name"] == "trial-0007"


# ---------------------------------------------------------------------------------------------
# Spec §8 edge cases


def _single(tree: Path, case_id: str, **kwargs) -> dict:
    case = next(c for c in CASES if c["case_id"] == case_id)
    (record,) = read_benchflow_root(BenchflowReadOptions(_case_root(tree, case), **kwargs)).records
    return record


def test_idle_timeout_scored_zero_keeps_category_and_labels(tree):
    record = _single(tree, "04_agent_idle_timeout")
    assert record["runner_verdict"] == "failed"
    assert record["trials"][0]["error_category"] == "idle_timeout"
    assert record["failure_attribution_labels"] == [
        "official_verifier_solution_failure",
        "partial_trajectory",
    ]
    assert record["score_failure_attribution"] == "official_verifier_solution_failure"
    assert "runner_error_after_scored_result" in record["ingest_warnings"]


def test_error_with_pass_reward_wins(tree):
    record = _single(tree, "05_error_with_pass")
    assert record["official_task_score"]["passed"] is True
    assert record["score_failure_attribution"] == "none"
    assert "failure_attribution_labels" not in record
    assert record["ingest_warnings"] == ["runner_error_after_scored_result"]


@pytest.mark.parametrize(
    ("case_id", "label", "reason"),
    [
        ("06_verifier_crash", "verifier_crashed_no_reward", "verifier_error_no_reward"),
        ("07_verifier_timeout", "verifier_timeout_no_reward", "verifier_error_no_reward"),
        (
            "13_docker_daemon_down",
            "environment_setup_failed_before_worker",
            "agent_error_no_reward",
        ),
        (
            "14_provider_zero_activity",
            "model_provider_failure_before_solution_attempt",
            "agent_error_no_reward",
        ),
    ],
)
def test_unscored_attribution(tree, case_id, label, reason):
    record = _single(tree, case_id)
    assert record["score_failure_attribution"] == label
    assert record["trials"][0]["unscored_reason"] == reason
    assert record["score_aggregation"]["unscored_attempt_count"] == 1
    assert "official_score" not in record


def test_docker_down_stops_before_worker(tree):
    accounting = _single(tree, "13_docker_daemon_down")["attempt_accounting"]
    assert accounting["lifecycle_phase"] == "trial_started"
    assert accounting["failure_class"] == "job_materialization_failed"
    assert accounting["solver_attempt_countable"] is False


def test_reward_txt_is_not_recovered(tree):
    record = _single(tree, "08_reward_txt_recovery")
    assert "official_score" not in record
    assert record["trials"][0]["verifier_reward_file_present"] is True
    assert "reward_file_present_without_verifier_result" in record["ingest_warnings"]


def test_reward_range_and_passed_bool(tree):
    above = _single(tree, "17_reward_above_one")
    assert above["official_score"] == 7.5 and above["official_task_score"]["passed"] is False
    synthetic = _single(tree, "20_synthetic_passed_bool")
    assert "official_score" not in synthetic
    assert synthetic["trials"][0]["unscored_reason"] == "reward_missing"


def test_oracle_has_no_model(tree):
    record = _single(tree, "15_oracle")
    assert record["agent"] == {"name": "oracle"}
    assert record["arm_id"] == "oracle"
    routed = _single(tree, "15_oracle", route="codex-cli-goal-baseline")
    assert routed["agent"] == {"name": "oracle"}
    assert (
        routed["skillsbench_route_semantics"] == "skillsbench_oracle_solution_validation_no_model"
    )
    assert routed["official_score_comparable_to_native_codex"] is False


def test_any_agent_accepted(tree):
    record = _single(tree, "16_claude_agent")
    assert record["agent"] == {"name": "claude-agent-acp", "model": "claude-sonnet-4-5"}
    assert record["arm_id"] == "claude-agent-acp__claude-sonnet-4-5"
    routed = _single(tree, "16_claude_agent", route="codex-acp-blind-loop-baseline")
    assert "route_agent_mismatch" in routed["ingest_warnings"]


def test_route_on_ingest_sets_mode_arm_and_checks_skill_mode(tree):
    record = _single(tree, "18_with_skill", route="codex-cli-goal-baseline")
    assert record["mode"] == "skillsbench_codex_cli_goal_baseline"
    assert (record["arm_id"], record["arm_role"]) == ("baseline", "baseline")
    assert "route_skill_mode_mismatch" in record["ingest_warnings"]
    curated = _single(tree, "18_with_skill", route="curated-skills-baseline")
    assert "route_skill_mode_mismatch" not in curated.get("ingest_warnings", [])
    explicit = _single(tree, "18_with_skill", route="curated-skills-baseline", arm_id="my-arm")
    assert (explicit["arm_id"], explicit["arm_source"]) == ("my-arm", "explicit")


def test_unicode_task_kept(tree):
    record = _single(tree, "19_unicode_task")
    assert record["case_id"] == "données-météo-分析"
    assert record["run_key"].endswith(":données-météo-分析__1607d66d")


def test_dataset_flag_differs(tree):
    record = _single(tree, "01_pass", benchmark_id="skillsbench@2.0")
    assert record["benchmark_id"] == "skillsbench@2.0"
    assert "dataset_flag_differs_from_result" in record["ingest_warnings"]


# ---------------------------------------------------------------------------------------------
# Corrupt and empty inputs


def test_corrupt_timing_warns_by_default_and_fails_in_strict_mode(tree):
    record = _single(tree, "11_corrupt_timing")
    assert record["official_score"] == 1.0
    assert "timing_json_unreadable" in record["ingest_warnings"]
    assert record["timing"]["total"] == 770.7  # from result.json's own timing block
    case = next(c for c in CASES if c["case_id"] == "11_corrupt_timing")
    with pytest.raises(SourceError) as err:
        read_benchflow_root(BenchflowReadOptions(_case_root(tree, case), strict=True))
    message = str(err.value)
    assert message.endswith("citation-check__ffdc3f99/timing.json")
    assert "timing.json" in message and str(tree) not in message and "\n" not in message


@pytest.mark.parametrize("case_id", ["12_corrupt_result", "25_corrupt_in_root"])
def test_corrupt_result_strict_source_error_names_the_file(tree, case_id):
    case = next(c for c in CASES if c["case_id"] == case_id)
    rel = next(r for r, info in case["result_files"].items() if info.get("unreadable"))
    with pytest.raises(SourceError) as err:
        read_benchflow_root(BenchflowReadOptions(_case_root(tree, case), strict=True))
    assert str(err.value).endswith(_rel_to_case(rel, case))
    assert str(tree) not in str(err.value)
    with pytest.raises(SourceError, match="result.json"):
        read_benchflow_result(BenchflowReadOptions(tree / rel, strict=True))


def test_corrupt_result_does_not_hide_other_tasks(tree):
    case = next(c for c in CASES if c["case_id"] == "25_corrupt_in_root")
    ingest = read_benchflow_root(BenchflowReadOptions(_case_root(tree, case)))
    records = {r["case_id"]: r for r in ingest.records}
    assert records["pdf-table-extract"]["official_score"] == 1.0
    assert records["citation-check"]["run_status"] == "corrupt"


def test_corrupt_result_without_task_identity(tmp_path):
    rollout = tmp_path / "root" / "job" / "trial-x"
    rollout.mkdir(parents=True)
    (rollout / "result.json").write_text('{"task_name": "t', encoding="utf-8")
    with pytest.raises(SourceError, match="not a readable JSON object: job/trial-x/result.json"):
        read_benchflow_result(BenchflowReadOptions(rollout / "result.json"))
    with pytest.raises(SourceError, match="candidate_count=0"):
        read_benchflow_root(BenchflowReadOptions(tmp_path / "root"))


def test_result_missing_candidate(tmp_path):
    rollout = tmp_path / "root" / "job" / "citation-check__0123abcd"
    rollout.mkdir(parents=True)
    (rollout / "timing.json").write_text('{"environment_setup": 3.0}', encoding="utf-8")
    (record,) = read_benchflow_root(BenchflowReadOptions(tmp_path / "root")).records
    assert record["run_status"] == "incomplete"
    assert record["trials"][0]["status"] == "result_missing"
    assert record["trials"][0]["unscored_reason"] == "result_missing"


def test_unfinished_rollout_keeps_its_task_incomplete(tmp_path):
    """Issue 31 items 5-6: a rollout killed mid-agent (config.json and empty directories only)
    is an unfinished attempt of its task; while it has no result the task is not completed,
    even though the single-result policy still shows the finished rollout's score."""
    job = tmp_path / "root" / "job"
    done = job / "citation-check__0123abcd"
    done.mkdir(parents=True)
    result = {"task_name": "citation-check", "agent": "oracle", "rewards": {"reward": 1.0}}
    (done / "result.json").write_text(json.dumps(result), encoding="utf-8")
    killed = job / "citation-check__89abcdef"
    for sub in ("agent", "verifier", "artifacts", "trajectory"):
        (killed / sub).mkdir(parents=True)
    (killed / "config.json").write_text("{}", encoding="utf-8")
    (record,) = read_benchflow_root(BenchflowReadOptions(tmp_path / "root")).records
    assert record["selection"]["candidate_count"] == 2
    assert record["official_score"] == 1.0
    assert record["run_status"] == "incomplete"
    assert record["official_score_status"] == "provisional"


def test_empty_root_error(tree):
    case = next(c for c in CASES if c["case_id"] == "27_empty_root")
    with pytest.raises(SourceError) as err:
        read_benchflow_root(BenchflowReadOptions(_case_root(tree, case)))
    assert str(err.value) == (
        "no BenchFlow result.json found below the ingest root; candidate_count=0 "
        "ignored_reviewer_count=0 ignored_nested_count=0"
    )


def test_requested_task_without_candidates(tree):
    case = next(c for c in CASES if c["case_id"] == "01_pass")
    with pytest.raises(SourceError) as err:
        options = BenchflowReadOptions(_case_root(tree, case), tasks=("nope", "citation-check"))
        read_benchflow_root(options)
    assert str(err.value) == (
        "no BenchFlow result.json found for requested task(s): nope; candidate_count=1"
    )


def test_input_validation_messages(tree):
    case = next(c for c in CASES if c["case_id"] == "01_pass")
    summary = next(iter(case["summaries"]))
    with pytest.raises(InputError, match="must be a result.json file or a directory"):
        read_benchflow_result(BenchflowReadOptions(tree / summary))
    with pytest.raises(InputError, match="--skillsbench-result-root must be a directory"):
        read_benchflow_root(BenchflowReadOptions(tree / summary))


# ---------------------------------------------------------------------------------------------
# Public safety and provenance


def test_no_absolute_paths_anywhere(tree):
    for case in SELECTION_CASES:
        ingest = read_benchflow_root(BenchflowReadOptions(_case_root(tree, case)))
        text = json.dumps([ingest.records, ingest.provenance], ensure_ascii=False)
        assert str(tree) not in text
        assert "/srv/bench" not in text
        for rel in ingest.provenance["files"]:
            assert not rel.startswith("/") and ".." not in rel.split("/")


def test_provenance_lists_files_read_and_candidates(tree):
    case = next(c for c in CASES if c["case_id"] == "24_same_task_twice")
    provenance = read_benchflow_root(BenchflowReadOptions(_case_root(tree, case))).provenance
    assert provenance["kind"] == "benchflow_result_root"
    assert provenance["adapter_version"]
    assert provenance["selection_policy"] == "benchflow_canonical"
    assert len(provenance["candidates"]) == 2
    files = provenance["files"]
    assert "jobs/2026-03-02__23-48-00/summary.json" in files
    assert any(f.endswith("citation-check__3fa52e22/timing.json") for f in files)
    assert all(len(digest) == 64 for digest in files.values())
    assert not any(f.endswith("results.jsonl") or f.endswith("prompts.json") for f in files)


# ---------------------------------------------------------------------------------------------
# Routes and planned records


def test_planned_record_defaults():
    record = build_planned_skillsbench_record()
    assert record["run_status"] == "planned"
    assert record["source_runner"] == "benchledger_planner"
    assert record["benchmark_id"] == "skillsbench@1.1"
    assert record["case_id"] == "citation-check"
    assert record["job_name"] == "skillsbench_1.1_citation-check_codex-cli-goal-baseline"
    assert record["mode"] == "skillsbench_codex_cli_goal_baseline"
    assert record["first_blocker"] == "skillsbench_codex_cli_goal_tui_compact_proof_missing"
    assert record["agent"] == {"name": "codex", "model": "gpt-5.5"}
    assert record["official_task_score"] == {"kind": "not_run"}
    assert record["official_score_status"] == "not_run"
    assert record["native_goal_mode_confirmation_status"] == "requires_cli_slash_goal_compact_proof"
    for absent in ("trials", "official_score", "progress", "metrics", "trial_count"):
        assert absent not in record
    assert record["run_key"].startswith("planned:") and len(record["run_key"]) == 24
    assert record["run_key"] == build_planned_skillsbench_record()["run_key"]


def test_cli_route_names_are_the_route_table():
    """The names-only module the CLI reads at load must list the route table's rows, in order."""
    from benchledger.ledger.sources.planned import skillsbench_route_names

    assert skillsbench_route_names.ROUTE_NAMES == ROUTE_NAMES


@pytest.mark.parametrize("route", ROUTE_NAMES)
def test_every_route_builds_a_planned_record(route):
    record = build_planned_skillsbench_record(route=route)
    assert record["benchmark_loop_contract"] == {"route": route}
    assert record["arm_role"] in ("baseline", "treatment")
    assert record["official_feedback_blinded"] is True
    assert record["reward_feedback_forwarded"] is False


def test_planned_job_name_keeps_unicode():
    assert planned_job_name("skillsbench@1.1", "données météo", "loopx-product-mode") == (
        "skillsbench_1.1_données_météo_loopx-product-mode"
    )


def test_planned_records_per_task_and_unknown_route():
    records = build_planned_skillsbench_records(tasks=["a", "b", "a"], route="loopx-product-mode")
    assert [r["case_id"] for r in records] == ["a", "b"]
    assert records[0]["arm_id"] == "codex_loopx_treatment"
    assert records[0]["first_blocker"] == "none"
    assert records[0]["run_key"] != records[1]["run_key"]
    with pytest.raises(UsageError):
        build_planned_skillsbench_record(route="prompt-polling")


def test_top_level_reviewer_and_unattributed_corrupt_are_counted(tmp_path):
    root = tmp_path / "root"
    reviewer = root / "job" / "review-x__0123abcd"
    reviewer.mkdir(parents=True)
    (reviewer / "result.json").write_text('{"purpose": "reviewer", "task_name": "x"}', "utf-8")
    with pytest.raises(SourceError, match="ignored_reviewer_count=1 ignored_nested_count=0"):
        read_benchflow_root(BenchflowReadOptions(root))
    good = root / "job" / "t__89abcdef"
    good.mkdir()
    (good / "result.json").write_text('{"task_name": "t", "rewards": {"reward": 1.0}}', "utf-8")
    torn = root / "job" / "renamed"
    torn.mkdir()
    (torn / "result.json").write_text("{", "utf-8")
    ingest = read_benchflow_root(BenchflowReadOptions(root))
    (record,) = ingest.records
    assert record["selection"]["ignored_reviewer_count"] == 1
    assert record["runner_job"]["unattributed_attempt_count"] == 1
    assert "corrupt_result_without_task_identity" in record["ingest_warnings"]
    assert ingest.warnings == ["corrupt_result_without_task_identity"]
    assert record["benchmark_id"] == "benchflow-adhoc"


def test_records_carry_no_nulls(tree):
    def walk(value, path="$"):
        assert value is not None, path
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}.{key}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{path}[{index}]")

    for case in SELECTION_CASES:
        for record in read_benchflow_root(BenchflowReadOptions(_case_root(tree, case))).records:
            walk(record)
