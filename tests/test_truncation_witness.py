"""Cutting events off the end of the chain leaves a shorter chain that verifies on its own;
the head witness kept outside the table (a marker beside the store, ``BENCHLEDGER_HEAD_FILE``,
``--expect-head``) and the export records of published files are what give it away."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchledger.ledger.store.head_witness import HEAD_FILE_ENV
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
LATER_JOB = "01_all_pass"


@pytest.fixture(scope="module")
def harbor(fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return harbor_copy(fixtures_dir, tmp_path_factory.mktemp("witness-fixtures"))


@pytest.fixture
def ingested(db_url: str, tmp_path: Path, harbor: Path, monkeypatch) -> tuple[Path, str]:
    """A store of 7 events and its published files; the head those 7 events end at."""
    if db_url.startswith("postgresql"):  # no file beside a server's store: name one
        monkeypatch.setenv(HEAD_FILE_ENV, str(tmp_path / "pg.head"))
    work = tmp_path / "work"
    code, payload, err = ingest_in_process(db_url, work, job_dir(harbor, JOB))
    assert code == 0 and payload["appended"], err
    code, verdict, err = cli_in_process(db_url, "verify", "--files", cwd=work)
    assert code == 0, verdict or err
    assert verdict["verify"]["head_position"] == 7
    assert verdict["verify"]["witnesses"][0]["status"] == "match"
    return work, f"7:{verdict['verify']['head_hash']}"


def _delete_behind_the_triggers_back(db_url: str, *statements: str) -> None:
    with open_store(db_url) as opened:
        with opened.store.database.begin() as conn:
            on = " ON events" if conn.dialect == "postgresql" else ""
            conn.execute(f"DROP TRIGGER events_no_delete{on}")
            for statement in statements:
                conn.execute(statement)


def _verify(db_url: str, work: Path, *args: str) -> tuple[int, dict]:
    code, verdict, err = cli_in_process(db_url, "verify", *args, cwd=work)
    assert verdict is not None, err
    return code, verdict["verify"]


def test_deleting_the_tail_fails_verify_against_the_marker(db_url, ingested):
    work, _ = ingested
    _delete_behind_the_triggers_back(db_url, "DELETE FROM events WHERE position >= 6")
    code, verdict = _verify(db_url, work)
    assert code == 1
    assert verdict["head_position"] == 5 and verdict["first_bad_position"] == 6
    assert "events after 5 were deleted" in verdict["reason"]
    assert verdict["witnesses"][0]["status"] == "beyond_head"


def test_verify_files_never_calls_a_file_beyond_the_head_a_match(db_url, ingested):
    work, _ = ingested
    _delete_behind_the_triggers_back(db_url, "DELETE FROM events WHERE position = 7")
    code, verdict = _verify(db_url, work, "--files")
    assert code == 1
    statuses = {f["kind"]: f["status"] for f in verdict["files"]}
    assert statuses["ledger_json"] == statuses["ledger_markdown"] == "beyond_head"
    assert not any(f["ok"] for f in verdict["files"])


def test_expect_head_catches_a_truncation_without_any_marker(db_url, ingested, monkeypatch):
    work, expected = ingested
    _delete_behind_the_triggers_back(db_url, "DELETE FROM events WHERE position >= 6")
    marker = _marker(db_url, work)
    marker.unlink()  # the tamperer removed the marker too
    code, verdict = _verify(db_url, work)
    assert code == 0 and verdict["head_position"] == 5  # what the chain alone can tell
    code, verdict = _verify(db_url, work, "--expect-head", expected)
    assert code == 1 and verdict["first_bad_position"] == 6
    assert verdict["witnesses"] == [
        {"source": "--expect-head", "position": 7, "hash": expected[2:], "status": "beyond_head"}
    ]


def test_export_records_wiped_with_the_tail_still_fail_verify_files(db_url, ingested):
    work, _ = ingested
    _delete_behind_the_triggers_back(
        db_url, "DELETE FROM events WHERE position = 7", "DELETE FROM rm_exports"
    )
    _marker(db_url, work).unlink()
    code, verdict = _verify(db_url, work, "--files")
    assert code == 1 and verdict["files"] == []
    exports = verdict["exports"]
    assert exports["ok"] is False and "benchledger render" in exports["reason"]


def test_a_regrown_tail_is_named_by_hash_and_export(db_url, ingested, harbor):
    """Cut the tail, then let a new command append over the same positions: the marker's
    hash and the published files' export records both disagree with the new chain."""
    work, expected = ingested
    _delete_behind_the_triggers_back(db_url, "DELETE FROM events WHERE position >= 6")
    marker = _marker(db_url, work)
    kept = marker.read_bytes()
    code, payload, err = ingest_in_process(db_url, work / "other", job_dir(harbor, LATER_JOB))
    assert code == 0, err
    marker.write_bytes(kept)  # the marker as it was before the new command
    code, verdict = _verify(db_url, work, "--files", "--expect-head", expected)
    assert code == 1 and verdict["first_bad_position"] == 7
    assert {w["status"] for w in verdict["witnesses"]} == {"hash_differs"}
    statuses = {f["path"]: f["status"] for f in verdict["files"]}
    assert statuses[str(work / LEDGER)] == "export_missing"


def test_a_new_store_in_place_of_a_removed_one_is_not_accused(tmp_path, harbor):
    db = tmp_path / "store" / "ledger.db"
    url = f"sqlite:///{db}"
    code, _, err = ingest_in_process(url, tmp_path / "w", job_dir(harbor, JOB))
    assert code == 0, err
    assert Path(f"{db}.head").exists()
    for path in db.parent.glob("ledger.db*"):
        if not path.name.endswith(".head"):
            path.unlink()
    code, verdict, err = cli(url, "verify")
    assert code == 0 and verdict["verify"]["head_position"] == 0, verdict or err


def test_a_garbled_marker_is_one_clear_error(tmp_path, harbor):
    db = tmp_path / "store" / "ledger.db"
    url = f"sqlite:///{db}"
    code, _, err = ingest_in_process(url, tmp_path / "w", job_dir(harbor, JOB))
    assert code == 0, err
    Path(f"{db}.head").write_text("{not json")
    code, _, err = cli(url, "verify")
    assert code == 1
    assert err.strip().startswith("error: the head marker ledger.db.head is unreadable")
    code, _, err = cli(url, "verify", "--expect-head", "7:abc")
    assert code == 1 and "POSITION:HASH" in err


def _marker(db_url: str, work: Path) -> Path:
    if db_url.startswith("sqlite"):
        return Path(db_url.removeprefix("sqlite:///") + ".head")
    return work.parent / "pg.head"
