"""Reading a file argument or standard input (``-``) for a command, with its size limit."""

from __future__ import annotations

import sys
from pathlib import Path

from benchledger.ledger.core.input_files import read_input_file, read_stream


def read_input(value: str, limit: int) -> tuple[bytes, str | None]:
    """The bytes of a file argument or of stdin (``-``), and the path to cite (None for stdin)."""

    if value == "-":
        return read_stream(sys.stdin.buffer, shown="standard input", limit=limit), None
    return read_input_file(value, shown=Path(value).name, limit=limit), value
