"""Words, numbers and tables for the human (Markdown) view of a command's payload.

Every command prints its payload as JSON with ``--format json`` and as a short Markdown summary
otherwise (issue 34, docs/cli.md "Reading the output"). The summary is for a person: no JSON
fragment, no Python repr (``None``, ``True``), numbers rounded for reading, one plural rule.
The renderers of each command family (``commands/store_views.py``, ``commands/ledger_views.py``),
the reports that print to the terminal (``projections/reports/``) and the generic ``outline``
every other payload falls back to share these helpers, so the rules live once (here, in the
lowest layer, where every layer may import them); ``tests/test_human_output.py`` walks every
command and holds them to it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

from benchledger.ledger.core.markdown import one_line, table_text

NONE = "none"
# A list longer than this is summarised: its first items and how many more (--format json
# prints them all).
SHOWN_ITEMS = 10
ALL_IN_JSON = "--format json shows all"
# Keys every payload carries for machines, which a person never needs to read.
_FIELD_NAME = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
MACHINE_KEYS = frozenset({"schema_version", "read_boundary", "source_paths_recorded"})


def number(value: float | int, digits: int = 6) -> str:
    """A number as a person reads it: at most ``digits`` significant digits after rounding
    off float noise, never an exponent, no trailing zeros (``6.445093000000001`` ->
    ``6.44509``, ``3.0`` -> ``3``); a number of ``digits`` or more whole digits is shown
    whole (``1234567.25`` -> ``1234567``: its integer digits are never dropped)."""
    if isinstance(value, bool):
        return yes_no(value)
    if isinstance(value, int):
        return str(value)
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    if abs(value) >= 10 ** (digits - 1):
        return str(round(value))
    rounded = Decimal(f"{value:.{digits}g}")
    text = format(rounded, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def score(value: Any) -> str:
    """A score or rate: three decimals; a missing one as ``none``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return NONE if value is None else word(value)
    return f"{value:.3f}"


def yes_no(flag: Any) -> str:
    return "yes" if flag else "no"


def ok_failed(flag: Any) -> str:
    """A check's outcome: ``ok`` or an upper-case ``FAILED`` a reader cannot miss."""
    return "ok" if flag else "FAILED"


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``1 file``, ``2 files`` (``many`` for an irregular plural: ``1 match``, ``2 matches``)."""
    return f"{count} {noun if count == 1 else many or noun + 's'}"


def word(value: Any) -> str:
    """A scalar as one line of text: ``yes``/``no``, ``none`` for a missing value, numbers
    rounded, text on one line; a list or mapping as a short inline summary."""
    if value is None:
        return NONE
    if isinstance(value, bool):
        return yes_no(value)
    if isinstance(value, int | float):
        return number(value)
    if isinstance(value, Mapping):
        return inline_mapping(value) if value else NONE
    if isinstance(value, list | tuple):
        return inline_list(value)
    text = one_line(str(value))
    return text if text else NONE


def inline_list(items: Sequence[Any], shown: int = SHOWN_ITEMS) -> str:
    """``a, b, c``; a long list as its first items and how many more."""
    if not items:
        return NONE
    head = ", ".join(word(item) for item in items[:shown])
    more = len(items) - shown
    return head if more <= 0 else f"{head} and {more} more ({ALL_IN_JSON})"


def inline_mapping(mapping: Mapping[str, Any], shown: int = 8) -> str:
    """``key value, key value`` on one line (a nested mapping in parentheses); a mapping of
    more than ``shown`` fields gives its first ones and how many more."""
    parts = []
    for key, value in list(mapping.items())[:shown]:
        inner = f"({word(value)})" if isinstance(value, Mapping) and value else word(value)
        parts.append(f"{label(key)} {inner}")
    more = len(mapping) - shown
    return ", ".join(parts) + (f" and {more} more fields" if more > 0 else "")


def record_line(record: Mapping[str, Any], shown: int = 5) -> str:
    """One record of a list as its first few plain fields (ids, names, counts): enough to
    tell the records apart; ``--format json`` prints them whole."""
    plain = {k: v for k, v in record.items() if k not in MACHINE_KEYS and _plain(v)}
    return inline_mapping(dict(list(plain.items())[:shown])) or f"{len(record)} fields"


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def label(key: Any) -> str:
    """A payload key as words (``matched_run_count`` -> ``matched run count``); a key that is
    data (a file name, an arm id such as ``codex__gpt-5``) stays as it is."""
    text = one_line(str(key))
    return text.replace("_", " ") if _FIELD_NAME.fullmatch(text) else text


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    """A GFM table; cells through ``word`` and escaped so a value cannot break the row."""
    lines = [
        "| " + " | ".join(table_text(h) for h in headers) + " |",
        "|" + " --- |" * len(headers),
    ]
    for row in rows:
        lines.append("| " + " | ".join(table_text(word(cell)) for cell in row) + " |")
    return lines


def shown_path(path: Any, cwd: Path | None = None) -> str:
    """A path under the working directory as a relative one (shorter to read, and what the
    user typed); any other path as it came."""
    raw = str(path)
    if not os.path.isabs(raw):
        return raw
    try:
        return str(Path(raw).relative_to(cwd or Path.cwd()))
    except ValueError:
        return raw


def more_line(
    total: int, shown: int, noun: str, flag: str = ALL_IN_JSON, many: str | None = None
) -> list[str]:
    """The note under a summarised list: how many were left out, and how to see them all
    (``… and 79 more runs (`--verbose` to list all)``)."""
    left = total - shown
    if left <= 0:
        return []
    return [f"… and {left} more {noun if left == 1 else many or noun + 's'} ({flag})"]


def outline(title: str, payload: Mapping[str, Any], *, skip: Iterable[str] = ()) -> str:
    """The generic human view: ``# Title``, then each field as a bullet in words, nested
    mappings indented, long lists summarised; the keys only machines read are left out."""
    hidden = MACHINE_KEYS | set(skip)
    lines = [f"# {title}", ""]
    lines += outline_lines(payload, hidden=hidden)
    return "\n".join(lines)


def outline_lines(
    payload: Mapping[str, Any], *, depth: int = 0, hidden: frozenset[str] | set[str] = MACHINE_KEYS
) -> list[str]:
    """The bullets of ``outline`` for one mapping at ``depth`` (two spaces per level)."""
    pad = "  " * depth
    lines: list[str] = []
    for key, value in payload.items():
        if key in hidden:
            continue
        if isinstance(value, Mapping) and value and depth < 3:
            lines.append(f"{pad}- {label(key)}:")
            lines += outline_lines(value, depth=depth + 1, hidden=hidden)
        elif _is_record_list(value) and depth < 3:
            lines.append(f"{pad}- {label(key)}: {len(value)}")
            lines += [f"{pad}  - {record_line(item)}" for item in value[:SHOWN_ITEMS]]
            lines += [pad + "  " + n for n in more_line(len(value), SHOWN_ITEMS, "item")]
        else:
            lines.append(f"{pad}- {label(key)}: {word(value)}")
    return lines


def _is_record_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, Mapping) for v in value)
