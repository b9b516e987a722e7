"""Harbor 0.25 adapter against the fixture jobs; expected values come from manifest.json.

The manifest records what Harbor itself computed (``harbor`` block) and what each trial holds, so
the per-case figures are rebuilt here from the manifest, never from the adapter's own helpers.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from statistics import mean

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchledger.ledger.core.errors import SourceError
from benchledger.ledger.rules.record.compaction import compact_run
from benchledger.ledger.sources.harbor import files as harbor_files
from benchledger.ledger.sources.harbor import plan as harbor_plan
from benchledger.ledger.sources.harbor import values as harbor_values
from benchledger.ledger.sources.harbor.job import read_harbor_job
from benchledger.ledger.sources.harbor.options import HarborReadOptions
from benchledger.ledger.sources.harbor.values import _PHASES, _trial_times
from tests.conftest import FIXTURES_DIR
from tests.support_harbor_ingest_cli import expected_case_status

MANIFEST_REL = Path("harbor/manifest.json")


def _manifest(fixtures_dir: Path) -> dict:
    return json.loads((fixtures_dir / MANIFEST_REL).read_text(encoding="utf-8"))


def _job_keys() -> list[str]:
    """Job ids for parametrisation (collection time: fixtures are not injected yet)."""
    return [job["key"] for job in _manifest(FIXTURES_DIR)["jobs"]]


JOB_KEYS = _job_keys()
SCORED_JOB_KEYS = [k for k in JOB_KEYS if k not in ("20_empty_dir",)]


@pytest.fixture(scope="module")
def manifest(fixtures_dir: Path) -> dict:
    return _manifest(fixtures_dir)


@pytest.fixture(scope="module")
def harbor_root(
    fixtures_dir: Path, manifest: dict, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A writable copy of the Harbor fixtures with the empty dirs git cannot keep."""
    root = tmp_path_factory.mktemp("harbor") / "harbor"
    shutil.copytree(fixtures_dir / "harbor", root)
    for rel in manifest["empty_dirs"]:
        (root / rel).mkdir(parents=True, exist_ok=True)
    return root


@pytest.fixture(scope="module")
def jobs(manifest: dict) -> dict[str, dict]:
    return {job["key"]: job for job in manifest["jobs"]}


@pytest.fixture(scope="module")
def ingests(harbor_root: Path, jobs: dict[str, dict]) -> dict:
    out = {}
    for key, job in jobs.items():
        try:
            out[key] = read_harbor_job(HarborReadOptions.from_flags(harbor_root / job["job_dir"]))
        except SourceError as exc:
            out[key] = exc
    return out


# --------------------------------------------------------------------------- expectations


def _primary(rewards: dict | None) -> float | None:
    """docs/formats/harbor.md §5.4, restated for the test: one key, else `reward`, else none."""
    if not rewards:
        return None
    if len(rewards) == 1:
        return float(next(iter(rewards.values())))
    return float(rewards["reward"]) if "reward" in rewards else None


def _expected_job_status(job: dict) -> str:
    state = job["job_state"]
    if state == "finished":
        cancelled = (job["harbor"] or {}).get("counters", {}).get("n_cancelled_trials", 0)
        return "cancelled" if cancelled else "completed"
    return {
        "running": "running",
        "no_result": "incomplete",
        "corrupt_result": "corrupt",
        "config_only": "not_started",
    }[state]


def _expected_cases(job: dict) -> dict[tuple, dict]:
    """(task, agent, short model) -> trials by dir name, scored values, exceptions."""
    cases: dict[tuple, dict] = defaultdict(lambda: {"trials": {}, "scored": []})
    for trial in job["trials"]:
        corrupt = trial["dir"] == job["corrupt_trial"]
        readable = trial["has_result"] and not corrupt
        primary = _primary(trial["rewards"]) if readable else None
        case = cases[(trial["task_name"], trial["agent"], trial["model"])]
        case["trials"][trial["dir"]] = {
            "primary": primary,
            "exception": (trial["exception"] or "none") if readable else None,
            "status": "result_corrupt" if corrupt else None,
            "reward_file": bool(trial["reward_files"]),
        }
        if primary is not None:
            case["scored"].append(primary)
    return cases


def _case_key(record: dict) -> tuple:
    model = record["agent"].get("model")
    return (record["case_id"], record["agent"]["name"], model.split("/")[-1] if model else None)


def _records(ingests: dict, key: str) -> list[dict]:
    ingest = ingests[key]
    assert not isinstance(ingest, Exception), f"{key}: {ingest}"
    return ingest.records


# --------------------------------------------------------------------------- per-case facts


@pytest.mark.parametrize("key", SCORED_JOB_KEYS)
def test_one_record_per_task_agent_model(key: str, ingests: dict, jobs: dict) -> None:
    job = jobs[key]
    records = _records(ingests, key)
    expected = _expected_cases(job)
    if key == "19_config_only":
        assert [r["case_id"] for r in records] == ["fix-git"]
        return
    assert {_case_key(r) for r in records} == set(expected)
    assert len(records) == len(expected)
    assert len({r["run_key"] for r in records}) == len(records)


@pytest.mark.parametrize("key", SCORED_JOB_KEYS)
def test_case_scores_pass_flags_and_attempts(key: str, ingests: dict, jobs: dict) -> None:
    job = jobs[key]
    expected = _expected_cases(job)
    for record in _records(ingests, key):
        if key == "19_config_only":
            continue
        case = expected[_case_key(record)]
        agg = record["score_aggregation"]
        scored = case["scored"]
        assert record["trial_count"] == len(case["trials"]) == agg["attempt_count"]
        assert agg["scored_attempt_count"] == len(scored)
        assert agg["unscored_attempt_count"] == len(case["trials"]) - len(scored)
        assert agg["passed_attempt_count"] == sum(1 for v in scored if v == 1.0)
        if scored:
            assert record["official_score"] == pytest.approx(mean(scored))
            assert record["official_task_score"]["value"] == pytest.approx(mean(scored))
            assert record["official_task_score"]["passed"] is all(v == 1.0 for v in scored)
        else:
            # A missing reward is never a zero.
            assert "official_score" not in record
            assert record["official_task_score"]["kind"] == "harbor_verifier_reward_missing"
            assert record["official_score_status"] == "missing"


@pytest.mark.parametrize("key", SCORED_JOB_KEYS)
def test_every_trial_kept_with_reward_exception_and_verdict(
    key: str, ingests: dict, jobs: dict
) -> None:
    expected = _expected_cases(jobs[key])
    for record in _records(ingests, key):
        if key == "19_config_only":
            assert [t["status"] for t in record["trials"]] == ["pending"]
            continue
        case = expected[_case_key(record)]
        trials = {t["trial_name"]: t for t in record["trials"]}
        assert set(trials) == set(case["trials"])
        assert [t["attempt_index"] for t in record["trials"]] == list(range(1, len(trials) + 1))
        for name, want in case["trials"].items():
            got = trials[name]
            assert got.get("exception_type") == want["exception"], name
            assert got.get("primary_reward") == want["primary"], name
            if want["primary"] is None:
                assert "passed" not in got and got["unscored_reason"], name
            else:
                assert got["passed"] is (want["primary"] == 1.0), name
            if want["status"]:
                assert got["status"] == want["status"]
            assert got["verifier_reward_file_present"] is want["reward_file"], name


@pytest.mark.parametrize("key", SCORED_JOB_KEYS)
def test_job_status_is_reported_honestly(key: str, ingests: dict, jobs: dict) -> None:
    job = jobs[key]
    status = _expected_job_status(job)
    ingest = ingests[key]
    assert ingest.provenance["job_status"] == status
    for record in ingest.records:
        # docs/formats/harbor.md §3: each case reports its own state; the job's stays in runner_job.
        case_status = expected_case_status(job, record["case_id"], record["agent"]["name"])
        assert record["run_status"] == case_status, record["case_id"]
        assert record["runner_return_status"] == case_status
        assert record["runner_job"]["job_status"] == status
        if case_status != "completed":
            assert record["official_score_status"] in ("provisional", "missing")
            assert record["attempt_accounting"]["official_score_attempt_countable"] is False


def test_named_job_statuses(ingests: dict) -> None:
    def statuses(key: str) -> dict[str, int]:
        return dict(Counter(r["run_status"] for r in ingests[key].records))

    def job_statuses(key: str) -> set[str]:
        return {r["runner_job"]["job_status"] for r in ingests[key].records}

    # docs/formats/harbor.md §3: the finished cases of an interrupted job stay completed; the job's
    # own
    # state is runner_job.job_status.
    assert statuses("08_running_job") == {"completed": 3, "running": 3}
    assert job_statuses("08_running_job") == {"running"}
    assert statuses("09_missing_job_result") == {"completed": 2, "incomplete": 1}
    assert job_statuses("09_missing_job_result") == {"incomplete"}
    assert statuses("10_corrupt_job_result") == {"completed": 3}
    assert job_statuses("10_corrupt_job_result") == {"corrupt"}
    assert statuses("19_config_only") == {"not_started": 1}
    running = {
        t["trial_name"]: t["status"] for r in ingests["08_running_job"].records for t in r["trials"]
    }
    assert sorted(running.values()).count("running") == 3
    missing = [t for r in ingests["09_missing_job_result"].records for t in r["trials"]]
    assert sorted(t["status"] for t in missing) == ["completed", "completed", "result_missing"]
    assert ingests["19_config_only"].records[0]["score_aggregation"]["unscored_reasons"] == {
        "trial_pending": 1
    }
    assert isinstance(ingests["20_empty_dir"], SourceError)
    assert "not a Harbor job directory" in str(ingests["20_empty_dir"])


def test_corrupt_trial_is_named_in_a_warning_and_not_scored(ingests: dict, jobs: dict) -> None:
    job = jobs["11_corrupt_trial_result"]
    ingest = ingests["11_corrupt_trial_result"]
    corrupt = job["corrupt_trial"]
    assert any(f"{corrupt}/result.json" in w for w in ingest.warnings)
    assert all("/" not in w.split(f"{corrupt}/result.json")[0] for w in ingest.warnings)
    record = next(r for r in ingest.records if r["trials"][0]["trial_name"] == corrupt)
    assert record["case_id"] == "adaptive-rejection-sampler"  # from the trial's own config
    assert record["trials"][0]["status"] == "result_corrupt"
    assert record["score_aggregation"]["unscored_reasons"] == {"trial_result_corrupt": 1}
    assert "official_score" not in record
    assert record["run_status"] == "completed"  # a corrupt file still counts as present


# ---------------------------------------------------------------- vs Harbor's own figures


def _arms(records: list[dict]) -> dict[str, list[dict]]:
    arms: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        arms[record["runner_job"]["evals_key"]].append(record)
    return arms


HARBOR_JOB_KEYS = [k for k in SCORED_JOB_KEYS if k != "19_config_only"]


@pytest.mark.parametrize("key", HARBOR_JOB_KEYS)
def test_job_figures_match_harbor(key: str, ingests: dict, jobs: dict) -> None:
    job = jobs[key]
    harbor = job["harbor"]
    records = _records(ingests, key)
    assert sum(r["trial_count"] for r in records) == harbor["n_total_trials"]
    arms = _arms(records)
    assert set(arms) == set(harbor["evals"])
    same_definition = job["corrupt_trial"] is None  # Harbor scored the trial before it was torn
    for evals_key, arm_records in arms.items():
        evals = harbor["evals"][evals_key]
        metric = evals["metrics"][0]
        scored = [
            t["primary_reward"] for r in arm_records for t in r["trials"] if "primary_reward" in t
        ]
        finished = [
            t for r in arm_records for t in r["trials"] if t["status"] in ("completed", "cancelled")
        ]
        if same_definition:
            assert len(scored) == evals["n_trials"]
            harbor_mean = metric.get("mean", metric.get("reward"))
            assert sum(scored) / len(finished) == pytest.approx(harbor_mean, abs=1e-4)
        if evals["pass_at_k"]:
            for k, value in evals["pass_at_k"].items():
                per_case = [r["pass_at_k"][k] for r in arm_records]
                assert mean(per_case) == pytest.approx(value)
    if same_definition:
        _assert_tokens(records, harbor["tokens"])
        _assert_counters(records, harbor["counters"], job)


def _assert_tokens(records: list[dict], tokens: dict) -> None:
    for harbor_key, ours in (
        ("n_input_tokens", "input_tokens"),
        ("n_cache_tokens", "cache_tokens"),
        ("n_output_tokens", "output_tokens"),
        ("cost_usd", "cost_usd"),
    ):
        total = sum(r.get("metrics", {}).get(ours, 0) for r in records)
        if tokens[harbor_key] is None:
            assert total == 0
        else:
            assert total == pytest.approx(tokens[harbor_key])


def _assert_counters(records: list[dict], counters: dict, job: dict) -> None:
    progress = defaultdict(int)
    for record in records:
        for name, value in record["progress"].items():
            progress[name] += value
    finished = (
        progress["n_completed_trials"]
        + progress["n_errored_trials"]
        + progress["n_cancelled_trials"]
    )
    assert finished == counters["n_completed_trials"]
    assert progress["n_cancelled_trials"] == counters["n_cancelled_trials"]
    # Harbor counts a cancelled trial as errored too; benchledger keeps it apart.
    assert (
        progress["n_errored_trials"] + progress["n_cancelled_trials"]
        == counters["n_errored_trials"]
    )
    if job["job_state"] in ("running", "finished"):
        assert progress["n_running_trials"] == counters["n_running_trials"]


@pytest.mark.parametrize("key", HARBOR_JOB_KEYS)
def test_runner_job_keeps_harbors_own_metric(key: str, ingests: dict, jobs: dict) -> None:
    job = jobs[key]
    intact = job["job_result_on_disk"] == "intact"
    for record in _records(ingests, key):
        runner = record["runner_job"]
        evals = job["harbor"]["evals"][runner["evals_key"]]
        if intact:
            assert runner["runner_metric"] == evals["metrics"][0]
            assert runner.get("runner_pass_at_k", {}) == evals["pass_at_k"]
            assert runner["n_retries"] == job["harbor"]["counters"]["n_retries"]
            assert runner["timestamps_timezone"] == "naive_local"
        else:
            assert "runner_metric" not in runner
        assert runner["runner_version"] == "0.25.0"
        assert runner["job_name"] == job["job_name"] == record["job_name"]


# --------------------------------------------------------------------------- shapes


def test_benchmark_ids_and_arms(ingests: dict) -> None:
    assert {r["benchmark_id"] for r in ingests["01_all_pass"].records} == {"terminal-bench@2.0"}
    assert {r["benchmark_id"] for r in ingests["17_unicode_local_tasks"].records} == {
        "tb-local-ünicode"
    }
    tb21 = ingests["18_package_tasks_oracle"].records
    assert {r["case_id"] for r in tb21} == {"terminal-bench/fix-git", "terminal-bench/regex-log"}
    assert all(
        r["benchmark_id"].startswith("terminal-bench/terminal-bench-2-1@sha256:") for r in tb21
    )
    two = ingests["16_two_agents_one_job"].records
    assert sorted({r["arm_id"] for r in two}) == [
        "codex__openai-gpt-5",
        "terminus-2__anthropic-claude-sonnet-4-5",
    ]
    assert {r["runner_job"]["arm_count"] for r in two} == {2}
    managed = ingests["13_managed_treatment_arm"].records[0]
    assert managed["agent"]["name"] == "managed-codex"
    assert managed["agent"]["import_path"] == "bench_harness.agents:ManagedCodexAgent"
    assert managed["score_aggregation"]["planned_attempt_count"] == 3
    assert managed["timeout_policy"]["official_comparable"] is False
    assert managed["timeout_policy"]["multipliers"]["agent_timeout_multiplier"] == 4.0


def test_unscored_reasons(ingests: dict) -> None:
    def reasons(key: str) -> dict:
        out: dict = defaultdict(int)
        for record in ingests[key].records:
            for reason, n in record["score_aggregation"].get("unscored_reasons", {}).items():
                out[reason] += n
        return dict(out)

    assert reasons("03_mixed_with_timeouts") == {"verifier_failed": 1}
    assert reasons("21_nop_env_probe_no_verify") == {"verification_disabled": 1}
    assert reasons("22_all_blocked_before_agent") == {"exception_before_verification": 3}
    assert reasons("07_many_tasks_full_sweep") == {
        "exception_before_verification": 2,
        "verifier_failed": 3,
        "trial_cancelled": 1,
    }
    git = next(
        r for r in ingests["03_mixed_with_timeouts"].records if r["case_id"] == "git-multibranch"
    )
    assert "reward_file_present_without_verifier_result" in git["ingest_warnings"]
    assert git["score_failure_attribution"] == "verifier_failed_no_reward"
    blocked = ingests["22_all_blocked_before_agent"].records
    assert {r["attempt_accounting"]["failure_class"] for r in blocked} == {
        "job_materialization_failed"
    }


def test_multi_attempt_pass_at_k_and_multi_key_rewards(ingests: dict) -> None:
    by_case = {r["case_id"]: r for r in ingests["06_multi_attempt"].records}
    assert by_case["fix-code-vulnerability"]["pass_at_k"] == {"2": 1.0}
    assert by_case["vulnerable-secret"]["pass_at_k"] == {"2": 0.0}
    assert by_case["nginx-request-logging"]["pass_at_k"]["2"] == pytest.approx(2 / 3)
    assert by_case["nginx-request-logging"]["timeout_policy"]["official_comparable"] is False
    multi = ingests["05_multi_key_reward_json"].records
    assert {r["score_aggregation"]["primary_reward_key"] for r in multi} == {"reward"}
    assert all(len(r["trials"][0]["reward"]) > 1 for r in multi)


def test_multi_key_reward_without_reward_key_has_no_score(
    harbor_root: Path, jobs: dict, tmp_path: Path
) -> None:
    job_dir = tmp_path / "jobs" / "mk"
    shutil.copytree(harbor_root / jobs["05_multi_key_reward_json"]["job_dir"], job_dir)
    for result in job_dir.glob("*/result.json"):
        data = json.loads(result.read_text())
        rewards = data["verifier_result"]["rewards"]
        data["verifier_result"]["rewards"] = {k: v for k, v in rewards.items() if k != "reward"}
        result.write_text(json.dumps(data))
    for record in read_harbor_job(HarborReadOptions.from_flags(job_dir)).records:
        agg = record["score_aggregation"]
        assert "official_score" not in record
        assert agg["primary_score_missing_reason"] == "multi_key_reward_without_reward_key"
        assert agg["unscored_reasons"] == {"multi_key_reward_without_reward_key": 1}


# --------------------------------------------------------------------------- identity and safety


def test_path_spellings_give_identical_records(
    harbor_root: Path, jobs: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rel = jobs["06_multi_attempt"]["job_dir"]
    canonical = read_harbor_job(HarborReadOptions.from_flags(harbor_root / rel))
    (harbor_root / "a").mkdir(exist_ok=True)
    dotted = read_harbor_job(
        HarborReadOptions.from_flags(Path(str(harbor_root / "a")) / ".." / rel)
    )
    link = tmp_path / "elsewhere" / "link-to-job"
    link.parent.mkdir()
    link.symlink_to(harbor_root / rel, target_is_directory=True)
    linked = read_harbor_job(HarborReadOptions.from_flags(link))
    monkeypatch.chdir(harbor_root / rel / "..")
    relative = read_harbor_job(HarborReadOptions.from_flags(Path(Path(rel).name)))
    for other in (dotted, linked, relative):
        assert [r["run_key"] for r in other.records] == [r["run_key"] for r in canonical.records]
        assert other.records == canonical.records
        assert other.provenance == canonical.provenance
        assert other.content_digest == canonical.content_digest
    assert canonical.records[0]["run_key"] == (
        "harbor:2026-05-03__08-00-41:terminal-bench@2.0:fix-code-vulnerability:codex:openai-gpt-5"
    )


@pytest.mark.parametrize("key", SCORED_JOB_KEYS)
def test_no_absolute_paths_or_raw_text_leak(key: str, ingests: dict, harbor_root: Path) -> None:
    ingest = ingests[key]
    blob = json.dumps(
        {"r": ingest.records, "p": ingest.provenance, "w": ingest.warnings}, ensure_ascii=False
    )
    for needle in ("/srv/", "file:", str(harbor_root), "Traceback", "/logs/agent"):
        assert needle not in blob
    assert ingest.provenance["kind"] == "harbor_job"
    assert ingest.provenance["adapter_version"]
    assert ingest.provenance["files"]
    assert all(not Path(rel).is_absolute() for rel in ingest.provenance["files"])
    assert all(len(digest) == 64 for digest in ingest.provenance["files"].values())


def test_provenance_lists_every_file_read(ingests: dict, jobs: dict) -> None:
    files = ingests["08_running_job"].provenance["files"]
    job = jobs["08_running_job"]
    assert {"config.json", "lock.json", "result.json"} <= set(files)
    for trial in job["trials"]:
        name = "result.json" if trial["has_result"] else "config.json"
        assert f"{trial['dir']}/{name}" in files
    assert ingests["08_running_job"].provenance["job_id"]


def test_source_errors_are_one_line_without_paths(tmp_path: Path) -> None:
    cases = [tmp_path / "missing", tmp_path / "file.json", tmp_path / "empty"]
    cases[1].write_text("{}")
    cases[2].mkdir()
    for path in cases:
        with pytest.raises(SourceError) as info:
            read_harbor_job(HarborReadOptions.from_flags(path))
        message = str(info.value)
        assert "\n" not in message and str(tmp_path) not in message
        assert message.startswith("--harbor-job-dir")


def test_arm_options(harbor_root: Path, jobs: dict) -> None:
    two = harbor_root / jobs["16_two_agents_one_job"]["job_dir"]
    with pytest.raises(SourceError, match="ambiguous .* 2 agent/model arms"):
        read_harbor_job(HarborReadOptions.from_flags(two, arm_id="baseline"))
    with pytest.raises(SourceError, match="invalid --arm-map entry: codex"):
        read_harbor_job(HarborReadOptions.from_flags(two, arm_map=["codex"]))
    mapped = read_harbor_job(
        HarborReadOptions.from_flags(
            two, arm_map=["codex:openai/gpt-5=baseline", "terminus-2=other"]
        )
    )
    assert {r["agent"]["name"]: r["arm_id"] for r in mapped.records} == {
        "codex": "baseline",
        "terminus-2": "other",
    }
    single = read_harbor_job(
        HarborReadOptions.from_flags(
            harbor_root / jobs["12_hardened_baseline_arm"]["job_dir"], arm_id="baseline"
        )
    )
    assert single.records[0]["arm_id"] == "baseline"


def test_progress_callback(harbor_root: Path, jobs: dict) -> None:
    calls: list[tuple[int, int]] = []
    read_harbor_job(
        HarborReadOptions.from_flags(harbor_root / jobs["07_many_tasks_full_sweep"]["job_dir"]),
        progress=lambda d, t: calls.append((d, t)),
    )
    assert calls[0] == (0, 40) and calls[-1] == (40, 40)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_three_thousand_trials_ingest(harbor_root: Path, jobs: dict, tmp_path: Path) -> None:
    """loopx 0.4.8 needs 1.64 s for a 3,000-trial job; the adapter must be well below that."""
    source = harbor_root / jobs["07_many_tasks_full_sweep"]["job_dir"]
    job_dir = tmp_path / "jobs" / "big"
    job_dir.mkdir(parents=True)
    for name in ("config.json", "lock.json", "result.json"):
        shutil.copy(source / name, job_dir / name)
    trials = sorted(p for p in source.iterdir() if p.is_dir())
    results = {t.name: (t / "result.json").read_bytes() for t in trials}
    for i in range(75):
        for trial in trials:
            target = job_dir / f"{trial.name}{i:02d}"
            (target / "verifier").mkdir(parents=True)
            (target / "result.json").write_bytes(results[trial.name])
            (target / "verifier" / "reward.txt").write_text("1")
    ingest = read_harbor_job(HarborReadOptions.from_flags(job_dir))
    assert sum(r["trial_count"] for r in ingest.records) == 3000


@pytest.mark.parametrize("key", SCORED_JOB_KEYS)
def test_records_survive_compaction(key: str, ingests: dict) -> None:
    """Only spec field names are emitted, so compaction drops nothing that was not empty."""
    for record in ingests[key].records:
        compact = compact_run(record)
        assert "public_safety" not in compact
        for field in (
            "run_key",
            "run_status",
            "benchmark_id",
            "case_id",
            "score_aggregation",
            "official_task_score",
            "progress",
            "runner_job",
            "attempt_accounting",
        ):
            assert compact[field] == record[field], field
        assert compact.get("official_score") == record.get("official_score")
        assert compact["trial_count"] == record["trial_count"]
        assert compact["trials"] == record["trials"]


def test_symlinked_trial_directories_are_named_not_read(
    harbor_root: Path, jobs: dict[str, dict], tmp_path: Path
) -> None:
    """Harbor never links a trial: a link out of the job (or back into it) is not a trial."""
    job = tmp_path / "job"
    shutil.copytree(harbor_root / jobs["01_all_pass"]["job_dir"], job)
    before = read_harbor_job(HarborReadOptions.from_flags(job))
    outside = tmp_path / "elsewhere" / "stolen__AAAAAAA"
    shutil.copytree(next(p for p in job.iterdir() if (p / "result.json").is_file()), outside)
    result = json.loads((outside / "result.json").read_text(encoding="utf-8"))
    result["task_name"] = "stolen-task"
    (outside / "result.json").write_text(json.dumps(result), encoding="utf-8")
    (job / "stolen__AAAAAAA").symlink_to(outside, target_is_directory=True)
    (job / "loop__AAAAAAA").symlink_to(job, target_is_directory=True)
    after = read_harbor_job(HarborReadOptions.from_flags(job))
    assert [r["case_id"] for r in after.records] == [r["case_id"] for r in before.records]
    assert "stolen-task" not in {r["case_id"] for r in after.records}
    assert not any(rel.startswith(("stolen__", "loop__")) for rel in after.provenance["files"])
    assert "loop__AAAAAAA: a symbolic link, not read as a trial" in after.warnings
    assert "stolen__AAAAAAA: a symbolic link, not read as a trial" in after.warnings


def _trial_blocks(ingest) -> dict[str, dict]:
    return {t["trial_name"]: t for r in ingest.records for t in r["trials"] if "trial_name" in t}


def test_trial_files_are_found_with_or_without_a_readable_result(
    harbor_root: Path, jobs: dict[str, dict], tmp_path: Path
) -> None:
    """A readable result.json is opened before its trial is listed; without one the listing
    decides. Either way the same files are read and the same artifacts are seen."""
    job = tmp_path / "job"
    shutil.copytree(harbor_root / jobs["01_all_pass"]["job_dir"], job)
    names = sorted(p.name for p in job.iterdir() if p.is_dir())
    torn, no_result, artifacts = names[0], names[1], names[2]
    (job / torn / "result.json").write_bytes(b'{"task_name": ')  # read, but unusable
    (job / no_result / "result.json").unlink()  # config.json and lock.json remain
    (job / artifacts / "agent" / "trajectory.json").unlink()
    (job / artifacts / "verifier" / "reward.txt").rename(
        job / artifacts / "verifier" / "reward.json"
    )
    shutil.rmtree(job / artifacts / "artifacts")
    (job / "notes__AAAAAAA").mkdir()  # no trial file: not a trial
    (job / "notes__AAAAAAA" / "trial.log").write_text("x", encoding="utf-8")

    ingest = read_harbor_job(HarborReadOptions.from_flags(job))
    files = ingest.provenance["files"]
    assert ingest.provenance["trial_dir_count"] == len(names)
    assert f"{torn}/result.json" in files and f"{torn}/config.json" in files
    assert f"{no_result}/result.json" not in files and f"{no_result}/config.json" in files
    assert not any(rel.startswith("notes__") for rel in files)
    trials = _trial_blocks(ingest)
    assert trials[torn]["status"] == "result_corrupt"
    assert trials[no_result]["status"] == "result_missing"
    assert trials[no_result]["trial_result_present"] is False
    seen = trials[artifacts]
    assert seen["trial_result_present"] is True
    assert seen["verifier_reward_file_present"] is True  # reward.json counts too
    assert seen["trajectory_present"] is False and seen["artifact_manifest_present"] is False
    others = [t for n, t in trials.items() if n not in (torn, no_result, artifacts)]
    assert others and all(
        t["trajectory_present"] and t["artifact_manifest_present"] for t in others
    )


def test_a_trial_that_vanishes_after_the_job_listing_is_skipped(
    harbor_root: Path, jobs: dict[str, dict], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gone between the job listing and its read: neither its result nor its listing exists."""
    job = tmp_path / "job"
    shutil.copytree(harbor_root / jobs["01_all_pass"]["job_dir"], job)
    before = read_harbor_job(HarborReadOptions.from_flags(job))
    victim = sorted(p for p in job.iterdir() if p.is_dir())[0]
    real_open, real_listdir = os.open, os.listdir

    def gone(path: object, dir_fd: int | None = None) -> bool:
        name = os.fspath(path)
        if dir_fd is not None and not os.path.isabs(name):  # the reader's job-directory handle
            name = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), name)
        return str(Path(name).resolve()).startswith(str(victim.resolve()))

    def fake_open(path, flags, *args, **kwargs):  # noqa: ANN001, ANN202
        if gone(path, kwargs.get("dir_fd")):
            raise FileNotFoundError(2, "vanished", os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    def fake_listdir(path="."):  # noqa: ANN001, ANN202
        if gone(path):
            raise FileNotFoundError(2, "vanished", os.fspath(path))
        return real_listdir(path)

    monkeypatch.setattr(os, "open", fake_open)
    monkeypatch.setattr(os, "listdir", fake_listdir)
    after = read_harbor_job(HarborReadOptions.from_flags(job))
    assert after.provenance["trial_dir_count"] == before.provenance["trial_dir_count"] - 1
    assert not any(rel.startswith(f"{victim.name}/") for rel in after.provenance["files"])


# --- trial times: the one-loop spans equal the plain reading --------------


def _reference_trial_times(res: dict) -> tuple[dict, float | None, float | None]:
    """Each stamp read with fromisoformat/timestamp, each span with round(x, 3)."""

    def epoch(value: object) -> float | None:
        if not isinstance(value, str):
            return None
        try:
            dt = datetime.fromisoformat(value)
        except ValueError:
            return None
        return (dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt).timestamp()

    def span(block: object) -> float | None:
        if not isinstance(block, dict):
            return None
        start, end = epoch(block.get("started_at")), epoch(block.get("finished_at"))
        if start is None or end is None:
            return None
        return round(max(end - start, 0.0), 3)

    timing = {p: s for p in _PHASES if (s := span(res.get(p))) is not None}
    return timing, span(res), epoch(res.get("started_at"))


def _stamp_text(dt: datetime, style: str) -> str:
    if style == "naive":
        return dt.isoformat()
    if style == "z":
        return dt.isoformat() + "Z"
    if style == "offset":
        return dt.isoformat() + "+02:30"
    return dt.isoformat(timespec="seconds") + "Z"


_stamps = st.one_of(
    st.builds(
        _stamp_text,
        st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
        st.sampled_from(["naive", "z", "offset", "seconds"]),
    ),
    st.sampled_from(["", "not a stamp", "2026-13-01T00:00:00Z"]),
    st.none(),
    st.integers(),
)
_blocks = st.one_of(
    st.fixed_dictionaries({"started_at": _stamps, "finished_at": _stamps}), st.none(), st.text()
)


@settings(max_examples=500, deadline=None)
@given(
    st.fixed_dictionaries(
        {"started_at": _stamps, "finished_at": _stamps},
        optional={phase: _blocks for phase in _PHASES},
    ),
    st.booleans(),
)
def test_trial_times_match_the_plain_reading(res: dict, abut: bool) -> None:
    if abut:  # Harbor's own shape: each phase starts when the one before it ends
        previous = res.get("started_at")
        for phase in _PHASES:
            if isinstance(res.get(phase), dict):
                res[phase]["started_at"] = previous
                previous = res[phase]["finished_at"]
    assert _trial_times(res) == _reference_trial_times(res)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(min_value=0, max_value=253402300799 * 10**6),
    st.one_of(
        st.integers(min_value=0, max_value=10**7),
        st.integers(min_value=0, max_value=10**13),
        st.integers(min_value=0, max_value=10**10).map(lambda k: k * 1000 + 500),  # ties
    ),
)
def test_span_rounding_matches_round_at_microsecond_steps(start_us: int, span_us: int) -> None:
    """Every microsecond span, including exact half-milliseconds, rounds as round(x, 3) does."""
    base = datetime(1970, 1, 1, tzinfo=UTC)
    start = base + timedelta(microseconds=start_us)
    try:
        end = start + timedelta(microseconds=span_us)
    except OverflowError:
        return
    res = {"started_at": start.isoformat(), "finished_at": end.isoformat()}
    assert _trial_times(res) == _reference_trial_times(res)


# --- lookups from a handle on the job directory -------------------------------------------


@pytest.mark.skipif(not harbor_files._LOOKUP_HANDLES, reason="no O_PATH on this OS")
def test_trial_files_are_looked_up_from_the_job_directory_handle_which_is_closed_after(
    harbor_root: Path, jobs: dict[str, dict], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every trial file is opened relative to one handle on the job directory (the kernel
    walks the job's absolute path once, not for each file), and the handle does not leak."""
    job = harbor_root / jobs["01_all_pass"]["job_dir"]
    opened: list[tuple[str, object]] = []
    real_open = os.open

    def spy(path, flags, *args, **kwargs):  # noqa: ANN001, ANN202
        opened.append((os.fspath(path), kwargs.get("dir_fd")))
        return real_open(path, flags, *args, **kwargs)

    fds_before = set(os.listdir("/proc/self/fd"))
    monkeypatch.setattr(os, "open", spy)
    ingest = read_harbor_job(HarborReadOptions.from_flags(job))
    monkeypatch.undo()
    results = [(p, fd) for p, fd in opened if p.endswith("/result.json")]
    assert results and all(fd is not None and not os.path.isabs(p) for p, fd in results)
    assert len({fd for _, fd in results}) == 1
    assert set(os.listdir("/proc/self/fd")) == fds_before
    assert ingest.provenance["files"]


def test_without_a_directory_handle_the_records_are_the_same(
    harbor_root: Path, jobs: dict[str, dict], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the OS has no ``O_PATH`` the reader falls back to absolute paths: same result."""
    for key in ("01_all_pass", "16_two_agents_one_job"):
        job = harbor_root / jobs[key]["job_dir"]
        with_handle = read_harbor_job(HarborReadOptions.from_flags(job))
        with monkeypatch.context() as mp:
            mp.setattr(harbor_files, "_LOOKUP_HANDLES", False)
            without = read_harbor_job(HarborReadOptions.from_flags(job))
        assert without.records == with_handle.records
        assert without.provenance == with_handle.provenance
        assert without.warnings == with_handle.warnings


# --- lock.json slimmed right after parsing: every later read sees the same -----------------


_LOCK_VALUES = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3))
_lock_trials = st.one_of(
    st.dictionaries(
        st.sampled_from(
            ["task", "agent", "environment", "verifier", "timeout_multiplier", "skills"]
        ),
        st.one_of(
            _LOCK_VALUES,
            st.dictionaries(st.sampled_from(["name", "source", "digest", "kwargs"]), _LOCK_VALUES),
        ),
    ),
    _LOCK_VALUES,
)


@settings(max_examples=300, deadline=None)
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "trials": st.one_of(st.lists(_lock_trials, max_size=4), st.none(), st.text()),
            "harbor": st.one_of(
                st.fixed_dictionaries({}, optional={"version": _LOCK_VALUES, "x": _LOCK_VALUES}),
                _LOCK_VALUES,
            ),
            "retry": _LOCK_VALUES,
        },
    )
)
def test_slim_lock_reads_as_the_whole_lock(lock: dict) -> None:
    """The plan, each slot's lock (its truth value and every field later steps read) and the
    Harbor version are the same whether read from the parsed lock or its slimmed copy."""
    slim = harbor_plan._slim_lock(lock)

    def reads(doc: dict) -> list:
        out: list = [harbor_values._dict(doc.get("harbor")).get("version")]
        for slot in harbor_plan._planned_from_lock(doc):
            trial = slot.lock or {}
            out.append(
                (
                    slot[:4],
                    bool(slot.lock),
                    harbor_values._dict(trial.get("task")).get("digest"),
                    harbor_values._dict(trial.get("agent")),
                    harbor_values._multipliers(trial),
                    tuple(map(trial.get, harbor_values._MULTIPLIERS)),
                )
            )
        return out

    assert reads(slim) == reads(lock)


@pytest.mark.parametrize(
    ("path", "segment"),
    [
        ("tasks/build-cython-ext", "build-cython-ext"),
        ("build-cython-ext", "build-cython-ext"),
        ("a//b//", "b"),
        ("C:\\tasks\\fix-git\\", "fix-git"),
        ("x\\/y/", "y"),
        ("/", None),
        ("", None),
        (7, None),
    ],
)
def test_a_task_path_names_its_last_segment(path: object, segment: str | None) -> None:
    """lock.json plans a task by its config's path when it has no name: the last segment,
    whichever separators the path uses (docs/formats/harbor.md §5.3)."""
    assert harbor_values._last_segment(path) == segment
