"""The exclusive lock every writer of ``registry.global.json`` takes
(docs/formats/history_registry_rollout.md §7.2 step 9).

The global registry is one file shared by every project synced into a runtime root, each with
its own store, so the store's own write lock does not order their writes: without a lock of
their own, two projects that read the file at the same time each write back their copy and one
project's goals vanish. The lock is ``fcntl.flock`` on ``registry.global.json.lock`` beside the
registry, never on the registry itself (that file is replaced by a rename, so a lock on it would
lock an inode the next writer no longer opens).

``flock`` belongs to the open file description: the kernel drops it when its holder exits, is
killed or crashes, so a lock file left behind is just an empty-ish file and never a stale lock;
nobody ever deletes it (deleting it would let two writers lock two different inodes). The
holder record written into it (``file_lock_holder_v0``) is only for people and for the
incident line a timeout appends to ``registry.global.json.lock.incidents.jsonl``.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from benchledger.ledger.core.errors import BenchledgerError

LOCK_SUFFIX = ".lock"
INCIDENTS_SUFFIX = ".lock.incidents.jsonl"
HOLDER_SCHEMA = "file_lock_holder_v0"
LOCK_TIMEOUT_SECONDS = 5.0
LOCK_POLL_SECONDS = 0.05
_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)


class RegistryLockError(BenchledgerError):
    """The global registry's lock could not be taken (held too long, or not a lockable file)."""

    code = "global_registry_locked"


def lock_path_for(registry: Path) -> Path:
    return registry.with_name(registry.name + LOCK_SUFFIX)


@contextmanager
def registry_lock(
    registry: Path,
    operation: str,
    *,
    timeout: float = LOCK_TIMEOUT_SECONDS,
    poll: float = LOCK_POLL_SECONDS,
) -> Iterator[None]:
    """Hold the exclusive lock of ``registry`` for the block (5 s timeout, 50 ms polling)."""
    lock = lock_path_for(registry)
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, _OPEN_FLAGS, 0o666)
    except OSError as exc:
        raise RegistryLockError(
            f"cannot open the global registry lock {lock.name}: {exc.strerror or exc}"
        ) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise RegistryLockError(f"the global registry lock {lock.name} is not a regular file")
        started = _now()
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _read_holder(fd)
                    _record_incident(registry, operation, started, timeout, holder)
                    raise RegistryLockError(_timeout_message(lock, timeout, holder)) from None
                time.sleep(poll)
        _write_holder(fd, {"pid": os.getpid(), "operation": operation, "acquired_at": _now()})
        yield
    finally:
        os.close(fd)  # closing the only descriptor releases the flock


def _timeout_message(lock: Path, timeout: float, holder: dict[str, object] | None) -> str:
    who = ""
    if holder and holder.get("pid"):
        who = f" (held by pid {holder.get('pid')}, {holder.get('operation') or 'unknown'})"
    return (
        f"the global registry is locked by another process{who}: gave up after {timeout:g} s "
        f"on {lock.name}; nothing recorded in the store is lost: run `benchledger render` to "
        "write the registry once the other process is done"
    )


def _write_holder(fd: int, fields: dict[str, object]) -> None:
    """Best effort: a holder record that cannot be written does not stop the write it guards."""
    record = json.dumps({"schema_version": HOLDER_SCHEMA, **fields}, sort_keys=True) + "\n"
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, record.encode(), 0)
    except OSError:
        pass


def _read_holder(fd: int) -> dict[str, object] | None:
    try:
        data = os.pread(fd, 4096, 0)
        record = json.loads(data.decode("utf-8")) if data.strip() else None
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _record_incident(
    registry: Path,
    operation: str,
    started: str,
    timeout: float,
    holder: dict[str, object] | None,
) -> None:
    """One JSON line per timeout; ``O_APPEND`` keeps concurrent lines whole."""
    line = {
        "schema_version": "file_lock_incident_v0",
        "event": "lock_timeout",
        "lock": registry.name + LOCK_SUFFIX,
        "pid": os.getpid(),
        "operation": operation,
        "waited_from": started,
        "gave_up_at": _now(),
        "timeout_seconds": timeout,
        "holder": holder,
    }
    path = registry.with_name(registry.name + INCIDENTS_SUFFIX)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | _NOFOLLOW, 0o666)
    except OSError:
        return
    try:
        os.write(fd, (json.dumps(line, sort_keys=True) + "\n").encode())
    except OSError:
        pass
    finally:
        os.close(fd)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
