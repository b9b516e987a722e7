"""Malformed BenchFlow result trees through ``benchmark run skillsbench``.

Each example copies a real multi-task fixture root, damages one file or the layout, and ingests
it both as a root (discovery) and, where the damaged file is a rollout's result, explicitly.
The outcome rule is ``support_bad_input.assert_honest``.
"""

from __future__ import annotations

import builtins
import io
import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import FIXTURES_DIR
from tests.support_bad_input import (
    BENCHFLOW_CASE,
    BOUNDED,
    Workspace,
    assert_honest,
    benchflow_empty_dirs,
    make_writable_copy,
    workspace,
)
from tests.support_bad_json import RAW_TOKENS, Raw, damaged_json, dumps_with_raw, set_at

JOB = "jobs/2026-03-02__23-11-00"
ROLLOUTS = (
    "3d-scan-volume__2949ac3e",
    "citation-check__25604556",
    "pdf-table-extract__5cb51cd7",
    "weather-csv-merge__af1bafac",
)
JSON_FILES = (
    "jobs/summary.json",
    f"{JOB}/summary.json",
    *(f"{JOB}/{r}/{n}" for r in ROLLOUTS[:2] for n in ("result.json", "timing.json")),
)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bad-benchflow")


def _root(ws: Workspace) -> Path:
    return make_writable_copy(
        FIXTURES_DIR / "benchflow" / BENCHFLOW_CASE,
        ws.project / "bf",
        benchflow_empty_dirs(BENCHFLOW_CASE),
    )


def _run(ws: Workspace, *args: str):
    return ws.invoke(
        "benchmark", "run", "skillsbench", "--goal-id", "g", *args,
        "--update-run-ledger", "--execute", "--format", "json",
    )  # fmt: skip


def _check(ws: Workspace, *args: str) -> None:
    before = ws.snapshot()
    assert_honest(ws, _run(ws, *args), before)
    for text in ws.published().values():
        assert b"/Users/alice" not in text and b"sk-proj-" not in text


def _flags(root: Path, rel: str, explicit: bool) -> list[str]:
    if explicit and rel.endswith("/result.json"):
        return ["--skillsbench-result-json", str(root / rel)]
    return ["--skillsbench-result-root", str(root)]


@BOUNDED
@given(
    rel=st.sampled_from(JSON_FILES),
    explicit=st.booleans(),
    keep_corrupt=st.booleans(),
    data=st.data(),
)
def test_damaged_json_file(
    base: Path, rel: str, explicit: bool, keep_corrupt: bool, data: st.DataObject
) -> None:
    with workspace(base) as ws:
        root = _root(ws)
        path = root / rel
        path.write_bytes(data.draw(damaged_json(path.read_bytes()), label="bytes"))
        extra = ["--keep-corrupt"] if keep_corrupt else []
        _check(ws, *_flags(root, rel, explicit), *extra)


LAYOUT = ("delete", "empty", "directory", "dangling_symlink", "symlink_outside", "loop")


def _damage_layout(ws: Workspace, root: Path, rel: str, how: str) -> None:
    path = root / rel
    if how == "delete":
        path.unlink()
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "directory":
        path.unlink()
        (path / "result.json").mkdir(parents=True)
    elif how == "dangling_symlink":
        path.unlink()
        path.symlink_to(ws.project / "no-such-file.json")
    elif how == "symlink_outside":
        secret = ws.project / "outside.json"
        secret.write_text(
            json.dumps({"task_name": "x /Users/alice/y", "agent": "token=abcdef1234567890"}),
            encoding="utf-8",
        )
        path.unlink()
        path.symlink_to(secret)
    else:  # <dir>/loop -> <dir>, and <dir>/up -> the root's parent
        path.parent.joinpath("loop").symlink_to(path.parent, target_is_directory=True)
        path.parent.joinpath("up").symlink_to(root.parent, target_is_directory=True)


@BOUNDED
@given(rel=st.sampled_from(JSON_FILES), how=st.sampled_from(LAYOUT), explicit=st.booleans())
def test_damaged_layout(base: Path, rel: str, how: str, explicit: bool) -> None:
    with workspace(base) as ws:
        root = _root(ws)
        _damage_layout(ws, root, rel, how)
        _check(ws, *_flags(root, rel, explicit))


@pytest.mark.parametrize("how", ["loop", "file", "dangling"])
def test_root_itself_is_broken(base: Path, how: str) -> None:
    with workspace(base) as ws:
        root = ws.project / "root"
        if how == "loop":
            root.symlink_to(root)
        elif how == "file":
            root.write_text("{}", encoding="utf-8")
        else:
            root.symlink_to(ws.project / "gone")
        _check(ws, "--skillsbench-result-root", str(root))
        _check(ws, "--skillsbench-result-json", str(root))


@BOUNDED
@given(
    rels=st.sets(st.sampled_from(JSON_FILES), min_size=1, max_size=3),
    error=st.sampled_from([FileNotFoundError, PermissionError, IsADirectoryError, OSError]),
    explicit=st.booleans(),
)
def test_files_vanish_between_listing_and_reading(
    base: Path, rels: set[str], error: type, explicit: bool
) -> None:
    """The walk saw the file; opening it fails as if it had been removed in between."""
    with workspace(base) as ws:
        root = _root(ws)
        victims = {os.path.abspath(root / rel) for rel in rels}
        real = builtins.open

        def fake(file, *args, **kwargs):  # noqa: ANN001, ANN202
            if isinstance(file, (str, os.PathLike)) and os.path.abspath(file) in victims:
                raise error(2, "vanished", os.fspath(file))
            return real(file, *args, **kwargs)

        before = ws.snapshot()
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(builtins, "open", fake)
            mp.setattr(io, "open", fake)
            result = _run(ws, *_flags(root, sorted(rels)[0], explicit))
        assert_honest(ws, result, before)


# Where a literal lands matters: a number field, a text field, a nested block.
LITERAL_TARGETS = (
    (f"{JOB}/{ROLLOUTS[1]}/timing.json", ("agent_setup",)),
    (f"{JOB}/{ROLLOUTS[1]}/result.json", ("task_name",)),
)


@pytest.mark.parametrize("token", RAW_TOKENS, ids=lambda t: t.text[:12])
@pytest.mark.parametrize(("rel", "path"), LITERAL_TARGETS, ids=lambda v: str(v)[-24:])
def test_literal_tokens(base: Path, rel: str, path: tuple, token: Raw) -> None:
    """Every literal no JSON encoder should write, in every kind of field (regressions:
    a 400-digit integer in timing.json and a lone surrogate in task_name were internal
    errors; 100k nested lists a RecursionError)."""
    with workspace(base) as ws:
        root = _root(ws)
        document = json.loads((root / rel).read_text("utf-8"))
        set_at(document, path, token)
        (root / rel).write_bytes(dumps_with_raw(document))
        _check(ws, "--skillsbench-result-root", str(root))
