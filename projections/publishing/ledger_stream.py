"""The incremental ledger render: the JSON and the Markdown streamed from pieces the read model
keeps per case and per run (``ledger_fragments``).

No row is parsed, decided or dumped here: a render reads ``rm_ledger_cases`` (one small row
per case) and streams ``rm_ledger_rows.json_fragment`` in ``render_key`` order straight into
the file, hashing as it goes, so time and memory are dominated by copying ~3 KB per run. The
Markdown's head (counts, case decisions, backlog) needs only the cases, so it is written first
and each row's Runs line follows it into the Markdown's own temp file in the same pass: no
line is kept until the end, and the ~8 MB document is never joined in memory.

The pieces are computed lazily: a render first fills what writes left empty
(``ledger_cases.fill_render_cache``), on the render's own connection, so they are kept when
its transaction commits. The cache checks itself while streaming: every case's rows must
arrive under its prefix in its counted number, and no row may lack its pieces. Anything else
(ids holding NUL, a bug) raises ``StaleCache`` before the file is replaced, and
the caller renders in full; the two renders write the same bytes (tests/test_ledger_stream.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from benchledger.projections.publishing.files import (
    HashingWriter,
    StagedFile,
    StagedStream,
    atomic_stream,
)
from benchledger.projections.publishing.ledger_fragments import (
    CASE_TAIL,
    bucket_prefix,
    nested_json,
)
from benchledger.projections.publishing.ledger_v0 import (
    SCHEMA_VERSION,
    MarkdownParts,
    markdown_head,
)
from benchledger.projections.read_models.ledger_cases import fill_render_cache, rebuild_ledger_cases

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
_CHUNK = 1024 * 1024
# Runs lines (~200 bytes each) handed to the Markdown's writer at a time (checked at each
# JSON chunk, so a Markdown chunk holds this many lines or a few hundred more).
_MARKDOWN_LINES = 4000
# Rows read from the cursor at a time (~300 KB of fragments at ~3 KB each). Larger batches make
# larger chunks for the writer: 320 rows (~1.9 MB chunks) cost ~7,000 more page faults per
# upsert at 30,000 rows (fresh heap for the writer's joins), 64-100 rows the same as ~1 MB.
_BATCH_ROWS = 96
_RUN_SEP = b",\n"
_STREAM_ROWS = 2000
# How much of a SQLite store the streaming render maps (the rest, if any, is read as usual).
_MAP_BYTES = 1 << 30


class StaleCache(Exception):
    """The cached pieces do not add up to the ledger's rows; render it in full."""


@dataclass(slots=True)
class _Case:
    """One row of ``rm_ledger_cases`` (6,000 of them at 30,000 rows: not frozen, since a
    frozen dataclass sets each field through ``object.__setattr__``)."""

    prefix: bytes
    benchmark_id: str
    case_id: str
    active: int
    archived: int
    head: bytes
    decision_line: str | None
    backlog: str | None


def stream_ledger_json(
    conn: Connection,
    ledger_id: str,
    meta: dict[str, Any],
    json_path: Path,
    markdown_path: Path,
    *,
    durable: bool = True,
) -> tuple[str, StagedFile] | None:
    """Write the ledger JSON from the cache (filled first where writes left it empty) and the
    Markdown beside it; returns the JSON's sha256 (the JSON is in place) and the Markdown,
    written in full under its temp name for the caller to publish (the JSON goes in place
    first, as before), or None (nothing written) when the cache cannot render this ledger.
    Cases that do not add up are decided again once from the whole ledger (a run that moved
    out of a case it was cached in) before giving up. ``durable``: fsync before the rename."""
    return _stream(conn, ledger_id, meta, json_path, markdown_path, durable=durable)


def _stream(
    conn: Connection,
    ledger_id: str,
    meta: dict[str, Any],
    json_path: Path,
    markdown_path: Path,
    *,
    durable: bool,
) -> tuple[str, StagedFile] | None:
    fill_render_cache(conn, ledger_id)
    for attempt in range(2):
        cases = _cases(conn, ledger_id)
        if not cases:
            return None
        markdown = StagedStream(markdown_path, durable=durable)
        try:
            head = _markdown_head(meta, cases)
            with atomic_stream(json_path, durable=durable) as out, markdown as lines_out:
                lines_out.write(head)  # as it is: no copy of the ~2 MB head for its newline
                lines_out.write(b"\n")
                _write_json(conn, ledger_id, meta, cases, out, lines_out)
        except StaleCache:
            if attempt:
                return None
            rebuild_ledger_cases(conn, ledger_id)
            continue
        except BaseException:
            if markdown.staged is not None:  # the JSON failed after the Markdown was written
                markdown.staged.discard()
            raise
        assert markdown.staged is not None
        return out.hexdigest(), markdown.staged
    return None


def _cases(conn: Connection, ledger_id: str) -> list[_Case] | None:
    """The ledger's cases in document order (benchmark, then case: code-point order, which is
    also the byte order of their render-key prefixes)."""
    query = (
        "SELECT benchmark_id, case_id, active_run_count, archived_run_count, json_head,"
        " decision_line, backlog FROM rm_ledger_cases WHERE ledger_id = ?"
    )
    cases = []
    for bid, cid, active, archived, head, line, backlog in conn.execute(query, (ledger_id,)):
        prefix = bucket_prefix(bid, cid)
        if prefix is None:
            return None
        cases.append(_Case(prefix, bid, cid, active, archived, bytes(head), line, backlog))
    cases.sort(key=lambda c: c.prefix)
    previous = None
    for case in cases:
        ids = (case.benchmark_id, case.case_id)
        if previous is not None and not previous < ids:
            return None
        previous = ids
    return cases


class _Buffered:
    """Pieces handed to the writer thread in lists of ~1 MB: it joins, hashes and writes each
    list while this thread reads the next rows (no copy of the ~90 MB here). The Runs lines of
    the Markdown go the same way to the Markdown's writer."""

    def __init__(self, out: HashingWriter, lines_out: HashingWriter) -> None:
        self.out = out
        self.parts: list[bytes] = []
        self.size = 0
        self.lines_out = lines_out
        self.lines: list[bytes] = []
        self.glue: list[bytes] = []  # what comes before the next fragment or case

    def __call__(self, data: bytes) -> None:
        self.parts.append(data)
        self.size += len(data)
        if self.size >= _CHUNK:
            self.flush()

    def cases(self, rows: _Rows, cases: list[_Case]) -> None:
        """The case nodes of one benchmark, in order: each one's head, its runs separated as
        ``json.dumps`` separates list items, its closing brackets; each case's Runs-table
        lines go to the Markdown. The fragments are not joined here: the writer thread's
        join copies them once, off this thread.

        Cases go in batches of ~``_BATCH_ROWS`` rows (``_batch``), so the per-row work is a
        few list operations over the batch in C, and what is left in Python is per case."""
        batch: list[_Case] = []
        total = 0
        self.glue = []  # no separator before a benchmark's first case
        for case in cases:
            batch.append(case)
            total += case.active + case.archived
            if total >= _BATCH_ROWS:
                self._batch(rows, batch, total)
                batch, total = [], 0
        if batch:
            self._batch(rows, batch, total)
        self.parts += self.glue  # the last case's closing brackets

    def _batch(self, cursor: _Rows, batch: list[_Case], total: int) -> None:
        """The next ``total`` rows of the stream, which must be the rows of ``batch``'s cases
        in order, all carrying their pieces. The stream is in render-key order, and the keys
        that start with a prefix are one contiguous range of that order, so the first and the
        last key starting with the case's prefix means every key between them does (a NULL
        key sorts first on SQLite and last on PostgreSQL, so it can only be a first or a last
        key). A case's archived runs are its rows without a Runs line, so each case must have
        exactly ``archived`` of them (checked where a case has any, and by the batch's total).

        Layout: the batch's fragments interleaved with what follows each one: a comma and a
        newline inside a case, and after a case's last run its closing brackets, a comma, a
        newline and the next case's head (the glue, which also carries any case without
        rows); the glue after the batch's last run waits for what comes next."""
        rows = cursor.fetchmany(total) if total else []
        if len(rows) != total:
            raise StaleCache("a case's rows differ from its cached counts")
        keys, fragments, lines = zip(*rows, strict=True) if rows else ((), (), ())
        if None in fragments:
            raise StaleCache("a row without its cached pieces")
        following = [_RUN_SEP] * total
        glue = self.glue
        size = 0
        end = archived = 0
        for case in batch:
            if glue:
                glue.append(b",\n")
            glue.append(case.head)
            size += len(case.head)
            count = case.active + case.archived
            if count:
                start = end
                end += count
                first, last = keys[start], keys[end - 1]
                if first is None or last is None:
                    raise StaleCache("a row without its render key")
                prefix = case.prefix
                if not (bytes(first).startswith(prefix) and bytes(last).startswith(prefix)):
                    raise StaleCache("a case's rows differ from its cached case")
                if case.archived:
                    if lines[start:end].count(None) != case.archived:
                        raise StaleCache("active rows differ from the cached count")
                    archived += case.archived
                if start:
                    following[start - 1] = b"".join(glue)
                else:
                    self.parts += glue
                glue = []
            glue.append(CASE_TAIL)
        self.glue = glue
        if not total:
            return
        if lines.count(None) != archived:
            raise StaleCache("active rows differ from the cached count")
        self.lines += [line for line in lines if line is not None] if archived else lines
        following[-1] = b""  # the glue after the last run waits for what comes next
        runs: list[bytes] = [b""] * (2 * total)
        runs[::2] = fragments
        runs[1::2] = following
        self.parts += runs
        self.size += size + sum(map(len, fragments))
        if self.size >= _CHUNK:
            self.flush()
            if len(self.lines) >= _MARKDOWN_LINES:
                self.flush_lines()

    def flush(self) -> None:
        if self.parts:
            self.out.write_parts(self.parts)
        self.parts, self.size = [], 0

    def flush_lines(self) -> None:
        """The Runs lines so far, each ending in a newline (the writer joins them)."""
        if self.lines:
            self.lines.append(b"")
            self.lines_out.write_parts(self.lines, b"\n")
        self.lines = []


def _write_json(
    conn: Connection,
    ledger_id: str,
    meta: dict[str, Any],
    cases: list[_Case],
    out: HashingWriter,
    lines_out: HashingWriter,
) -> None:
    """The document ``dump_json(build_document(...))`` writes, piece by piece, to ``out``; the
    Runs-table lines of the active runs, in document order, to ``lines_out``."""
    write = _Buffered(out, lines_out)
    with _pieces_in_order(conn, ledger_id) as stream:
        write(b'{\n  "benchmarks": {\n')
        for index, (bid, bcases) in enumerate(_by_benchmark(cases)):
            active = sum(c.active for c in bcases)
            archived = sum(c.archived for c in bcases)
            key = nested_json(bid, 0)
            write(
                (b",\n" if index else b"")
                + b"    " + key + b": {\n"
                + b'      "active_case_count": %d,\n' % sum(1 for c in bcases if c.active)
                + b'      "active_run_count": %d,\n' % active
                + b'      "archived_run_count": %d,\n' % archived
                + b'      "benchmark_id": ' + key + b",\n"
                + b'      "case_count": %d,\n' % len(bcases)
                + b'      "cases": {\n'
            )  # fmt: skip
            write.cases(stream, bcases)
            write(b'\n      },\n      "run_count": %d\n    }' % (active + archived))
        if stream.fetchone() is not None:
            raise StaleCache("rows outside every cached case")
        write(b'\n  },\n  "schema_version": ' + nested_json(SCHEMA_VERSION, 0) + b",\n")
        policy = meta.get("update_policy")
        if policy is not None:
            write(b'  "update_policy": ' + nested_json(policy, 2) + b",\n")
        write(b'  "updated_at": ' + nested_json(meta.get("updated_at") or "", 2) + b"\n}\n")
        write.flush()
        write.flush_lines()


class _Rows:
    """A cursor's rows ``n`` at a time, drawn from its iterator: a server-side cursor's own
    ``fetchmany`` is a round trip per call (a batch is ~96 rows), its iterator fetches
    ``itersize`` rows per round trip."""

    def __init__(self, cursor: Any) -> None:
        self._rows = iter(cursor)

    def fetchmany(self, count: int) -> list[tuple]:
        return list(islice(self._rows, count))

    def fetchone(self) -> tuple | None:
        return next(self._rows, None)


@contextmanager
def _pieces_in_order(conn: Connection, ledger_id: str) -> Iterator[_Rows]:
    """``(render_key, json_fragment, markdown_line)`` of every row of the ledger, in render
    key order, on the DBAPI cursor of the transaction's own connection: ~90 MB at 30,000
    rows, streamed from a cursor, and on PostgreSQL a server-side
    cursor in binary format streams bytea without hex (half the time of the text format).

    The Markdown line comes as its UTF-8 bytes (the stored text's own encoding on SQLite):
    the Markdown is written as bytes, so 30,000 lines are neither decoded here nor encoded
    again."""
    sql = "SELECT render_key, json_fragment, {} FROM rm_ledger_rows"
    sql += " WHERE ledger_id = {} ORDER BY render_key"
    raw = conn.dbapi_connection()
    if conn.dialect == "postgresql":
        cursor = raw.cursor(name=f"ledger_stream_{id(conn)}", binary=True)
        cursor.itersize = _STREAM_ROWS
        cursor.execute(sql.format("convert_to(markdown_line, 'UTF8')", "%s"), (ledger_id,))
    else:
        # Read through a memory map: the rows come in render-key order, not in the table's, so
        # a 2 MB page cache reads each 16 KiB table page again for nearly every row (25,000
        # ``pread`` copies, 400 MB, at 30,000 rows); mapped, the pages are read in place.
        raw.execute(f"PRAGMA mmap_size={_MAP_BYTES}")
        cursor = raw.cursor()
        cursor.execute(sql.format("CAST(markdown_line AS BLOB)", "?"), (ledger_id,))
    try:
        yield _Rows(cursor)
    finally:
        cursor.close()
        if conn.dialect != "postgresql":
            raw.execute("PRAGMA mmap_size=0")


def _by_benchmark(cases: list[_Case]) -> list[tuple[str, list[_Case]]]:
    grouped: list[tuple[str, list[_Case]]] = []
    for case in cases:
        if not grouped or grouped[-1][0] != case.benchmark_id:
            grouped.append((case.benchmark_id, []))
        grouped[-1][1].append(case)
    return grouped


def _markdown_head(meta: dict[str, Any], cases: list[_Case]) -> bytes:
    """The Markdown through the Runs table's rule, without its newline, from the cases alone
    (the stream checks each case's count of active runs, which the head shows, as it goes)."""
    # every active case with its two Markdown pieces, which the cache fills for it
    active_cases: list[tuple[_Case, str, str]] = []
    for c in cases:
        if not c.active:
            continue
        if c.decision_line is None or c.backlog is None:
            raise StaleCache("an active case without its Markdown lines")
        active_cases.append((c, c.decision_line, c.backlog))
    archived = []
    for bid, bcases in _by_benchmark(cases):
        runs = sum(c.archived for c in bcases)
        if runs:
            archived.append((bid, sum(1 for c in bcases if c.archived), runs))
    parts = MarkdownParts(
        schema_version=SCHEMA_VERSION,
        updated_at=meta.get("updated_at") or "",
        active_case_count=len(active_cases),
        active_run_count=sum(c.active for c, _line, _backlog in active_cases),
        archived=archived,
        decision_lines=[decision_line for _c, decision_line, _b in active_cases],
        backlog=[
            (rank, repair_class, c.benchmark_id, c.case_id, arm, line)
            for c, _line, backlog in active_cases
            for rank, repair_class, arm, line in orjson.loads(backlog)
        ],
        run_lines=[],
    )
    return markdown_head(parts).encode("utf-8")
