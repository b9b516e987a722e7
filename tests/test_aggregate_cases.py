"""The aggregate's cache of per-case results (``ledger.rules.operations.aggregate.CaseResult``,
kept by
``projections.read_models.aggregate_cases``) gives the aggregate of the whole rows, cold or warm,
and is
worked out again exactly for the cases whose rows changed.

On the store of ``tests/test_compare_rows.py`` (Harbor, BenchFlow and imported loopx rows,
archived runs), on SQLite and PostgreSQL: the first read works out every case and the second
reads every case back, both giving byte for byte the aggregate of the whole rows under every
option the default selection takes; an archive and a restore redo only the cases they
touched; a case that lost a row but kept its latest position is redone, and a run imported
again under another case moves its result; a row the read model files under another case than
its own sends the aggregate back to judging rows; an entry of another format is worked out
again; ``rebuild --verify`` reports an entry its rows do not give and ``rebuild`` empties the
table; ``--as-of`` keeps nothing and ``snapshot create`` fills the snapshot's.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from benchledger.ledger.core.jsonfmt import json_like_stdlib
from benchledger.ledger.core.ledger_target import resolve_ledger_target
from benchledger.ledger.rules.operations.aggregate import (
    CASE_RESULT_VERSION,
    CaseResult,
    aggregate,
    aggregate_of_cases,
)
from benchledger.ledger.store.connection import Connection
from benchledger.projections.read_models.aggregate_cases import (
    AggregateCasesReader,
    check_aggregate_cases,
    decode,
    encode,
    keep_aggregate_cases,
    kept_results,
)
from benchledger.projections.read_models.queries import StoreReads
from benchledger.projections.read_models.row_caches import fill_row_caches
from tests.support_harbor_ingest_cli import cli, head_position
from tests.support_store import (
    assert_rebuild_reports_and_empties,
    store_connection,
    table_count,
)
from tests.test_compare_rows import filled, project  # noqa: F401 - fixtures

BENCH = "terminal-bench@2.0"
CASE = "fix-code-vulnerability"
# Every option the kept results serve (the default selection, no target lanes).
OPTIONS: list[dict[str, Any]] = [
    {},
    {"selection": "best-of-n"},
    {
        "canonical_case_ids": ("sanitize-git-repo", "no-such-case", CASE),
        "active_case_ids": ("no-such-case", CASE),
    },
    {"include_noncanonical_sanity_sources": True},
]
AGGREGATE = ["benchmark", "run-ledger-aggregate", "--benchmark-id", BENCH, "--format", "json"]


def _count(db: str, table: str = "rm_aggregate_cases") -> int:
    return table_count(db, table)


def _pairs(conn: Connection) -> list[tuple[str, str]]:
    found = conn.execute("SELECT DISTINCT ledger_id, benchmark_id FROM rm_ledger_rows")
    return sorted((ledger_id, benchmark_id) for ledger_id, benchmark_id in found)


def _whole(conn: Connection, ledger_id: str, benchmark_id: str, **options: Any) -> bytes:
    rows = StoreReads(conn).rows_by_benchmark(ledger_id, benchmark_id)
    return json_like_stdlib(aggregate(rows, benchmark_id=benchmark_id, **options))


def _from_cases(reader: AggregateCasesReader, ledger_id: str, benchmark_id: str,
                **options: Any) -> bytes:  # fmt: skip
    found = reader.case_results(ledger_id, benchmark_id)
    assert found is not None
    cases, row_count = found
    assert row_count == len(StoreReads(reader.conn).rows_by_benchmark(ledger_id, benchmark_id))
    options.pop("selection", None)
    return json_like_stdlib(aggregate_of_cases(cases, benchmark_id=benchmark_id, **options))


def _case_count(conn: Connection) -> int:
    sql = "SELECT DISTINCT ledger_id, benchmark_id, case_id FROM rm_ledger_rows"
    return len(conn.execute(sql).all())


@pytest.mark.parametrize("options", OPTIONS)
def test_cold_and_warm_results_give_the_whole_rows_aggregate(filled: str, options: dict) -> None:  # noqa: F811
    with store_connection(filled) as conn:
        for ledger_id, benchmark_id in _pairs(conn):
            expected = _whole(conn, ledger_id, benchmark_id, **options)
            cold = AggregateCasesReader(conn)
            assert _from_cases(cold, ledger_id, benchmark_id, **options) == expected
            keep_aggregate_cases(conn, cold)
            warm = AggregateCasesReader(conn)
            assert _from_cases(warm, ledger_id, benchmark_id, **options) == expected
            assert warm.entries == [] and warm.facts_reader.entries == []
            assert cold.entries  # every case was worked out once, then read back
        assert _count(filled) == _case_count(conn)
        assert check_aggregate_cases(conn, 10) == []


def test_the_command_fills_the_cases_and_reads_them_back(filled: str) -> None:  # noqa: F811
    cold = cli(AGGREGATE, db=filled)
    assert cold.code == 0, cold.result.output
    kept = _count(filled)
    assert kept > 0
    warm = cli(AGGREGATE, db=filled)
    assert warm.result.stdout == cold.result.stdout and _count(filled) == kept
    lanes = cli([*AGGREGATE, "--target-run-group-contains", "odd"], db=filled)
    assert lanes.code == 0 and _count(filled) == kept  # no result is kept for target lanes


def test_only_the_cases_a_write_touched_are_worked_out_again(filled: str) -> None:  # noqa: F811
    ledger_id = resolve_ledger_target(None).ledger_id
    assert cli(AGGREGATE, db=filled).code == 0
    archive = ["benchmark", "run-ledger-archive", "--benchmark-id", BENCH, "--arm-id", "base",
               "--case-id", CASE, "--reason", "rerun", "--execute"]  # fmt: skip
    restore = ["benchmark", "run-ledger-restore", "--benchmark-id", BENCH, "--arm-id", "odd",
               "--case-id", "sanitize-git-repo", "--reason", "again", "--execute"]  # fmt: skip
    for write, touched in ((archive, {CASE}), (restore, {"sanitize-git-repo"})):
        before = cli(AGGREGATE, db=filled).payload["aggregate"]
        done = cli(write, db=filled)
        assert done.code == 0, done.result.output
        with store_connection(filled) as conn:
            reader = AggregateCasesReader(conn)
            assert _from_cases(reader, ledger_id, BENCH) == _whole(conn, ledger_id, BENCH)
        assert {entry[2] for entry in reader.entries} == touched
        after = cli(AGGREGATE, db=filled).payload["aggregate"]
        assert after != before
        assert _printed_is_the_whole_rows_aggregate(filled, after)
    with store_connection(filled) as conn:
        assert check_aggregate_cases(conn, 10) == []


def _printed_is_the_whole_rows_aggregate(db: str, printed: dict[str, Any]) -> bool:
    """The command's aggregate (over the store's ledger: one source ledger file) is the one
    the whole rows give."""
    ledger_id = resolve_ledger_target(None).ledger_id
    with store_connection(db) as conn:
        expected = _whole(conn, ledger_id, BENCH, source_ledger_files=["the store's ledger"])
    return json_like_stdlib(printed) == expected


def test_a_row_filed_under_another_case_sends_the_aggregate_back_to_its_rows(
    filled: str,  # noqa: F811
) -> None:
    ledger_id = resolve_ledger_target(None).ledger_id
    assert cli(AGGREGATE, db=filled).code == 0
    with store_connection(filled) as conn:
        (run_id,) = conn.execute(
            "SELECT run_id FROM rm_ledger_rows WHERE benchmark_id = ? AND case_id = ?"
            " AND archived = 0 LIMIT 1",
            (BENCH, CASE),
        ).first()
        conn.execute(
            "UPDATE rm_ledger_rows SET case_id = 'filed-elsewhere' WHERE run_id = ?", (run_id,)
        )
        conn.commit()
        reader = AggregateCasesReader(conn)
        assert reader.case_results(ledger_id, BENCH) is None
        assert reader.entries == []
        # filling the caches (as ``snapshot create`` does) keeps every row's facts, no case result
        conn.execute("DELETE FROM rm_aggregate_facts")
        conn.execute("DELETE FROM rm_aggregate_cases")
        conn.commit()
        fill_row_caches(conn)
        rows = conn.execute(
            "SELECT count(*) FROM rm_ledger_rows WHERE ledger_id = ? AND benchmark_id = ?",
            (ledger_id, BENCH),
        ).scalar()
        facts = conn.execute(
            "SELECT count(*) FROM rm_aggregate_facts WHERE ledger_id = ? AND benchmark_id = ?",
            (ledger_id, BENCH),
        ).scalar()
        cases = conn.execute(
            "SELECT count(*) FROM rm_aggregate_cases WHERE ledger_id = ? AND benchmark_id = ?",
            (ledger_id, BENCH),
        ).scalar()
        assert facts == rows > 0 and cases == 0
    printed = cli(AGGREGATE, db=filled).payload["aggregate"]
    assert _printed_is_the_whole_rows_aggregate(filled, printed)


def test_results_of_another_format_are_worked_out_again(filled: str) -> None:  # noqa: F811
    ledger_id = resolve_ledger_target(None).ledger_id
    assert cli(AGGREGATE, db=filled).code == 0
    with store_connection(filled) as conn:
        conn.execute("UPDATE rm_aggregate_cases SET version = '0/older' WHERE benchmark_id = ?",
                     (BENCH,))  # fmt: skip
        conn.commit()
        reader = AggregateCasesReader(conn)
        assert _from_cases(reader, ledger_id, BENCH) == _whole(conn, ledger_id, BENCH)
        cases = conn.execute(
            "SELECT DISTINCT case_id FROM rm_ledger_rows WHERE ledger_id = ? AND benchmark_id = ?",
            (ledger_id, BENCH),
        )
        assert {e[2] for e in reader.entries} == {case_id for (case_id,) in cases}


def test_the_stored_form_carries_a_result_exactly_or_not_at_all() -> None:
    summary = {"run_id": "r", "bucket": "pass", "countable_score": 0.1 + 0.2, "labels": ["é"]}
    result = CaseResult(2, False, 2, "pass", summary, True)
    stored = encode(result)
    assert stored is not None and stored[0] == CASE_RESULT_VERSION
    back = decode(stored)
    assert back is not None and isinstance(back.summary, str)
    assert back._replace(summary=back.summary_dict()) == result
    assert encode(result._replace(summary={**summary, "countable_score": float("inf")})) is None
    assert encode(result._replace(summary={**summary, "big": 2**70})) is None
    assert decode(("0/older", *stored[1:])) is None


def test_verify_reports_a_result_its_rows_do_not_give(filled: str) -> None:  # noqa: F811
    assert cli(AGGREGATE, db=filled).code == 0

    def damage(conn: Connection) -> dict[str, Any]:
        ledger_id, case_id = conn.execute(
            "SELECT ledger_id, case_id FROM rm_aggregate_cases"
            " WHERE benchmark_id = ? AND bucket = 'pass'",
            (BENCH,),
        ).first()
        conn.execute(
            "UPDATE rm_aggregate_cases SET bucket = 'official_zero'"
            " WHERE ledger_id = ? AND case_id = ?",
            (ledger_id, case_id),
        )
        return {"table": "rm_aggregate_cases", "key": [ledger_id, BENCH, case_id],
                "problem": "stale case"}  # fmt: skip

    assert_rebuild_reports_and_empties(
        filled, damage, "rm_aggregate_cases", lambda: cli(AGGREGATE, db=filled)
    )


def test_as_of_keeps_nothing_and_a_snapshot_holds_every_case(
    filled: str,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    past = cli([*AGGREGATE, "--as-of", str(head_position(filled))], db=filled)
    assert past.code == 0, past.result.output
    assert _count(filled) == 0
    snaps = tmp_path / "snaps"
    monkeypatch.setenv("BENCHLEDGER_SNAPSHOT_DIR", str(snaps))
    made = cli(["--format", "json", "snapshot", "create"], db=filled)
    assert made.code == 0, made.result.output
    [snapshot] = snaps.glob("*.db")
    with sqlite3.connect(snapshot) as raw:
        kept = raw.execute("SELECT count(*) FROM rm_aggregate_cases").fetchone()[0]
        cases = raw.execute(
            "SELECT count(*) FROM (SELECT DISTINCT ledger_id, benchmark_id, case_id"
            " FROM rm_ledger_rows)"
        ).fetchone()[0]
    raw.close()
    assert kept == cases > 0
    assert _count(filled) == 0  # the live store is not touched
    from_snapshot = cli([*AGGREGATE, "--as-of", str(head_position(filled))], db=filled)
    assert from_snapshot.code == 0, from_snapshot.result.output
    assert "snapshot" in from_snapshot.payload["as_of"]["built_from"]
    live = cli(AGGREGATE, db=filled).payload
    for read in (past, from_snapshot):
        assert json_like_stdlib(read.payload["aggregate"]) == json_like_stdlib(live["aggregate"])


def test_a_case_that_lost_a_row_but_not_its_latest_is_worked_out_again(
    filled: str,  # noqa: F811
) -> None:
    """A row leaving a case (moved to another by a later event) leaves the case's latest
    position as it was; the row count alone tells, and the case is worked out again."""
    ledger_id = resolve_ledger_target(None).ledger_id
    assert cli(AGGREGATE, db=filled).code == 0
    with store_connection(filled) as conn:
        case_id, first = conn.execute(
            "SELECT case_id, min(position) FROM rm_ledger_rows WHERE ledger_id = ?"
            " AND benchmark_id = ? GROUP BY case_id HAVING count(DISTINCT position) > 1"
            " ORDER BY case_id LIMIT 1",
            (ledger_id, BENCH),
        ).first()
        conn.execute(
            "DELETE FROM rm_ledger_rows WHERE ledger_id = ? AND case_id = ? AND position = ?",
            (ledger_id, case_id, first),
        )
        kept, stale, _ = kept_results(conn, ledger_id, BENCH)
        assert stale == [case_id] and case_id not in kept and kept
        conn.rollback()


def test_a_run_imported_again_under_another_case_moves_its_result(
    filled: str,  # noqa: F811
    project: Path,  # noqa: F811
    fixtures_dir: Path,
) -> None:
    """The loopx ledger imported again with one run filed under a new case: the aggregate of
    that ledger follows the run to its new case."""
    document = json.loads((fixtures_dir / "loopx-ledger" / "benchmark-run-ledger.json").read_text())
    bench = document["benchmarks"][BENCH]
    left = sorted(bench["cases"])[0]
    run, *rest = bench["cases"][left]["runs"]
    bench["cases"][left]["runs"] = rest
    bench["cases"]["moved-here"] = {
        "case_id": "moved-here",
        "runs": [{**run, "case_id": "moved-here"}],
    }
    aggregate_imported = [*AGGREGATE, "--ledger-id", "imported.json"]
    assert cli(aggregate_imported, db=filled).code == 0
    (project / "imported.json").write_text(json.dumps(document), encoding="utf-8")
    done = cli(["import", "loopx-ledger", str(project / "imported.json"), "--execute"], db=filled)
    assert done.code == 0, done.result.output
    with store_connection(filled) as conn:
        reader = AggregateCasesReader(conn)
        got = _from_cases(reader, "imported.json", BENCH)
        assert got == _whole(conn, "imported.json", BENCH)
    assert {left, "moved-here"} <= {entry[2] for entry in reader.entries}
    printed = cli(aggregate_imported, db=filled).payload["aggregate"]
    assert printed["case_best"]["moved-here"]["run_id"] == run["run_id"]


def test_diff_reports_the_run_the_aggregate_chooses(filled: str) -> None:  # noqa: F811
    """``diff``'s case state names the run, bucket and score ``run-ledger-aggregate`` gives
    the case (the same ``case_result``)."""
    diff = ["--format", "json", "diff", "--from", "1", "--benchmark-id", BENCH]
    cases = cli(diff, db=filled).payload["diff"]["cases"]
    best = cli([*AGGREGATE, "--include-noncanonical-sanity-sources"], db=filled)
    case_best = best.payload["aggregate"]["case_best"]
    compared = 0
    for case in cases:
        after = case["after"]
        if after is None or not after["active_run_count"]:
            continue
        chosen = case_best[case["case_id"]]
        assert (after["bucket"], after["best_run_id"]) == (chosen["bucket"], chosen["run_id"])
        assert after["score"] == chosen.get("countable_score")
        compared += 1
    assert compared == len(case_best) > 0  # every case of the ledger changed since position 1
