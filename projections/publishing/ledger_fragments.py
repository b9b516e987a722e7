"""The pieces of a rendered ledger that belong to one run or one case, as exact bytes/lines.

A ledger's JSON is ~2.9 KB per run; re-building and re-dumping 30,000 rows for every upsert
cost seconds. Instead the read model keeps, next to each row, the bytes that row contributes
to the JSON (at its nesting depth) and its Markdown Runs line, and per case the case node's
JSON up to its runs plus its Markdown lines; ``ledger_stream`` then only concatenates them.

Everything here is a pure function of the row(s), so replay reproduces it and
``rebuild --verify`` can compare it. The helpers of ``ledger_v0`` that the full render uses
make every piece, so the two renders cannot drift apart.
"""

from __future__ import annotations

import struct
from typing import Any

import orjson

from benchledger.ledger.core.jsonfmt import json_like_stdlib
from benchledger.ledger.rules.row.archive_state import is_archived
from benchledger.ledger.rules.row.ordering import row_sort_key
from benchledger.projections.publishing.ledger_v0 import (
    bucket_of,
    case_backlog_entries,
    case_decision_line,
    case_node,
    run_line,
)

# Indentation of a run object in the document: benchmarks > bid > cases > cid > runs > item.
RUN_INDENT = 12
# Indentation of a case's key inside its benchmark's "cases" object.
CASE_INDENT = 8
# What closes a case node after its last run.
CASE_TAIL = b"\n" + b" " * (CASE_INDENT + 2) + b"]\n" + b" " * CASE_INDENT + b"}"
_SEP = b"\x00"


def nested_json(value: Any, indent: int) -> bytes:
    """``value`` as ``json.dumps(indent=2, sort_keys=True)`` writes it ``indent`` spaces deep
    (without the leading indent of its first line). Raw newlines never occur inside JSON
    strings, so re-indenting is a plain replace."""
    data = json_like_stdlib(value, sort_keys=True)[:-1]
    return data.replace(b"\n", b"\n" + b" " * indent) if indent else data


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def bucket_prefix(bid: str, cid: str) -> bytes | None:
    """The leading bytes of the render key of every row in case (bid, cid); None when an id
    holds NUL (it could not be told apart from the separator, so such a ledger is always
    rendered in full)."""
    if "\x00" in bid or "\x00" in cid:
        return None
    return _utf8(bid) + _SEP + _utf8(cid) + _SEP


def prefix_of_key(key: bytes) -> bytes:
    """The case prefix a render key starts with."""
    return key[: key.index(_SEP, key.index(_SEP) + 1) + 1]


def bucket_of_prefix(prefix: bytes) -> tuple[str, str]:
    bid, cid = prefix[:-1].split(_SEP)
    return bid.decode("utf-8", "surrogatepass"), cid.decode("utf-8", "surrogatepass")


def _instant_bytes(instant: float) -> bytes:
    """8 bytes whose byte order is the float order (IEEE 754 with the sign bit flipped, all
    bits flipped for negatives); ``+ 0.0`` folds -0.0 into 0.0, which sorts equal."""
    (bits,) = struct.unpack(">Q", struct.pack(">d", instant + 0.0))
    bits = bits ^ 0xFFFFFFFFFFFFFFFF if bits >> 63 else bits | (1 << 63)
    return struct.pack(">Q", bits)


def render_key(row: dict) -> bytes | None:
    """Bytes that sort like the document orders runs: benchmark, case, then §6.3
    (``recorded_at`` instant, ``run_id``). UTF-8 byte order is code-point order, so SQLite
    (BLOB) and PostgreSQL (bytea) both sort it exactly as Python sorts the strings."""
    prefix = bucket_prefix(*bucket_of(row))
    if prefix is None:
        return None
    instant, run_id = row_sort_key(row)
    return prefix + _instant_bytes(instant) + _utf8(run_id)


def run_columns(text: str) -> dict[str, Any]:
    """The rendered pieces of one stored row (``row`` column text): its render key, its JSON
    fragment (leading indent included) and its Markdown Runs line (None when archived)."""
    return run_columns_of(orjson.loads(text))


def run_columns_of(row: dict) -> dict[str, Any]:
    """``run_columns`` of a row already parsed from its stored text."""
    bid, cid = bucket_of(row)
    return {
        "render_key": render_key(row),
        "json_fragment": b" " * RUN_INDENT + nested_json(row, RUN_INDENT),
        "markdown_line": None if is_archived(row) else run_line(bid, cid, row),
    }


def case_columns(bid: str, cid: str, rows: list[dict]) -> dict[str, Any]:
    """A case's counts, the JSON of its node up to and including ``"runs": [`` and its
    Markdown lines (decision line and backlog entries; None when it has no active run)."""
    node = case_node(cid, rows)
    active = [r for r in node["runs"] if not is_archived(r)]
    inner = b" " * (CASE_INDENT + 2)
    key = nested_json(cid, 0)
    head = b"".join(
        (
            b" " * CASE_INDENT + key + b": {\n",
            inner + b'"active_run_count": %d,\n' % node["active_run_count"],
            inner + b'"archived_run_count": %d,\n' % node["archived_run_count"],
            inner + b'"case_id": ' + key + b",\n",
            inner + b'"latest_decision": ',
            nested_json(node["latest_decision"], CASE_INDENT + 2) + b",\n",
            inner + b'"runs": [\n',
        )
    )
    decision_line = backlog = None
    if active:
        decision_line = case_decision_line(
            bid, cid, node["latest_decision"], len(active), node["archived_run_count"]
        )
        backlog = orjson.dumps(case_backlog_entries(bid, cid, active)).decode()
    return {
        "benchmark_id": bid,
        "case_id": cid,
        "active_run_count": node["active_run_count"],
        "archived_run_count": node["archived_run_count"],
        "json_head": head,
        "decision_line": decision_line,
        "backlog": backlog,
    }
