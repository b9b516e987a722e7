"""What every command records about itself: who ran it, where, with which version and argv."""

from __future__ import annotations

import getpass
import os
import platform
import sys
from typing import Any

from benchledger import __version__
from benchledger.ledger.core.command_context import current_command
from benchledger.ledger.core.safety import is_public_safe

SECRET_FLAG_WORDS = ("token", "key", "secret", "password", "auth")


def command_metadata(
    tool_version: str | None = None, argv: list[str] | None = None
) -> dict[str, Any]:
    """Who/what/where for every event; argv values after secret-looking flags are redacted.

    ``tool_version`` defaults to the installed package's (benchmarks pass their own label);
    ``argv`` to the process's own, but the CLI passes the arguments click parsed, which differ
    when the command runs inside another program (click's test runner, a library caller).
    """
    if tool_version is None:
        tool_version = __version__
    return {
        "actor": _actor(),
        "host": _host(),
        "tool": "benchledger",
        "tool_version": tool_version,
        "argv": redact_argv(_command_argv() if argv is None else argv),
    }


def _command_argv() -> list[str]:
    """The running command's arguments where the CLI set them, else the process's."""
    running = current_command().get("argv")
    return list(running) if running is not None else sys.argv[1:]


def _host() -> str:
    """The machine's network name, as ``socket.gethostname()`` gives it: ``platform.node()``
    reads it from ``os.uname()`` where there is one, without importing ``socket`` (~3 ms on
    every command; ``platform`` is loaded by click already)."""
    return platform.node()


def _actor() -> str:

    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no passwd entry in some containers
        return os.environ.get("USER", "unknown")


def redact_argv(argv: list[str]) -> list[str]:
    """Drop values that could be secrets or machine paths from the recorded command line."""
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
