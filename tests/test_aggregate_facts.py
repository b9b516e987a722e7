"""The aggregate's cache of per-row facts (``ledger.rules.operations.aggregate_facts``, kept by
``projections.read_models.aggregate_facts``) gives the aggregate of the whole rows, cold or warm,
and stays
exact as rows change.

Hand-made rows (loopx rows, unreadable times, numeric-text scores, missing ids, lanes) go
through the stored form and back; on the store of ``tests/test_compare_rows.py`` (Harbor,
BenchFlow and imported loopx rows, archived runs), on SQLite and PostgreSQL, the first read
computes every row's facts and the second reads them back, and both give byte for byte the
aggregate of the whole rows under every selection option. A row rewritten by a later event is
judged again, an entry that no longer matches its row is reported by ``rebuild --verify``,
``rebuild`` empties the cache, ``--as-of`` never fills it, and ``snapshot create`` fills it
(and compare's) in the snapshot, where an ``--as-of`` read finds it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from benchledger.ledger.core.jsonfmt import PlainJsonDict, json_like_stdlib
from benchledger.ledger.core.ledger_target import resolve_ledger_target
from benchledger.ledger.handlers.ledger_aggregate import AggregateRequest, aggregate_view
from benchledger.ledger.handlers.ledger_source_files import load_sources
from benchledger.ledger.rules.operations.aggregate import TargetLanes, aggregate
from benchledger.ledger.rules.operations.aggregate_facts import (
    AGGREGATE_FACTS_VERSION,
    RowFacts,
    decode,
    encode,
    row_facts,
)
from benchledger.ledger.rules.row.rows import document_rows
from benchledger.ledger.store.connection import Connection
from benchledger.projections.read_models.aggregate_facts import (
    AggregateFactsReader,
    check_aggregate_cache,
    keep_aggregate_facts,
)
from benchledger.projections.read_models.queries import StoreReads
from tests.support_harbor_ingest_cli import cli, head_position
from tests.support_ledger_rows import stored_row
from tests.support_ledger_rules import load_fixture_ledger
from tests.support_store import (
    assert_rebuild_reports_and_empties,
    store_connection,
    table_count,
)
from tests.test_aggregate import _policy_rows
from tests.test_compare_rows import filled, project  # noqa: F401 - fixtures

BENCH = "terminal-bench@2.0"
OPTIONS: list[dict[str, Any]] = [
    {},
    {"selection": "latest_countable"},
    {"lanes": TargetLanes(lane_id="w", target=("odd",), backfill=("base", "HARD"))},
    {"lanes": TargetLanes(current=("hard",)), "selection": "latest_countable"},
    {
        "canonical_case_ids": ("sanitize-git-repo", "no-such-case", "fix-code-vulnerability"),
        "active_case_ids": ("no-such-case",),
    },
    {"include_noncanonical_sanity_sources": True},
]
AGGREGATE = ["benchmark", "run-ledger-aggregate", "--benchmark-id", BENCH, "--format", "json"]


def _text(payload: Any) -> bytes:
    return json_like_stdlib(payload)


def _count(db: str, table: str = "rm_aggregate_facts") -> int:
    return table_count(db, table)


def _pairs(db: str) -> list[tuple[str, str]]:
    with store_connection(db) as conn:
        found = conn.execute("SELECT DISTINCT ledger_id, benchmark_id FROM rm_ledger_rows")
        return sorted((ledger_id, benchmark_id) for ledger_id, benchmark_id in found)


def _through_storage(facts: RowFacts) -> RowFacts:
    stored = encode(facts)
    assert stored is not None
    back = decode(*stored)
    assert back is not None and isinstance(back.summary, str)
    return back


def _odd_rows() -> list[dict[str, Any]]:
    """Rows whose facts are easy to get wrong: loopx rows (no rules version), an unreadable
    and a missing time, numeric text, a missing case and run id, a non-text run id, another
    benchmark, a non-canonical source, lanes and labels."""

    def loopx(row: dict[str, Any]) -> dict[str, Any]:
        row.pop("rules_version", None)
        return row

    numbered = stored_row(case_id="c10", official_score=0.0, run_group_id="wave-backfill")
    numbered["run_id"] = 7
    return [
        *_policy_rows(),
        loopx(stored_row(run_id="text-score", case_id="c5", official_score="0.25")),
        stored_row(run_id="bad-time", case_id="c5", recorded_at="yesterday", official_score=0.25),
        stored_row(run_id="no-time", case_id="c5", recorded_at=None, official_score=0.25),
        stored_row(run_id=None, case_id="c6", official_score=1.0, failure_class="none"),
        stored_row(run_id="no-case", case_id=None, official_score=0.0),
        numbered,
        stored_row(run_id="other-bench", benchmark_id="b@2", case_id="c1", official_score=1.0),
        loopx(
            stored_row(
                run_id="excluded",
                case_id="c7",
                failure_class="skillsbench_task_source_excluded",
                task_setup_preflight={"canonical_task_present": False},
            )
        ),
        loopx(
            stored_row(
                run_id="labels",
                case_id="c8",
                official_score=None,
                official_passed=None,
                score_status="missing",
                failure_class="x",
                failure_labels=["verifier_reward_missing", "a", "a"],
                job_name="Job-Current",
            )
        ),
        stored_row(run_id="ünïcode", case_id="c9", official_score=0.30000000000000004),
        # floats ``json`` prints in exponent form: in the summary, and in the score alone
        stored_row(run_id="tiny-score", case_id="c11", official_score=5e-05),
        stored_row(run_id="tiny-reward", case_id="c12", official_score=1.0, best_round_reward=1e-7),
        stored_row(run_id="tiny-text", case_id="c13", official_score="0.00001"),
    ]


@pytest.mark.parametrize("options", OPTIONS[:4])
def test_stored_facts_give_the_aggregate_of_the_rows(fixtures_dir: Path, options: dict) -> None:
    fixture = document_rows(load_fixture_ledger(fixtures_dir))
    for rows, benchmark_id in ((_odd_rows(), "b@1"), (fixture, BENCH)):
        expected = _text(aggregate(rows, benchmark_id=benchmark_id, **options))
        facts = [row_facts(row) for row in rows]
        stored = [_through_storage(f) for f in facts]
        mixed = [s if i % 2 else row for i, (s, row) in enumerate(zip(stored, rows, strict=True))]
        for runs in (facts, stored, mixed):
            assert _text(aggregate(runs, benchmark_id=benchmark_id, **options)) == expected


@pytest.mark.parametrize(
    ("fields", "plain"),
    [
        ({"official_score": 0.25}, True),
        ({"official_score": 5e-05}, False),  # in the summary and the countable score
        ({"official_score": 1.0, "best_round_reward": 1e-7}, False),  # in the summary only
        ({"official_score": "0.00001"}, False),  # text in the summary, a float as the score
    ],
)
def test_the_printed_case_best_is_walked_unless_every_summary_is_known_plain(
    fields: dict[str, Any], plain: bool
) -> None:
    """Stored facts say whether their summary prints the same through orjson as through
    ``json``; the aggregate marks its ``case_best`` so the printer skips walking it only when
    every chosen run's summary and score do, and the printed bytes stay ``json``'s."""
    rows = [stored_row(run_id="a", case_id="c1", official_score=1.0),
            stored_row(run_id="b", case_id="c2", **fields)]  # fmt: skip
    stored = [_through_storage(row_facts(row)) for row in rows]
    expected = aggregate(rows, benchmark_id="b@1")
    result = aggregate(stored, benchmark_id="b@1")
    assert (type(result["case_best"]) is PlainJsonDict) is plain
    assert type(expected["case_best"]) is dict  # rows judged now: walked as before
    stdlib = json.dumps(expected, indent=2, ensure_ascii=False) + "\n"
    assert _text(result) == _text(expected) == stdlib.encode()


def test_facts_json_cannot_carry_exactly_are_not_kept() -> None:
    facts = row_facts(stored_row(official_score=0.5))
    assert encode(facts) is not None
    assert encode(facts._replace(score=float("inf"))) is None  # JSON has no inf
    assert encode(facts._replace(benchmark_id=2**70)) is None  # beyond 64 bits
    unreadable = row_facts(stored_row(recorded_at="not a time"))
    assert _through_storage(unreadable).recorded == unreadable.recorded  # -inf, kept as null


@pytest.mark.parametrize("options", OPTIONS)
def test_cold_and_warm_facts_give_the_whole_rows_aggregate(filled: str, options: dict) -> None:  # noqa: F811
    for ledger_id, benchmark_id in _pairs(filled):
        with store_connection(filled) as conn:
            whole = StoreReads(conn).rows_by_benchmark(ledger_id, benchmark_id)
            expected = _text(aggregate(whole, benchmark_id=benchmark_id, **options))
            cold_reader = AggregateFactsReader(conn)
            cold = cold_reader.facts(ledger_id, benchmark_id)
            keep_aggregate_facts(conn, cold_reader.entries)
            warm_reader = AggregateFactsReader(conn)
            warm = warm_reader.facts(ledger_id, benchmark_id)
        assert len(cold_reader.entries) == len(whole) == len(warm)
        assert warm_reader.entries == []  # every fact was kept and is read back
        assert all(isinstance(f.summary, str) for f in warm)
        for runs in (cold, warm):
            assert _text(aggregate(runs, benchmark_id=benchmark_id, **options)) == expected
    with store_connection(filled) as conn:
        assert check_aggregate_cache(conn, 10) == []


def test_merged_source_rows_are_judged_and_the_rest_read_as_facts(
    filled: str,  # noqa: F811
    fixtures_dir: Path,
    tmp_path: Path,
) -> None:
    source = tmp_path / "source.json"
    source.write_bytes((fixtures_dir / "loopx-ledger" / "benchmark-run-ledger.json").read_bytes())
    target = resolve_ledger_target(None)
    sources = load_sources((str(source),), (), target_json_path=target.json_path)
    assert cli(AGGREGATE, db=filled).code == 0  # the store's rows' facts are kept
    for options in OPTIONS[:3]:
        request = AggregateRequest(benchmark_id=BENCH, **options)
        with store_connection(filled) as conn:
            reads = StoreReads(conn)
            expected = aggregate_view(reads, target, sources, request)
            reader = AggregateFactsReader(conn)
            assert _text(aggregate_view(reads, target, sources, request, reader)) == _text(expected)
        assert reader.entries == []


def test_the_command_fills_then_reads_the_cache(filled: str) -> None:  # noqa: F811
    cold = cli(AGGREGATE, db=filled)
    assert cold.code == 0, cold.result.output
    kept = _count(filled)
    assert kept > 0
    warm = cli(AGGREGATE, db=filled)
    assert warm.result.stdout == cold.result.stdout and _count(filled) == kept


def test_aggregate_after_a_rewrite_reads_the_rewritten_rows(filled: str) -> None:  # noqa: F811
    ledger_id = resolve_ledger_target(None).ledger_id
    before = cli(AGGREGATE, db=filled).payload["aggregate"]
    assert _count(filled) > 0
    archive = ["benchmark", "run-ledger-archive", "--benchmark-id", BENCH, "--arm-id", "base",
               "--case-id", "fix-code-vulnerability", "--reason", "rerun", "--execute"]  # fmt: skip
    assert cli(archive, db=filled).code == 0
    after = cli(AGGREGATE, db=filled).payload["aggregate"]
    assert after != before
    with store_connection(filled) as conn:
        whole = StoreReads(conn).rows_by_benchmark(ledger_id, BENCH)
        reader = AggregateFactsReader(conn)
        reader.facts(ledger_id, BENCH)
    assert reader.entries == []  # the archived rows' facts were computed again and kept
    expected = aggregate(whole, benchmark_id=BENCH, source_ledger_files=["the store's ledger"])
    assert _text(after) == _text(expected)


def test_verify_reports_an_entry_its_row_does_not_give(filled: str) -> None:  # noqa: F811
    assert cli(AGGREGATE, db=filled).code == 0

    def damage(conn: Connection) -> dict[str, Any]:
        ledger_id, run_id, text = conn.execute(
            "SELECT ledger_id, run_id, facts FROM rm_aggregate_facts WHERE facts LIKE ?",
            ('%"pass"%',),
        ).first()
        stored = orjson.loads(text)
        stored[4] = "official_zero"  # the bucket
        conn.execute(
            "UPDATE rm_aggregate_facts SET facts = ? WHERE ledger_id = ? AND run_id = ?",
            (orjson.dumps(stored).decode(), ledger_id, run_id),
        )
        return {"table": "rm_aggregate_facts", "key": [ledger_id, run_id],
                "problem": "stale facts"}  # fmt: skip

    assert_rebuild_reports_and_empties(
        filled, damage, "rm_aggregate_facts", lambda: cli(AGGREGATE, db=filled)
    )


def test_entries_of_another_format_are_computed_again(filled: str) -> None:  # noqa: F811
    ledger_id = resolve_ledger_target(None).ledger_id
    with store_connection(filled) as conn:
        reader = AggregateFactsReader(conn)
        facts = reader.facts(ledger_id, BENCH)
        keep_aggregate_facts(conn, reader.entries)
        conn.execute(
            "UPDATE rm_aggregate_facts SET facts = replace(facts, ?, ?)",
            (f'"{AGGREGATE_FACTS_VERSION}"', '"0/older"'),
        )
        conn.commit()
        again = AggregateFactsReader(conn)
        refacts = again.facts(ledger_id, BENCH)
    assert len(again.entries) == len(reader.entries) > 0
    assert _text(aggregate(refacts, benchmark_id=BENCH)) == _text(
        aggregate(facts, benchmark_id=BENCH)
    )


def test_as_of_keeps_no_facts(filled: str) -> None:  # noqa: F811
    past = cli([*AGGREGATE, "--as-of", str(head_position(filled))], db=filled)
    assert past.code == 0, past.result.output
    assert _count(filled) == 0
    live = cli(AGGREGATE, db=filled).payload
    assert _text(past.payload["aggregate"]) == _text(live["aggregate"])


def test_snapshot_create_fills_both_caches_for_as_of_reads(
    filled: str,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    snaps = tmp_path / "snaps"
    monkeypatch.setenv("BENCHLEDGER_SNAPSHOT_DIR", str(snaps))
    made = cli(["--format", "json", "snapshot", "create"], db=filled)
    assert made.code == 0, made.result.output
    [snapshot] = snaps.glob("*.db")
    rows = sum(1 for _ in _rows_of(snapshot))
    with sqlite3.connect(snapshot) as raw:
        counts = [raw.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                  for t in ("rm_aggregate_facts", "rm_compare_facts")]  # fmt: skip
    raw.close()
    assert counts[0] == rows and counts[1] > 0
    assert _count(filled) == 0  # the live store is not touched
    past = cli([*AGGREGATE, "--as-of", str(head_position(filled))], db=filled)
    assert past.code == 0, past.result.output
    assert "snapshot" in past.payload["as_of"]["built_from"]
    live = cli(AGGREGATE, db=filled).payload
    assert _text(past.payload["aggregate"]) == _text(live["aggregate"])
    verified = cli(["--format", "json", "snapshot", "verify"], db=filled)
    assert verified.code == 0 and verified.payload["ok"], verified.result.output


def _rows_of(snapshot: Path) -> Iterator[tuple[Any, ...]]:
    with sqlite3.connect(snapshot) as raw:
        yield from raw.execute("SELECT run_id FROM rm_ledger_rows").fetchall()
    raw.close()


def test_a_locked_store_is_not_waited_for(filled: str) -> None:  # noqa: F811
    """Another process's write lock: the aggregate answers at once and keeps nothing."""
    if not filled.startswith("sqlite"):
        pytest.skip("SQLite's one write lock; PostgreSQL locks rows")
    writer = sqlite3.connect(filled.removeprefix("sqlite:///"), isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        done = cli(AGGREGATE, db=filled)
        writer.execute("ROLLBACK")
    finally:
        writer.close()
    assert done.code == 0, done.result.output
    assert _count(filled) == 0
