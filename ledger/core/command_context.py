"""The command being run: who ran it, where, with which tool version and argv, and one
correlation id, carried by every event it appends.

A command appends its events, then renders its files and appends an ``export_written`` event in
a transaction of its own; threading the metadata through every handler and renderer by hand is
how the export event once came to carry none. The CLI root sets it once per invocation instead,
and ``EventStore.transaction`` reads it. Code that runs no command (tests, benchmarks, a
library caller) sees nothing set and gets one correlation id per transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

Metadata = dict[str, Any]

# The factory of the running command's metadata, and its value once asked for (made lazily:
# reading the package version and argv costs time that `--help` should not pay).
_FACTORY: ContextVar[Callable[[], Metadata] | None] = ContextVar("command_factory", default=None)
_MADE: ContextVar[Metadata | None] = ContextVar("command_metadata", default=None)


@contextmanager
def running_command(make_metadata: Callable[[], Metadata]) -> Iterator[None]:
    """Everything appended inside carries ``make_metadata()`` and one new correlation id."""
    factory = _FACTORY.set(make_metadata)
    made = _MADE.set(None)
    try:
        yield
    finally:
        _MADE.reset(made)
        _FACTORY.reset(factory)


def current_command() -> Metadata:
    """The running command's metadata with its correlation id; empty outside a command."""
    made = _MADE.get()
    if made is None:
        factory = _FACTORY.get()
        if factory is None:
            return {}
        made = {**factory(), "correlation_id": str(uuid.uuid4())}
        _MADE.set(made)
    return dict(made)
