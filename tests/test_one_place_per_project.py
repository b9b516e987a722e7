"""One place per project (issue 34): two projects on one machine with the same goal id keep
their own store, goal run files and ledger; global options work after the subcommand; errors
name what exists."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support_cli import invoke_json
from tests.support_harbor_ingest_cli import copy_job, load_manifest


def _run(*args: str) -> tuple[int, Any, str]:
    return invoke_json(*args)


@pytest.fixture
def job(fixtures_dir: Path, tmp_path: Path) -> Path:
    manifest = load_manifest(fixtures_dir)
    return copy_job(fixtures_dir, manifest, manifest["jobs"][0], tmp_path / "src")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("BENCHLEDGER_DATABASE_URL", raising=False)
    monkeypatch.delenv("BENCHLEDGER_REGISTRY", raising=False)
    return home


def _ingest(job: Path, *extra: str) -> dict[str, Any]:
    code, payload, err = _run(
        "benchmark", "run", "terminal-bench", "--goal-id", "tb2", "--harbor-job-dir", str(job),
        "--update-run-ledger", "--execute", *extra,
    )  # fmt: skip
    assert code == 0, err
    return payload


def _verify_files(project: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.chdir(project)
    code, payload, err = _run("verify", "--files")
    assert payload is not None, err
    return payload


def test_two_projects_with_one_goal_id_stay_independent(
    tmp_path: Path, job: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for project in (a, b):
        (project / ".benchledger").mkdir(parents=True)
    # interleaved: A, B, A again (with a job B never saw)
    monkeypatch.chdir(a)
    _ingest(job)
    monkeypatch.chdir(b)
    _ingest(job)
    b_index = b / ".benchledger" / "goals" / "tb2" / "runs" / "index.jsonl"
    b_before = b_index.read_bytes()
    monkeypatch.chdir(a)
    _ingest(job, "--run-ledger-path", "second.json")

    for project in (a, b):
        runs = project / ".benchledger" / "goals" / "tb2"
        assert (runs / "runs" / "index.jsonl").is_file()
        payload = _verify_files(project, monkeypatch)
        files = payload["verify"]["files"]
        assert files and all(f["status"] == "match" for f in files), files
        assert payload["ok"] is True
    assert b_index.read_bytes() == b_before  # A's later ingest never touched B's run index
    assert list(home.iterdir()) == []  # nothing under the home directory by default


def test_global_options_after_the_subcommand(
    tmp_path: Path, job: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    db = f"sqlite:///{tmp_path / 'elsewhere' / 'ledger.db'}"
    code, payload, err = _run(
        "benchmark", "run", "terminal-bench", "--goal-id", "tb2", "--harbor-job-dir", str(job),
        "--update-run-ledger", "--execute", "--db", db, "--runtime-root", "rt",
    )  # fmt: skip
    assert code == 0, err
    assert (tmp_path / "elsewhere" / "ledger.db").is_file()
    assert not (tmp_path / ".benchledger" / "ledger.db").exists()
    assert (tmp_path / "rt" / "goals" / "tb2" / "runs" / "index.jsonl").is_file()

    code, payload, err = _run("events", "list", "--db", db)
    assert code == 0, err
    assert payload["count"] > 0
    code, payload, err = _run("compare", "--benchmark-id", "terminal-bench", "--db", db)
    assert code == 0, err
    assert payload["compare"]["arms"]


@pytest.fixture
def ingested(tmp_path: Path, job: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """The payload of one ingest into a fresh project at ``tmp_path`` (the working directory)."""
    (tmp_path / ".benchledger").mkdir()
    monkeypatch.chdir(tmp_path)
    return _ingest(job)


@pytest.fixture
def run_id(ingested: dict) -> str:
    """The id of the first run of that ingest."""
    return ingested["benchmark_run_ledger"]["entries"][0]["run_id"]


def test_compare_names_the_ledger_and_what_it_holds(ingested: dict) -> None:
    code, _payload, err = _run("compare", "--benchmark-id", "nope")
    assert code == 1
    assert "in ledger benchmark-run-ledger.json (benchmarks in it: terminal-bench@" in err

    code, _payload, err = _run("compare", "--benchmark-id", "terminal-bench",
                               "--run-ledger-path", "other.json")  # fmt: skip
    assert code == 1
    assert "ledgers in this store: benchmark-run-ledger.json" in err
    assert "--run-ledger-path or --ledger-id" in err


def test_later_commands_find_the_ledger_the_store_knows(
    tmp_path: Path, job: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo records into example-out/…; the quickstart's next commands name no ledger and
    still read and write that one (before: a second, empty ledger in the project)."""
    (tmp_path / ".benchledger").mkdir()
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    _ingest(job, "--run-ledger-path", "example-out/benchmark-run-ledger.json")
    monkeypatch.chdir(tmp_path / "sub")  # from a subdirectory, too
    payload = _ingest(job)  # no --run-ledger-path
    assert not (tmp_path / "benchmark-run-ledger.json").exists()
    assert not (tmp_path / "sub" / "benchmark-run-ledger.json").exists()
    assert payload.get("already_recorded") is True  # the same ledger: the same idempotency key
    code, payload, err = _run("compare", "--benchmark-id", "terminal-bench@2.0")
    assert code == 0, err
    code, payload, err = _run("benchmark", "run-ledger-aggregate", "--benchmark-id",
                              "terminal-bench@2.0")  # fmt: skip
    assert code == 0, err
    assert payload["aggregate"]["canonical_covered"] == 5  # before: an empty aggregate

    # a second ledger: a command naming none lists both and says which flag picks one
    monkeypatch.chdir(tmp_path)
    _ingest(job, "--run-ledger-path", "other.json")
    code, _payload, err = _run("compare", "--benchmark-id", "terminal-bench@2.0")
    assert code == 1
    assert "holds 2 ledgers (example-out/benchmark-run-ledger.json, other.json)" in err
    assert "--run-ledger-path PATH or --ledger-id ID" in err


def test_the_same_attempts_enter_a_goal_history_once(
    db_url: str, tmp_path: Path, job: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Re-ingesting a job with another ledger path, or adding --update-run-ledger later, used
    to append every run to the goal's history again (``goal_runs_v`` showed each case twice)."""
    (tmp_path / ".benchledger").mkdir()
    monkeypatch.chdir(tmp_path)
    prefix = ["--db", db_url]

    def ingest(*extra: str) -> dict[str, Any]:
        code, payload, err = _run(
            *prefix, "benchmark", "run", "terminal-bench", "--goal-id", "tb2",
            "--harbor-job-dir", str(job), "--execute", *extra,
        )  # fmt: skip
        assert code == 0, err
        return payload

    first = ingest()  # history only
    cases = len(first["benchmark_runs"])
    assert first["appended_count"] == cases
    later = ingest("--update-run-ledger")  # the ledger added later
    assert later["appended_count"] == 0 and later["already_in_history"] == cases
    assert later["benchmark_run_ledger"]["upserted_count"] == cases
    other = ingest("--update-run-ledger", "--run-ledger-path", "other.json")
    assert other["appended_count"] == 0
    code, payload, err = _run(*prefix, "sql", "SELECT count(*) AS n FROM goal_runs_v")
    assert code == 0, err
    assert payload["rows"] == [[cases]]
    runs = tmp_path / ".benchledger" / "goals" / "tb2" / "runs"
    assert len((runs / "index.jsonl").read_text(encoding="utf-8").splitlines()) == cases
    # the ledger rows point at the history records that exist (the first ingest's stems)
    text = (tmp_path / "benchmark-run-ledger.json").read_text(encoding="utf-8")
    refs = set(re.findall(r'"history_ref": "goals/tb2/runs/([^"]+)"', text))
    assert len(refs) == cases and all((runs / ref).is_file() for ref in refs), refs
    code, payload, err = _run(*prefix, "verify", "--files")
    assert code == 0 and payload["ok"] is True, err


def test_events_list_names_event_types_and_says_when_it_is_cut(ingested: dict) -> None:
    code, _payload, err = _run("events", "list", "--type", "ledger_upsert")
    assert code == 1
    assert "unknown event type ledger_upsert (event types: " in err
    assert "ledger_upserted" in err

    code, everything, err = _run("events", "list")
    total = everything["count"]
    assert code == 0 and total > 3 and "truncated" not in everything
    code, cut, err = _run("events", "list", "--limit", "3")
    assert code == 0 and cut["count"] == 3 and cut["truncated"] is True
    assert "next page: --from 4" in cut["note"]
    from benchledger.commands.cli import cli as root

    shown = CliRunner().invoke(root, ["events", "list", "--limit", "3"]).stdout
    assert "- note: the first 3 matching events are shown and more follow" in shown
    code, exact, err = _run("events", "list", "--limit", str(total))
    assert code == 0 and "truncated" not in exact


def test_run_ledger_archive_by_run_id(run_id: str) -> None:
    code, archived, err = _run(
        "benchmark", "run-ledger-archive", "--benchmark-id", "terminal-bench@2.0",
        "--reason", "bad image", "--run-id", run_id, "--execute",
    )  # fmt: skip
    assert code == 0, err
    assert archived["archive"]["newly_archived_run_count"] == 1
    assert archived["archive"]["archived_samples"][0]["run_id"] == run_id


def test_run_ledger_archive_by_run_id_alone_names_the_benchmark(run_id: str) -> None:
    archive = ("benchmark", "run-ledger-archive", "--reason", "bad image")

    code, archived, err = _run(*archive, "--run-id", run_id, "--execute")
    assert code == 0, err
    assert archived["archive"]["benchmark_id"] == "terminal-bench@2.0"
    assert archived["archive"]["archived_samples"][0]["run_id"] == run_id
    code, restored, err = _run(
        "benchmark", "run-ledger-restore", "--reason", "image fixed", "--run-id", run_id,
        "--execute",
    )  # fmt: skip
    assert code == 0, err
    assert restored["archive"]["restored_run_count"] == 1

    code, _payload, err = _run(*archive, "--run-id", "no-such-run", "--execute")
    assert code == 1 and err.count("\n") == 1
    assert "run id no-such-run is not a run of " in err
    code, _payload, err = _run(*archive, "--case-id", "x", "--execute")
    assert code == 2 and "Missing option '--benchmark-id' (or '--run-id'" in err
