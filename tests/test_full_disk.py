"""A full disk under the store (issue 36, item 6): one line naming the disk, nothing recorded.

A real full filesystem: a 2 MiB tmpfs mounted for the test (root only; skipped elsewhere).
"""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.store.events import NewEvent
from tests.support_store import opened


@pytest.fixture
def tiny_disk(tmp_path: Path):
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(directory: Path) -> Path:
    """Write a filler file until the filesystem refuses another byte."""
    filler = directory / "filler"
    with open(filler, "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(os.urandom(4096))
        except OSError:
            pass
    return filler


def _event(i: int) -> NewEvent:
    return NewEvent("goal/g", "run_built", {"i": i, "blob": uuid.uuid4().hex * 2000})


@pytest.mark.synthetic_events  # filler payloads of a set size
def test_a_full_disk_is_one_line_naming_it_and_records_nothing(tiny_disk):
    url = f"sqlite:///{tiny_disk / 'store' / 'ledger.db'}"
    s = opened(url)
    s.store.append([_event(0)])
    filler = _fill(tiny_disk)
    with pytest.raises(InputError) as err:
        for i in range(1, 50):
            s.store.append([_event(i)])
    message = err.value.message
    assert "is full" in message and "nothing was recorded" in message
    assert str(tiny_disk) in message  # the disk: its mount point
    head = s.store.head_position()
    s.close()
    filler.unlink()
    again = opened(url)
    assert again.store.head_position() == head
    assert again.store.verify().ok
    again.close()


def test_a_command_on_a_full_disk_prints_one_line_not_an_internal_error(tiny_disk):
    from click.testing import CliRunner

    from benchledger.commands.cli import cli

    url = f"sqlite:///{tiny_disk / 'store' / 'ledger.db'}"
    (tiny_disk / "store").mkdir()
    filler = _fill(tiny_disk)
    result = CliRunner().invoke(cli, ["--db", url, "db", "upgrade"], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "internal error" not in lines[0], result.stderr
    assert "is full" in lines[0] and "nothing was recorded" in lines[0]
    filler.unlink()


def test_render_after_a_full_disk_works_as_printed(tiny_disk, tmp_path, monkeypatch):
    """The files of a ledger outside the project cannot be written: the events are kept and
    the printed `benchledger render` writes the files once there is space again."""
    import re
    import shlex
    import shutil

    from click.testing import CliRunner

    from benchledger.commands.cli import cli
    from tests.conftest import FIXTURES_DIR

    root = tmp_path / "proj"
    (root / ".benchledger").mkdir(parents=True)
    monkeypatch.chdir(root)
    ledger = tiny_disk / "l.json"
    shutil.copy(FIXTURES_DIR / "loopx-ledger" / "benchmark-run-ledger.json", ledger)
    filler = _fill(tiny_disk)
    failed = CliRunner().invoke(
        cli, ["import", "loopx-ledger", str(ledger), "--in-place", "--execute"],
        catch_exceptions=False,
    )  # fmt: skip
    assert failed.exit_code == 1, failed.output
    assert "internal error" not in failed.stderr
    found = re.search(r"`benchledger ([^`]+)`", failed.stderr)
    assert found, failed.stderr
    filler.unlink()
    repaired = CliRunner().invoke(cli, shlex.split(found.group(1)), catch_exceptions=False)
    assert repaired.exit_code == 0, repaired.output
    assert ledger.with_suffix(".md").exists()


@pytest.mark.synthetic_events  # a filler event, rolled back
def test_a_full_disk_on_the_postgresql_server_is_one_line(postgres_ok):
    """The server's own disk_full error (SQLSTATE 53100, raised by the server itself: its
    disk cannot be filled from a test) inside a write transaction: one line, nothing kept."""
    if not postgres_ok:
        pytest.skip("PostgreSQL not reachable")
    from tests.conftest import PG_BASE_URL, _drop_pg_schema, _fresh_pg_schema

    schema = _fresh_pg_schema()
    try:
        url = f"{PG_BASE_URL}?options=-csearch_path%3D{schema}"
        s = opened(url)
        with pytest.raises(InputError) as err, s.store.transaction() as uow:
            uow.append([_event(0)])
            uow.conn.execute(
                "DO $$ BEGIN RAISE EXCEPTION 'could not extend file: No space left on device'"
                " USING ERRCODE = 'disk_full'; END $$"
            )
        assert "out of resources" in err.value.message
        assert "nothing was recorded" in err.value.message
        assert "No space left on device" in err.value.message
        assert s.store.head_position() == 0
        s.close()
    finally:
        _drop_pg_schema(schema)


@pytest.mark.parametrize("command", [["events", "list"], ["verify"], ["db", "upgrade"]])
def test_opening_a_store_on_a_full_disk_says_the_disk_is_full(tiny_disk, command):
    """The write-ahead log cannot be created: SQLite says "disk I/O error"; the free space
    says why."""
    from click.testing import CliRunner

    from benchledger.commands.cli import cli

    url = f"sqlite:///{tiny_disk / 'store' / 'ledger.db'}"
    opened(url).close()  # created, and closed: the log and its index are gone
    filler = _fill(tiny_disk)
    result = CliRunner().invoke(cli, ["--db", url, *command], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    line = result.stderr.strip()
    assert "is full" in line and str(tiny_disk) in line and "internal error" not in line
    filler.unlink()
