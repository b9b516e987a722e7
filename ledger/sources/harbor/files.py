"""Harbor job files read once each: the state a JSON file was found in (missing, corrupt, ok)
and the digest of every file whose bytes were read, kept for provenance and idempotency
(docs/formats/harbor.md §5.1)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Any

import orjson

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.input_files import RUNNER_JSON_LIMIT, read_regular_file
from benchledger.ledger.core.json_input import NUL_REASON, holds_nul, inexact_integer


@dataclass(slots=True)
class _Json:
    """One JSON file as found: ``missing``, ``corrupt`` (unreadable or wrong shape) or ``ok``."""

    state: str
    data: Any = None

    @property
    def ok(self) -> bool:
        return self.state == "ok"

    @property
    def obj(self) -> dict[str, Any]:
        return self.data if self.ok and isinstance(self.data, dict) else {}


class _Reader:
    """Reads each file once and remembers its digest, keyed by the path relative to the job dir.

    Files are looked up from a handle on the job directory where the OS offers one (Linux's
    ``O_PATH``: no read permission on the directory needed, only the search permission every
    lookup below it needs anyway): the kernel then walks a trial's own path components
    instead of the job's whole absolute path again for each of the five lookups of every
    trial, ~15,000 at 3,000 trials (bench/README.md, issue 18). Elsewhere, or when the
    directory cannot be opened, paths are absolute as before. Close it (or use ``with``).
    """

    def __init__(self, root: str) -> None:
        self.root = root
        self.files: dict[str, str] = {}
        self.skipped_links: list[str] = []
        self.dir_fd = _open_directory(root)

    def path(self, rel: str) -> str:
        """``rel`` as the OS calls taking ``dir_fd=self.dir_fd`` want it."""
        return rel if self.dir_fd is not None else f"{self.root}/{rel}"

    def close(self) -> None:
        if self.dir_fd is not None:
            os.close(self.dir_fd)
            self.dir_fd = None

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def json(self, rel: str) -> _Json:
        """The file as found; its digest is recorded exactly when its bytes could be read.

        A file that is there but must not be read (a FIFO, a device, a directory, one over the
        size limit, a link loop) stops the ingest with an error naming it: reading on would
        record a job state ("corrupt") that the runner never wrote."""
        try:
            raw = read_regular_file(
                self.path(rel),
                shown=f"Harbor job file {rel}",
                limit=RUNNER_JSON_LIMIT,
                dir_fd=self.dir_fd,
            )
        except FileNotFoundError:
            return _Json("missing")
        self.files[rel] = hashlib.sha256(raw).hexdigest()
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return _Json("corrupt")
        if holds_nul(raw, data):
            raise InputError(f"Harbor job file {rel}: {NUL_REASON}")
        big = inexact_integer(raw)  # a token count past 64 bits, which orjson read rounded
        if big is not None:
            raise InputError(f"Harbor job file {rel}: {big}")
        # Harbor writes only objects; anything else is as unusable as torn JSON.
        return _Json("ok", data) if isinstance(data, dict) else _Json("corrupt")


_O_PATH = getattr(os, "O_PATH", 0)  # Linux
_LOOKUP_HANDLES = bool(_O_PATH) and {os.open, os.stat, os.access} <= os.supports_dir_fd


def _open_directory(root: str) -> int | None:
    """A lookup handle on ``root``, or None (no ``O_PATH`` here, or it cannot be opened: the
    absolute paths then meet the same error and report it as before)."""
    if not _LOOKUP_HANDLES:
        return None
    try:
        return os.open(root, _O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
