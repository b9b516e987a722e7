"""A large published file replaces the old one by an exchange of names (``projections/file_swap``):
the target always names a whole file, the old file is gone once its unlink thread finishes,
the temp name can be written again at once, and anything that is not a regular file to replace
takes the ``os.replace`` path with its usual result."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from benchledger.projections.publishing import file_swap
from benchledger.projections.publishing.file_swap import (
    SWAP_MIN_BYTES,
    preload,
    preload_for,
    replace_file,
    wait_all_discarded,
    wait_discarded,
)
from benchledger.projections.publishing.files import atomic_stream, atomic_write

BIG = SWAP_MIN_BYTES + 1


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def test_a_large_file_replaces_the_old_one_and_leaves_nothing_behind(tmp_path: Path) -> None:
    target = tmp_path / "ledger.json"
    target.write_bytes(b"old" * BIG)
    inode = target.stat().st_ino
    for round_ in range(3):  # the same temp name, again right away
        data = bytes([65 + round_]) * BIG
        atomic_write(target, data, durable=False)
        assert target.read_bytes() == data
    wait_discarded(tmp_path / f".ledger.json.{os.getpid()}.tmp")
    assert target.stat().st_ino != inode
    assert _leftovers(tmp_path) == []


def test_waiting_for_every_discard_leaves_no_old_file_and_no_thread(tmp_path: Path) -> None:
    """What a command that skips interpreter shutdown waits for (``commands/quick_exit.py``)."""
    import threading

    for name in ("a.json", "b.json"):
        (tmp_path / name).write_bytes(b"old" * BIG)
        atomic_write(tmp_path / name, b"new" * BIG, durable=False)
    wait_all_discarded()
    assert _leftovers(tmp_path) == []
    assert [t.name for t in threading.enumerate() if t.name == "discard-old-file"] == []
    wait_all_discarded()  # nothing left to wait for: returns at once


def test_a_streamed_file_replaces_the_old_one(tmp_path: Path) -> None:
    target = tmp_path / "ledger.json"
    target.write_bytes(b"old")
    with atomic_stream(target, durable=False) as out:
        out.write(b"a" * BIG)
        out.write_parts([b"b" * BIG, b"c"])
    assert target.read_bytes() == b"a" * BIG + b"b" * BIG + b"c"
    wait_discarded(tmp_path / f".ledger.json.{os.getpid()}.tmp")
    assert _leftovers(tmp_path) == []


def test_a_first_write_and_a_small_file_are_plain_renames(tmp_path: Path) -> None:
    target = tmp_path / "new.json"
    atomic_write(target, b"x" * BIG, durable=False)
    atomic_write(target, b"small", durable=False)
    assert target.read_bytes() == b"small"
    assert _leftovers(tmp_path) == []


def test_a_directory_in_the_way_is_not_swapped_away(tmp_path: Path) -> None:
    target = tmp_path / "ledger.json"
    (target / "inside").mkdir(parents=True)
    tmp = tmp_path / ".ledger.json.tmp"
    tmp.write_bytes(b"x" * BIG)
    with pytest.raises(OSError):
        replace_file(tmp, target, BIG)
    assert (target / "inside").is_dir()


def test_a_symlink_target_is_replaced_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(b"keep")
    target = tmp_path / "ledger.json"
    target.symlink_to(elsewhere)
    atomic_write(target, b"x" * BIG, durable=False)
    assert not target.is_symlink()
    assert target.read_bytes() == b"x" * BIG
    assert elsewhere.read_bytes() == b"keep"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")
def test_on_linux_the_large_file_is_exchanged_not_renamed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "ledger.json"
    target.write_bytes(b"old")

    def no_rename(*_args: object) -> None:
        raise AssertionError("os.replace over an existing large file")

    monkeypatch.setattr(os, "replace", no_rename)
    try:
        atomic_write(target, b"x" * BIG, durable=False)
    except AssertionError:
        pytest.skip("this file system refuses RENAME_EXCHANGE")
    assert target.read_bytes() == b"x" * BIG


def test_the_exchange_call_is_preloaded_only_for_a_file_already_there(tmp_path: Path) -> None:
    """A first write is a plain rename, so it does not load ctypes on the writer thread."""
    target = tmp_path / "ledger.json"
    assert preload_for(target) is None  # nothing there: no exchange
    (tmp_path / "dir.json").mkdir()
    assert preload_for(tmp_path / "dir.json") is None  # not a regular file: no exchange
    target.write_bytes(b"old")
    assert preload_for(target) is preload


def test_a_streamed_first_write_leaves_the_exchange_call_unloaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: list[int] = []
    monkeypatch.setattr(file_swap, "_renameat2", None)
    monkeypatch.setattr(file_swap, "_find_renameat2", lambda: loads.append(1) or False)
    target = tmp_path / "ledger.json"
    with atomic_stream(target, durable=False) as out:
        out.write(b"small")
    assert target.read_bytes() == b"small"
    assert loads == []
    with atomic_stream(target, durable=False) as out:  # now there is a file to exchange
        out.write(b"again")
    assert loads == [1]
