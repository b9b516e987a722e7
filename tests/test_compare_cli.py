"""``benchledger compare`` end to end on Harbor and BenchFlow fixtures, SQLite and PostgreSQL.

Expected numbers come from the fixture manifests (the rewards each trial got) and from the
rewards this test gives its crafted second arm; each is derived in a comment, never from
benchledger's own code.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support_harbor_ingest_cli import cli, copy_job, ingest, load_manifest

# Student-t 0.975 quantile for 3 degrees of freedom (tables)
MULTI_ATTEMPT = "06_multi_attempt"
# Rewards of 06_multi_attempt per task and attempt (manifest), and the treatment arm's.
BASE = {
    "fix-code-vulnerability": [1.0, 1.0, 1.0],
    "nginx-request-logging": [0.0, 1.0, 0.0],
    "sanitize-git-repo": [0.0, 1.0, 0.0],
    "vulnerable-secret": [0.0, 0.0, 0.0],
}
TREAT = {
    "fix-code-vulnerability": [1.0, 1.0, 1.0],
    "nginx-request-logging": [1.0, 1.0, 0.0],
    "sanitize-git-repo": [1.0, 1.0, 1.0],
    "vulnerable-secret": [0.0, 1.0, 0.0],
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cwd = tmp_path / "project"
    (cwd / ".benchledger").mkdir(parents=True)
    monkeypatch.chdir(cwd)
    return cwd


def _job(fixtures_dir: Path, tmp_path: Path, key: str) -> Path:
    manifest = load_manifest(fixtures_dir)
    job = next(j for j in manifest["jobs"] if j["key"] == key)
    return copy_job(fixtures_dir, manifest, job, tmp_path / "src")


def _treated(record: dict) -> dict:
    """The base record with the treatment's rewards (what a second Harbor job would give)."""
    run = record["benchmark_run"]
    rewards = TREAT[run["case_id"]]
    for trial in run["trials"]:
        reward = rewards[trial["attempt_index"] - 1]
        trial.update(reward={"reward": reward}, primary_reward=reward, passed=reward == 1.0)
    score = sum(rewards) / len(rewards)
    run["official_score"] = score
    run["official_task_score"].update(value=score, passed=all(r == 1.0 for r in rewards))
    run["score_aggregation"]["passed_attempt_count"] = sum(1 for r in rewards if r == 1.0)
    run["job_name"] = run["run_key"] = f"treat-{run['case_id']}"
    return run


@pytest.fixture
def harbor_two_arms(db_url: str, fixtures_dir: Path, tmp_path: Path, project: Path) -> str:
    """06_multi_attempt ingested as arm ``base``; the same tasks re-scored as arm ``treat``."""
    runtime = tmp_path / "rt"
    job = _job(fixtures_dir, tmp_path, MULTI_ATTEMPT)
    done = ingest(job, db=db_url, runtime_root=runtime, extra=("--arm-id", "base"))
    assert done.code == 0, done.result.output
    query = cli(["--format", "json", "sql", "SELECT record FROM goal_runs_v"], db=db_url)
    batch = {
        "schema_version": "benchmark_run_batch_v0",
        "benchmark_runs": [_treated(json.loads(r[0])) for r in query.payload["rows"]],
    }
    path = tmp_path / "treat.json"
    path.write_text(json.dumps(batch), encoding="utf-8")
    upsert = ["benchmark", "run-ledger-upsert", "--benchmark-run-json", str(path),
              "--arm-id", "treat", "--execute", "--format", "json"]  # fmt: skip
    done = cli(upsert, db=db_url)
    assert done.code == 0, done.result.output
    return db_url


def _compare(db: str, *args: str) -> dict:
    call = cli(
        ["compare", "--benchmark-id", "terminal-bench@2.0", "--format", "json", *args], db=db
    )
    assert call.code == 0, call.result.output
    return call.payload["compare"]


def test_harbor_arms_with_repeated_attempts(harbor_two_arms: str) -> None:
    doc = _compare(harbor_two_arms, "--reference", "base")
    base, treat = doc["arms"]
    assert (base["arm_id"], treat["arm_id"]) == ("base", "treat")
    assert (base["n_cases"], base["n_attempts"]) == (4, 12)
    # case means 1, 1/3, 1/3, 0 -> 5/12 (Harbor's own mean for the job is 0.4167)
    assert base["mean"] == pytest.approx(5 / 12)
    # deviations 7/12, -1/12, -1/12, -5/12: squares 76/144, var 76/432
    assert base["se"] == pytest.approx(math.sqrt(76 / 432) / 2)
    # within: variances 0, 1/3, 1/3, 0 -> 1/6; between = 76/432 - (1/6)/3
    assert base["var_within_cases"] == pytest.approx(1 / 6)
    assert base["var_between_cases"] == pytest.approx(76 / 432 - 1 / 18)
    assert treat["mean"] == pytest.approx(0.75)  # 1, 2/3, 1, 1/3
    pair = doc["paired"][0]
    # differences 0, 1/3, 2/3, 1/3: mean 1/3, var 2/27, se sqrt(2/27)/2, t = sqrt(6), 3 df
    se = math.sqrt(2 / 27) / 2
    assert pair["n_pairs"] == 4
    assert pair["mean_diff"] == pytest.approx(1 / 3)
    assert pair["se"] == pytest.approx(se)
    # 4 cases of attempt means: the betting interval, inside [-1, 1] around the difference
    assert pair["interval_method"] == "betting_waudby_smith_ramdas"
    assert -1 <= pair["ci_low"] < 1 / 3 < pair["ci_high"] <= 1
    # Student-t with 3 df in closed form: p = 1 - (2/pi) * (x/(1+x^2) + atan(x)), x = t/sqrt(3)
    x = math.sqrt(6) / math.sqrt(3)
    assert pair["p_value"] == pytest.approx(1 - (2 / math.pi) * (x / (1 + x * x) + math.atan(x)))
    assert doc["comparability"]["ok"] is True  # same task digests, same timeout policy
    assert base["cost"]["recorded_cases"] == 4 and base["cost"]["cost_usd_per_case"] > 0


def test_harbor_pass_metric_and_markdown(harbor_two_arms: str) -> None:
    doc = _compare(harbor_two_arms, "--reference", "base", "--per-case", "latest")
    assert doc["metric"] == "score" and doc["per_case_policy"] == "latest"
    doc = _compare(
        harbor_two_arms, "--reference", "base", "--metric", "pass", "--per-case", "first"
    )
    # first attempts: base 1, 0, 0, 0; treat 1, 1, 1, 0 -> (ref, arm) discordant c = 2, b = 0
    assert doc["paired"][0]["mcnemar"] == {"b": 0, "c": 2, "p_value": pytest.approx(0.5)}
    call = cli(["compare", "--benchmark-id", "terminal-bench@2.0", "--reference", "base"],
               db=harbor_two_arms)  # fmt: skip
    assert call.code == 0
    assert "per-case policy: `mean`" in call.result.stdout
    assert "| treat | 4 | 12 | 0.7500 |" in call.result.stdout


def test_harbor_arms_with_other_task_content_are_refused(
    db_url: str, fixtures_dir: Path, tmp_path: Path, project: Path
) -> None:
    # 12 (hardened baseline) and 13 (managed treatment) ran fix-git from different task
    # digests, and 13 raised the agent timeout (agent_timeout_multiplier 4)
    runtime = tmp_path / "rt"
    for key in ("12_hardened_baseline_arm", "13_managed_treatment_arm"):
        assert ingest(_job(fixtures_dir, tmp_path, key), db=db_url, runtime_root=runtime).code == 0
    call = cli(["compare", "--benchmark-id", "terminal-bench@2.0"], db=db_url)
    assert call.code == 1
    lines = call.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in call.result.output
    assert "task_digest differs" in lines[0] and "timeout_policy differs" in lines[0]
    allowed = cli(["compare", "--benchmark-id", "terminal-bench@2.0", "--allow-incomparable",
                   "--format", "json"], db=db_url)  # fmt: skip
    assert allowed.code == 0
    doc = allowed.payload["compare"]
    assert doc["banner"].startswith("INCOMPARABLE")
    # 12: rewards 1, 0 -> 0.5; 13: 1, 0, 0 (the timed-out attempt still has its reward) -> 1/3
    assert [a["mean"] for a in doc["arms"]] == [pytest.approx(0.5), pytest.approx(1 / 3)]
    markdown = cli(["compare", "--benchmark-id", "terminal-bench@2.0", "--allow-incomparable"],
                   db=db_url)  # fmt: skip
    assert doc["banner"] in markdown.result.stdout


def _benchflow(db: str, fixtures_dir: Path, runtime: Path, case: str, arm: str) -> None:
    root = fixtures_dir / "benchflow" / "cases" / case / "jobs"
    args = ["benchmark", "run", "skillsbench", "--goal-id", "sb", "--skillsbench-result-root",
            str(root), "--arm-id", arm, "--update-run-ledger", "--execute"]  # fmt: skip
    done = cli(args, db=db, runtime_root=runtime)
    assert done.code == 0, done.result.output


def test_benchflow_rollouts_as_attempts(
    db_url: str, fixtures_dir: Path, tmp_path: Path, project: Path
) -> None:
    runtime = tmp_path / "rt"
    for case in ("01_pass", "02_fail", "05_error_with_pass", "23_multi_task_root"):
        _benchflow(db_url, fixtures_dir, runtime, case, "sb-x")
    for case in ("03_partial_reward", "04_agent_idle_timeout", "06_verifier_crash"):
        _benchflow(db_url, fixtures_dir, runtime, case, "sb-y")
    call = cli(["compare", "--benchmark-id", "skillsbench@1.1", "--format", "json"], db=db_url)
    # every fixture root was generated from its own task directory: digests differ
    assert call.code == 1 and "task_digest differs" in call.stderr
    call = cli(["compare", "--benchmark-id", "skillsbench", "--allow-incomparable",
                "--reference", "sb-x", "--format", "json"], db=db_url)  # fmt: skip
    assert call.code == 0, call.result.output
    x, y = call.payload["compare"]["arms"]
    # sb-x: citation-check rewards 1 (01), 0 (02), 1 (05), 1 (23) -> 0.75; pdf-table-extract 0;
    # weather-csv-merge 0.6; 3d-scan-volume's verifier timed out: excluded, not a zero
    assert x["mean"] == pytest.approx((0.75 + 0 + 0.6) / 3)
    assert x["coverage"]["excluded"] == {"verifier_error_without_reward": ["3d-scan-volume"]}
    assert x["var_within_cases"] == pytest.approx(0.25)  # var(1, 0, 1, 1) with n - 1
    # sb-y: citation-check 0.45 (03) and 0.0 (04); 06's verifier crashed: a run left out
    assert y["mean"] == pytest.approx(0.225)
    assert y["coverage"]["runs_excluded"] == {"verifier_error_without_reward": 1}
    assert y["coverage"]["excluded"]["missing"] == [
        "3d-scan-volume", "pdf-table-extract", "weather-csv-merge",
    ]  # fmt: skip
    pair = call.payload["compare"]["paired"][0]
    assert (pair["n_pairs"], pair["mean_diff"], pair["se"]) == (1, pytest.approx(-0.525), None)


def test_compare_needs_a_known_benchmark_and_arm(
    db_url: str, fixtures_dir: Path, tmp_path: Path, project: Path
) -> None:
    _benchflow(db_url, fixtures_dir, tmp_path / "rt", "01_pass", "sb-x")
    for args, message in [
        (["--benchmark-id", "nope"], "no ledger rows for benchmark nope"),
        (["--benchmark-id", "skillsbench@1.1", "--arm", "zz"], "no runs of arm zz"),
        (["--benchmark-id", "skillsbench@1.1", "--per-case", "pass@k:0"], "--per-case must be"),
        (["--benchmark-id", "skillsbench@1.1", "--metric", "score", "--per-case", "pass@k:2"],
         "use it with --metric pass"),
    ]:  # fmt: skip
        call = cli(["compare", *args], db=db_url)
        lines = call.stderr.strip().splitlines()
        assert call.code == 1 and len(lines) == 1 and lines[0].startswith("error: ")
        assert message in lines[0] and "Traceback" not in call.result.output


def test_numpy_and_mpmath_stay_out_of_ingest_and_upsert(tmp_path: Path, fixtures_dir: Path) -> None:
    """Only compare pays for its numeric libraries: an ingest and an upsert never load them."""
    root = fixtures_dir / "benchflow" / "cases" / "01_pass" / "jobs"
    script = f"""
import json, os, sys
NUMERIC = ("numpy", "scipy", "mpmath")
from click.testing import CliRunner
from benchledger.commands.cli import cli
db = "sqlite:///" + os.path.join({str(tmp_path)!r}, "s", "ledger.db")
runner = CliRunner()
common = ["--db", db, "--runtime-root", {str(tmp_path / "rt")!r}]
r = runner.invoke(cli, [*common, "benchmark", "run", "skillsbench", "--goal-id", "g",
    "--skillsbench-result-root", {str(root)!r}, "--update-run-ledger", "--execute"])
assert r.exit_code == 0, r.output
r = runner.invoke(cli, [*common, "--format", "json", "sql", "SELECT record FROM goal_runs_v"])
record = json.loads(json.loads(r.output)["rows"][0][0])
path = os.path.join({str(tmp_path)!r}, "run.json")
open(path, "w").write(json.dumps(record))
r = runner.invoke(cli, [*common, "benchmark", "run-ledger-upsert", "--benchmark-run-json", path,
    "--arm-id", "other", "--execute"])
assert r.exit_code == 0, r.output
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in NUMERIC)))
r = runner.invoke(cli, [*common, "compare", "--benchmark-id", "skillsbench@1.1",
    "--allow-incomparable"])
assert r.exit_code == 0, r.output
print(json.dumps(sorted(m for m in sys.modules if m in NUMERIC)))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=tmp_path, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    before, after = done.stdout.strip().splitlines()[-2:]
    assert json.loads(before) == []
    assert json.loads(after) == ["mpmath", "numpy"]  # the check can see them when they load


def test_imported_loopx_ledger_counts_what_the_aggregate_counts(
    db_url: str, fixtures_dir: Path, project: Path
) -> None:
    """Rows imported from loopx carry no attempt detail and no stored countability: compare
    judges them as ``run-ledger-aggregate`` does, so the cases it can count (over all arms)
    are exactly the aggregate's countable cases."""
    ledger = project / "benchmark-run-ledger.json"
    ledger.write_bytes((fixtures_dir / "loopx-ledger" / "benchmark-run-ledger.json").read_bytes())
    done = cli(["import", "loopx-ledger", str(ledger), "--execute"], db=db_url)
    assert done.code == 0, done.result.output
    aggregate = cli(["benchmark", "run-ledger-aggregate", "--benchmark-id", "skillsbench@1.1",
                     "--format", "json"], db=db_url)  # fmt: skip
    countable = aggregate.payload["aggregate"]["countable_score_summary"]["countable_case_ids"]
    query = "SELECT DISTINCT case_id FROM ledger_runs_v WHERE benchmark_id = 'skillsbench@1.1'"
    universe = {
        row[0] for row in cli(["--format", "json", "sql", query], db=db_url).payload["rows"]
    }
    call = cli(["compare", "--benchmark-id", "skillsbench@1.1", "--format", "json"], db=db_url)
    assert call.code == 0, call.result.output
    included: set[str] = set()
    for arm in call.payload["compare"]["arms"]:
        cov = arm["coverage"]
        assert cov["cases_total"] == len(universe)
        excluded = {case for cases in cov["excluded"].values() for case in cases}
        included |= universe - excluded
        assert cov["runs_without_attempt_detail"] == cov["runs_included"]
    assert countable and sorted(included) == sorted(countable)
