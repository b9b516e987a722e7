"""Bounded reads of the files users and runners hand us (README "Limits").

Every runner file (Harbor job and trial files, BenchFlow trees), compact JSON input, loopx
ledger and registry is read through ``read_regular_file``, so one place decides what is safe to
read. A FIFO named ``result.json`` would block ``open`` forever and ``/dev/zero`` never ends, so
anything that is not a regular file is refused before it is opened (symbolic links are followed
first, then checked), the open itself never blocks, and no read goes past the file's limit even
if the file grows or is swapped between the check and the read.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from benchledger.ledger.core.errors import InputError

MIB = 1 << 20

# Each limit is far above anything the runners write (the largest real trial result.json is a
# few KB; the 30,000-row loopx ledger is about 90 MB) and low enough that a read never exhausts
# memory. README "Limits" lists them; keep the two in step.
RUNNER_JSON_LIMIT = 64 * MIB  # Harbor job/trial result.json, config.json, lock.json; BenchFlow JSON
COMPACT_JSON_LIMIT = 64 * MIB  # --benchmark-run-json, --post-launch-json and other JSON inputs
LEDGER_JSON_LIMIT = 512 * MIB  # a benchmark_run_ledger_v0 JSON (import, merge, sources)
REGISTRY_LIMIT = 64 * MIB  # project and global registries
TEXT_LIST_LIMIT = 16 * MIB  # one-id-per-line files

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
_READ_CHUNK = 1 << 16


class UnreadableFileError(InputError):
    """A file exists but must not or cannot be read: its kind, its size or the OS refused."""

    code = "unreadable_file"


def shown_path(path: str | os.PathLike[str]) -> str:
    """A path as it may be printed: undecodable bytes and control characters escaped, so a
    hostile name can neither break the one-line error nor the terminal."""
    text = os.fspath(path)
    if text.isascii() and text.isprintable():  # nothing to escape: every file of a large job
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # a byte os.fsdecode could not decode
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code < 0x20 or code == 0x7F or 0xD800 <= code <= 0xDFFF:
            out.append(ascii(ch)[1:-1])
        else:
            out.append(ch)
    return "".join(out)


def describe_limit(limit: int) -> str:
    return f"{limit // MIB} MiB" if limit % MIB == 0 else f"{limit} bytes"


def read_regular_file(
    path: str | os.PathLike[str], *, shown: str, limit: int, dir_fd: int | None = None
) -> bytes:
    """The whole file, at most ``limit`` bytes.

    ``shown`` is the name the error cites (relative to the root the user gave), escaped by
    ``shown_path`` only when there is an error (this runs for every file of a job). A file that
    does not exist (or a dangling link) raises ``FileNotFoundError`` so callers can treat
    "missing" as a fact; everything else that stops the read is an ``UnreadableFileError``
    saying what is wrong and what to do. ``dir_fd``: a relative ``path`` is looked up from
    that directory (``os.open``'s ``dir_fd``), which spares the kernel walking the same
    leading directories again for each of the thousands of files of one Harbor job.
    """
    try:
        found = os.stat(path, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except NotADirectoryError:  # a parent is a file: the path names nothing
        raise FileNotFoundError(
            errno.ENOENT, "No such file or directory", shown_path(shown)
        ) from None
    except OSError as exc:
        raise _os_error(exc, shown) from None
    if not stat.S_ISREG(found.st_mode):  # the name is escaped only for an error (every call)
        _check_kind(found.st_mode, shown)
    if found.st_size > limit:
        raise _too_large(shown, limit)
    try:
        fd = os.open(path, _OPEN_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise _os_error(exc, shown) from None
    try:
        return _read_capped(fd, found.st_size, limit, shown)
    finally:
        os.close(fd)


def read_input_file(path: str | os.PathLike[str], *, shown: str, limit: int) -> bytes:
    """``read_regular_file`` for a file the user named: a missing one is an error too."""
    try:
        return read_regular_file(path, shown=shown, limit=limit)
    except FileNotFoundError:
        raise UnreadableFileError(f"file not found: {shown_path(shown)}") from None


def read_stream(stream: object, *, shown: str, limit: int) -> bytes:
    """Standard input, read to its end but never past ``limit`` bytes."""
    data = stream.read(limit + 1)  # type: ignore[attr-defined]
    if len(data) > limit:
        raise _too_large(shown, limit)
    return data


def _read_capped(fd: int, size: int, limit: int, shown: str) -> bytes:
    """Read to end of file. The first read asks for the whole file at once (one call for the
    thousands of small files of a large job); the cap holds even if the file grew.

    A first read that returns exactly the ``size`` that ``stat`` reported, one byte less than
    it asked for, reached the end: a regular file returns less than asked only at its end. The
    read that would confirm it (a second system call per file: 3,000 in a 3,000-trial job) is
    skipped; a file that grew, shrank or was swapped meanwhile is read on as before."""
    chunks: list[bytes] = []
    total = 0
    want = min(size, limit) + 1
    while True:
        try:
            chunk = os.read(fd, max(1, min(want, limit + 1 - total)))
        except BlockingIOError:  # swapped for a FIFO after the check: nothing is waiting
            raise UnreadableFileError(
                f"cannot read {shown_path(shown)}: it changed into a pipe while being read; "
                "point at a regular file"
            ) from None
        except OSError as exc:
            raise _os_error(exc, shown) from None
        if not chunk:
            break
        if not chunks and 0 < len(chunk) == size < want:
            return chunk
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise _too_large(shown, limit)
        want = _READ_CHUNK
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _check_kind(mode: int, shown: str) -> None:
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    raise UnreadableFileError(
        f"cannot read {shown_path(shown)}: it is {kind}, not a regular file; "
        "replace it with the file itself or remove it"
    )


def _too_large(shown: str, limit: int) -> UnreadableFileError:
    return UnreadableFileError(
        f"cannot read {shown_path(shown)}: larger than the {describe_limit(limit)} limit for "
        'this file (README "Limits"); check that it is the right file'
    )


def _os_error(exc: OSError, shown: str) -> UnreadableFileError:
    if exc.errno == errno.ELOOP:
        advice = "fix the symbolic link"
    elif isinstance(exc, PermissionError):
        advice = "check the file's permissions"
    else:
        advice = "check the file"
    reason = exc.strerror or type(exc).__name__
    return UnreadableFileError(f"cannot read {shown_path(shown)}: {reason}; {advice}")


def relative_to(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` when it lies below it, else its name: errors never carry
    an absolute path."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return path.name
