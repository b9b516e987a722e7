"""Issue 31: benchledger against jobs made by the runners' own code (tests/fixtures/runners/).

Each fixture was written by a real Harbor 0.25.0 ``Job`` run (or BenchFlow 0.7.11 code) by
``tools/make_runner_fixtures.py``; ``manifest.json`` holds what the runner's own code computed for
it, and the per-case expectations the issue-31 rules give from those numbers. Every expected
value here comes from that manifest, never from benchledger, so a wrong rule in a reader cannot
make its own test pass.

Checks a reader fails are marked ``xfail(strict=True)`` with the issue item they belong to; the
engineer who fixes that item removes the mark (a strict xfail that starts passing fails the
suite, so a fix cannot go unnoticed). Every issue-31 item is fixed, so the tables are empty.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import FIXTURES_DIR

RUNNERS = FIXTURES_DIR / "runners"
MANIFEST = json.loads((RUNNERS / "manifest.json").read_text(encoding="utf-8"))
HARBOR_JOBS = {job["key"]: job for job in MANIFEST.get("harbor", [])}
BENCHFLOW_ROOTS = {root["key"]: root for root in MANIFEST.get("benchflow", [])}

# (job key, check) -> issue item, for the checks today's Harbor reader fails. A check that reads
# per-case numbers fails first on the case set when the reader makes a phantom case or arm.
HARBOR_XFAIL: dict[tuple[str, str], str] = {}  # items 1, 2, 3 and 6: fixed

CHECKS = ("cases", "run_status", "attempts", "scores", "usage", "tokens", "job")

# (root key, check) -> issue item, for the checks today's BenchFlow reader fails.
BENCHFLOW_XFAIL: dict[tuple[str, str], str] = {}  # items 4 and 5: fixed

BENCHFLOW_CHECKS = ("ingests", "cases", "scores", "run_status", "attempts", "warning")


def materialize(rel: str, dest: Path) -> Path:
    """Copy one fixture directory to ``dest`` and restore the empty dirs git dropped."""
    target = dest / rel
    shutil.copytree(RUNNERS / rel, target)
    for empty in MANIFEST["empty_dirs"]:
        if empty == rel or empty.startswith(rel.rstrip("/") + "/"):
            (dest / empty).mkdir(parents=True, exist_ok=True)
    return target


def run_cli(args: list[str], db: str, runtime_root: Path) -> dict[str, Any]:
    from benchledger.commands.cli import cli

    runtime_root.mkdir(parents=True, exist_ok=True)
    with contextlib.chdir(runtime_root):  # the run ledger is written to the working directory
        result = CliRunner().invoke(
            cli, ["--db", db, "--runtime-root", str(runtime_root), *args], catch_exceptions=False
        )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


_INGESTS: dict[tuple[str, str], dict[str, Any]] = {}


def harbor_payload(key: str, db_url: str, tmp_path: Path) -> dict[str, Any]:
    """Ingest one Harbor fixture once per backend (every check reads the same output)."""
    backend = "sqlite" if db_url.startswith("sqlite") else "postgresql"
    if (key, backend) not in _INGESTS:
        job_dir = materialize(HARBOR_JOBS[key]["job_dir"], tmp_path / "fixture")
        _INGESTS[(key, backend)] = run_cli(
            ["benchmark", "run", "terminal-bench", "--goal-id", "g",
             "--harbor-job-dir", str(job_dir), "--update-run-ledger", "--format", "json",
             "--execute"],
            db_url, tmp_path / "rt",
        )  # fmt: skip
    return _INGESTS[(key, backend)]


def short_model(model: str | None) -> str | None:
    return model.split("/")[-1] if model else None


def records_by_case(payload: dict[str, Any]) -> dict[tuple[str, str, str | None], dict]:
    records: dict[tuple[str, str, str | None], dict] = {}
    for record in payload["benchmark_runs"]:
        agent = record["agent"]
        key = (record["case_id"], agent["name"], short_model(agent.get("model")))
        assert key not in records, f"two records for one case: {key}"
        records[key] = record
    return records


def expected_by_case(job: dict[str, Any]) -> dict[tuple[str, str, str | None], dict]:
    return {(c["task_name"], c["agent"], short_model(c["model"])): c for c in job["cases"]}


def harbor_params() -> list[Any]:
    params = []
    for key in HARBOR_JOBS:
        for check in CHECKS:
            item = HARBOR_XFAIL.get((key, check))
            marks = [pytest.mark.xfail(strict=True, reason=f"issue 31 item {item}")] if item else []
            params.append(pytest.param(key, check, id=f"{key}-{check}", marks=marks))
    return params


@pytest.mark.parametrize(("key", "check"), harbor_params())
def test_harbor_job_matches_harbor(key: str, check: str, db_url: str, tmp_path: Path) -> None:
    job = HARBOR_JOBS[key]
    payload = harbor_payload(key, db_url, tmp_path)
    records = records_by_case(payload)
    expected = expected_by_case(job)
    if check == "cases":
        # One record per (task, agent, model) Harbor knows: no phantom case, no phantom arm.
        assert sorted(records, key=str) == sorted(expected, key=str)
        return
    if check == "job":
        evals = job["harbor"]["evals_on_disk"]
        for record in records.values():
            runner_job = record["runner_job"]
            assert runner_job["job_status"] == job["job_status"]
            assert runner_job["n_total_trials"] == job["harbor"]["n_total_trials"]
            if evals is not None:
                # The arm's metric is the one Harbor wrote under its own evals key.
                assert runner_job.get("evals_key") in evals, runner_job.get("evals_key")
                assert runner_job.get("runner_metric") == evals[runner_job["evals_key"]][
                    "metrics"][0]  # fmt: skip
        return
    assert set(records) == set(expected), "the case sets differ (see the 'cases' check)"
    for case_key, case in expected.items():
        record = records[case_key]
        agg = record["score_aggregation"]
        if check == "run_status":
            assert record["run_status"] == case["run_status"], case_key
        elif check == "attempts":
            # Every planned attempt has a trial directory in these jobs, finished or not.
            assert agg["planned_attempt_count"] == case["planned_attempts"], case_key
            assert agg["attempt_count"] == case["planned_attempts"], case_key
            assert record["progress"]["n_running_trials"] == case["running"], case_key
            assert record["progress"]["n_cancelled_trials"] == case["cancelled"], case_key
        elif check == "scores":
            assert agg["scored_attempt_count"] == len(case["scored_rewards"]), case_key
            assert record.get("official_score") == case["mean_of_scored"], case_key
            if case["harbor_mean"] is not None:
                assert agg["runner_equivalent_mean"] == pytest.approx(case["harbor_mean"])
        elif check == "usage":
            coverage = record["metrics_coverage"]
            assert coverage["attempts_with_usage"] == case["attempts_with_usage"], case_key
        elif check == "tokens":
            metrics = record.get("metrics") or {}
            for ours, theirs in (("input_tokens", "n_input_tokens"),
                                 ("cache_tokens", "n_cache_tokens"),
                                 ("output_tokens", "n_output_tokens")):  # fmt: skip
                assert metrics.get(ours) == case["tokens"][theirs], (case_key, ours)
            if case["cost_usd"] is None:
                assert metrics.get("cost_usd") is None, case_key
            else:
                assert metrics.get("cost_usd") == pytest.approx(case["cost_usd"]), case_key


# --------------------------------------------------------------------------- BenchFlow


def benchflow_run(key: str, db_url: str, tmp_path: Path) -> tuple[int, dict[str, Any] | None, str]:
    """Ingest one BenchFlow root once per backend: (exit code, JSON payload or None, stderr)."""
    backend = "sqlite" if db_url.startswith("sqlite") else "postgresql"
    cache_key = ("benchflow:" + key, backend)
    if cache_key not in _INGESTS:
        from benchledger.commands.cli import cli

        root = materialize(BENCHFLOW_ROOTS[key]["root"], tmp_path / "fixture")
        (tmp_path / "rt").mkdir(parents=True, exist_ok=True)
        with contextlib.chdir(tmp_path / "rt"):  # the run ledger is written to the working dir
            result = CliRunner().invoke(
            cli,
                ["--db", db_url, "--runtime-root", str(tmp_path / "rt"),
                 "benchmark", "run", "skillsbench", "--goal-id", "g",
                 "--skillsbench-result-root", str(root), "--update-run-ledger", "--execute",
                 "--format", "json"],
                catch_exceptions=False,
            )  # fmt: skip
        try:
            payload = json.loads(result.stdout) if result.exit_code == 0 else None
        except ValueError:
            payload = None
        _INGESTS[cache_key] = {"code": result.exit_code, "payload": payload,
                               "stderr": result.stderr}  # fmt: skip
    done = _INGESTS[cache_key]
    return done["code"], done["payload"], done["stderr"]


def benchflow_params() -> list[Any]:
    params = []
    for key, root in BENCHFLOW_ROOTS.items():
        for check in BENCHFLOW_CHECKS:
            if check == "warning" and 4 not in root["issue_items"]:
                continue  # the warning is item 4's rule: a rollout killed while writing
            item = BENCHFLOW_XFAIL.get((key, check))
            marks = [pytest.mark.xfail(strict=True, reason=f"issue 31 item {item}")] if item else []
            params.append(pytest.param(key, check, id=f"{key}-{check}", marks=marks))
    return params


@pytest.mark.parametrize(("key", "check"), benchflow_params())
def test_benchflow_root_matches_benchflow(
    key: str, check: str, db_url: str, tmp_path: Path
) -> None:
    root = BENCHFLOW_ROOTS[key]
    code, payload, stderr = benchflow_run(key, db_url, tmp_path)
    # A broken rollout never fails the ingest of the rest of the root (issue 31 item 4).
    assert code == 0, stderr
    assert payload is not None
    if check == "ingests":
        return
    records = {r["case_id"]: r for r in payload["benchmark_runs"]}
    expected = {c["task_name"]: c for c in root["cases"]}
    if check == "cases":
        # One record per task, the unfinished ones included (issue 31 item 5).
        assert sorted(records) == sorted(expected)
        return
    if check == "warning":
        # The broken rollout's record carries a warning the healthy records do not.
        broken = {r["task_name"] for r in root["rollouts"] if not r["has_result"]}
        healthy = set().union(
            *(r.get("ingest_warnings") or [] for t, r in records.items() if t not in broken)
        )
        for task in broken:
            record = records.get(task)
            assert record is not None, f"no record for the broken rollout of {task}"
            assert set(record.get("ingest_warnings") or []) - healthy, task
        return
    assert set(records) == set(expected), "the case sets differ (see the 'cases' check)"
    for task, case in expected.items():
        record = records[task]
        if check == "scores":
            # BenchFlow's own selection: a rollout without result.json is never a score.
            assert record.get("official_score") == case["score"], task
        elif check == "run_status":
            assert record["run_status"] == case["run_status"], task
        elif check == "attempts":
            # The unfinished rollout is an attempt of its task whose result is missing.
            agg = record["score_aggregation"]
            assert agg["attempt_count"] == case["attempts"], task
            assert record["trial_count"] == case["attempts"], task
            missing = (agg.get("unscored_reasons") or {}).get("result_missing", 0)
            assert missing == case["unfinished"], task


# --------------------------------------------------------------------------- summary (item 7)


def not_counting(job: dict[str, Any], runner: str) -> int:
    """Cases that will not count: unfinished, cancelled, or without a score."""
    if runner == "harbor":
        return sum(c["run_status"] != "completed" or not c["scored_rewards"] for c in job["cases"])
    return sum(c["run_status"] != "completed" or c["score"] is None for c in job["cases"])


def summary_params() -> list[Any]:
    params = []
    for runner, fixtures in (("harbor", HARBOR_JOBS), ("benchflow", BENCHFLOW_ROOTS)):
        for key, job in fixtures.items():
            if not_counting(job, runner) and (runner == "harbor" or job["cases"]):
                params.append(pytest.param(runner, key, id=f"{runner}-{key}"))
    return params


@pytest.mark.parametrize(("runner", "key"), summary_params())
def test_summary_says_what_will_not_count(
    runner: str, key: str, db_url: str, tmp_path: Path
) -> None:
    """The lines right under the summary table give the number of cases that will not count
    (unfinished, cancelled or unscored) and why."""
    from benchledger.commands.cli import cli

    job = (HARBOR_JOBS if runner == "harbor" else BENCHFLOW_ROOTS)[key]
    rel = job["job_dir"] if runner == "harbor" else job["root"]
    source = materialize(rel, tmp_path / "fixture")
    flags = (["terminal-bench", "--harbor-job-dir", str(source)] if runner == "harbor"
             else ["skillsbench", "--skillsbench-result-root", str(source)])  # fmt: skip
    (tmp_path / "rt").mkdir()
    with contextlib.chdir(tmp_path / "rt"):
        result = CliRunner().invoke(
            cli, ["--db", db_url, "--runtime-root", str(tmp_path / "rt"), "benchmark", "run",
                  *flags, "--goal-id", "g", "--execute"], catch_exceptions=False,
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    under = [line for line in result.stdout.splitlines() if line.startswith("- will not count:")]
    assert len(under) == 1, result.stdout
    assert under[0].startswith(f"- will not count: {not_counting(job, runner)} of "), under
    text = under[0].lower()
    assert any(word in text for word in ("unfinished", "cancelled", "unscored")), under
