"""A ``benchmark run`` writes the run files of the records it just appended from their
immutable text (``CanonicalJson``), not from the read model's copy of it
(``projections/publishing/goal_files.py``). The bytes must be exactly those a render from the
store writes, whatever order the record's keys were built in, beside earlier runs of the
same goal that are read from the store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from benchledger.ledger.rules.history.goal_runs import record_paths_rel, runs_dir_rel
from benchledger.ledger.store.chain import CanonicalJson
from benchledger.projections.publishing import goal_files
from benchledger.projections.publishing.goal_files import render_goal_files
from benchledger.projections.publishing.goal_runs import (
    index_row,
    render_canonical_index_line,
    render_index_line,
)
from tests.support_harbor_ingest_cli import copy_job, files_under, ingest, load_manifest
from tests.support_store import opened


def _reversed_keys(value: Any) -> Any:
    """The same document built in another key order (a record in memory is in build order)."""
    if type(value) is dict:
        return {k: _reversed_keys(value[k]) for k in reversed(list(value))}
    if type(value) is list:
        return [_reversed_keys(item) for item in value]
    return value


def _in_memory(text: str) -> CanonicalJson:
    record = CanonicalJson(_reversed_keys(orjson.loads(text)))
    assert record.text == text.encode()
    return record


def _tree(root: Path) -> dict[str, bytes]:
    return {rel: (root / rel).read_bytes() for rel in files_under(root)}


def test_appended_records_render_the_bytes_the_store_renders(
    fixtures_dir: Path, tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the ledger files go to the working directory
    manifest = load_manifest(fixtures_dir)
    jobs = [j for j in manifest["jobs"] if j["group"] != "bad"][:2]
    runtime = tmp_path / "rt"
    for job in jobs:  # the second ingest renders beside the first one's stored runs
        job_dir = copy_job(fixtures_dir, manifest, job, tmp_path / job["key"])
        assert ingest(job_dir, db=db_url, runtime_root=runtime).code == 0
    with opened(db_url) as store:
        with store.store.database.connect() as conn:
            query = "SELECT stem, record FROM rm_goal_runs WHERE goal_id = ? ORDER BY position"
            texts = {stem: text for stem, text in conn.execute(query, ("g",))}
            assert len(texts) >= 2
            last = list(texts)[len(texts) // 2 :]
            appended = {stem: _in_memory(texts[stem]) for stem in last}
            from_store = render_goal_files(conn, "g", tmp_path / "a")
            from_memory = render_goal_files(conn, "g", tmp_path / "b", last, appended)
    ingested = _tree(runtime)  # what the ingests wrote, the last one from memory
    assert {rel: ingested[rel] for rel in _tree(tmp_path / "a")} == _tree(tmp_path / "a")
    written = _tree(tmp_path / "b")
    for rel, data in _tree(tmp_path / "a").items():
        if rel.endswith("index.jsonl") or any(stem in rel for stem in last):
            assert written[rel] == data, rel
    digests = {Path(e["path"]).name: e["sha256"] for e in from_store}
    assert all(digests[Path(e["path"]).name] == e["sha256"] for e in from_memory)


@pytest.mark.parametrize("share", ["half", "all"])
def test_more_appended_records_than_one_statement_names_render_the_same_bytes(
    fixtures_dir: Path,
    tmp_path: Path,
    db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    share: str,
) -> None:
    """Beyond ``_MAX_SKIPPED_TEXTS`` appended stems: all of the goal's runs are read as stems
    alone, some of them with every text (the others' are read from the store)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(goal_files, "_MAX_SKIPPED_TEXTS", 1)
    manifest = load_manifest(fixtures_dir)
    jobs = [j for j in manifest["jobs"] if j["group"] != "bad"][:2]
    for job in jobs:
        job_dir = copy_job(fixtures_dir, manifest, job, tmp_path / job["key"])
        assert ingest(job_dir, db=db_url, runtime_root=tmp_path / "rt").code == 0
    with opened(db_url) as store:
        with store.store.database.connect() as conn:
            query = "SELECT stem, record FROM rm_goal_runs WHERE goal_id = ? ORDER BY position"
            texts = {stem: text for stem, text in conn.execute(query, ("g",))}
            assert len(texts) >= 3
            known = list(texts) if share == "all" else list(texts)[1:]
            appended = {stem: _in_memory(texts[stem]) for stem in known}
            from_store = render_goal_files(conn, "g", tmp_path / "a")
            from_memory = render_goal_files(conn, "g", tmp_path / "b", None, appended)
    assert _tree(tmp_path / "b") == _tree(tmp_path / "a")
    assert [e["sha256"] for e in from_memory] == [e["sha256"] for e in from_store]


def test_a_record_holding_path_keys_gets_the_stores_index_line() -> None:
    text = orjson.dumps(
        {"z": 1, "json_path": "elsewhere", "a": [1.5, None]}, option=orjson.OPT_SORT_KEYS
    )
    record = _in_memory(text.decode())
    expected = render_index_line(index_row(orjson.loads(text), goal_id="g", stem="s"), plain=True)
    assert render_canonical_index_line(record, goal_id="g", stem="s") == expected
    plain = _in_memory('{"a":{"b":0.5,"c":"é"},"b":true}')
    assert plain.plain
    expected = render_index_line(index_row(orjson.loads(plain.text), goal_id="g", stem="s"))
    assert render_canonical_index_line(plain, goal_id="g", stem="s") == expected


def test_a_record_orjson_prints_differently_gets_the_stores_index_line() -> None:
    """A float ``json`` prints in exponent form: the text cannot simply be spliced."""
    record = CanonicalJson({"score": 1e-7, "big": 1e20, "ok": 0.5})
    assert not record.plain
    expected = render_index_line(index_row(orjson.loads(record.text), goal_id="g", stem="s"))
    assert render_canonical_index_line(record, goal_id="g", stem="s") == expected
    assert '"score":1e-07' in expected  # as ``json`` writes it, not orjson's 1e-7


@pytest.mark.parametrize("root", ["rt", "./rt/", "/", "/srv//rt"])
@pytest.mark.parametrize("stem", ["2026-01-01T00-00-00Z-2", "a/b", "", ".", "..", "x.y"])
def test_run_file_paths_print_as_pathlib_prints_them(root: str, stem: str) -> None:
    """The run files' paths (recorded in ``export_written``) are spliced as strings: the same
    text as ``str(runtime_root / rel)``, whatever the root or the stem."""
    runtime_root = Path(root)
    runs_dir = str(runtime_root / runs_dir_rel("g"))
    expected = tuple(str(runtime_root / rel) for rel in record_paths_rel("g", stem))
    assert goal_files._record_paths(runtime_root, runs_dir, "g", stem) == expected
