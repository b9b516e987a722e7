"""Markdown cells and code spans that a value cannot break out of.

Every Markdown file and stdout view shows values inside code spans (`` `value` ``), most of them
in GFM tables. A ``|`` in a value splits a table cell, a backtick ends the code span early and a
line break ends the table row, so a task named ``a|b`c`` used to break the ledger table.

An ordinary value (none of ``|``, backtick, CR, LF) is written exactly as loopx 0.4.8 writes it,
so the rendered bytes stay compatible; only values holding those characters change (documented
deviation):

* a line break becomes a space (a code span would show it as one anyway);
* a backtick is kept by fencing the span with a longer backtick run (CommonMark), padded with a
  space when the value starts or ends with a backtick;
* inside a table, ``|`` becomes ``\\|``: GFM removes the backslash before it renders the cell,
  inside code spans too;
* a terminal control character (C0 other than tab and line breaks, DEL, C1: ESC, BEL, CSI…)
  becomes its ``\\xNN`` escape, so a task name cannot move the cursor, ring or recolour a
  terminal that shows the file or the command's output (issue 36).
"""

from __future__ import annotations

import re

_CONTROL = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
_CONTROL_RE = re.compile(f"[{_CONTROL}]")
_SPECIAL_RE = re.compile(f"[|`\r\n{_CONTROL}]")
_LINE_BREAK_RE = re.compile(r"\r\n|[\r\n]")
_BACKTICK_RUN_RE = re.compile(r"`+")


def escape_controls(text: str) -> str:
    """``text`` with each terminal control character written as its ``\\xNN`` escape (tab,
    CR and LF are kept: callers turn line breaks into spaces or keep them as lines)."""
    if _CONTROL_RE.search(text) is None:
        return text
    return _CONTROL_RE.sub(_control_escape, text)


def _control_escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def one_line(text: str) -> str:
    """``text`` with its line breaks turned into spaces (a bullet's plain value)."""
    if _SPECIAL_RE.search(text) is None:
        return text
    return escape_controls(_LINE_BREAK_RE.sub(" ", text))


def has_markdown_syntax(text: str) -> bool:
    """True when ``text`` holds a character that needs escaping in a table code span."""
    return _SPECIAL_RE.search(text) is not None


def code_span(text: str) -> str:
    """``text`` as one inline code span (a bullet's value), whatever it holds."""
    if _SPECIAL_RE.search(text) is None:
        return f"`{text}`"
    return _fenced(escape_controls(_LINE_BREAK_RE.sub(" ", text)))


def table_code(text: str) -> str:
    """``text`` as a code span inside a GFM table cell."""
    if _SPECIAL_RE.search(text) is None:
        return f"`{text}`"
    return _fenced(escape_controls(_LINE_BREAK_RE.sub(" ", text)).replace("|", "\\|"))


def table_text(text: str) -> str:
    """``text`` as plain text inside a GFM table cell (no code span)."""
    if _SPECIAL_RE.search(text) is None:
        return text
    text = escape_controls(_LINE_BREAK_RE.sub(" ", text))
    return text.replace("|", "\\|").replace("`", "\\`")


def _fenced(text: str) -> str:
    """A code span fenced by one more backtick than the longest run inside the text."""
    longest = max((len(run) for run in _BACKTICK_RUN_RE.findall(text)), default=0)
    if longest == 0:
        return f"`{text}`"
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
