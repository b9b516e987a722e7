"""`benchledger benchmark run skillsbench` end to end (issue 5), on SQLite and PostgreSQL.

Every result.json of `fixtures/benchflow/manifest.json` goes through the real command: the record
in the goal run store on disk, the ledger row and the `run_built` event must carry BenchFlow's own
verdict and the rollout BenchFlow itself would pick. Corrupt inputs are refused with one line and
leave nothing behind unless `--keep-corrupt` asks for them to be recorded; never-run route
skeletons stay `planned` and never reach the ledger.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from benchledger.commands.cli import cli
from benchledger.ledger.sources.planned.skillsbench_routes import ORACLE_SEMANTICS, ROUTES
from tests.support_benchflow_source import load_manifest, materialize, result_id, result_params

RESULTS = result_params()
CASES = load_manifest()["cases"]
READABLE = [p for p in RESULTS if not p[2].get("unreadable") and p[2].get("purpose") != "reviewer"]
REVIEWER = [p for p in RESULTS if p[2].get("purpose") == "reviewer"]
UNREADABLE = [p for p in RESULTS if p[2].get("unreadable")]
TOKEN_KEYS = (
    ("input_tokens", "n_input_tokens", "total_prompt_tokens"),
    ("cache_tokens", "n_cache_read_tokens", "total_cached_tokens"),
    ("output_tokens", "n_output_tokens", "total_completion_tokens"),
    ("cost_usd", "cost_usd", "total_cost_usd"),
)
SKIP_REASON = "benchmark_run_not_terminal_for_public_ledger"
CORRUPT_RESULT = "BenchFlow result.json is not a readable JSON object: "
CORRUPT_TIMING = "BenchFlow timing.json is not a readable JSON object: "


@pytest.fixture(scope="module")
def tree(fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture set with empty dirs and mtimes restored; tests only read it."""
    return materialize(fixtures_dir, tmp_path_factory.mktemp("bf") / "benchflow")


class Bench:
    """One store, one runtime root, one project directory (the test's tmp_path)."""

    def __init__(self, db_url: str, project: Path) -> None:
        self.db_url = db_url
        self.project = project
        self.rt = project / "rt"

    def invoke(self, *args: str) -> Any:
        argv = ["--db", self.db_url, "--runtime-root", str(self.rt), *args]
        return CliRunner().invoke(cli, argv, catch_exceptions=False)

    def run(self, *args: str, fmt: str = "json") -> Any:
        return self.invoke(
            "benchmark", "run", "skillsbench", "--goal-id", "g", *args, "--format", fmt
        )

    def ingest(self, *args: str) -> dict[str, Any]:
        result = self.run(*args, "--update-run-ledger", "--execute")
        assert result.exit_code == 0, result.output
        payload = json.loads(result.stdout)
        assert payload["ok"] is True and payload["appended"] is True
        return payload

    def events(self, *types: str) -> list[dict[str, Any]]:
        args = ["events", "list", "--payload", "--limit", "100000", "--format", "json"]
        for event_type in types:
            args += ["--type", event_type]
        result = self.invoke(*args)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["events"]

    def ledger_rows(self) -> list[dict[str, Any]]:
        """Rows of the rendered ledger file (the projection users read)."""
        path = self.project / "benchmark-run-ledger.json"
        document = json.loads(path.read_text(encoding="utf-8"))
        return [
            row
            for bench in document["benchmarks"].values()
            for case in bench["cases"].values()
            for row in case["runs"]
        ]

    def ledger_row_count_in_store(self) -> int:
        result = self.invoke("sql", "SELECT count(*) FROM ledger_runs_v", "--format", "json")
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["rows"][0][0]


@pytest.fixture
def bench(db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Bench:
    monkeypatch.chdir(tmp_path)
    for name in ("BENCHLEDGER_REGISTRY", "BENCHLEDGER_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return Bench(db_url, tmp_path)


# ---------------------------------------------------------------------------------------------
# Expectations from the manifest and the fixture files (never from the adapter)


def _raw(tree: Path, rel: str) -> dict[str, Any]:
    return json.loads((tree / rel).read_text(encoding="utf-8"))


def _case_rel(rel: str, case: dict[str, Any]) -> str:
    return Path(rel).relative_to(case["root"]).as_posix()


def _task_of(rel: str, info: dict[str, Any]) -> str:
    """Unreadable files have no task_name: the `<task>__<8 hex>` directory names the task."""
    return info.get("task_name") or Path(rel).parent.name.rsplit("__", 1)[0]


def _task_candidates(case: dict[str, Any], task: str) -> set[str]:
    """Every result BenchFlow's scanner counts for `task`, relative to the case root."""
    return {
        _case_rel(rel, case)
        for rel, info in case["result_files"].items()
        if not info.get("ignored_reason") and _task_of(rel, info) == task
    }


def _selected(case: dict[str, Any], task: str) -> str:
    """BenchFlow's pick; when BenchFlow drops every result of the task, the only one there."""
    picked = case["benchflow_selection"].get(task)
    if picked:
        return _case_rel(picked, case)
    (only,) = _task_candidates(case, task)
    return only


def _numbers(blob: Any) -> dict[str, float]:
    if not isinstance(blob, dict):
        return {}
    return {k: v for k, v in blob.items() if isinstance(v, int | float) and not isinstance(v, bool)}


def _expected_timing(tree: Path, rel: str) -> dict[str, float]:
    """Result `timing` first, else a readable sibling timing.json (docs/formats/benchflow.md
    §6.1)."""
    from_result = _numbers(_raw(tree, rel).get("timing"))
    if from_result:
        return from_result
    path = (tree / rel).parent / "timing.json"
    try:
        return _numbers(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {}


def _expected_tokens(raw: dict[str, Any]) -> dict[str, float]:
    agent_result = raw.get("agent_result") or {}
    final = raw.get("final_metrics") or {}
    out = {}
    for key, agent_key, final_key in TOKEN_KEYS:
        value = _numbers(agent_result).get(agent_key, _numbers(final).get(final_key))
        if value is not None:
            out[key] = value
    return out


def _needs_keep_corrupt(case: dict[str, Any], *, root: bool) -> bool:
    """Default ingest refuses a torn timing.json, and (for a root) any torn result.json."""
    shapes = set(case["shapes"])
    return "timing_truncated" in shapes or (root and "result_truncated" in shapes)


# ---------------------------------------------------------------------------------------------
# Checks shared by the per-result tests


def _record_on_disk(payload: dict[str, Any], index: int = 0) -> dict[str, Any]:
    document = json.loads(Path(payload["json_paths"][index]).read_text(encoding="utf-8"))
    assert document["benchmark_run"] == payload["benchmark_runs"][index]
    return document["benchmark_run"]


def _check_verdict_and_figures(record: dict[str, Any], tree: Path, rel: str, info: dict) -> None:
    """Verdict, score, agent, timing and tokens against BenchFlow's output and its verdict."""
    outcome = info["benchflow_score_outcome"]
    raw = _raw(tree, rel)
    (trial,) = record["trials"]
    assert record["source_runner"] == "benchflow"
    assert record["case_id"] == info["task_name"]
    assert trial["trial_name"] == info["rollout_name"]
    assert record["runner_verdict"] == trial["runner_verdict"] == outcome
    assert trial["passed"] is (outcome == "passed")
    assert record["benchmark_id"] == f"{info['dataset_name']}@{info['dataset_version']}"
    scored = info["reward"] is not None and outcome in ("passed", "failed")
    if scored:
        assert record["official_score"] == trial["primary_reward"] == info["reward"]
        assert record["official_task_score"]["kind"] == "skillsbench_verifier_reward"
        assert record["official_task_score"]["passed"] is (outcome == "passed")
        assert record["official_score_status"] == "completed"
    else:
        assert "official_score" not in record and "primary_reward" not in trial
        assert record["official_task_score"]["kind"] == "skillsbench_verifier_reward_missing"
        assert record["official_score_status"] == "missing"
    assert record["agent"]["name"] == info["agent"]
    if info["model"] is None:
        assert "model" not in record["agent"]
    else:
        assert record["agent"]["model"] == info["model"]
    timing = _expected_timing(tree, rel)
    assert record.get("timing", {}) == trial.get("timing", {}) == timing
    if isinstance(timing.get("total"), int | float):
        assert record["wall_time_seconds"] == timing["total"]
    tokens = _expected_tokens(raw)
    assert record.get("metrics", {}) == trial.get("metrics", {}) == tokens


def _check_ledger_row(row: dict[str, Any], record: dict[str, Any], info: dict) -> None:
    outcome = info["benchflow_score_outcome"]
    assert row["run_key"] == record["run_key"]
    assert row["case_id"] == info["task_name"]
    assert row.get("agent_model") == info["model"]
    if info["reward"] is not None and outcome in ("passed", "failed"):
        assert row["official_score"] == info["reward"]
        assert row["official_passed"] is (outcome == "passed")
        assert row["score_status"] == outcome
        assert row["status"] == "completed"
    else:  # docs/formats/ledger_v0.md §5.7-5.8: no score is `missing`, never a 0 and never a pass
        assert "official_score" not in row and row.get("official_passed") is not True
        assert row["score_status"] == "missing" and row["status"] == "recorded"


def _row_for(bench: Bench, run_key: str) -> dict[str, Any]:
    rows = [r for r in bench.ledger_rows() if r["run_key"] == run_key]
    assert len(rows) == 1, run_key
    return rows[0]


def _run_built_for(bench: Bench, run_key: str) -> list[dict[str, Any]]:
    return [e["payload"] for e in bench.events("run_built") if e["payload"]["run_key"] == run_key]


def _assert_nothing_written(bench: Bench) -> None:
    assert bench.events() == []
    assert not bench.rt.exists()
    assert not (bench.project / "benchmark-run-ledger.json").exists()
    assert not (bench.project / "benchmark-run-ledger.md").exists()


def _assert_one_line_error(
    bench: Bench, args: list[str], message: str, exit_code: int = 1, nothing_written: bool = True
) -> None:
    """Markdown: exactly one stderr line, nothing on stdout; JSON: the same text in `error`."""
    result = bench.run(*args, fmt="markdown")
    assert result.exit_code == exit_code, result.output
    assert result.stdout == ""
    assert result.stderr.splitlines() == [f"error: {message}"]
    result = bench.run(*args, fmt="json")
    assert result.exit_code == exit_code
    payload = json.loads(result.stdout)
    assert payload["ok"] is False and payload.get("appended") in (None, False)
    assert payload["error"] == message
    if nothing_written:
        _assert_nothing_written(bench)


# ---------------------------------------------------------------------------------------------
# Every readable result: root ingest (discovery) and explicit ingest agree with BenchFlow


@pytest.mark.parametrize(
    ("case_id", "rel", "info", "case"), READABLE, ids=[result_id(*p) for p in READABLE]
)
def test_every_result_ingests_with_benchflow_verdict_and_pick(
    bench: Bench, tree: Path, case_id: str, rel: str, info: dict, case: dict
) -> None:
    task = info["task_name"]
    root_args = ["--skillsbench-result-root", str(tree / case["root"]), "--include-task-name", task]
    if _needs_keep_corrupt(case, root=True):
        root_args.append("--keep-corrupt")
    payload = bench.ingest(*root_args)
    (record,) = payload["benchmark_runs"]
    assert _record_on_disk(payload) == record
    selection = record["selection"]
    selected = _selected(case, task)
    candidates = _task_candidates(case, task)
    assert selection["policy"] == "benchflow_canonical"
    assert selection["tie_breaker"] == "scored_then_newest_mtime_then_path"
    assert selection["selected_relative_path"] == selected
    assert selection["candidate_count"] == len(candidates)
    assert {c["relative_path"] for c in selection["candidates"]} == candidates
    ignored_nested = sum(1 for i in case["result_files"].values() if i.get("ignored_reason"))
    assert selection["ignored_nested_count"] == ignored_nested
    (built,) = _run_built_for(bench, record["run_key"])
    assert built["record"]["selection"] == selection
    assert built["provenance"]["selection_policy"] == "benchflow_canonical"
    assert {c["relative_path"] for c in built["provenance"]["candidates"]} == candidates
    assert all(not Path(p).is_absolute() for p in built["provenance"]["files"])
    this_rel = _case_rel(rel, case)
    if this_rel == selected:
        _check_verdict_and_figures(record, tree, rel, info)
        _check_ledger_row(_row_for(bench, record["run_key"]), record, info)
        ledger = payload["benchmark_run_ledger"]
        assert ledger["updated"] is True and ledger["entry"]["run_key"] == record["run_key"]
    else:  # a retry BenchFlow does not keep: still listed, never chosen
        verdicts = {c["relative_path"]: c["verdict"] for c in selection["candidates"]}
        assert verdicts[this_rel] == info["benchflow_score_outcome"]

    explicit_args = ["--skillsbench-result-json", str(tree / rel)]
    if _needs_keep_corrupt(case, root=False):
        explicit_args.append("--keep-corrupt")
    explicit_payload = bench.ingest(*explicit_args)
    (explicit,) = explicit_payload["benchmark_runs"]
    _check_verdict_and_figures(_record_on_disk(explicit_payload), tree, rel, info)
    assert explicit["selection"]["policy"] == "explicit_result_json"
    assert explicit["selection"]["candidate_count"] == 1
    assert explicit["selection"]["selected_relative_path"].endswith(
        f"{Path(rel).parent.name}/result.json"
    )
    _check_ledger_row(_row_for(bench, explicit["run_key"]), explicit, info)
    if this_rel == selected:  # same rollout by either flag: same identity, one ledger row
        assert explicit["run_key"] == record["run_key"]
        assert explicit["run_group_id"] == record["run_group_id"]
        entry = explicit_payload["benchmark_run_ledger"]["entry"]
        assert entry["run_id"] == payload["benchmark_run_ledger"]["entry"]["run_id"]


@pytest.mark.parametrize(
    ("case_id", "rel", "info", "case"), REVIEWER, ids=[result_id(*p) for p in REVIEWER]
)
def test_reviewer_child_is_never_a_candidate(
    bench: Bench, tree: Path, case_id: str, rel: str, info: dict, case: dict
) -> None:
    _assert_one_line_error(
        bench,
        ["--skillsbench-result-json", str(tree / rel), "--execute"],
        "--skillsbench-result-json points to a reviewer child result (purpose=reviewer)",
    )
    payload = bench.ingest("--skillsbench-result-root", str(tree / case["root"]))
    records = payload["benchmark_runs"]
    assert [r["case_id"] for r in records] == ["citation-check"]
    assert records[0]["selection"]["ignored_nested_count"] == 1
    assert _case_rel(rel, case) not in {
        c["relative_path"] for c in records[0]["selection"]["candidates"]
    }
    (built,) = bench.events("run_built")
    assert built["payload"]["provenance"]["ignored"] == {
        _case_rel(rel, case): "nested_below_trial_dir"
    }


# ---------------------------------------------------------------------------------------------
# Corrupt result.json / timing.json: refused by default, recorded with --keep-corrupt


@pytest.mark.parametrize(
    ("case_id", "rel", "info", "case"), UNREADABLE, ids=[result_id(*p) for p in UNREADABLE]
)
def test_corrupt_result_is_one_line_and_writes_nothing(
    bench: Bench, tree: Path, case_id: str, rel: str, info: dict, case: dict
) -> None:
    _assert_one_line_error(
        bench,
        ["--skillsbench-result-root", str(tree / case["root"]), "--update-run-ledger", "--execute"],
        CORRUPT_RESULT + _case_rel(rel, case),
    )
    explicit = bench.run("--skillsbench-result-json", str(tree / rel), "--execute", fmt="markdown")
    assert explicit.exit_code == 1 and explicit.stdout == ""
    (line,) = explicit.stderr.splitlines()
    named = line.removeprefix("error: " + CORRUPT_RESULT)
    assert named != line and rel.endswith("/" + named)
    assert named.endswith(f"{Path(rel).parent.name}/result.json") and str(tree) not in line
    _assert_nothing_written(bench)


def _timing_case() -> tuple[dict[str, Any], str]:
    (case,) = [c for c in CASES if "timing_truncated" in c["shapes"]]
    (rel,) = case["result_files"]
    return case, rel


def test_corrupt_timing_is_one_line_and_writes_nothing(bench: Bench, tree: Path) -> None:
    case, rel = _timing_case()
    timing_rel = (Path(_case_rel(rel, case)).parent / "timing.json").as_posix()
    _assert_one_line_error(
        bench,
        ["--skillsbench-result-root", str(tree / case["root"]), "--update-run-ledger", "--execute"],
        CORRUPT_TIMING + timing_rel,
    )
    explicit = bench.run("--skillsbench-result-json", str(tree / rel), "--execute", fmt="markdown")
    assert explicit.exit_code == 1
    (line,) = explicit.stderr.splitlines()
    named = line.removeprefix("error: " + CORRUPT_TIMING)
    assert named != line and timing_rel.endswith(named)
    assert named.endswith(f"{Path(rel).parent.name}/timing.json") and str(tree) not in line
    _assert_nothing_written(bench)


def test_keep_corrupt_timing_records_the_pass_with_a_warning(bench: Bench, tree: Path) -> None:
    case, rel = _timing_case()
    payload = bench.ingest("--skillsbench-result-root", str(tree / case["root"]), "--keep-corrupt")
    record = _record_on_disk(payload)
    assert "timing_json_unreadable" in record["ingest_warnings"]
    _check_verdict_and_figures(record, tree, rel, case["result_files"][rel])


@pytest.mark.parametrize(
    ("case_id", "rel", "info", "case"), UNREADABLE, ids=[result_id(*p) for p in UNREADABLE]
)
def test_keep_corrupt_records_a_corrupt_attempt(
    bench: Bench, tree: Path, case_id: str, rel: str, info: dict, case: dict
) -> None:
    task = _task_of(rel, info)
    payload = bench.ingest("--skillsbench-result-root", str(tree / case["root"]), "--keep-corrupt")
    by_task = {r["case_id"]: r for r in payload["benchmark_runs"]}
    others = {_task_of(p, i) for p, i in case["result_files"].items()} - {task}
    assert set(by_task) == {task} | others
    record = by_task[task]
    (trial,) = record["trials"]
    assert record["run_status"] == "corrupt"
    assert (
        trial["status"] == trial["runner_verdict"] == trial["unscored_reason"] == ("result_corrupt")
    )
    assert trial["trial_result_present"] is False and "passed" not in trial
    assert record["official_score_status"] == "missing" and "official_score" not in record
    assert record["selection"]["selected_relative_path"] == _case_rel(rel, case)
    assert record["selection"]["candidates"][0]["verdict"] == "result_corrupt"
    assert record["progress"]["n_errored_trials"] == 1
    row = _row_for(bench, record["run_key"])
    assert "official_score" not in row and row.get("official_passed") is not True
    assert row["status"] == "corrupt" and row["failure_class"] == "run_result_corrupt"
    for other in others:  # the readable neighbour still gets BenchFlow's verdict
        (other_rel,) = [p for p, i in case["result_files"].items() if i.get("task_name") == other]
        _check_verdict_and_figures(by_task[other], tree, other_rel, case["result_files"][other_rel])
    explicit = bench.ingest("--skillsbench-result-json", str(tree / rel), "--keep-corrupt")
    (again,) = explicit["benchmark_runs"]
    assert again["run_status"] == "corrupt" and again["run_key"] == record["run_key"]


# ---------------------------------------------------------------------------------------------
# Oracle, selection policies


def _case(case_id: str) -> dict[str, Any]:
    return next(c for c in CASES if c["case_id"] == case_id)


def test_oracle_keeps_no_model_even_with_a_route(bench: Bench, tree: Path) -> None:
    case = _case("15_oracle")
    payload = bench.ingest(
        "--skillsbench-result-root",
        str(tree / case["root"]),
        "--skillsbench-route",
        "codex-cli-goal-baseline",
        "--model",
        "gpt-5.5",
    )
    record = _record_on_disk(payload)
    assert record["agent"] == {"name": "oracle"}
    assert record["skillsbench_route_semantics"] == ORACLE_SEMANTICS
    assert record["official_score_comparable_to_native_codex"] is False
    assert record["mode"] == "skillsbench_codex_cli_goal_baseline"
    assert "agent_model" not in _row_for(bench, record["run_key"])


def test_selection_policies_on_a_retried_task(bench: Bench, tree: Path) -> None:
    case = _case("24_same_task_twice")
    root = str(tree / case["root"])
    newest = _case_rel(case["newest_result"], case)
    preferred = _case_rel(case["benchflow_preferred_result"], case)

    newest_run = bench.ingest("--skillsbench-result-root", root, "--selection-policy", "newest")
    (record,) = newest_run["benchmark_runs"]
    assert record["selection"]["policy"] == "newest"
    assert record["selection"]["tie_breaker"] == "newest_mtime_then_path"
    assert record["selection"]["selected_relative_path"] == newest
    assert record["runner_verdict"] == "verifier_errored"

    canonical = bench.ingest(
        "--skillsbench-result-root", root, "--selection-policy", "benchflow_canonical"
    )
    (record,) = canonical["benchmark_runs"]
    assert record["selection"]["selected_relative_path"] == preferred
    assert record["runner_verdict"] == "passed"

    every = bench.ingest("--skillsbench-result-root", root, "--selection-policy", "all_attempts")
    (record,) = every["benchmark_runs"]
    assert record["selection"]["policy"] == "all_attempts"
    assert "selected_relative_path" not in record["selection"]
    assert record["score_aggregation"]["policy"] == "mean_of_scored_attempts"
    assert [t["runner_verdict"] for t in record["trials"]] == ["passed", "verifier_errored"]
    assert record["official_score"] == 1.0 and record["trial_count"] == 2
    built = _run_built_for(bench, record["run_key"])
    assert built[0]["provenance"]["selection_policy"] == "all_attempts"


def test_several_tasks_from_a_directory_given_as_result_json(bench: Bench, tree: Path) -> None:
    """A directory for --skillsbench-result-json reads like a root: every task, the policy."""
    case = _case("23_multi_task_root")
    wanted = ["pdf-table-extract", "citation-check"]
    args = ["--skillsbench-result-json", str(tree / case["root"]), "--selection-policy", "newest"]
    for task in wanted:
        args += ["--include-task-name", task]
    payload = bench.ingest(*args)
    records = payload["benchmark_runs"]
    assert sorted(r["case_id"] for r in records) == sorted(wanted)
    assert {r["selection"]["policy"] for r in records} == {"newest"}
    discovery = payload["skillsbench_result_discovery"]
    assert discovery["candidate_count"] == 2 and discovery["record_count"] == 2
    assert discovery["ignored_reviewer_count"] == discovery["ignored_nested_count"] == 0
    selection = payload["selection"]
    assert selection["policy"] == "newest"
    assert {p["case_id"]: p["selected_relative_path"] for p in selection["records"]} == {
        r["case_id"]: _selected(case, r["case_id"]) for r in records
    }
    _assert_one_line_error(
        bench,
        [
            "--skillsbench-result-root",
            str(tree / case["root"]),
            "--include-task-name",
            "citation-check",
            "--include-task-name",
            "nope",
            "--include-task-name",
            "also-nope",
        ],
        "no BenchFlow result.json found for requested task(s): nope, also-nope; candidate_count=4",
        nothing_written=False,
    )


def test_reingest_by_another_spelling_of_the_path_is_a_noop(bench: Bench, tree: Path) -> None:
    root = tree / _case("23_multi_task_root")["root"]
    first = bench.ingest("--skillsbench-result-root", str(root))
    before = _domain_events(bench)
    for spelling in (os.path.relpath(root, bench.project), f"{root}/", f"{root}/jobs/.."):
        again = json.loads(
            bench.run(
                "--skillsbench-result-root", spelling, "--update-run-ledger", "--execute"
            ).stdout
        )
        assert again["already_recorded"] is True, spelling
    assert _domain_events(bench) == before
    assert first["appended_count"] == 4


def test_same_bytes_with_a_different_pick_is_not_already_recorded(bench: Bench, tree: Path) -> None:
    """`newest` follows mtimes, which the content digest does not see: the pick is in the key."""
    case = _case("24_same_task_twice")
    copy = bench.project / "copy"
    shutil.copytree(tree / case["root"], copy)  # copy2 keeps the mtimes
    for timing in copy.rglob("timing.json"):  # else the kept rollout's timing.json differs
        timing.unlink()
    args = ("--skillsbench-result-root", str(copy), "--selection-policy", "newest")
    (first,) = bench.ingest(*args)["benchmark_runs"]
    assert first["selection"]["selected_relative_path"] == _case_rel(case["newest_result"], case)
    older = copy / _case_rel(case["benchflow_preferred_result"], case)
    newest_mtime = case["result_files"][case["newest_result"]]["mtime"]
    os.utime(older, (newest_mtime + 60, newest_mtime + 60))
    payload = bench.ingest(*args)
    (second,) = payload["benchmark_runs"]
    assert "already_recorded" not in payload
    assert second["selection"]["selected_relative_path"] == _case_rel(
        case["benchflow_preferred_result"], case
    )


def test_dry_run_writes_nothing(bench: Bench, tree: Path) -> None:
    result = bench.run(
        "--skillsbench-result-root",
        str(tree / _case("23_multi_task_root")["root"]),
        "--update-run-ledger",
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["dry_run"] is True and payload["appended"] is False
    assert payload["events"]["would_append"] > 0 and len(payload["benchmark_runs"]) == 4
    _assert_nothing_written(bench)


# ---------------------------------------------------------------------------------------------
# Route skeletons: planned, never a failed attempt, never a ledger row


@pytest.mark.parametrize("route", list(ROUTES))
def test_route_skeleton_is_planned_and_skipped_by_the_ledger(bench: Bench, route: str) -> None:
    spec = ROUTES[route]
    payload = bench.ingest("--skillsbench-route", route)
    record = _record_on_disk(payload)
    assert record["run_status"] == "planned"
    assert record["source_runner"] == "benchledger_planner"
    assert record["official_task_score"] == {"kind": "not_run"}
    assert record["official_score_status"] == "not_run"
    for absent in ("trials", "official_score", "progress", "metrics", "runner_verdict"):
        assert absent not in record, absent
    assert record["mode"] == spec.mode and record["first_blocker"] == spec.first_blocker
    assert (record["arm_id"], record["arm_role"]) == (spec.arm_id, spec.arm_role)
    assert record["case_id"] == "citation-check" and record["benchmark_id"] == "skillsbench@1.1"
    ledger = payload["benchmark_run_ledger"]
    assert ledger["updated"] is False and ledger["skipped"] is True
    assert ledger["skip_reason"] == SKIP_REASON
    assert bench.events("ledger_upserted") == []
    assert bench.ledger_row_count_in_store() == 0
    assert not any(r["run_key"] == record["run_key"] for r in _all_rows_if_any(bench))
    log = bench.rt / "goals" / "g" / "rollout-event-log.jsonl"
    (event,) = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert event["status"] == "not_run" and event["event_kind"] == "compact_case_result"


def _all_rows_if_any(bench: Bench) -> list[dict[str, Any]]:
    if not (bench.project / "benchmark-run-ledger.json").exists():
        return []
    return bench.ledger_rows()


def test_retired_route_is_a_parser_error(bench: Bench) -> None:
    result = bench.run("--skillsbench-route", "loopx-prompt-polling-test", "--execute")
    assert result.exit_code == 2
    _assert_nothing_written(bench)


# ---------------------------------------------------------------------------------------------
# Validation (docs/formats/cli.md §5.3 rules 1-4, docs/formats/benchflow.md §5.1-5.2), exit 1,
# exact text


RULE_2 = (
    "skillsbench skeleton does not accept Terminal-Bench runner, Harbor ingest, preflight, "
    "timeout, fake-worker, or bridge flags"
)
RULE_3 = "--skillsbench-result-json and --skillsbench-result-root are mutually exclusive"
RULE_4 = "terminal-bench does not accept SkillsBench result flags"


@pytest.mark.parametrize(
    "flags",
    [
        ["--harbor-job-dir", "jobs/x"],
        ["--fake-worker"],
        ["--preflight-guard"],
        ["--require-task-material-ready"],
        ["--active-cli-bridge"],
        ["--cli-bridge-contract"],
        ["--worker-cli-bridge-fixture"],
        ["--active-user-assisted-treatment"],
        ["--active-user-observation-fixture"],
        ["--setup-timeout-repair-profile"],
        ["--worker-materialization-probe-only"],
        ["--timeout-multiplier", "2"],
        ["--agent-setup-timeout-multiplier", "8"],
        ["--timeout-preset", "official"],
        ["--codex-preflight-timeout-sec", "45"],
        ["--worker-codex-materialization-strategy", "worker_path_preprovisioned"],
        ["--codex-install-strategy", "runtime_install_if_missing"],
    ],
    ids=lambda flags: flags[0],
)
def test_rule_2_terminal_bench_flags_refused(bench: Bench, tree: Path, flags: list[str]) -> None:
    root = str(tree / _case("01_pass")["root"])
    _assert_one_line_error(bench, [*flags, "--execute"], RULE_2)
    _assert_one_line_error(bench, ["--skillsbench-result-root", root, *flags, "--execute"], RULE_2)


def test_rule_order_1_2_3(bench: Bench, tree: Path) -> None:
    case = _case("01_pass")
    (rel,) = case["result_files"]
    both = [
        "--skillsbench-result-root",
        str(tree / case["root"]),
        "--skillsbench-result-json",
        str(tree / rel),
    ]
    _assert_one_line_error(bench, [*both, "--execute"], RULE_3)
    _assert_one_line_error(bench, [*both, "--fake-worker", "--execute"], RULE_2)
    _assert_one_line_error(
        bench,
        [*both, "--fake-worker", "--dry-run", "--execute"],
        "benchmark run accepts either --dry-run or --execute, not both",
    )


@pytest.mark.parametrize(
    "flags",
    [
        ["--skillsbench-result-json", "result.json"],
        ["--skillsbench-result-root", "jobs"],
        ["--selection-policy", "newest"],
    ],
    ids=lambda flags: flags[0],
)
def test_rule_4_terminal_bench_refuses_skillsbench_flags(bench: Bench, flags: list[str]) -> None:
    result = bench.invoke(
        "benchmark", "run", "terminal-bench", "--goal-id", "g", *flags, "--execute"
    )
    assert result.exit_code == 1
    assert result.stdout == "" and result.stderr.splitlines() == [f"error: {RULE_4}"]
    _assert_nothing_written(bench)


def test_benchflow_input_messages(bench: Bench, tree: Path) -> None:
    case = _case("01_pass")
    (rel,) = case["result_files"]
    rollout = (tree / rel).parent
    not_result = "--skillsbench-result-json must be a result.json file or a directory"
    _assert_one_line_error(
        bench, ["--skillsbench-result-json", str(rollout / "timing.json"), "--execute"], not_result
    )
    _assert_one_line_error(
        bench, ["--skillsbench-result-json", str(rollout / "nope.json"), "--execute"], not_result
    )
    _assert_one_line_error(
        bench,
        ["--skillsbench-result-root", str(tree / rel), "--execute"],
        "--skillsbench-result-root must be a directory",
    )
    _assert_one_line_error(
        bench,
        ["--skillsbench-result-root", str(tree / _case("27_empty_root")["root"]), "--execute"],
        "no BenchFlow result.json found below the ingest root; candidate_count=0 "
        "ignored_reviewer_count=0 ignored_nested_count=0",
    )
    _assert_one_line_error(
        bench,
        [
            "--skillsbench-result-root",
            str(tree / case["root"]),
            "--include-task-name",
            "nope",
            "--execute",
        ],
        "no BenchFlow result.json found for requested task(s): nope; candidate_count=1",
    )


# ---------------------------------------------------------------------------------------------
# The whole fixture set in one store: replay-identical, chain intact, re-ingest a no-op


def _root_args(tree: Path, case: dict[str, Any]) -> list[str]:
    args = ["--skillsbench-result-root", str(tree / case["root"])]
    return [*args, "--keep-corrupt"] if _needs_keep_corrupt(case, root=True) else args


def _expected_record_count(case: dict[str, Any]) -> int:
    return len(
        {_task_of(p, i) for p, i in case["result_files"].items() if not i.get("ignored_reason")}
    )


def _domain_events(bench: Bench) -> list[tuple[int, str]]:
    """Everything but `export_written` (which only restates the digests of unchanged files)."""
    return [
        (e["position"], e["event_type"])
        for e in bench.events()
        if e["event_type"] != "export_written"
    ]


def _published_files(bench: Bench) -> dict[str, bytes]:
    files = [*bench.rt.rglob("*"), *bench.project.glob("benchmark-run-ledger.*")]
    return {
        p.relative_to(bench.project).as_posix(): p.read_bytes()
        for p in files
        if p.is_file() and not p.name.endswith(".lock")
    }


def test_whole_fixture_set_rebuilds_and_verifies(bench: Bench, tree: Path) -> None:
    ingestable = [c for c in CASES if c["result_files"]]
    expected = 0
    for case in ingestable:
        payload = bench.ingest(*_root_args(tree, case))
        assert len(payload["benchmark_runs"]) == _expected_record_count(case), case["case_id"]
        expected += len(payload["benchmark_runs"])
    assert bench.ledger_row_count_in_store() == expected == len(bench.ledger_rows())
    assert len(bench.events("run_built")) == expected
    domain = _domain_events(bench)
    published = _published_files(bench)

    rebuilt = bench.invoke("rebuild", "--verify", "--format", "json")
    assert rebuilt.exit_code == 0, rebuilt.output
    report = json.loads(rebuilt.stdout)
    assert report["ok"] is True and report["rebuild_verify"]["differences"] == []
    verified = bench.invoke("verify", "--files", "--format", "json")
    assert verified.exit_code == 0, verified.output
    assert json.loads(verified.stdout)["verify"]["ok"] is True

    for case in ingestable:
        again = bench.run(*_root_args(tree, case), "--update-run-ledger", "--execute")
        assert again.exit_code == 0, again.output
        payload = json.loads(again.stdout)
        assert payload["already_recorded"] is True and payload["appended"] is False
        assert payload["appended_count"] == 0
        assert payload["message"].startswith("nothing to append: this input was already recorded")
    assert _domain_events(bench) == domain
    assert _published_files(bench) == published
    assert bench.ledger_row_count_in_store() == expected
    rebuilt = bench.invoke("rebuild", "--verify", "--format", "json")
    assert rebuilt.exit_code == 0 and json.loads(rebuilt.stdout)["ok"] is True
