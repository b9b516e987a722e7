"""Malformed compact runs and ledger files through the ledger commands.

``run-ledger-upsert`` reads a compact run from a file or stdin, ``import loopx-ledger`` reads
a whole ledger document, and every ledger command may find a damaged file already sitting at
``--run-ledger-path``. Each example damages one of them; the outcome rule is
``support_bad_input.assert_honest``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import FIXTURES_DIR
from tests.support_bad_input import BOUNDED, Workspace, assert_honest, workspace
from tests.support_bad_json import RAW_TOKENS, Raw, damaged_json, dumps_with_raw
from tests.test_ledger_cli import compact_run

LOOPX_LEDGER = FIXTURES_DIR / "loopx-ledger" / "benchmark-run-ledger.json"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bad-ledger")


def _inputs() -> dict[str, bytes]:
    """Every accepted input shape (docs/formats/benchmark_run_v0.md §2), as real compact JSON."""
    run = compact_run("fix-git", score=1, job="tb_fix_git_bad")
    other = compact_run("regex-log", score=0, job="tb_regex_bad")
    shapes = {
        "record": run,
        "wrapped": {"benchmark_run": run, "goal_id": "g"},
        "reducer": {"schema_version": "harbor_job_result_reducer_v0", "compact_benchmark_run": run},
        "batch": {"schema_version": "benchmark_run_batch_v0", "benchmark_runs": [run, other]},
    }
    return {name: json.dumps(doc, indent=2).encode() for name, doc in shapes.items()}


INPUTS = _inputs()


def _small_ledger() -> bytes:
    """The loopx fixture ledger cut to two cases, so an import per example stays cheap."""
    document = json.loads(LOOPX_LEDGER.read_text("utf-8"))
    name, node = next(iter(document["benchmarks"].items()))
    node["cases"] = dict(list(node["cases"].items())[:2])
    document["benchmarks"] = {name: node}
    return json.dumps(document, indent=2).encode()


SMALL_LEDGER = _small_ledger()


def _upsert(ws: Workspace, *args: str, stdin: bytes | None = None):
    return ws.invoke(
        "benchmark", "run-ledger-upsert", *args, "--execute", "--format", "json", stdin=stdin
    )


# --------------------------------------------------------------------------- compact JSON


@BOUNDED
@given(shape=st.sampled_from(sorted(INPUTS)), stdin=st.booleans(), data=st.data())
def test_damaged_compact_run(base: Path, shape: str, stdin: bool, data: st.DataObject) -> None:
    with workspace(base) as ws:
        raw = data.draw(damaged_json(INPUTS[shape]), label="bytes")
        before = ws.snapshot()
        if stdin:
            result = _upsert(ws, "--benchmark-run-json", "-", stdin=raw)
        else:
            (ws.project / "run.json").write_bytes(raw)
            result = _upsert(ws, "--benchmark-run-json", "run.json")
        assert_honest(ws, result, before)


@pytest.mark.parametrize("token", RAW_TOKENS, ids=lambda t: t.text[:12])
@pytest.mark.parametrize(
    "path",
    [("official_task_score", "value"), ("case_id",), ("progress", "n_total_trials")],
    ids=lambda p: ".".join(p),
)
def test_literal_tokens_in_compact_run(base: Path, path: tuple, token: Raw) -> None:
    with workspace(base) as ws:
        run = compact_run("fix-git", score=1, job="tb_fix_git_lit")
        target = run
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = token
        before = ws.snapshot()
        result = _upsert(ws, "--benchmark-run-json", "-", stdin=dumps_with_raw(run))
        assert_honest(ws, result, before)


@pytest.mark.parametrize(
    "how", ["missing", "directory", "empty_stdin", "dangling_symlink", "non_utf8_name"]
)
def test_unreadable_compact_run_paths(base: Path, how: str) -> None:
    with workspace(base) as ws:
        arg, stdin = "run.json", None
        if how == "directory":
            (ws.project / "run.json").mkdir()
        elif how == "empty_stdin":
            arg, stdin = "-", b""
        elif how == "dangling_symlink":
            (ws.project / "run.json").symlink_to(ws.project / "gone.json")
        elif how == "non_utf8_name":
            arg = "run-\udcff.json"
        before = ws.snapshot()
        assert_honest(ws, _upsert(ws, "--benchmark-run-json", arg, stdin=stdin), before)


# --------------------------------------------------------------------------- loopx import


# The import keeps a loopx file's rows and policy as found, wrong types included, so a damaged
# file can store payloads its contract refuses (``verify --schemas`` names them).
@pytest.mark.synthetic_events
@BOUNDED
@given(data=st.data())
def test_damaged_loopx_ledger_import(base: Path, data: st.DataObject) -> None:
    with workspace(base) as ws:
        path = ws.project / "L.json"
        path.write_bytes(data.draw(damaged_json(SMALL_LEDGER), label="bytes"))
        ws.extra_public = [path, ws.project / "L.md"]
        before = ws.snapshot()
        # --in-place: the import renders its ledger over the source, so the published file is
        # current (without it the store's ledger is unrendered and `verify --files` says so).
        result = ws.invoke(
            "import", "loopx-ledger", "L.json", "--in-place", "--execute", "--format", "json"
        )
        assert_honest(ws, result, before)
        if result.exit_code == 0:
            # What was imported must also survive the next write to that ledger.
            (ws.project / "run.json").write_bytes(INPUTS["record"])
            before = ws.snapshot()
            again = _upsert(ws, "--benchmark-run-json", "run.json", "--run-ledger-path", "L.json")
            assert_honest(ws, again, before)


# --------------------------------------------------------------------------- existing files


@BOUNDED
@given(
    command=st.sampled_from(["upsert", "render", "archive", "harbor"]),
    imported=st.booleans(),
    data=st.data(),
)
def test_damaged_file_already_at_run_ledger_path(
    base: Path, command: str, imported: bool, data: st.DataObject
) -> None:
    """A damaged file where the ledger would be written: refused, or replaced from the store
    when the store owns that ledger; never half-written."""
    with workspace(base) as ws:
        path = ws.project / "L.json"
        ws.extra_public = [path, ws.project / "L.md"]
        if imported:
            path.write_bytes(SMALL_LEDGER)
            ws.ok("import", "loopx-ledger", "L.json", "--execute")
        path.write_bytes(data.draw(damaged_json(SMALL_LEDGER), label="bytes"))
        (ws.project / "run.json").write_bytes(INPUTS["record"])
        before = ws.snapshot()
        if command == "upsert":
            result = _upsert(ws, "--benchmark-run-json", "run.json", "--run-ledger-path", "L.json")
        elif command == "render":
            result = ws.invoke("render", "--run-ledger-path", "L.json", "--format", "json")
        elif command == "archive":
            result = ws.invoke(
                "benchmark", "run-ledger-archive", "--benchmark-id", "terminal-bench@2.0",
                "--case-id", "fix-git", "--reason", "r", "--run-ledger-path", "L.json",
                "--execute", "--format", "json",
            )  # fmt: skip
        else:
            result = ws.invoke(
                "benchmark", "run", "terminal-bench", "--goal-id", "g", "--harbor-job-dir",
                str(FIXTURES_DIR / "harbor/adhoc-local/2026-05-07__07-07-07"),
                "--update-run-ledger", "--run-ledger-path", "L.json", "--execute",
                "--format", "json",
            )  # fmt: skip
        assert_honest(ws, result, before, verify_files=not imported)


@pytest.mark.parametrize("how", ["directory", "dangling_symlink", "symlink_loop"])
def test_run_ledger_path_is_not_a_file(base: Path, how: str) -> None:
    with workspace(base) as ws:
        path = ws.project / "L.json"
        if how == "directory":
            path.mkdir()
        elif how == "dangling_symlink":
            path.symlink_to(ws.project / "gone" / "L.json")
        else:
            path.symlink_to(path)
        (ws.project / "run.json").write_bytes(INPUTS["record"])
        before = ws.snapshot()
        result = _upsert(ws, "--benchmark-run-json", "run.json", "--run-ledger-path", "L.json")
        assert_honest(ws, result, before)
        if how == "directory":
            assert result.exit_code == 1 and path.is_dir()
        elif result.exit_code == 0:  # the link itself was replaced, nothing written through it
            assert not path.is_symlink() and not (ws.project / "gone").exists()
