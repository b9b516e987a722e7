"""``--as-of POSITION|ISO-TIME``: one option for every read command, and the database it reads.

Without the option a command reads the live read models; with it, scratch read models
replayed to that moment (``projections/history/as_of.py``), from the nearest matching snapshot in
the
store's snapshot directory. Nothing live is written either way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

import click

from benchledger.commands.output import progress_bar
from benchledger.services.as_of_reads import read_database as read_at

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Database
    from benchledger.services.store_session import OpenStore
AS_OF_HELP = (
    "Read the ledger as it stood after this event position, or after the last event recorded "
    "at or before this ISO 8601 time (UTC unless it has an offset). Replayed into a scratch "
    "database (from the nearest snapshot); the live store is not touched."
)


def as_of_option(func: Callable) -> Callable:
    return click.option(
        "--as-of", "as_of", default=None, metavar="POSITION|ISO-TIME", help=AS_OF_HELP
    )(func)


@contextmanager
def read_database(
    opened: OpenStore, as_of: str | None
) -> Iterator[tuple[Database, dict[str, Any] | None]]:
    """The database to read (``services.as_of_reads``), with a replay bar on a terminal."""
    with replay_progress() as progress, read_at(opened, as_of, progress) as found:
        yield found


def replay_progress() -> AbstractContextManager[Callable[[int, int], None] | None]:
    """A bar on stderr while a long replay runs, when stderr is a terminal; else nothing."""
    return progress_bar("replaying events")


def as_of_note(moment: dict[str, Any] | None) -> str:
    """The line a Markdown output opens with when it shows a past moment ('' for the head)."""
    if moment is None:
        return ""
    return f"_As of position {moment['position']} ({moment['recorded_at']})._\n\n"
