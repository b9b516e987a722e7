"""Malformed Harbor job directories through ``benchmark run terminal-bench --harbor-job-dir``.

Each example copies a real fixture job, damages one thing (a JSON file's bytes, a file turned
into a directory, a symlink out of the job or back into it, a file that vanishes between the
listing and the read) and ingests it. The outcome rule is ``support_bad_input.assert_honest``.
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
    BOUNDED,
    HARBOR_JOB,
    Workspace,
    assert_honest,
    harbor_empty_dirs,
    make_writable_copy,
    workspace,
)
from tests.support_bad_json import RAW_TOKENS, Raw, damaged_json, dumps_with_raw, set_at

TRIALS = ("regex-chess__2SQ9vaA", "schemelike-metacircular-eval__MUzJBKP")
JSON_FILES = (
    "config.json",
    "lock.json",
    "result.json",
    *(f"{t}/{n}" for t in TRIALS for n in ("result.json", "config.json", "lock.json")),
)
OUTSIDE_SECRET = '{"task_name": "see /Users/alice/secret", "note": "sk-proj-abcdefghijklmnop"}'


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bad-harbor")


def _job(ws: Workspace) -> Path:
    return make_writable_copy(
        FIXTURES_DIR / "harbor" / HARBOR_JOB,
        ws.project / "harbor" / HARBOR_JOB,
        harbor_empty_dirs(HARBOR_JOB),
    )


def _ingest(ws: Workspace, job: Path, *extra: str):
    return ws.invoke(
        "benchmark", "run", "terminal-bench", "--goal-id", "g", "--harbor-job-dir", str(job),
        "--update-run-ledger", "--execute", "--format", "json", *extra,
    )  # fmt: skip


def _outside(ws: Workspace) -> Path:
    """A directory never under the job: what an escaping link points at."""
    outside = ws.project / "outside"
    outside.mkdir(exist_ok=True)
    return outside


def _check(ws: Workspace, job: Path, *extra: str) -> None:
    before = ws.snapshot()
    result = _ingest(ws, job, *extra)
    assert_honest(ws, result, before)
    if result.exit_code == 0:
        payload = json.loads(result.stdout)
        assert payload["ok"] is True
        for text in ws.published().values():
            assert b"/Users/alice" not in text and b"sk-proj-" not in text


# --------------------------------------------------------------------------- damaged bytes


@BOUNDED
@given(rel=st.sampled_from(JSON_FILES), data=st.data())
def test_damaged_json_file(base: Path, rel: str, data: st.DataObject) -> None:
    with workspace(base) as ws:
        job = _job(ws)
        path = job / rel
        path.write_bytes(data.draw(damaged_json(path.read_bytes()), label="bytes"))
        _check(ws, job)


# --------------------------------------------------------------------------- damaged layout

LAYOUT = (
    "delete",
    "directory",
    "dangling_symlink",
    "symlink_outside",
    "symlink_to_job",
    "fifo_like_dir_loop",
)


def _damage_layout(ws: Workspace, job: Path, rel: str, how: str) -> None:
    path = job / rel
    if how == "delete":
        path.unlink()
    elif how == "directory":
        path.unlink()
        (path / "nested").mkdir(parents=True)
    elif how == "dangling_symlink":
        path.unlink()
        path.symlink_to(ws.project / "no-such-file.json")
    elif how == "symlink_outside":
        secret = _outside(ws) / "secret.json"
        secret.write_text(OUTSIDE_SECRET, encoding="utf-8")
        path.unlink()
        path.symlink_to(secret)
    elif how == "symlink_to_job":
        path.unlink()
        path.symlink_to(job)
    else:  # a directory loop next to the file: <dir>/loop -> <dir>
        path.parent.joinpath("loop").symlink_to(path.parent, target_is_directory=True)


@BOUNDED
@given(rel=st.sampled_from(JSON_FILES), how=st.sampled_from(LAYOUT))
def test_damaged_layout(base: Path, rel: str, how: str) -> None:
    with workspace(base) as ws:
        job = _job(ws)
        _damage_layout(ws, job, rel, how)
        _check(ws, job)


@pytest.mark.parametrize("target", ["job", "parent", "outside"])
def test_trial_directory_symlinks(base: Path, target: str) -> None:
    """A trial-looking entry that is a link: back to the job, up the tree, or out of it."""
    with workspace(base) as ws:
        job = _job(ws)
        if target == "job":
            (job / "loop__AAAAAAA").symlink_to(job, target_is_directory=True)
        elif target == "parent":
            (job / "up__AAAAAAA").symlink_to(job.parent, target_is_directory=True)
        else:
            outside = _outside(ws) / "stolen__AAAAAAA"
            outside.mkdir()
            trial = json.loads((job / TRIALS[0] / "result.json").read_text("utf-8"))
            trial["task_name"] = "stolen /Users/alice/private"
            (outside / "result.json").write_text(json.dumps(trial), encoding="utf-8")
            (job / "stolen__AAAAAAA").symlink_to(outside, target_is_directory=True)
        _check(ws, job)


def test_job_dir_is_a_symlink_loop(base: Path) -> None:
    with workspace(base) as ws:
        loop = ws.project / "loop"
        loop.symlink_to(loop)  # ELOOP on every access
        _check(ws, loop)


def test_job_dir_is_a_file(base: Path) -> None:
    with workspace(base) as ws:
        job = _job(ws)
        _check(ws, job / "result.json")


# --------------------------------------------------------------------------- files that vanish


def _vanishing_open(monkeypatch: pytest.MonkeyPatch, victims: set[str], error: type) -> None:
    """Opening a victim path fails as if the file went away after the directory listing.

    Both ``open`` and ``os.open`` are covered: the Harbor reader reads with ``os.open``.
    """
    real, real_os_open = builtins.open, os.open

    def victim(file: object, dir_fd: int | None = None) -> bool:
        if not isinstance(file, (str, os.PathLike)):
            return False
        path = os.fspath(file)
        if dir_fd is not None and not os.path.isabs(path):  # the reader's job-directory handle
            path = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), path)
        return os.path.abspath(path) in victims

    def fake(file, *args, **kwargs):  # noqa: ANN001, ANN202
        if victim(file):
            raise error(2, "vanished", os.fspath(file))
        return real(file, *args, **kwargs)

    def fake_os_open(path, flags, *args, **kwargs):  # noqa: ANN001, ANN202
        if victim(path, kwargs.get("dir_fd")):
            raise error(2, "vanished", os.fspath(path))
        return real_os_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake)
    monkeypatch.setattr(io, "open", fake)
    monkeypatch.setattr(os, "open", fake_os_open)


@BOUNDED
@given(
    rels=st.sets(st.sampled_from(JSON_FILES), min_size=1, max_size=4),
    error=st.sampled_from([FileNotFoundError, PermissionError, IsADirectoryError, OSError]),
)
def test_files_vanish_between_listing_and_reading(base: Path, rels: set[str], error: type) -> None:
    with workspace(base) as ws:
        job = _job(ws)
        victims = {os.path.abspath(job / rel) for rel in rels}
        before = ws.snapshot()
        with pytest.MonkeyPatch.context() as mp:
            _vanishing_open(mp, victims, error)
            result = _ingest(ws, job)
        assert_honest(ws, result, before)


def test_trial_directory_vanishes_after_listing(base: Path) -> None:
    """A trial removed after the job listing: listing it and opening its files both fail.

    The reader opens a trial's result before it lists the trial, so both must fail, as they
    would for a directory that is really gone.
    """
    with workspace(base) as ws:
        job = _job(ws)
        victim = os.path.abspath(job / TRIALS[0])
        victims = {os.path.join(victim, name) for name in os.listdir(victim)}
        real = os.listdir

        def listdir(path: str = ".") -> list[str]:
            if os.path.abspath(os.fspath(path)) == victim:
                raise FileNotFoundError(2, "vanished", path)
            return real(path)

        before = ws.snapshot()
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(os, "listdir", listdir)
            _vanishing_open(mp, victims, FileNotFoundError)
            result = _ingest(ws, job)
        assert_honest(ws, result, before)


LITERAL_TARGETS = (
    (f"{TRIALS[0]}/result.json", ("verifier_result", "rewards", "reward")),
    (f"{TRIALS[0]}/result.json", ("task_name",)),
)


@pytest.mark.parametrize("token", RAW_TOKENS, ids=lambda t: t.text[:12])
@pytest.mark.parametrize(("rel", "path"), LITERAL_TARGETS, ids=lambda v: str(v)[-24:])
def test_literal_tokens(base: Path, rel: str, path: tuple, token: Raw) -> None:
    """Literals orjson refuses make the file unreadable, never a crash or a bogus value."""
    with workspace(base) as ws:
        job = _job(ws)
        document = json.loads((job / rel).read_text("utf-8"))
        set_at(document, path, token)
        (job / rel).write_bytes(dumps_with_raw(document))
        _check(ws, job)
