"""``compare`` reads a dozen keys of each row instead of the whole row: the same numbers.

``projections.reports.compare.rows.read_compare_rows`` asks the database for ``ROW_KEYS`` only (and
for the whole row when ``needs_judgement`` says the ledger rules must judge it);
``read_whole_rows`` parses every row whole, as compare did before. On stores filled through
the CLI with Harbor, BenchFlow and imported loopx rows, archived runs and numbers whose text
matters (``0.30000000000000004``, ``1e-07``, ``1e20``), the two readings must give the same
values key by key, the same case values and the same document. PostgreSQL reads whole rows both
ways (its ``json`` operators parse a row again at each key: slower than the whole row).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from benchledger.ledger.core.ledger_target import resolve_ledger_target
from benchledger.ledger.requests.compare import CompareRequest
from benchledger.ledger.store.connection import scalars
from benchledger.ledger.store.database import open_database, resolve_location
from benchledger.projections.reports.compare.document import (
    ROW_KEYS,
    arm_results,
    build_compare,
    needs_judgement,
)
from benchledger.projections.reports.compare.rows import read_compare_rows, read_whole_rows
from tests.support_harbor_ingest_cli import cli, copy_job, ingest, load_manifest
from tests.test_compare import ledger as hand_made_ledger

# Rewards the crafted arm gives each task of 06_multi_attempt, attempt by attempt; the odd
# ones are numbers whose stored text a reader must keep (a rewrite would change the float).
ODD = {
    "fix-code-vulnerability": [1.0, 0.30000000000000004, 1.0],
    "nginx-request-logging": [1e-07, 1.0, 0.0],
    "sanitize-git-repo": [0.1, 0.2, 0.7],
    "vulnerable-secret": [0.0, 1e-300, 0.0],
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cwd = tmp_path / "project"
    (cwd / ".benchledger").mkdir(parents=True)
    monkeypatch.chdir(cwd)
    return cwd


def _odd_arm(record: dict[str, Any]) -> dict[str, Any]:
    run = record["benchmark_run"]
    rewards = ODD[run["case_id"]]
    for trial in run["trials"]:
        reward = rewards[trial["attempt_index"] - 1]
        trial.update(reward={"reward": reward}, primary_reward=reward, passed=reward == 1.0)
    run["official_score"] = sum(rewards) / len(rewards)
    run["official_task_score"].update(value=run["official_score"], passed=False)
    run["score_aggregation"]["passed_attempt_count"] = sum(1 for r in rewards if r == 1.0)
    cost = 1e20 if run["case_id"] == "vulnerable-secret" else 1e-07  # jsonb would make 1e20 an int
    run["metrics"] = {"input_tokens": 10**6, "output_tokens": 7, "cost_usd": cost}
    run["job_name"] = run["run_key"] = f"odd-{run['case_id']}"
    return run


@pytest.fixture
def filled(db_url: str, fixtures_dir: Path, tmp_path: Path, project: Path) -> str:
    runtime = tmp_path / "rt"
    manifest = load_manifest(fixtures_dir)
    for key, arm in (("06_multi_attempt", "base"), ("12_hardened_baseline_arm", "hard")):
        job = next(j for j in manifest["jobs"] if j["key"] == key)
        copied = copy_job(fixtures_dir, manifest, job, tmp_path / f"src-{key}")
        done = ingest(copied, db=db_url, runtime_root=runtime, extra=("--arm-id", arm))
        assert done.code == 0, done.result.output
    query = "SELECT record FROM goal_runs_v WHERE record LIKE '%fix-code-vulnerability%' "
    query += "OR record LIKE '%nginx-request%' OR record LIKE '%sanitize-git%' "
    query += "OR record LIKE '%vulnerable-secret%'"
    records = cli(["--format", "json", "sql", query], db=db_url).payload["rows"]
    runs = [_odd_arm(json.loads(r[0])) for r in records]
    batch = tmp_path / "odd.json"
    batch.write_text(json.dumps({"schema_version": "benchmark_run_batch_v0",
                                 "benchmark_runs": runs}), encoding="utf-8")  # fmt: skip
    upsert = ["benchmark", "run-ledger-upsert", "--benchmark-run-json", str(batch),
              "--arm-id", "odd", "--execute"]  # fmt: skip
    assert cli(upsert, db=db_url).code == 0
    archive = ["benchmark", "run-ledger-archive", "--benchmark-id", "terminal-bench@2.0",
               "--arm-id", "odd", "--case-id", "sanitize-git-repo", "--reason", "rerun",
               "--execute"]  # fmt: skip
    assert cli(archive, db=db_url).code == 0
    for case, arm in (("01_pass", "x"), ("06_verifier_crash", "x"), ("03_partial_reward", "y")):
        root = fixtures_dir / "benchflow" / "cases" / case / "jobs"
        args = ["benchmark", "run", "skillsbench", "--goal-id", "sb",
                "--skillsbench-result-root", str(root), "--arm-id", arm,
                "--update-run-ledger", "--execute"]  # fmt: skip
        assert cli(args, db=db_url, runtime_root=runtime).code == 0
    imported = project / "imported.json"
    imported.write_bytes((fixtures_dir / "loopx-ledger" / "benchmark-run-ledger.json").read_bytes())
    done = cli(["import", "loopx-ledger", str(imported), "--execute"], db=db_url)
    assert done.code == 0, done.result.output
    return db_url


def _stores(db: str) -> list[tuple[str, str]]:
    """(ledger id, benchmark id) for every ledger and benchmark of the store, plus bare names."""
    database = open_database(resolve_location(db))
    try:
        with database.connect() as conn:
            found = conn.execute("SELECT DISTINCT ledger_id, benchmark_id FROM rm_ledger_rows")
            pairs = sorted({(lid, bid) for lid, bid in found})
    finally:
        database.dispose()
    bare = {(lid, bid.partition("@")[0]) for lid, bid in pairs if "@" in bid}
    return sorted({*pairs, *bare})


def _both(db: str, ledger_id: str, benchmark_id: str) -> tuple[list[dict], list[dict]]:
    database = open_database(resolve_location(db))
    try:
        with database.connect() as conn:
            return (
                read_compare_rows(conn, ledger_id, benchmark_id),
                read_whole_rows(conn, ledger_id, benchmark_id),
            )
    finally:
        database.dispose()


def _text(value: Any) -> bytes:
    """Exact JSON text: 1 and 1.0 differ here, unlike under ``==``."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def test_each_row_holds_the_stored_values_of_the_keys_compare_reads(filled: str) -> None:
    pairs = _stores(filled)
    assert len({lid for lid, _ in pairs}) >= 2  # the project ledger and the imported one
    whole_only = filled.startswith("postgresql")  # PostgreSQL reads whole rows
    judged = projected = 0
    for ledger_id, benchmark_id in pairs:
        light, whole = _both(filled, ledger_id, benchmark_id)
        assert len(light) == len(whole) > 0
        if whole_only:
            assert _text(light) == _text(whole)
            continue
        by_id = {row["run_id"]: row for row in whole}
        for row in light:
            full = by_id[row["run_id"]]
            if needs_judgement(full):
                judged += 1
                assert _text(row) == _text(full)
            else:
                projected += 1
                expected = {k: full[k] for k in ROW_KEYS if full.get(k) is not None}
                assert _text(row) == _text(expected)
    assert whole_only or (judged and projected)  # both paths ran


def test_odd_numbers_keep_their_value(filled: str) -> None:
    ledger_id = resolve_ledger_target(None).ledger_id
    light, _ = _both(filled, ledger_id, "terminal-bench@2.0")
    rewards = {
        item["primary_reward"]
        for row in light
        if row.get("arm_id") == "odd"
        for item in row.get("attempt_outcomes", [])
    }
    assert {0.30000000000000004, 1e-07, 1e-300} <= rewards
    costs = [row["usage"]["cost_usd"] for row in light if row.get("arm_id") == "odd"]
    assert sorted(costs) == [1e-07, 1e-07, 1e-07, 1e20]
    assert all(type(cost) is float for cost in costs)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"metric": "pass", "per_case": "first"},
        {"metric": "pass", "per_case": "pass@k:2"},
        {"per_case": "best-of"},
        {"per_case": "latest"},
    ],
)
def test_case_values_and_documents_match_the_whole_rows(filled: str, options: dict) -> None:
    for ledger_id, benchmark_id in _stores(filled):
        light, whole = _both(filled, ledger_id, benchmark_id)
        request = CompareRequest(benchmark_id=benchmark_id, allow_incomparable=True, **options)
        try:
            expected = arm_results(whole, request)
        except Exception as err:  # noqa: BLE001 - the same refusal is expected below
            with pytest.raises(type(err), match="."):
                arm_results(light, request)
            continue
        got = arm_results(light, request)
        assert _cases(got[2]) == _cases(expected[2])
        assert _text(build_compare(light, request)) == _text(build_compare(whole, request))


def _cases(results: list) -> list:
    return [
        (
            r.arm_id,
            sorted(r.runs_excluded.items()),
            sorted(r.attempts_unscored.items()),
            r.runs_without_attempt_detail,
            [(case, e.value, e.attempts, e.excluded, len(e.rows)) for case, e in r.cases.items()],
        )
        for r in results
    ]


class _OnlyRowKeys(dict):
    """A row that fails the test when compare reads a key outside ``ROW_KEYS``."""

    def get(self, key: str, default: Any = None) -> Any:
        assert key in ROW_KEYS, key
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        assert key in ROW_KEYS, key
        return super().__getitem__(key)


def test_compare_reads_no_other_key_of_a_row_it_does_not_judge() -> None:
    rows = hand_made_ledger()
    for row in rows:
        row["usage"] = {"input_tokens": 5, "output_tokens": 1, "cost_usd": 0.5}
        row["failure_class"] = "none"  # present, but not read
    guarded = [row if needs_judgement(row) else _OnlyRowKeys(row) for row in rows]
    assert any(isinstance(row, _OnlyRowKeys) for row in guarded)
    for options in ({}, {"metric": "pass", "per_case": "pass@k:2"}):
        request = CompareRequest(benchmark_id="tb@2", **options)
        assert build_compare(guarded, request) == build_compare(rows, request)


def test_rows_needing_judgement() -> None:
    base = hand_made_ledger()[0]
    assert not needs_judgement(base)  # current rules, countable: decided by the stored flag
    assert needs_judgement({k: v for k, v in base.items() if k != "rules_version"})
    assert not needs_judgement({**base, "archive_state": "archived", "rules_version": None})
    uncountable = {**base, "official_score_countable": False}
    assert needs_judgement(uncountable)  # why not: the bucket the rules give it
    assert not needs_judgement({**uncountable, "status": "running"})


def test_only_the_benchmark_asked_for(filled: str) -> None:
    ledger_id = resolve_ledger_target(None).ledger_id
    light, whole = _both(filled, ledger_id, "skillsbench")
    assert {r["benchmark_id"] for r in light} == {r["benchmark_id"] for r in whole}
    assert all(r["benchmark_id"].startswith("skillsbench@") for r in light)
    database = open_database(resolve_location(filled))
    try:
        with database.connect() as conn:
            query = "SELECT run_id FROM rm_ledger_rows WHERE ledger_id = ? AND benchmark_id = ?"
            runs = scalars(conn.execute(query, (ledger_id, "terminal-bench@2.0")))
    finally:
        database.dispose()
    assert len(_both(filled, ledger_id, "terminal-bench@2.0")[0]) == len(runs) > 0


def test_an_sqlite_without_the_arrow_operator_reads_whole_rows(
    filled: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not filled.startswith("sqlite"):
        pytest.skip("the fallback concerns SQLite libraries older than 3.38")
    import sqlite3

    ledger_id = resolve_ledger_target(None).ledger_id
    monkeypatch.setattr(sqlite3, "sqlite_version_info", (3, 37, 2))
    light, whole = _both(filled, ledger_id, "terminal-bench@2.0")
    assert _text(light) == _text(whole) and "job_name" in light[0]
