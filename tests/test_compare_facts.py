"""compare's cache of per-row facts (``projections.read_models.compare_facts``) gives the document
of the
whole rows, cold or warm, and stays exact as rows change.

On the store of ``tests/test_compare_rows.py`` (Harbor, BenchFlow and imported loopx rows,
archived runs, numbers whose stored text matters), on SQLite and PostgreSQL: the first read
computes every row's facts and returns them to keep, the second reads them back; both give
byte for byte the document ``build_compare`` gives on the whole rows. A row rewritten by a
later event is computed again, an entry that no longer matches its row is reported by
``rebuild --verify``, ``rebuild`` empties the cache and ``--as-of`` never fills it.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

import orjson
import pytest

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.ledger_target import resolve_ledger_target
from benchledger.ledger.requests.compare import CompareRequest
from benchledger.projections.read_models.compare_facts import (
    FACTS_VERSION,
    _entry,
    check_compare_cache,
    keep_facts,
    read_facts,
)
from benchledger.projections.reports.compare.document import (
    build_compare,
    build_compare_from_facts,
    run_facts,
)
from benchledger.projections.reports.compare.rows import read_whole_rows
from tests.support_harbor_ingest_cli import cli
from tests.support_store import opened, store_connection, table_count
from tests.test_compare import ledger as hand_made_ledger
from tests.test_compare_rows import _stores, _text, filled, project  # noqa: F401 - fixtures

BENCH = "terminal-bench@2.0"


def _document(build: Any, source: Any, request: CompareRequest) -> bytes:
    """The document's exact text, or the refusal's message."""
    try:
        return _text(build(source, request))
    except InputError as err:
        return f"refused: {err.message}".encode()


def _count(db: str, table: str = "rm_compare_facts") -> int:
    return table_count(db, table)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"allow_incomparable": True},
        {"metric": "pass", "per_case": "pass@k:2", "allow_incomparable": True},
        {"per_case": "latest", "allow_incomparable": True},
    ],
)
def test_cold_and_warm_facts_give_the_whole_rows_document(filled: str, options: dict) -> None:  # noqa: F811
    for ledger_id, benchmark_id in _stores(filled):
        request = CompareRequest(benchmark_id=benchmark_id, **options)
        with store_connection(filled) as conn:
            expected = _document(
                build_compare, read_whole_rows(conn, ledger_id, benchmark_id), request
            )
            cold, entries = read_facts(conn, ledger_id, benchmark_id)
            keep_facts(conn, entries)
            warm, again = read_facts(conn, ledger_id, benchmark_id)
        assert again == []  # every fact was kept and is read back
        assert sorted(warm) == sorted(cold)
        assert _document(build_compare_from_facts, cold, request) == expected
        assert _document(build_compare_from_facts, warm, request) == expected
    with store_connection(filled) as conn:
        assert check_compare_cache(conn, 10) == []


def test_compare_after_a_rewrite_reads_the_rewritten_rows(filled: str) -> None:  # noqa: F811
    ledger_id = resolve_ledger_target(None).ledger_id
    args = ["compare", "--benchmark-id", BENCH, "--allow-incomparable", "--format", "json"]
    before = cli(args, db=filled).payload["compare"]
    kept = _count(filled)
    assert kept > 0
    archive = ["benchmark", "run-ledger-archive", "--benchmark-id", BENCH, "--arm-id", "base",
               "--case-id", "fix-code-vulnerability", "--reason", "rerun", "--execute"]  # fmt: skip
    assert cli(archive, db=filled).code == 0
    after = cli(args, db=filled).payload["compare"]
    assert after != before
    base = next(a for a in after["arms"] if a["arm_id"] == "base")
    assert "fix-code-vulnerability" in base["coverage"]["excluded"]["archived"]
    with store_connection(filled) as conn:
        whole = read_whole_rows(conn, ledger_id, BENCH)
        _, entries = read_facts(conn, ledger_id, BENCH)
    assert entries == []  # the archived rows' facts were computed again and kept
    expected = build_compare(whole, CompareRequest(benchmark_id=BENCH, allow_incomparable=True))
    assert _text(after) == _text(expected)


def test_verify_reports_an_entry_its_row_does_not_give(filled: str) -> None:  # noqa: F811
    args = ["compare", "--benchmark-id", BENCH, "--allow-incomparable", "--format", "json"]
    assert cli(args, db=filled).code == 0
    with opened(filled) as s:
        assert s.projections.verify_rebuild(s.store).ok
        with s.store.database.begin() as conn:
            run_id, text = conn.execute("SELECT run_id, facts FROM rm_compare_facts").first()
            stored = orjson.loads(text)
            stored[1] = stored[1] + "-elsewhere"  # the case id
            conn.execute(
                "UPDATE rm_compare_facts SET facts = ? WHERE run_id = ?",
                (orjson.dumps(stored).decode(), run_id),
            )
        report = s.projections.verify_rebuild(s.store)
        assert not report.ok
        assert {"table": "rm_compare_facts", "key": [resolve_ledger_target(None).ledger_id, run_id],
                "problem": "stale facts"} in report.differences  # fmt: skip
        s.projections.rebuild(s.store)
    assert _count(filled) == 0  # a rebuild empties the cache; the next compare fills it
    assert cli(args, db=filled).code == 0
    assert _count(filled) > 0


def test_entries_of_another_format_are_computed_again(filled: str) -> None:  # noqa: F811
    ledger_id = resolve_ledger_target(None).ledger_id
    with store_connection(filled) as conn:
        facts, entries = read_facts(conn, ledger_id, BENCH)
        keep_facts(conn, entries)
        conn.execute(
            "UPDATE rm_compare_facts SET facts = replace(facts, ?, ?)",
            (f'"{FACTS_VERSION}"', '"0/older"'),
        )
        conn.commit()
        again, recomputed = read_facts(conn, ledger_id, BENCH)
    assert len(recomputed) == len(entries) and sorted(again) == sorted(facts)


def test_as_of_keeps_no_facts(filled: str) -> None:  # noqa: F811
    args = ["compare", "--benchmark-id", BENCH, "--allow-incomparable", "--format", "json"]
    head = cli(["--format", "json", "events", "list"], db=filled).payload
    position = max(e["position"] for e in head["events"])
    past = cli([*args, "--as-of", str(position)], db=filled)
    assert past.code == 0, past.result.output
    assert _count(filled) == 0
    assert _text(past.payload["compare"]) == _text(cli(args, db=filled).payload["compare"])


def test_facts_json_cannot_carry_exactly_are_not_kept() -> None:
    row = hand_made_ledger()[0]
    facts = run_facts(row)
    key = ("L", "b", "r", 1)
    assert _entry(key, facts) is not None
    assert _entry(key, facts._replace(tokens=2**70)) is None  # beyond 64 bits
    assert _entry(key, facts._replace(tokens=float("inf"))) is None  # JSON has no inf


def test_a_locked_store_is_not_waited_for(filled: str) -> None:  # noqa: F811
    """Another process's write lock: compare answers at once and keeps nothing this time."""
    if not filled.startswith("sqlite"):
        pytest.skip("SQLite's one write lock; PostgreSQL locks rows")
    ledger_id = resolve_ledger_target(None).ledger_id
    writer = sqlite3.connect(filled.removeprefix("sqlite:///"), isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        with store_connection(filled) as conn:
            facts, entries = read_facts(conn, ledger_id, BENCH)
            started = time.monotonic()
            keep_facts(conn, entries)
            assert time.monotonic() - started < 5  # not the 30 s busy timeout
            assert conn.execute("PRAGMA busy_timeout").scalar() > 0  # restored
        writer.execute("ROLLBACK")
    finally:
        writer.close()
    assert entries and _count(filled) == 0
