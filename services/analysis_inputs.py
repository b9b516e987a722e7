"""Reading the files ``parity-check`` and ``case-analysis-candidates`` are pointed at."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.input_files import COMPACT_JSON_LIMIT, read_input_file, read_stream
from benchledger.ledger.core.json_input import parse_json


def display_name(given: str | Path) -> str:
    """How an error names a file: as the user spelled a relative path, else only its name."""
    text = str(given)
    path = Path(text).expanduser()
    return path.name if path.is_absolute() or text.startswith("~") else text


def read_input_bytes(given: str, *, stdin_ok: bool = False) -> bytes:

    if stdin_ok and given == "-":
        return read_stream(sys.stdin.buffer, shown="standard input", limit=COMPACT_JSON_LIMIT)
    path = Path(given).expanduser()
    return read_input_file(path, shown=display_name(given), limit=COMPACT_JSON_LIMIT)


def read_json_object(path: Path, display: str) -> dict[str, Any]:
    raw = read_input_file(path, shown=display, limit=COMPACT_JSON_LIMIT)
    data = parse_json(raw, what=f"{display} is not valid JSON")
    if not isinstance(data, dict):
        raise InputError(f"{display} must contain a JSON object")
    return data
