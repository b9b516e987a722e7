"""Every published file goes through one writer (``projections/publishing/files.py``): a new
file made ``O_EXCL|O_NOFOLLOW`` under an unpredictable name, then ``os.replace``. A symbolic
link planted at the temp name earlier versions used, or at the final name, never gets written
through, the published file is never a link, and a failed or killed write leaves nothing a
later one trips over."""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest

from benchledger.ledger.core.errors import InputError
from benchledger.projections.history import snapshots
from benchledger.projections.publishing import files
from benchledger.projections.publishing.files import (
    atomic_stream,
    atomic_write,
    write_unless_same,
)
from tests.test_ledger_cli import Cli, compact_run, write_json


def _old_temp_name(target: Path) -> Path:
    """The predictable temp name of earlier versions: ``.<name>.<pid>.tmp``."""
    return target.with_name(f".{target.name}.{os.getpid()}.tmp")


def _dot_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the output directory that a planted link points at."""
    victim = tmp_path / "elsewhere" / "victim.txt"
    victim.parent.mkdir()
    victim.write_bytes(b"not yours")
    return victim


@pytest.fixture
def out_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "out"
    directory.mkdir()
    files.start_sweeping()
    return directory


def _write_whole(target: Path, data: bytes) -> None:
    atomic_write(target, data)


def _write_str(target: Path, data: bytes) -> None:
    atomic_write(str(target), data, durable=False)


def _write_unless_same(target: Path, data: bytes) -> None:
    write_unless_same(str(target), data)


def _write_streamed(target: Path, data: bytes) -> None:
    with atomic_stream(target) as out:
        out.write(data[:3])
        out.write(data[3:])


@pytest.mark.parametrize(
    "write",
    [_write_whole, _write_str, _write_streamed, _write_unless_same],
    ids=["write", "str", "stream", "unless-same"],
)
def test_a_link_planted_at_the_old_temp_name_is_not_written_through(
    out_dir: Path, outside: Path, write
) -> None:
    target = out_dir / "benchmark-run-ledger.json"
    target.write_bytes(b"old")
    planted = _old_temp_name(target)
    planted.symlink_to(outside)
    write(target, b'{"new": true}\n')
    assert outside.read_bytes() == b"not yours"
    assert not target.is_symlink() and target.read_bytes() == b'{"new": true}\n'
    umask = os.umask(0o022)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask  # what ``open(..., "wb")`` gives
    assert planted.is_symlink()  # not ours: left alone, and no other leftover
    assert _dot_files(out_dir) == [planted.name]


@pytest.mark.parametrize(
    "write",
    [_write_whole, _write_str, _write_streamed, _write_unless_same],
    ids=["write", "str", "stream", "unless-same"],
)
def test_a_link_at_the_final_name_is_refused_and_left_as_it_is(
    out_dir: Path, outside: Path, write
) -> None:
    target = out_dir / "registry.global.json"
    target.symlink_to(outside)
    with pytest.raises(OSError) as raised:
        write(target, b"{}\n")
    assert raised.value.errno == errno.ELOOP and "symbolic link" in str(raised.value)
    assert target.is_symlink() and outside.read_bytes() == b"not yours"
    assert _dot_files(out_dir) == []


@pytest.mark.parametrize("write", [_write_whole, _write_str], ids=["write", "str"])
def test_a_failed_rename_leaves_no_temp_file(out_dir: Path, write) -> None:
    target = out_dir / "index.jsonl"
    target.mkdir()
    (target / "in-the-way").write_bytes(b"")
    with pytest.raises(OSError):
        write(target, b"line\n")
    assert _dot_files(out_dir) == []


def test_temp_names_are_random_and_swept_like_mkstemps() -> None:
    """``.<name>.<pid>.<8 random letters>.tmp``: what the sweep recognises, never repeated."""
    tokens = {files._temp_token() for _ in range(1000)}
    assert len(tokens) == 1000
    for token in tokens:
        assert files._TEMP_NAME.match(f".index.jsonl.{os.getpid()}.{token}.tmp")


def test_a_str_write_makes_its_directory_and_sweeps_it(tmp_path: Path) -> None:
    files.start_sweeping()
    runs = tmp_path / "goals" / "g" / "runs"
    runs.mkdir(parents=True)
    with subprocess.Popen(["true"]) as gone:
        gone.wait()
    leftover = runs / f".a.json.{gone.pid}.k3x9_q2a.tmp"
    leftover.write_bytes(b"{")
    atomic_write(str(runs / "a.json"), b"{}\n", durable=False)
    atomic_write(str(tmp_path / "new" / "b.md"), b"# b\n", durable=False)
    assert not leftover.exists() and _dot_files(runs) == []
    assert (runs / "a.json").read_bytes() == b"{}\n"
    assert (tmp_path / "new" / "b.md").read_bytes() == b"# b\n"


def test_a_killed_writers_temp_file_is_swept_by_the_next_write(out_dir: Path) -> None:
    """What a kill between the temp file and the rename leaves: a later write neither trips
    over it nor keeps it."""
    with subprocess.Popen(["true"]) as gone:
        gone.wait()
    leftover = out_dir / f".benchmark-run-ledger.md.{gone.pid}.k3x9_q2a.tmp"
    leftover.write_bytes(b"# torn")
    atomic_write(out_dir / "benchmark-run-ledger.md", b"# whole\n")
    assert not leftover.exists()
    assert _dot_files(out_dir) == []


def test_a_snapshot_is_never_copied_through_a_planted_link(
    tmp_path: Path, out_dir: Path, outside: Path
) -> None:
    source = tmp_path / "built.db"
    source.write_bytes(b"SQLite format 3\x00" + b"x" * 100)
    target = out_dir / "snapshot-000000000012-0123456789abcdef.db"
    _old_temp_name(target).symlink_to(outside)
    snapshots._publish(source, target)
    assert outside.read_bytes() == b"not yours"
    assert not target.is_symlink() and target.read_bytes() == source.read_bytes()
    target.unlink()
    target.symlink_to(outside)
    with pytest.raises(InputError, match="symbolic link"):
        snapshots._publish(source, target)
    assert outside.read_bytes() == b"not yours"


def test_an_upsert_does_not_replace_a_link_at_the_ledger_markdown_name(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outside: Path
) -> None:
    """Refused before anything is appended: one line naming the link, the link and its target
    as they were (earlier versions replaced the link by the new ledger file)."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    env = Cli(db_url, project)
    first = write_json(project / "a.json", compact_run("fix-git", score=1, job="a"))
    env.ok("benchmark", "run-ledger-upsert", "--benchmark-run-json", first, "--execute")
    markdown = project / "benchmark-run-ledger.md"
    markdown.unlink()
    markdown.symlink_to(outside)
    second = write_json(project / "b.json", compact_run("other-case", score=0, job="b"))
    line = env.fails("benchmark", "run-ledger-upsert", "--benchmark-run-json", second, "--execute")
    assert "symbolic link" in line and "benchmark-run-ledger.md" in line, line
    assert "events committed" not in line
    assert markdown.is_symlink() and outside.read_bytes() == b"not yours"
    assert not [p for p in project.iterdir() if p.name.endswith(".tmp")]


def test_the_head_marker_is_never_written_through_a_planted_link(tmp_path: Path) -> None:
    """The head witness beside a store: a link at its old predictable temp name, or at the
    marker's own name, never gets the write (``ledger/store/head_witness.py``)."""
    from benchledger.ledger.store.head_witness import write_marker

    outside = tmp_path / "outside.txt"
    outside.write_text("keep", encoding="utf-8")
    store_dir = tmp_path / "store"
    store_dir.mkdir()
    marker = store_dir / "ledger.db.head"
    (store_dir / f".{marker.name}.{os.getpid()}.tmp").symlink_to(outside)
    write_marker(marker, 3, "h" * 64)
    assert outside.read_text(encoding="utf-8") == "keep"
    assert marker.is_file() and not marker.is_symlink()
    marker.unlink()
    marker.symlink_to(outside)
    write_marker(marker, 4, "h" * 64)
    assert outside.read_text(encoding="utf-8") == "keep" and marker.is_symlink()


# --------------------------------------------------------------------------- rendered again


def _new_file_mode() -> int:
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def test_a_file_that_already_holds_the_bytes_is_left_as_it_is(out_dir: Path) -> None:
    target = out_dir / "run.json"
    atomic_write(str(target), b'{"a": 1}\n', durable=False)
    first = target.stat()
    write_unless_same(str(target), b'{"a": 1}\n')
    assert target.stat().st_ino == first.st_ino  # not replaced
    write_unless_same(str(target), b'{"a": 2}\n')  # the same size, other bytes
    assert target.read_bytes() == b'{"a": 2}\n' and target.stat().st_ino != first.st_ino
    write_unless_same(str(target), b'{"a": 2}\n\n')  # a longer file
    assert target.read_bytes() == b'{"a": 2}\n\n'
    assert _dot_files(out_dir) == []


def test_the_same_bytes_under_another_mode_or_a_second_name_are_written_again(
    out_dir: Path,
) -> None:
    """What is left must be what a write leaves: a new file's mode, one link of its own."""
    target = out_dir / "run.md"
    atomic_write(str(target), b"# run\n", durable=False)
    target.chmod(0o600)
    write_unless_same(str(target), b"# run\n")
    assert target.stat().st_mode & 0o777 == _new_file_mode()
    second = out_dir / "elsewhere.md"
    os.link(target, second)
    write_unless_same(str(target), b"# run\n")
    assert target.stat().st_nlink == 1 and not os.path.samefile(target, second)
    assert target.read_bytes() == second.read_bytes() == b"# run\n"


def test_a_fifo_in_place_of_a_file_is_replaced_without_blocking(out_dir: Path) -> None:
    target = out_dir / "run.json"
    os.mkfifo(target)
    write_unless_same(str(target), b"{}\n")
    assert target.is_file() and target.read_bytes() == b"{}\n"
