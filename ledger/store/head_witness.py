"""The head witness: where the chain's last position and hash are kept outside the database.

The hash chain proves that no event inside it was edited, removed or reordered, but not that
events were not cut off its end: deleting the last events leaves a shorter chain that verifies.
So the head is also written somewhere the events' table cannot reach:

- a marker file beside a SQLite store (``ledger.db.head``), rewritten after every commit;
- any file named by ``BENCHLEDGER_HEAD_FILE`` (for PostgreSQL stores, or to keep the marker
  on other storage);
- a ``--expect-head POS:HASH`` given to ``verify`` by a user who kept the head elsewhere
  (a CI log, a commit message).

``verify`` fails when a witness names a position beyond the head (the tail was deleted) or a
hash the chain does not have at that position (the chain was rewritten). A witness behind
the head is normal: it only vouches for the prefix it saw. What it cannot stop: someone who
can rewrite both the database and the marker file; only a head kept out of their reach
(``--expect-head``) catches that.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from benchledger.ledger.core.errors import InputError

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Database
HEAD_FILE_ENV = "BENCHLEDGER_HEAD_FILE"
MARKER_SUFFIX = ".head"
_EXPECTED = re.compile(r"^(\d{1,18}):([0-9a-f]{64})$")


@dataclass(frozen=True)
class HeadWitness:
    """A position and hash of the chain that someone saw, and where that record came from."""

    position: int
    hash: str
    source: str

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "position": self.position, "hash": self.hash}


def marker_path(database: Database) -> Path | None:
    """The marker file this store keeps: ``BENCHLEDGER_HEAD_FILE``, else beside a SQLite file;
    None for an in-memory store or a PostgreSQL store without the variable."""
    named = os.environ.get(HEAD_FILE_ENV)
    if named:
        return Path(named).expanduser()
    path = getattr(database, "path", None)
    if database.dialect != "sqlite" or database.in_memory or not path:
        return None
    return Path(f"{path}{MARKER_SUFFIX}")


def read_marker(path: Path | None) -> HeadWitness | None:
    """The marker's head, None when there is no marker; an unreadable marker is an error (a
    tamperer's easiest move would be to garble it)."""
    if path is None:
        return None
    try:
        data = orjson.loads(path.read_bytes())
        position, hash_ = data["position"], data["hash"]
    except FileNotFoundError:
        return None
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError) as exc:
        raise InputError(
            f"the head marker {path.name} is unreadable ({type(exc).__name__}): restore it, or "
            "delete it to verify the chain without it"
        ) from None
    if not isinstance(position, int) or not isinstance(hash_, str):
        raise InputError(f"the head marker {path.name} does not hold a position and a hash")
    return HeadWitness(position, hash_, f"head marker {path.name}")


def write_marker(path: Path | None, position: int, hash_: str) -> None:
    """Move the marker forward to ``position`` (never back: another process may have written a
    later head meanwhile). Best effort: a store in a directory this user cannot write keeps
    no marker, and a failed write only leaves the previous one, which is still true."""
    if path is None:
        return
    try:
        current = read_marker(path)
    except InputError:
        current = None
    if current is not None and current.position >= position:
        return
    if path.is_symlink():  # never write through a link planted at the marker's name
        return
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(orjson.dumps({"position": position, "hash": hash_}) + b"\n")
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)


def forget_marker(database: Database) -> None:
    """A brand-new store starts a new chain: a marker left by a removed store would accuse it."""
    path = marker_path(database)
    if path is not None and os.environ.get(HEAD_FILE_ENV) is None:
        path.unlink(missing_ok=True)


def parse_expected_head(text: str) -> HeadWitness:
    """``--expect-head POS:HASH`` (as ``verify`` prints them)."""
    match = _EXPECTED.match(text.strip().lower())
    if match is None:
        raise InputError(
            f"--expect-head {text!r} is not POSITION:HASH (a position and the 64 hex digits of "
            "its hash, as `benchledger verify` prints them)"
        )
    return HeadWitness(int(match.group(1)), match.group(2), "--expect-head")
