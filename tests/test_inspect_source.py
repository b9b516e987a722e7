"""``benchmark run inspect`` against Inspect AI's own figures (issue 35).

The logs are real Inspect runs (``tools/make_inspect_logs.py``); every number benchledger
records is checked against what Inspect computed or reads from the same logs: per-sample
scores (Inspect's ``value_to_float``), epochs, per-model means (the metrics Inspect wrote into
``results``), error counts and tokens (``stats.model_usage``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from tests.support_harbor_ingest_cli import cli, domain_counts
from tests.support_inspect import copy_logs, ingest, inspect_float, inspect_logs

pytest.importorskip("inspect_ai", reason="the `inspect` extra (part of `test`) is not installed")


def _sqlite(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'ledger.db'}"


def _by_key(payload: dict) -> dict[str, dict]:
    return {run["run_key"]: run for run in payload["benchmark_runs"]}


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, list, Path]:
    tmp = tmp_path_factory.mktemp("inspect")
    root = copy_logs(tmp, "main", "cancelled", "started", "retry")
    call = ingest(["--log-dir", str(root)], db=_sqlite(tmp), runtime_root=tmp / "rr")
    assert call.code == 0, call.result.output
    return call.payload, inspect_logs(root), tmp


def test_every_sample_score_and_epoch_is_inspects(ingested) -> None:
    payload, logs, _ = ingested
    runs = _by_key(payload)
    checked = 0
    for log in logs:
        if log.status != "success" or log.eval.task == "flaky" and log.status != "success":
            continue
        epochs = defaultdict(list)
        for sample in log.samples:
            epochs[str(sample.id)].append(sample)
        for sample_id, samples in epochs.items():
            run = runs[f"inspect:{log.eval.task_id}:{sample_id}"]
            assert run["trial_count"] == len(samples) == log.eval.config.epochs
            assert run["benchmark_id"] == f"{log.eval.task}@{log.eval.task_version}"
            assert run["agent"]["model"] == log.eval.model
            trials = sorted(run["trials"], key=lambda t: t["attempt_index"])
            for trial, sample in zip(trials, sorted(samples, key=lambda s: s.epoch), strict=True):
                expected = {k: inspect_float(v.value) for k, v in (sample.scores or {}).items()}
                assert trial.get("reward", {}) == expected
                first = log.eval.scorers[0].name
                assert trial.get("primary_reward") == expected.get(first)
                assert ("failure_cause" in trial) == (sample.error is not None)
                checked += 1
    assert checked == 4 * 12 + 12  # four main evals and the retried one


@pytest.mark.parametrize("scorer", ["verdict", "points"])
def test_per_model_means_are_inspects_metric(tmp_path: Path, scorer: str) -> None:
    """Inspect reduces epochs by their mean, then takes the metric over samples; an errored
    epoch is left out, not counted as zero. The record's score is that per-sample mean."""
    root = copy_logs(tmp_path, "main")
    call = ingest(
        ["--log-dir", str(root), "--scorer", scorer],
        db=_sqlite(tmp_path), runtime_root=tmp_path / "rr", execute=False,
    )  # fmt: skip
    assert call.code == 0, call.result.output
    per_eval = defaultdict(list)
    for run in call.payload["benchmark_runs"]:
        per_eval[run["run_key"].split(":")[1]].append(run["official_score"])
    logs = inspect_logs(root)
    assert len(logs) == 4
    for log in logs:
        (result,) = [s for s in log.results.scores if s.name == scorer]
        (metric,) = result.metrics.values()
        mine = per_eval[log.eval.task_id]
        assert len(mine) == len(log.eval.dataset.sample_ids)
        assert sum(mine) / len(mine) == pytest.approx(metric.value, abs=1e-12)


def test_error_counts_and_tokens_are_inspects(ingested) -> None:
    payload, logs, _ = ingested
    per_eval = defaultdict(list)
    for run in payload["benchmark_runs"]:
        per_eval[run["run_key"].split(":")[1]].append(run)
    for log in logs:
        if log.status not in ("success", "cancelled"):
            continue
        runs = per_eval[log.eval.task_id]
        errored = sum(1 for s in log.samples if s.error is not None)
        assert (
            sum(
                r["progress"]["n_errored_trials"] + r["progress"]["n_cancelled_trials"]
                for r in runs
            )
            == errored
        )
        for key in ("input_tokens", "output_tokens"):
            per_sample = sum(
                getattr(u, key) for s in log.samples for u in (s.model_usage or {}).values()
            )
            mine = sum(r.get("metrics", {}).get(key, 0) for r in runs)
            assert mine == per_sample, (log.location, key)
            if log.eval.task != "flaky":  # a retry's stats also count the failed run's calls
                stats = sum(getattr(u, key) for u in log.stats.model_usage.values())
                assert mine == stats, (log.location, key)
        coverage = sum(r["metrics_coverage"]["attempts_with_usage"] for r in runs)
        assert coverage == sum(1 for s in log.samples if s.model_usage)


def test_status_cancelled_started_and_retried(ingested) -> None:
    payload, logs, _ = ingested
    by_task = defaultdict(set)
    for run in payload["benchmark_runs"]:
        by_task[run["run_key"].split(":")[1]].add(run["run_status"])
    status = {log.eval.task_id: log.status for log in logs}
    for log in logs:
        if log.status == "cancelled":
            assert by_task[log.eval.task_id] == {"cancelled"}
        if log.status == "started":
            assert log.eval.task_id not in by_task  # no sample yet: nothing is a run
    retried = [log for log in logs if log.eval.task == "flaky"]
    assert sorted(log.status for log in retried) == ["error", "success"]
    assert retried[0].eval.task_id == retried[1].eval.task_id
    assert by_task[retried[0].eval.task_id] == {"completed"}  # the retry stands for the eval
    assert status  # read
    assert "inspect_log_superseded_by_retry" in json.dumps(payload)


def test_no_missing_score_is_a_zero(ingested) -> None:
    payload, _, _ = ingested
    errored = [
        t for run in payload["benchmark_runs"] for t in run["trials"] if t.get("failure_cause")
    ]
    assert errored
    assert all("primary_reward" not in t and "reward" not in t for t in errored)
    cancelled = [r for r in payload["benchmark_runs"] if r["run_status"] == "cancelled"]
    unscored = [r for r in cancelled if r["score_aggregation"]["scored_attempt_count"] == 0]
    assert unscored and all("official_score" not in r for r in unscored)
    assert all(r["official_score_status"] != "completed" for r in cancelled)


def test_reingest_is_idempotent_on_both_backends(tmp_path: Path, db_url: str) -> None:
    root = copy_logs(tmp_path, "main")
    first = ingest(["--log-dir", str(root)], db=db_url, runtime_root=tmp_path / "rr")
    assert first.code == 0, first.result.output
    counts = domain_counts(db_url)
    assert counts["run_built"] == 16
    again = ingest(["--log-dir", str(root)], db=db_url, runtime_root=tmp_path / "rr")
    assert again.code == 0 and again.payload["already_recorded"] is True
    assert domain_counts(db_url) == counts


def test_each_run_built_names_only_the_logs_its_record_was_read_from(
    tmp_path: Path, db_url: str
) -> None:
    """A record's ``run_built`` provenance names its own log, or a retried eval's logs (the
    kept retry and the failed log it superseded), not every log of the directory; what is
    about the whole ingest stays (docs/formats/inspect.md §3)."""
    root = copy_logs(tmp_path, "main", "retry")
    call = ingest(["--log-dir", str(root)], db=db_url, runtime_root=tmp_path / "rr")
    assert call.code == 0, call.result.output
    logs_of: dict[str, dict[str, str]] = defaultdict(dict)  # task id -> path -> status
    for log in inspect_logs(root):
        path = Path(log.location.removeprefix("file://")).relative_to(root).as_posix()
        logs_of[log.eval.task_id][path] = log.status
    assert len(logs_of) == 5 and sum(map(len, logs_of.values())) == 6
    listed = cli(
        ["events", "list", "--type", "run_built", "--payload", "--format", "json"], db=db_url
    )
    assert listed.code == 0, listed.result.output
    seen: set[str] = set()
    for event in listed.payload["events"]:
        provenance = event["payload"]["provenance"]
        task_id = event["payload"]["run_key"].split(":")[1]
        own = logs_of[task_id]
        assert set(provenance["files"]) == set(own)
        assert {e["relative_path"]: e["status"] for e in provenance["logs"]} == own
        assert all(e["task_id"] == task_id for e in provenance["logs"])
        assert [e["kept"] for e in provenance["logs"]].count(True) == 1
        assert provenance["source_file_count"] == 6
        assert provenance["superseded_log_count"] == 1  # about the whole ingest
        assert provenance["kind"] == "inspect_logs"
        assert Path(provenance["local_root"]) == root.resolve()
        seen.add(task_id)
    assert seen == set(logs_of)


def test_one_log_file_and_the_dry_run_default(tmp_path: Path) -> None:
    root = copy_logs(tmp_path, "main")
    (log,) = sorted(root.glob("main/*.json"))[:1]
    db = _sqlite(tmp_path)
    call = ingest(["--log", str(log)], db=db, runtime_root=tmp_path / "rr", execute=False)
    assert call.code == 0, call.result.output
    assert call.payload["dry_run"] is True and len(call.payload["benchmark_runs"]) == 4
    assert domain_counts(db) == {}  # nothing appended


def test_without_the_extra_one_line_says_what_to_install(tmp_path: Path, monkeypatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # import fails as if absent
    root = copy_logs(tmp_path, "main")
    call = ingest(["--log-dir", str(root)], db=_sqlite(tmp_path), runtime_root=tmp_path / "rr")
    assert call.code != 0
    assert call.stderr.splitlines() == [
        "error: benchmark run inspect needs Inspect AI: pip install 'benchledger[inspect]'"
    ]
    assert "Traceback" not in call.result.output
    assert domain_counts(_sqlite(tmp_path)) == {}


@pytest.mark.parametrize(
    "value", ["C", "I", "P", "N", 0, 1, 0.25, 2.5, "0.75", "yes", "No", "TRUE", True, False]
)
def test_scores_map_to_floats_as_inspect_maps_them(value: object) -> None:
    from benchledger.ledger.sources.inspect.reading import score_to_float

    assert score_to_float(value) == inspect_float(value)


@pytest.mark.parametrize("value", ["maybe", "", [1, 0], {"a": 1}, None, float("nan")])
def test_what_inspect_would_count_as_zero_is_missing_here(value: object) -> None:
    """Inspect's ``value_to_float`` turns what it cannot read into 0 (with a warning); a
    missing score must never become a zero in the ledger."""
    from benchledger.ledger.sources.inspect.reading import score_to_float

    assert score_to_float(value) is None


def test_harbor_and_inspect_runs_of_one_terminal_bench_task_compare_in_one_call(
    tmp_path: Path,
) -> None:
    """The Inspect eval of Terminal-Bench 2.0 (task ``terminal-bench`` version ``2.0``, the
    Harbor task names as sample ids) lines up with the Harbor job of the same tasks: one
    ``compare`` pairs the two arms case by case."""
    from tests.conftest import FIXTURES_DIR
    from tests.support_harbor_ingest_cli import cli

    db, rr = _sqlite(tmp_path), tmp_path / "rr"
    ledger = str(tmp_path / "benchmark-run-ledger.json")
    job = FIXTURES_DIR / "harbor/tb2-pilot-20260502/jobs/2026-05-02__09-14-07"
    harbor = cli(
        ["benchmark", "run", "terminal-bench", "--goal-id", "g", "--harbor-job-dir", str(job),
         "--update-run-ledger", "--run-ledger-path", ledger, "--no-global-sync", "--execute",
         "--format", "json"],
        db=db, runtime_root=rr,
    )  # fmt: skip
    assert harbor.code == 0, harbor.result.output
    root = copy_logs(tmp_path, "terminal-bench")
    inspect_call = ingest(["--log-dir", str(root)], db=db, runtime_root=rr)
    assert inspect_call.code == 0, inspect_call.result.output
    harbor_cases = {r["case_id"] for r in harbor.payload["benchmark_runs"]}
    inspect_cases = {r["case_id"] for r in inspect_call.payload["benchmark_runs"]}
    assert inspect_cases == harbor_cases
    assert (
        {r["benchmark_id"] for r in inspect_call.payload["benchmark_runs"]}
        == {r["benchmark_id"] for r in harbor.payload["benchmark_runs"]}
        == {"terminal-bench@2.0"}
    )

    compare = cli(
        ["compare", "--benchmark-id", "terminal-bench@2.0", "--run-ledger-path", ledger,
         "--bootstrap", "0", "--format", "json"],
        db=db,
    )  # fmt: skip
    assert compare.code == 0, compare.result.output
    doc = compare.payload["compare"]
    arms = {arm["arm_id"]: arm for arm in doc["arms"]}
    assert set(arms) == {"codex__openai-gpt-5", "codex__mockllm-model"}
    assert doc["paired"][0]["n_pairs"] == len(harbor_cases)
    assert doc["comparability"]["ok"] is True
    assert doc["comparability"]["runners"] == {
        "codex__mockllm-model": ["inspect"],
        "codex__openai-gpt-5": ["harbor"],
    }
    markdown = cli(
        ["compare", "--benchmark-id", "terminal-bench@2.0", "--run-ledger-path", ledger,
         "--bootstrap", "0"],
        db=db,
    )  # fmt: skip
    assert (
        "- runner differs: codex__mockllm-model: inspect; codex__openai-gpt-5: harbor"
        in markdown.result.stdout
    )
    (log,) = inspect_logs(root)
    assert log.eval.task == "inspect_harbor/terminal_bench_2_0"  # inspect-harbor's naming
    assert log.eval.dataset.name is None
    metric = log.results.scores[0].metrics["accuracy"]  # Inspect's mean of the epoch means
    assert arms["codex__mockllm-model"]["mean"] == pytest.approx(metric.value, abs=1e-12)

    def sources(call) -> set:  # noqa: ANN001
        return {t.get("source") for r in call.payload["benchmark_runs"] for t in r["trials"]}

    assert sources(inspect_call) == sources(harbor) == {"terminal-bench"}
