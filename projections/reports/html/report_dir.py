"""The report's directory: which files in it are ours, and putting a new report in its place.

Every report directory holds a marker, ``.benchledger-report.json``, listing each file the
report wrote with its sha256. ``--out`` may name a new directory, an empty one, or one with our
marker; anything else is refused before anything is written, and nothing is ever deleted that
the marker does not list with the bytes it still has. So a user's file added to a report
directory (or one of ours the user edited) is never lost: an added file is carried into the
new report, and an edited one that the new report would overwrite is refused, naming it. A
forged marker can only claim files whose exact bytes it states.

The new report is built in a staging directory made by ``tempfile.mkdtemp`` beside the target
(its files created ``O_EXCL|O_NOFOLLOW``) and swapped in by rename, so a reader sees the old
report or the new one, never a mix, and no link planted at a predictable name is followed.
``--out`` itself may not be a symbolic link. A process killed before the swap leaves its
staging directory; the next report into the same parent removes, from such directories of
writers that are gone, exactly the files their marker lists, and the directory once empty.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from benchledger.ledger.core.errors import InputError
from benchledger.projections.publishing.files import STALE_TEMP_SECONDS, writer_gone

MARKER = ".benchledger-report.json"
MARKER_GENERATOR = "benchledger report"
MARKER_LIMIT = 16 << 20  # a marker lists a few hundred names: anything larger is not ours
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


@dataclass
class ReportDir:
    """What an existing ``--out`` directory holds: the files our marker lists with the bytes
    it recorded (``ours``), and every other entry (``foreign``), each by its path inside."""

    ours: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)


def inspect_out_dir(
    out_dir: Path, new_files: Mapping[str, bytes] | None = None
) -> ReportDir | None:
    """None when there is nothing at ``out_dir``; else what it holds. Refused (one line): a
    symbolic link, a file, a non-empty directory without our marker, and an entry the new
    report (``new_files``, when known) would have to overwrite that is not as we wrote it."""
    shown = out_dir.name or str(out_dir)
    try:
        mode = os.lstat(out_dir).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(f"--out {shown}: {exc.strerror}") from None
    if stat.S_ISLNK(mode):
        raise InputError(f"--out {shown} is a symbolic link; name the directory itself")
    if not stat.S_ISDIR(mode):
        raise InputError(f"--out {shown} is a file, not a directory")
    try:
        if not os.listdir(out_dir):
            return ReportDir()
        listed = read_marker(out_dir)
        if listed is None:
            raise InputError(
                f"--out {shown} holds files that are not a benchledger report; "
                "name a new or empty directory"
            )
        found = ReportDir()
        _classify(out_dir, "", listed, found)
    except OSError as exc:
        raise InputError(f"--out {shown}: {exc.strerror}") from None
    for name in found.foreign:
        if new_files is not None and _collides(name, new_files):
            raise InputError(
                f"--out {shown}: {name} was changed or added after benchledger wrote the "
                "report, and the new report would overwrite it; move it away or name another "
                "directory"
            )
    return found


def marker_bytes(files: Mapping[str, bytes]) -> bytes:
    digests = {name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())}
    return orjson.dumps({"generator": MARKER_GENERATOR, "files": digests}) + b"\n"


def read_marker(directory: Path) -> dict[str, str] | None:
    """The marker's ``{path: sha256}``, or None when there is no marker we wrote."""
    data = _read_regular(directory / MARKER, MARKER_LIMIT)
    if data is None:
        return None
    try:
        body = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(body, dict) or body.get("generator") != MARKER_GENERATOR:
        return None
    files = body.get("files")
    if not isinstance(files, dict):
        return None
    return {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str)}


def write_directory(target: Path, files: dict[str, bytes]) -> None:
    """Build the report beside ``target`` and swap it in; on failure nothing changes."""
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    sweep_staging(parent, target.name)
    existing = inspect_out_dir(target, files)
    staging = Path(_mkdtemp(target, ".tmp"))
    moved: list[str] = []
    try:
        _create(staging / MARKER, marker_bytes(files))  # first: a killed build is sweepable
        for name, data in files.items():
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            _create(path, data)
        os.chmod(staging, _directory_mode())  # mkdtemp makes it 0700
        for name in existing.foreign if existing is not None else ():
            destination = staging / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            os.rename(target / name, destination)
            moved.append(name)
        retired = _swap(staging, target, existing is not None)
    except BaseException:
        if _carry_back(moved, staging, target):  # else the user's entries are still in it
            shutil.rmtree(staging, ignore_errors=True)  # ours alone (0700 until chmod)
        raise
    if retired is not None:
        _remove_ours(retired)


def sweep_staging(parent: Path, name: str) -> None:
    """Staging and retired directories of ``name`` left by writers that are gone (or older than
    ``STALE_TEMP_SECONDS``): the files their marker lists, with the bytes it lists, go, and the
    directory once empty. Anything else in one stays."""
    pattern = re.compile(rf"^\.{re.escape(name)}\.(\d+)\.[a-z0-9_]{{8}}\.(?:tmp|old)$")
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    now = time.time()
    for entry in entries:
        match = pattern.match(entry.name)
        if match is None or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            old = now - entry.stat(follow_symlinks=False).st_mtime > STALE_TEMP_SECONDS
        except OSError:
            continue
        pid = int(match.group(1))
        if pid != os.getpid() and (old or writer_gone(pid)):
            _remove_ours(Path(entry.path))


def _classify(root: Path, inside: str, listed: dict[str, str], found: ReportDir) -> None:
    for entry in sorted(os.scandir(root / inside) if inside else os.scandir(root),
                        key=lambda e: e.name):  # fmt: skip
        name = f"{inside}{entry.name}"
        if name == MARKER:
            continue
        prefix = f"{name}/"
        if entry.is_dir(follow_symlinks=False) and any(k.startswith(prefix) for k in listed):
            _classify(root, prefix, listed, found)
        elif name in listed and _digest(Path(entry.path)) == listed[name]:
            found.ours.append(name)
        else:
            found.foreign.append(name)


def _collides(name: str, new_files: Mapping[str, bytes]) -> bool:
    """``name`` stands where the new report puts a file, or a file where it needs a folder."""
    return (
        name == MARKER
        or name in new_files
        or any(new.startswith(f"{name}/") or name.startswith(f"{new}/") for new in new_files)
    )


def _swap(staging: Path, target: Path, exists: bool) -> Path | None:
    """Rename ``staging`` to ``target``; the old directory is returned under a retired name
    (``mkdtemp``, replaced by the rename) for the caller to empty."""
    if not exists:
        os.replace(staging, target)
        return None
    retired = Path(_mkdtemp(target, ".old"))
    try:
        os.replace(target, retired)
    except BaseException:
        os.rmdir(retired)
        raise
    try:
        os.replace(staging, target)
    except BaseException:
        os.replace(retired, target)
        raise
    return retired


def _carry_back(moved: list[str], staging: Path, target: Path) -> bool:
    """Put the user's entries back where they were; False when one could not be."""
    ok = True
    for name in reversed(moved):
        try:
            os.rename(staging / name, target / name)
        except OSError:
            ok = False
    return ok


def _remove_ours(directory: Path) -> None:
    """Remove the files ``directory``'s marker lists that still have the bytes it lists, then
    the marker and every directory left empty; anything else is left where it is."""
    listed = read_marker(directory) or {}
    for name, digest in listed.items():
        if _plainly_inside(directory, name) and _digest(directory / name) == digest:
            _unlink(directory / name)
    _unlink(directory / MARKER)
    for root, dirs, _files in os.walk(directory, topdown=False):
        for name in dirs:
            _rmdir(Path(root) / name)
    _rmdir(directory)


def _plainly_inside(directory: Path, name: str) -> bool:
    """``name`` is a path below ``directory`` reached through no symbolic link."""
    parts = Path(name).parts
    if not parts or ".." in parts or Path(name).is_absolute():
        return False
    path = directory
    for part in parts[:-1]:
        path = path / part
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                return False
        except OSError:
            return False
    return True


def _digest(path: Path) -> str | None:
    data = _read_regular(path, None)
    return None if data is None else hashlib.sha256(data).hexdigest()


def _read_regular(path: Path, limit: int | None) -> bytes | None:
    """The bytes of a regular file at ``path`` itself (never through a link), or None."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or (limit is not None and info.st_size > limit):
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read()
    except OSError:
        return None
    finally:
        os.close(fd)


def _create(path: Path, data: bytes) -> None:
    fd = os.open(path, _CREATE_FLAGS, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def _mkdtemp(target: Path, suffix: str) -> str:
    prefix = f".{target.name}.{os.getpid()}."
    return tempfile.mkdtemp(dir=target.parent, prefix=prefix, suffix=suffix)


def _directory_mode() -> int:
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o777 & ~umask


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _rmdir(path: Path) -> None:
    try:
        os.rmdir(path)
    except OSError:
        pass  # not empty: something not ours is in it
