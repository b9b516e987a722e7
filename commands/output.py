"""Printing payloads and errors the same way for every command.

JSON is the stable machine format (indent 2, non-ASCII kept), the full payload; the human
(Markdown) view is the command's own renderer, else ``# Title`` and the payload in words
(``ledger/core/readable.py``). Errors are one line on stderr, plus a JSON error object on
stdout with ``--format json``; tracebacks never reach the user.
"""

from __future__ import annotations

import codecs
import json
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from benchledger.ledger.core.jsonfmt import json_like_stdlib, orjson_like_stdlib
from benchledger.ledger.core.markdown import escape_controls
from benchledger.ledger.core.readable import outline

FORMATS = ("markdown", "json")
# Raw in JSON text only as DEL and C1 (``json`` escapes C0 itself); C1 holds the 8-bit CSI.
_JSON_RAW_CONTROL_RE = re.compile("[\x7f-\x9f]")
_UTF8_RAW_CONTROL_RE = re.compile(b"\x7f|\xc2[\x80-\x9f]")


def format_option(func: Callable) -> Callable:
    """A trailing ``--format`` on any subcommand wins over the global one."""
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(FORMATS),
        default=None,
        help="Output format (default: the global --format, else markdown).",
    )(func)


def resolve_format(ctx: click.Context, local: str | None) -> str:
    """The subcommand's --format if given, else the global one; remembered for error output."""
    root = ctx.find_root()
    if root.obj is None:
        root.obj = {}
    if local:
        root.obj["format"] = local
    return root.obj.get("format") or "markdown"


def dumps(payload: Any) -> str:
    """Pretty JSON (indent 2, non-ASCII kept); orjson when it prints the same bytes as json."""
    try:
        return json_like_stdlib(payload).decode("utf-8", "surrogatepass").rstrip("\n")
    except (TypeError, ValueError):
        return json.dumps(payload, indent=2, ensure_ascii=False, default=str)


def emit(
    payload: dict[str, Any],
    fmt: str,
    title: str,
    markdown: Callable[[dict[str, Any]], str] | None = None,
) -> None:
    if fmt == "json":
        if not _echo_json_bytes(payload):
            click.echo(json_printable(dumps(payload)))
        return
    # No renderer of its own: the payload in words (``ledger/core/readable.py``), never cut JSON.
    click.echo(human_printable(markdown(payload) if markdown else outline(title, payload)))


def _echo_json_bytes(payload: dict[str, Any]) -> bool:
    """Print orjson's bytes as they are when they are exactly what the text path would write:
    stdout encodes UTF-8 and orjson prints the payload as ``json`` does (its bytes are then
    valid UTF-8, with no lone surrogate for ``printable`` to escape and no raw control
    character, so no ANSI code for ``click.echo`` to strip). A 3,000-trial ingest prints
    3.7 MB: decoding it, copying it for the newline and encoding it back cost ~5-10 ms.
    False when the text path must print it."""
    encoding = getattr(sys.stdout, "encoding", None)
    if not encoding or codecs.lookup(encoding).name != "utf-8":
        return False
    try:
        data = orjson_like_stdlib(payload)
    except (TypeError, ValueError):
        return False
    if data is None:
        return False
    if b"\x7f" in data or (b"\xc2" in data and _UTF8_RAW_CONTROL_RE.search(data)):
        return False  # a DEL or C1 character: the text path escapes it
    click.echo(data, nl=False)  # ends in the one newline ``dumps`` strips and echo adds
    return True


def printable(text: str) -> str:
    """``text`` without lone surrogates, which a UTF-8 stream refuses to write.

    They come from arguments that were not valid UTF-8 (a file name with a stray byte, which
    Python keeps as surrogate escapes); echoing one back must not turn into a crash.
    """
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def human_printable(text: str) -> str:
    """``printable`` text with every terminal control character but tab and line breaks
    written as ``\\xNN`` (issue 36): a task name holding ESC or BEL must not drive the
    terminal. The Markdown renderers escape their values already; this also covers text
    they do not render (bullets of plain values, error lines)."""
    return escape_controls(printable(text))


def json_printable(text: str) -> str:
    """``printable`` JSON text with DEL and C1 characters written as ``\\u00NN`` escapes: the
    same JSON value, but no raw 8-bit CSI reaches the terminal."""
    text = printable(text)
    if text.isascii() and "\x7f" not in text:
        return text
    return _JSON_RAW_CONTROL_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def failed_check(message: str) -> None:
    """The one line on stderr of a check that ran and failed (``verify``, ``rebuild --verify``,
    ``snapshot verify``): its summary is on stdout, but a script or a terminal that shows only
    stderr must see why the exit code is 1."""
    click.echo(human_printable(f"error: {' '.join(message.split())}"), err=True)


def fail(
    message: str,
    fmt: str,
    *,
    code: str = "error",
    exit_code: int = 1,
    payload: dict[str, Any] | None = None,
) -> None:
    """One line on stderr (and the JSON error object on stdout), then exit."""
    first_line = human_printable(" ".join(str(message).split()) or "unknown error")
    click.echo(f"error: {first_line}", err=True)
    if fmt == "json":
        body = dict(payload or {"ok": False})
        body.setdefault("ok", False)
        body["error"] = first_line
        body.setdefault("error_code", code)
        click.echo(json_printable(dumps(body)))
    sys.exit(exit_code)


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[int, int], None] | None]:
    """``update(done, total)`` drawing a bar on stderr while a long read or replay runs, when
    stderr is a terminal; None when output is piped, so logs stay clean."""
    if not sys.stderr.isatty():
        yield None
        return
    bars: list[Any] = []

    def update(done: int, total: int) -> None:
        if not bars:
            bars.append(click.progressbar(length=total, label=label, file=sys.stderr))
            bars[0].__enter__()
        bars[0].update(done - bars[0].pos)

    try:
        yield update
    finally:
        if bars:
            bars[0].__exit__(None, None, None)
