"""Compact JSON for the page's data file: repeated text stored once.

A 30,000-run ledger repeats the same failure classes, repair routes and next actions thousands
of times; the page must stay small (well under 5 MB), so every text value is replaced by its
index in one shared table, which the page's script looks up when it shows a value.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from benchledger.ledger.core.safety import is_public_safe

NOT_PUBLIC = "[dropped: not public-safe]"


def public_text(value: Any) -> str:
    """Text for a public page: the value, or a fixed marker when the safety filter refuses it.

    The marker replaces the whole value (never a mask over part of it), as everywhere else.
    """
    return _public("" if value is None else str(value))


@lru_cache(maxsize=1 << 16)
def _public(text: str) -> str:
    """Cached: a large ledger repeats the same classes and next actions thousands of times."""
    return text if is_public_safe(text) else NOT_PUBLIC


class StringTable:
    """Interns text; ``ref`` returns the index the page resolves through ``strings``."""

    def __init__(self) -> None:
        self.strings: list[str] = []
        self._index: dict[str, int] = {}

    def ref(self, value: Any) -> int | None:
        """The index of ``value`` (made public-safe), or None for a missing value."""
        if value is None or value == "":
            return None
        text = public_text(value)
        found = self._index.get(text)
        if found is None:
            found = self._index[text] = len(self.strings)
            self.strings.append(text)
        return found
