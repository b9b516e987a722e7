"""Hostile Inspect AI logs through ``benchmark run inspect`` (issue 35).

Each case damages a copy of the real fixture logs: a truncated ``.eval`` zip, a zip bomb, a
log declaring a 1 GB sample, a link out of the log directory. Each is refused in one line with
nothing ledgered (``support_bad_input.assert_honest``). The fixture logs themselves carry fake
secrets in sample inputs (so in messages), metadata and an error message, and tracebacks (with
the placeholders ``tools/make_inspect_logs.py`` puts for the generating machine's paths), all
of it also in the sample summaries the reader reads: none may reach a published file or the
event table. No committed fixture holds a path of the machine that made it.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import struct
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support_bad_input import Workspace, assert_honest, workspace
from tests.support_inspect import LOGS

pytest.importorskip("inspect_ai", reason="the `inspect` extra (part of `test`) is not installed")

SECRETS = (b"hunter2", b"ghp_", b"sk-live", b"site-packages")
#: What a path of the machine that made a fixture starts with (a checkout, a home, a venv, a
#: pyenv, a temporary directory).
LOCAL_PATH = re.compile(rb"/(?:work|root|home|tmp|Users)/|\.pyenv|/var/folders/")


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bad-inspect")


def _logs(ws: Workspace, part: str = "main") -> Path:
    root = ws.project / "logs"
    shutil.copytree(LOGS / part, root / part)
    return root


def _run(ws: Workspace, root: Path):  # noqa: ANN202
    return ws.invoke(
        "benchmark", "run", "inspect", "--goal-id", "g", "--log-dir", str(root),
        "--update-run-ledger", "--no-global-sync", "--execute", "--format", "json",
    )  # fmt: skip


def _eval_file(root: Path) -> Path:
    return sorted(root.rglob("*.eval"))[0]


def _refused(ws: Workspace, root: Path, needle: str) -> None:
    before = ws.snapshot()
    result = _run(ws, root)
    assert result.exit_code == 1, result.output
    assert_honest(ws, result, before)
    assert needle in result.stderr, result.stderr
    assert ws.event_count() == 0


def test_truncated_eval_zip(base: Path) -> None:
    with workspace(base) as ws:
        root = _logs(ws)
        target = _eval_file(root)
        data = target.read_bytes()
        target.write_bytes(data[: len(data) // 2])
        _refused(ws, root, "truncated zip")


def test_zip_bomb(base: Path) -> None:
    with workspace(base) as ws:
        root = _logs(ws)
        bomb = root / "main" / "bomb.eval"
        with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("header.json", b"{}")
            archive.writestr("samples/s1_epoch_1.json", b"\0" * (40 << 20))  # 40 MB -> ~40 kB
        _refused(ws, root, "zip bomb")


def test_a_one_gigabyte_sample(base: Path) -> None:
    """The entry's central-directory size says 1 GiB: refused before anything is inflated."""
    with workspace(base) as ws:
        root = _logs(ws)
        target = _eval_file(root)
        data = bytearray(target.read_bytes())
        name = b"samples/"
        at = data.find(b"PK\x01\x02")
        patched = False
        while at != -1:
            name_len = struct.unpack_from("<H", data, at + 28)[0]
            if data[at + 46 : at + 46 + name_len].startswith(name):
                struct.pack_into("<I", data, at + 24, 1 << 30)
                patched = True
                break
            at = data.find(b"PK\x01\x02", at + 4)
        assert patched
        target.write_bytes(bytes(data))
        _refused(ws, root, "1024 MiB")


def test_a_link_out_of_the_log_directory(base: Path) -> None:
    with workspace(base) as ws:
        root = _logs(ws)
        outside = ws.project / "elsewhere.eval"
        shutil.copyfile(_eval_file(root), outside)
        (root / "main" / "linked.eval").symlink_to(outside)
        _refused(ws, root, "a link out of the log directory")


def test_a_directory_link_out_is_refused_too(base: Path) -> None:
    with workspace(base) as ws:
        root = _logs(ws)
        (ws.project / "other").mkdir()
        (root / "other").symlink_to(ws.project / "other")
        _refused(ws, root, "a link out of the log directory")


def test_no_secret_or_local_path_reaches_a_public_file_or_event(base: Path) -> None:
    with workspace(base) as ws:
        root = ws.project / "logs"
        shutil.copytree(LOGS, root)
        # the summaries the reader reads do hold them: the test is not vacuous
        assert all(secret in _summaries_text(root) for secret in SECRETS)
        result = _run(ws, root)
        assert result.exit_code == 0, result.output
        published = ws.published()
        assert published
        with sqlite3.connect(ws.store) as db:
            events = "".join(str(row) for row in db.execute("SELECT * FROM events"))
        for secret in SECRETS:
            assert secret not in result.stdout.encode(), secret
            assert secret.decode() not in events, secret
            for name, text in published.items():
                assert secret not in text, (name, secret)


def test_a_secret_in_a_log_file_name_stays_out_of_the_ledger(base: Path) -> None:
    with workspace(base) as ws:
        root = _logs(ws)
        secret = "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789"
        _eval_file(root).rename(root / "main" / f"{secret}.eval")
        (root / "logs.json").write_text("{}")  # Inspect's own index: not a log
        result = _run(ws, root)
        assert result.exit_code == 0, result.output
        with sqlite3.connect(ws.store) as db:
            events = "".join(str(row) for row in db.execute("SELECT * FROM events"))
        assert "ghp_" not in events and "unsafe-name-" in events
        for name, text in ws.published().items():
            assert b"ghp_" not in text, name


def _summaries_text(root: Path) -> bytes:
    """Every sample summary Inspect reads from the logs under ``root`` (its error messages,
    metadata, inputs and score fields), as JSON."""
    from inspect_ai.log import read_eval_log_sample_summaries

    return b"".join(
        summary.model_dump_json().encode()
        for path in sorted([*root.rglob("*.eval"), *root.rglob("*.json")])
        for summary in read_eval_log_sample_summaries(str(path))
    )


def _entries(path: Path) -> list[tuple[str, bytes]]:
    """A ``.json`` log, or every entry of an ``.eval`` zip decompressed (zstd or deflate)."""
    if path.suffix == ".json":
        return [(path.name, path.read_bytes())]
    if sys.version_info < (3, 14):
        import zipfile_zstd  # noqa: F401  (Inspect's dependency: zstd entries in zipfile)
    with zipfile.ZipFile(path) as archive:
        return [(f"{path.name}:{item.filename}", archive.read(item)) for item in archive.infolist()]


def test_no_committed_fixture_holds_a_local_path() -> None:
    logs = sorted([*LOGS.rglob("*.eval"), *LOGS.rglob("*.json")])
    entries = [entry for log in logs for entry in _entries(log)]
    assert len(logs) >= 9 and len(entries) > len(logs)
    assert any(b"<site-packages>/" in data for _, data in entries)  # tracebacks, scrubbed
    leaks = [name for name, data in entries if LOCAL_PATH.search(data)]
    assert leaks == []
