"""The composition root: opens the store with the projection engine as its listener.

Commands call ``open_store`` and hand the result to handlers; handlers never open databases or
pick projections themselves, so ``ledger/`` stays free of any import of ``projections/``.
"""

from __future__ import annotations

import getpass
import os
import socket
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ledger.database import StoreLocation
    from ledger.store import EventStore
    from projections.engine import ProjectionEngine

SECRET_FLAG_WORDS = ("token", "key", "secret", "password", "auth")


@dataclass
class OpenStore:
    location: StoreLocation
    store: EventStore
    projections: ProjectionEngine

    def close(self) -> None:
        self.store.database.dispose()


def open_store(
    db: str | None, *, auto_upgrade: bool = True, check_schema: bool = True
) -> OpenStore:
    """Resolve, connect, make sure the schema is current, and wire projections in."""
    from ledger.database import ensure_schema, open_database, resolve_location
    from ledger.store import EventStore
    from projections.engine import ProjectionEngine
    from projections.read_models import all_projections

    location = resolve_location(db)
    database = open_database(location)
    try:
        if check_schema:
            ensure_schema(database, location, auto_upgrade=auto_upgrade)
    except Exception:
        database.dispose()
        raise
    projections = ProjectionEngine(all_projections())
    return OpenStore(location, EventStore(database, listener=projections), projections)


def command_metadata(tool_version: str | None = None) -> dict[str, Any]:
    """Who/what/where for every event; argv values after secret-looking flags are redacted.

    ``tool_version`` defaults to the installed package's (benchmarks pass their own label).
    """
    if tool_version is None:
        from ledger.version import tool_version as installed_version

        tool_version = installed_version()
    return {
        "actor": _actor(),
        "host": socket.gethostname(),
        "tool": "benchledger",
        "tool_version": tool_version,
        "argv": redact_argv(sys.argv[1:]),
    }


def _actor() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no passwd entry in some containers
        return os.environ.get("USER", "unknown")


def redact_argv(argv: list[str]) -> list[str]:
    """Drop values that could be secrets or machine paths from the recorded command line."""
    from ledger.safety import is_public_safe

    redacted: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            redacted.append("<redacted>")
            hide_next = False
            continue
        flag = arg.split("=", 1)[0].lower()
        if arg.startswith("--") and any(w in flag for w in SECRET_FLAG_WORDS):
            if "=" in arg:
                redacted.append(f"{flag}=<redacted>")
            else:
                redacted.append(arg)
                hide_next = True
            continue
        redacted.append(arg if is_public_safe(arg) else "<path>")
    return redacted
