"""Hostile input at the store's edge (issue 36, item 9): keys, URLs, numbers."""

from __future__ import annotations

import os
import re

import pytest
from click.testing import CliRunner

from benchledger.commands.cli import cli
from tests.conftest import FIXTURES_DIR
from tests.support_store import opened, upsert_event
from tests.test_store import _drop_update_trigger


@pytest.mark.synthetic_events  # edits a key behind the triggers' back
def test_verify_tells_an_empty_idempotency_key_from_none(db_url):
    """The hash covers NULL as "": an edit of NULL to '' must still fail verify."""
    s = opened(db_url)
    s.store.append([upsert_event("L", str(i)) for i in range(3)])
    with s.store.database.begin() as conn:
        _drop_update_trigger(conn)
        conn.execute("UPDATE events SET idempotency_key = '' WHERE position = 2")
    report = s.store.verify()
    assert not report.ok
    assert report.first_bad_position == 2
    assert "idempotency_key" in report.reason
    s.close()


def test_append_refuses_an_empty_idempotency_key(db_url):
    s = opened(db_url)
    with pytest.raises(ValueError, match="must not be empty"):
        s.store.append([upsert_event("L", "a")], idempotency_key="")
    assert s.store.head_position() == 0
    s.close()


@pytest.mark.parametrize(
    "url",
    [
        "host=127.0.0.1 dbname=test password=hunter2",
        "postgresql+psycopg2://u@127.0.0.1:5432/test",
        "postgresql+asyncpg://u@127.0.0.1:5432/test",
        "mysql://u:hunter2@127.0.0.1/test",
        "sqlite+pysqlite:///x.db",
        "postgresql://u:hunter2@127.0.0.1:notaport/test",
        "postgresql://127.0.0.1/test?foo=bar",
        "sqlite://relative.db",
    ],
)
def test_store_url_mistakes_are_one_line_and_create_nothing(tmp_path, url):

    from click.testing import CliRunner

    from benchledger.commands.cli import cli

    before = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(cli, ["--db", url, "events", "list"], catch_exceptions=False)
    finally:
        os.chdir(before)
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "internal error" not in result.stderr
    assert "hunter2" not in result.output + result.stderr
    assert list(tmp_path.iterdir()) == []  # no SQLite file named after the string


def test_a_search_path_naming_no_schema_is_one_line(postgres_ok):
    if not postgres_ok:
        pytest.skip("PostgreSQL not reachable")
    from tests.conftest import PG_BASE_URL

    url = f"{PG_BASE_URL}?options=-csearch_path%3Dno_such_schema_h6"
    for args in (["events", "list"], ["verify"], ["sql", "SELECT 1"]):
        result = CliRunner().invoke(cli, ["--db", url, *args], catch_exceptions=False)
        assert result.exit_code == 1, result.output
        assert "internal error" not in result.stderr, result.stderr
        assert "no_such_schema_h6" in result.stderr and "CREATE SCHEMA" in result.stderr


def _loopx_with_run_field(tmp_path, value):
    import json

    from tests.conftest import FIXTURES_DIR

    doc = json.loads((FIXTURES_DIR / "loopx-ledger" / "benchmark-run-ledger.json").read_text())
    benchmark = next(iter(doc["benchmarks"].values()))
    case = next(iter(benchmark["cases"].values()))
    case["runs"][0]["extra"] = value
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _nested(levels: int) -> dict:
    top = node = {}
    for _ in range(levels - 1):
        node["k"] = {}
        node = node["k"]
    return top


def test_a_loopx_field_nested_300_deep_is_refused_naming_file_and_field(db_url, tmp_path):
    path = _loopx_with_run_field(tmp_path, _nested(300))
    for mode in ("--dry-run", "--execute"):
        result = CliRunner().invoke(
            cli, ["--db", db_url, "import", "loopx-ledger", str(path), mode],
            catch_exceptions=False,
        )  # fmt: skip
        assert result.exit_code == 1, result.output
        line = result.stderr.strip()
        assert line.startswith("error: deep.json: benchmarks[") and "run extra.k.k" in line
        assert "nothing was imported" in line and "not valid JSON" not in line


def test_a_loopx_field_at_the_storable_depth_still_imports(db_url, tmp_path):
    path = _loopx_with_run_field(tmp_path, _nested(251))
    result = CliRunner().invoke(
        cli, ["--db", db_url, "import", "loopx-ledger", str(path), "--execute"],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == 0, result.output


def test_an_integer_past_64_bits_is_refused_not_rounded(db_url, tmp_path):
    path = _loopx_with_run_field(tmp_path, {"n_input_tokens": 10**21 + 7})
    result = CliRunner().invoke(
        cli, ["--db", db_url, "import", "loopx-ledger", str(path), "--execute"],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "1000000000000000000007" in result.stderr and "64 bits" in result.stderr
    assert "extra.n_input_tokens" in result.stderr


def test_a_harbor_token_count_past_64_bits_is_refused_not_rounded(db_url, tmp_path, monkeypatch):
    from tests.support_harbor_ingest_cli import copy_job, ingest, load_manifest

    manifest = load_manifest()
    job = next(j for j in manifest["jobs"] if "partial-credit" in j["job_dir"])
    job_dir = copy_job(FIXTURES_DIR, manifest, job, tmp_path)
    result_file = next(job_dir.glob("*/result.json"))
    text = result_file.read_text()
    assert '"n_input_tokens": ' in text
    result_file.write_text(
        re.sub(r'"n_input_tokens": \d+', '"n_input_tokens": 1000000000000000000007', text, count=1)
    )
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    call = ingest(job_dir, db=db_url, runtime_root=tmp_path / "rt")
    assert call.code == 1, call.result.output
    assert "1000000000000000000007" in call.stderr and "64 bits" in call.stderr
    assert "result.json" in call.stderr


def test_rebuild_verify_reports_a_cache_cell_of_the_wrong_type(db_url, tmp_path, monkeypatch):
    """A hand edit (SQLite keeps any type; PostgreSQL any bytes) is a difference, not a crash."""
    import json

    from tests.support_store import store_connection

    monkeypatch.chdir(tmp_path)
    ledger = tmp_path / "l.json"
    ledger.write_bytes((FIXTURES_DIR / "loopx-ledger" / "benchmark-run-ledger.json").read_bytes())
    imported = CliRunner().invoke(
        cli, ["--db", db_url, "import", "loopx-ledger", str(ledger), "--in-place", "--execute"],
        catch_exceptions=False,
    )  # fmt: skip
    assert imported.exit_code == 0, imported.output
    # SQLite: text where bytes belong; PostgreSQL (typed columns): a row text that is no JSON
    cell = "json_fragment = 'not bytes'" if db_url.startswith("sqlite") else "row = '{'"
    with store_connection(db_url) as conn:
        key = conn.execute("SELECT ledger_id, run_id FROM rm_ledger_rows LIMIT 1").first()
        conn.execute(
            f"UPDATE rm_ledger_rows SET {cell} WHERE ledger_id = ? AND run_id = ?", tuple(key)
        )
        conn.commit()
    result = CliRunner().invoke(
        cli, ["--db", db_url, "--format", "json", "rebuild", "--verify"], catch_exceptions=False
    )
    assert result.exit_code == 1, result.output
    assert "internal error" not in result.output
    report = json.loads(result.stdout)["rebuild_verify"]
    assert report["ok"] is False and report["differences"]


@pytest.mark.synthetic_events  # a payload nested on purpose
def test_a_payload_nested_past_what_the_store_writes_names_the_field(db_url):
    from benchledger.ledger.core.errors import InputError
    from benchledger.ledger.store.events import NewEvent

    s = opened(db_url)
    with pytest.raises(InputError, match=r"payload: field deep\.k\.k.* nested more than 254"):
        s.store.append([NewEvent("goal/g", "run_built", {"deep": _nested(300)})])
    assert s.store.head_position() == 0
    s.close()
