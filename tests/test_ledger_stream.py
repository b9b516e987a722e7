"""The incremental ledger render (cached pieces streamed from the read model) writes exactly
the bytes of a full render (build the document, dump it, render the Markdown), after any
sequence of upserts, replacements, moves between cases, archives, restores, merges and imports,
across several ledgers, on SQLite and PostgreSQL; and replay rebuilds the same cache."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchledger.commands.cli import cli
from benchledger.ledger.store import events as ev
from benchledger.ledger.store.events import NewEvent
from benchledger.projections.publishing.ledger_files import ledger_document, render_ledger_files
from benchledger.projections.publishing.ledger_stream import stream_ledger_json
from benchledger.projections.publishing.ledger_v0 import dump_json, render_markdown
from benchledger.projections.read_models import tables
from benchledger.projections.read_models.ledger_queries import LedgerQueries
from tests.support_store import opened, table_rows
from tests.test_ledger_cli import compact_run, write_json

LEDGERS = ("L1", "L2", "L3")


def full_render(conn, ledger_id: str) -> tuple[bytes, bytes]:
    doc = ledger_document(conn, ledger_id)
    return dump_json(doc), render_markdown(doc).encode("utf-8")


def streamed_render(conn, ledger_id: str, tmp_path: Path) -> tuple[bytes, bytes] | None:
    meta = LedgerQueries(conn).ledger(ledger_id)
    path = tmp_path / f"stream-{ledger_id}.json"
    markdown_path = path.with_suffix(".md")
    done = stream_ledger_json(conn, ledger_id, meta, path, markdown_path)
    if done is None:
        assert not list(tmp_path.glob(".*.tmp")), "a render that gave up left a temp file"
        return None
    sha256, markdown = done
    assert markdown.tmp.exists()  # written in full, published by the caller
    markdown.publish()
    data = markdown_path.read_bytes()
    assert markdown.sha256 == hashlib.sha256(data).hexdigest() and markdown.size == len(data)
    assert sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    return path.read_bytes(), data


def assert_stream_equals_full(store, tmp_path: Path, ledgers=LEDGERS) -> None:
    with store.database.connect() as conn:
        known = set(LedgerQueries(conn).ledger_ids())
        for ledger_id in ledgers:
            if ledger_id not in known:
                continue
            streamed = streamed_render(conn, ledger_id, tmp_path)
            assert streamed is not None, f"{ledger_id}: the cache could not render"
            json_bytes, markdown = full_render(conn, ledger_id)
            assert streamed[0] == json_bytes, ledger_id
            assert streamed[1] == markdown, ledger_id


# ------------------------------------------------------------------------------- generated rows

_ARMS = ("codex_baseline", "codex_treatment", "loopx-product-mode-treatment", "other-arm", None)
_SCOPES = ("passed", "case_or_solution", "runner_or_setup", "verifier_or_infra", None)
_TIMES = (
    "2026-05-01T10:00:00Z",
    "2026-05-01T12:00:00+02:00",  # the same instant as the line above
    "2026-05-02T09:00:00",
    "2026-05-03T00:00:00.250000+00:00",
    "not a time",
    None,
)
_CASES = ("fix-git", "zeta", "älpha", "Case-B", "", "unknown-case")


def _row(rng: random.Random, run_id: str) -> dict:
    row: dict = {
        "run_id": run_id,
        "benchmark_id": rng.choice(("terminal-bench@2.0", "skillsbench@1", "", "b-ü")),
        "case_id": rng.choice(_CASES),
        "recorded_at": rng.choice(_TIMES),
        "arm_id": rng.choice(_ARMS),
        "failure_scope": rng.choice(_SCOPES),
        "official_score": rng.choice((0.0, 1.0, 0.5, 1e-05, 3e20, None, 2)),
        "official_passed": rng.choice((True, False, None)),
        "run_ref": f"{rng.randrange(16**8):08x}e{rng.randrange(10)}",  # hex that looks like 1e5
        "round_rewards": [{"agent_round": 1, "reward": rng.choice((0.0, 1.0)), "passed": True}],
        "artifact_refs": {"result_ref": f"jobs/{run_id}/result.json"},
        "nested": {"list": [1e-7, "x", {"deep": [None, True]}], "empty": {}, "none": []},
    }
    if rng.random() < 0.4:
        row["repair_priority"] = rng.choice(("P0", "P1", "P2", "P9"))
        row["repair_class"] = rng.choice(
            ("runner_setup_timeout", "case_timeout_research", "case_exception_research")
        )
        row["next_action"] = "rerun " * rng.randrange(1, 60)
    if rng.random() < 0.25:
        row["archive_state"] = "archived"
    return {k: v for k, v in row.items() if v is not None}


def _event(ledger_id: str, event_type: str, rows: list[dict], n: int) -> NewEvent:
    payload: dict = {
        "ledger_id": ledger_id,
        "ledger_path": f"{ledger_id}.json",
        "updated_at": f"2026-06-01T00:00:{n % 60:02d}Z",
    }
    if event_type == ev.LEDGER_UPSERTED:
        payload["row"] = rows[0]
    else:
        payload["rows"] = rows
    if n == 0:
        payload["update_policy"] = {"update_rule": "test", "n": 1}
    return NewEvent(f"ledger/{ledger_id}", event_type, payload)


@pytest.mark.synthetic_events  # hand-made payloads on purpose
def test_incremental_render_equals_full_render_after_every_command(db_url, tmp_path):
    rng = random.Random(20261201)
    with opened(db_url) as s:
        known: dict[str, dict[str, dict]] = {lid: {} for lid in LEDGERS}
        for n in range(60):
            ledger_id = rng.choice(LEDGERS)
            rows = known[ledger_id]
            kind = rng.choice(
                (ev.LEDGER_UPSERTED,) * 4
                + (ev.LEDGER_RUNS_ARCHIVED, ev.LEDGER_RUNS_RESTORED, ev.LEDGER_MERGED)
                + (ev.LEDGER_IMPORTED,)
            )
            if kind == ev.LEDGER_UPSERTED:
                # a new run, a replacement in place, or the same run moved to another case
                run_id = rng.choice([*rows, f"r{n}"]) if rows else f"r{n}"
                batch = [_row(rng, run_id)]
            elif kind in (ev.LEDGER_RUNS_ARCHIVED, ev.LEDGER_RUNS_RESTORED) and rows:
                chosen = rng.sample(sorted(rows), min(len(rows), rng.randrange(1, 6)))
                state = "archived" if kind == ev.LEDGER_RUNS_ARCHIVED else "active"
                batch = [{**rows[r], "archive_state": state} for r in chosen]
            else:
                size = 250 if kind == ev.LEDGER_IMPORTED else rng.randrange(1, 8)
                batch = [_row(rng, f"m{n}-{i}") for i in range(size)]
            for row in batch:
                rows[row["run_id"]] = row
            s.store.append([_event(ledger_id, kind, batch, n)])
            assert_stream_equals_full(s.store, tmp_path, (ledger_id,))
        assert_stream_equals_full(s.store, tmp_path)
        report = s.projections.verify_rebuild(s.store)
        assert report.ok, report.differences
        s.projections.rebuild(s.store)
        assert_stream_equals_full(s.store, tmp_path)


@pytest.mark.synthetic_events  # hand-made payloads on purpose
def test_a_ledger_the_cache_cannot_render_is_rendered_in_full(db_url, tmp_path):
    if db_url.startswith("postgresql"):
        pytest.skip("PostgreSQL text cannot hold NUL: such an id never reaches its read model")
    with opened(db_url) as s:
        rows = [
            {"run_id": "a", "benchmark_id": "b", "case_id": "c", "recorded_at": "2026-01-01"},
            {"run_id": "z", "benchmark_id": "b", "case_id": "nul\x00case", "recorded_at": "x"},
        ]
        s.store.append([_event("L1", ev.LEDGER_MERGED, rows, 1)])
        json_path, md_path = tmp_path / "L1.json", tmp_path / "L1.md"
        with s.store.database.connect() as conn:
            assert streamed_render(conn, "L1", tmp_path) is None
            assert not (tmp_path / "stream-L1.json").exists()  # nothing half-written
            render_ledger_files(conn, "L1", json_path, md_path)
            expected = full_render(conn, "L1")
        assert (json_path.read_bytes(), md_path.read_bytes()) == expected
        assert "nul\\u0000case" in json_path.read_text()


@contextmanager
def _four_rows_rendered(s, tmp_path):
    """Ledger L1 with four rows in two cases, rendered once (which fills the render cache);
    yields the write transaction the render ran in."""
    rows = [{"run_id": f"r{i}", "benchmark_id": "b", "case_id": f"c{i % 2}"} for i in range(4)]
    s.store.append([_event("L1", ev.LEDGER_MERGED, rows, 1)])
    with s.store.database.begin() as conn:
        assert streamed_render(conn, "L1", tmp_path) is not None  # fills the cache
        yield conn


@pytest.mark.synthetic_events  # hand-made payloads on purpose
def test_a_cache_that_does_not_add_up_is_never_published(db_url, tmp_path):
    """A filled row that lost its piece (as from a bug or a hand edit) makes the render fall
    back (rows a write left without pieces are filled by the render instead)."""
    with opened(db_url) as s:
        with _four_rows_rendered(s, tmp_path) as conn:
            conn.execute("UPDATE rm_ledger_rows SET json_fragment = NULL WHERE run_id = 'r3'")
        with s.store.database.connect() as conn:
            assert streamed_render(conn, "L1", tmp_path) is None


@pytest.mark.synthetic_events  # hand-made payloads on purpose
@pytest.mark.parametrize("run_ids", [("r0",), ("r3",), ("r0", "r1", "r2", "r3")])
def test_a_row_without_its_render_key_is_never_published(db_url, tmp_path, run_ids):
    """A case's rows are checked by their first and last render keys only (the keys between
    lie in the same range); a NULL key sorts first on SQLite and last on PostgreSQL, so it is
    always a first or a last one: the streamed render falls back or writes the full render's
    bytes, it never fails or differs."""
    with opened(db_url) as s:
        with _four_rows_rendered(s, tmp_path) as conn:
            for run_id in run_ids:
                conn.execute(
                    "UPDATE rm_ledger_rows SET render_key = NULL WHERE run_id = ?", (run_id,)
                )
        with s.store.database.connect() as conn:
            streamed = streamed_render(conn, "L1", tmp_path)
            assert streamed is None or streamed == full_render(conn, "L1")


@pytest.mark.synthetic_events  # hand-made payloads on purpose
@pytest.mark.parametrize(
    ("batch_rows", "chunk", "lines"), [(1, 1, 1), (2, 700, 3), (7, 1 << 20, 50)]
)
def test_any_batch_and_chunk_size_writes_the_full_renders_bytes(
    db_url, tmp_path, monkeypatch, batch_rows, chunk, lines
):
    """Rows are read in batches of cases and handed to the writers in chunks: wherever a batch
    or a chunk ends (inside a benchmark, after a case without active runs, mid-Markdown), the
    bytes are the full render's."""
    from benchledger.projections.publishing import ledger_stream

    monkeypatch.setattr(ledger_stream, "_BATCH_ROWS", batch_rows)
    monkeypatch.setattr(ledger_stream, "_CHUNK", chunk)
    monkeypatch.setattr(ledger_stream, "_MARKDOWN_LINES", lines)
    rng = random.Random(batch_rows)
    with opened(db_url) as s:
        rows = [_row(rng, f"m{i}") for i in range(120)]
        s.store.append([_event("L1", ev.LEDGER_MERGED, rows, 0)])
        archived = [{**r, "archive_state": "archived"} for r in rows if r["case_id"] == "zeta"]
        s.store.append([_event("L1", ev.LEDGER_RUNS_ARCHIVED, archived, 1)])
        assert_stream_equals_full(s.store, tmp_path, ("L1",))


@pytest.mark.synthetic_events  # hand-made payloads on purpose
@pytest.mark.parametrize(
    "corruption",
    [
        "UPDATE rm_ledger_rows SET markdown_line = NULL WHERE run_id = 'r2'",
        "UPDATE rm_ledger_cases SET active_run_count = active_run_count + 1 WHERE case_id = 'c0'",
        "UPDATE rm_ledger_cases SET active_run_count = active_run_count"
        " + (CASE WHEN case_id = 'c0' THEN 1 ELSE -1 END)",
        "UPDATE rm_ledger_cases SET active_run_count = 1, archived_run_count = 1"
        " WHERE case_id = 'c1'",
    ],
    ids=["active-row-without-line", "count-too-high", "count-moved", "archived-count-wrong"],
)
def test_cached_counts_or_lines_that_do_not_add_up_never_publish_other_bytes(
    db_url, tmp_path, corruption
):
    """Each case's rows must arrive under its prefix in its counted number, with a Runs line
    exactly for its active ones: a cache that says otherwise is decided again or rendered in
    full, never written as it stands."""
    with opened(db_url) as s:
        with _four_rows_rendered(s, tmp_path) as conn:
            conn.execute(corruption)
        with s.store.database.begin() as conn:
            streamed = streamed_render(conn, "L1", tmp_path)
            assert streamed is None or streamed == full_render(conn, "L1")


# ------------------------------------------------------------------------------- the CLI


class _Cli:
    def __init__(self, db_url: str) -> None:
        self.db_url = db_url

    def ok(self, *args: str) -> dict:
        result = CliRunner().invoke(cli, ["--db", self.db_url, *args, "--format", "json"])
        assert result.exit_code == 0, result.stderr + result.stdout
        return json.loads(result.stdout)


def _files_equal_full_render(db_url: str, root: Path, name: str) -> None:
    with opened(db_url) as s:
        with s.store.database.connect() as conn:
            ledger_id = next(i for i in LedgerQueries(conn).ledger_ids() if i.endswith(name))
            json_bytes, markdown = full_render(conn, ledger_id)
            assert streamed_render(conn, ledger_id, root) is not None
    assert (root / name).read_bytes() == json_bytes
    assert (root / name).with_suffix(".md").read_bytes() == markdown


def test_cli_sequence_on_the_real_loopx_ledger(db_url, tmp_path, monkeypatch, fixtures_dir):
    monkeypatch.chdir(tmp_path)
    env = _Cli(db_url)
    src = fixtures_dir / "loopx-ledger" / "benchmark-run-ledger.json"
    shutil.copyfile(src, tmp_path / "L.json")
    env.ok("import", "loopx-ledger", "L.json", "--execute", "--in-place")
    _files_equal_full_render(db_url, tmp_path, "L.json")
    doc = json.loads((tmp_path / "L.json").read_text())
    tb = sorted(doc["benchmarks"])[0]
    archive = ["--run-ledger-path", "L.json", "--benchmark-id", tb,
               "--archive-all-matching-benchmark"]  # fmt: skip
    env.ok("benchmark", "run-ledger-archive", *archive, "--reason", "superseded", "--execute")
    _files_equal_full_render(db_url, tmp_path, "L.json")
    env.ok("benchmark", "run-ledger-restore", *archive, "--reason", "oops", "--execute")
    _files_equal_full_render(db_url, tmp_path, "L.json")
    shutil.copyfile(src, tmp_path / "M.json")
    env.ok("benchmark", "run-ledger-merge", "--run-ledger-path", "T.json",
           "--source-run-ledger-path", "M.json", "--execute")  # fmt: skip
    _files_equal_full_render(db_url, tmp_path, "T.json")
    for case, score, job in (("fix-git", 1, "j1"), ("fix-git", 0, "j2"), ("new-case", 1, "j3")):
        name = write_json(tmp_path / f"{job}.json", compact_run(case, score=score, job=job))
        env.ok("benchmark", "run-ledger-upsert", "--run-ledger-path", "T.json",
               "--benchmark-run-json", name, "--execute")  # fmt: skip
        _files_equal_full_render(db_url, tmp_path, "T.json")
    env.ok("benchmark", "run-ledger-upsert", "--run-ledger-path", "T.json",
           "--benchmark-run-json", name, "--execute")  # the same run again: a no-op  # fmt: skip
    _files_equal_full_render(db_url, tmp_path, "T.json")
    assert env.ok("rebuild", "--verify")["ok"]


def test_an_import_fills_the_render_cache_of_its_ledger(
    db_url, tmp_path, monkeypatch, fixtures_dir
):
    """``import loopx-ledger`` without ``--in-place`` renders nothing but computes the pieces
    (else the first upsert into the imported ledger pays for every row); they are what the
    rows give (``rebuild --verify`` checks them) and render the same bytes as a full render."""
    monkeypatch.chdir(tmp_path)
    env = _Cli(db_url)
    src = fixtures_dir / "loopx-ledger" / "benchmark-run-ledger.json"
    shutil.copyfile(src, tmp_path / "L.json")
    env.ok("import", "loopx-ledger", "L.json", "--execute")
    with opened(db_url) as s:
        with s.store.database.connect() as conn:
            rows = conn.execute("SELECT count(*) FROM rm_ledger_rows").scalar()
            unfilled = conn.execute(
                "SELECT count(*) FROM rm_ledger_rows WHERE render_key IS NULL"
            ).scalar()
            cases = conn.execute("SELECT count(*) FROM rm_ledger_cases").scalar()
    assert rows > 0 and unfilled == 0 and cases > 0
    assert env.ok("rebuild", "--verify")["ok"]
    env.ok("render", "--run-ledger-path", "L.json")
    _files_equal_full_render(db_url, tmp_path, "L.json")


# ------------------------------------------------------------------------------- migration


@pytest.mark.synthetic_events  # hand-made payloads on purpose
def test_upgrade_from_0001_fills_the_cache_like_replay(db_url, tmp_path):
    from alembic import command

    from benchledger.ledger.store.database import alembic_config

    rng = random.Random(3)
    with opened(db_url) as s:
        rows = [_row(rng, f"r{i}") for i in range(40)]
        s.store.append([_event("L1", ev.LEDGER_IMPORTED, rows, 0)])
        with s.store.database.begin() as conn:
            before = full_render(conn, "L1")
            assert streamed_render(conn, "L1", tmp_path) == before  # fills the cache
            cases = table_rows(conn, tables.LEDGER_CASES)
            assert cases
        command.downgrade(alembic_config(s.store.database), "0001_initial")
        command.upgrade(alembic_config(s.store.database), "head")
        with s.store.database.begin() as conn:
            assert table_rows(conn, tables.LEDGER_CASES) == []  # 0002 leaves the cache empty
            assert streamed_render(conn, "L1", tmp_path) == before  # the render fills it
            assert table_rows(conn, tables.LEDGER_CASES) == cases
        assert s.projections.verify_rebuild(s.store).ok
        s.projections.rebuild(s.store)  # a replayed store renders the same bytes
        with s.store.database.connect() as conn:
            assert streamed_render(conn, "L1", tmp_path) == before


@pytest.mark.synthetic_events  # hand-made payloads on purpose
@pytest.mark.parametrize("value", [1e-05, 3e20, -0.0, 1e16])
def test_awkward_floats_render_like_json(value, db_url, tmp_path):
    with opened(db_url) as s:
        rows = [{"run_id": "r", "benchmark_id": "b", "case_id": "c", "official_score": value}]
        s.store.append([_event("L1", ev.LEDGER_MERGED, rows, 0)])
        assert_stream_equals_full(s.store, tmp_path, ("L1",))
