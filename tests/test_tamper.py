"""Tamper evidence through the user's commands: ``benchledger verify`` names the first bad
position when an event is edited, deleted or reordered behind the append-only triggers' back,
and ``verify --files`` tells a published ledger that still matches the store from one that was
edited after rendering.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchledger.services.store_session import open_store
from tests.support_faults import (
    LEDGER,
    cli,
    cli_in_process,
    harbor_copy,
    ingest_in_process,
    job_dir,
)

JOB = "14_dash_named_baseline"  # two records: 6 command events, then 1 export_written


@pytest.fixture(scope="module")
def harbor(fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return harbor_copy(fixtures_dir, tmp_path_factory.mktemp("tamper-fixtures"))


@pytest.fixture
def ingested(db_url: str, tmp_path: Path, harbor: Path) -> Path:
    work = tmp_path / "work"
    code, payload, err = ingest_in_process(db_url, work, job_dir(harbor, JOB))
    assert code == 0 and payload["appended"], err
    code, verdict, err = cli(db_url, "verify")
    assert code == 0 and verdict["verify"]["checked"] == 7, verdict or err
    return work


def _behind_the_triggers_back(db_url: str, *statements: str | tuple[str, dict]) -> None:
    """What someone with write access to the database file or role could do."""
    with open_store(db_url) as opened:
        with opened.store.database.begin() as conn:
            on = " ON events" if conn.dialect == "postgresql" else ""
            conn.execute(f"DROP TRIGGER events_no_update{on}")
            conn.execute(f"DROP TRIGGER events_no_delete{on}")
            for statement in statements:
                sql, params = statement if isinstance(statement, tuple) else (statement, {})
                assert conn.execute(sql, params).rowcount == 1, sql


def _verify_fails_at(db_url: str, position: int, reason: str) -> None:
    code, verdict, err = cli(db_url, "verify")
    assert code == 1, verdict or err
    assert verdict["ok"] is False
    assert verdict["verify"]["first_bad_position"] == position
    assert reason in verdict["verify"]["reason"]
    # a verdict, not a crash: the one-line reason on stderr too (issue 34)
    assert err.startswith("error: the event chain is broken: ") and err.count("\n") == 1, err
    assert reason in err


def test_an_edited_event_is_named(db_url, ingested):
    # the classic edit: a failing run's score quietly rewritten as a pass
    _behind_the_triggers_back(
        db_url,
        (
            "UPDATE events SET payload = REPLACE(payload, :failed, :passed) WHERE position = 3",
            {"failed": '"official_score":0.0', "passed": '"official_score":1.0'},
        ),
    )
    _verify_fails_at(db_url, 3, "edited")


def test_a_deleted_event_is_named(db_url, ingested):
    _behind_the_triggers_back(db_url, "DELETE FROM events WHERE position = 4")
    _verify_fails_at(db_url, 4, "gap")


def test_reordered_events_are_named(db_url, ingested):
    _behind_the_triggers_back(
        db_url,
        "UPDATE events SET position = -2 WHERE position = 2",
        "UPDATE events SET position = 2 WHERE position = 3",
        "UPDATE events SET position = 3 WHERE position = -2",
    )
    _verify_fails_at(db_url, 2, "prev_hash")


def _files_verdict(db_url: str, work: Path) -> tuple[int, dict[str, str]]:
    code, verdict, err = cli_in_process(db_url, "verify", "--files", cwd=work)
    assert verdict is not None, err
    assert verdict["verify"]["first_bad_position"] is None  # the chain itself is fine
    return code, {f["kind"]: f["status"] for f in verdict["verify"]["files"]}


def test_verify_files_tells_edited_from_matching_ledger(db_url, ingested):
    work = ingested
    code, statuses = _files_verdict(db_url, work)
    assert code == 0
    assert statuses["ledger_json"] == statuses["ledger_markdown"] == "match"
    assert set(statuses.values()) == {"match"}

    ledger_json = work / LEDGER
    ledger_json.write_text(
        ledger_json.read_text().replace('"official_score": 1.0', '"official_score": 0.0', 1)
    )
    code, statuses = _files_verdict(db_url, work)
    assert code == 1
    assert statuses["ledger_json"] == "changed"
    assert statuses["ledger_markdown"] == "match"

    ledger_md = ledger_json.with_suffix(".md")
    ledger_md.write_text(ledger_md.read_text() + "\n| hand-added | row |\n")
    code, statuses = _files_verdict(db_url, work)
    assert code == 1 and statuses["ledger_markdown"] == "changed"

    # re-rendering from the store heals both, and appends nothing new: the bytes it publishes
    # are the ones already recorded
    code, _, err = cli_in_process(db_url, "render", "--run-ledger-path", LEDGER, cwd=work)
    assert code == 0, err
    code, statuses = _files_verdict(db_url, work)
    assert code == 0 and set(statuses.values()) == {"match"}
    code, listed, _ = cli(db_url, "events", "list")
    assert listed["count"] == 7


def test_verify_files_reports_a_removed_ledger_as_missing(db_url, ingested):
    (ingested / LEDGER).with_suffix(".md").unlink()
    code, statuses = _files_verdict(db_url, ingested)
    assert code == 1
    assert statuses["ledger_markdown"] == "missing" and statuses["ledger_json"] == "match"
