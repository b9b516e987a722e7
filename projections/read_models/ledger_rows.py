"""The ledger rows read model (``rm_ledgers``, ``rm_ledger_rows`` and the caches kept beside
them) and how each ledger event changes it: live, buffered for replay, or folded by SQL.

Every ledger event carries the decided rows, so applying one is a plain upsert and replay
reproduces history exactly even after the rules that decided it change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from benchledger.ledger.sources.loopx import read_imported_rows
from benchledger.ledger.store import events as ev
from benchledger.ledger.store.connection import placeholders, quote
from benchledger.ledger.store.events import CURRENT_SCHEMA_VERSION
from benchledger.ledger.store.table_spec import TableSpec
from benchledger.projections.publishing.ledger_v0 import bucket_of
from benchledger.projections.read_models.aggregate_cases import check_aggregate_cases
from benchledger.projections.read_models.aggregate_facts import check_aggregate_cache
from benchledger.projections.read_models.database_fold import (
    DatabasePlan,
    Fold,
    is_text,
    or_else,
    supported,
    text,
    text_or_null,
    truthy,
)
from benchledger.projections.read_models.ledger_cases import (
    CACHE_COLUMNS,
    check_render_cache,
    write_rows,
)
from benchledger.projections.read_models.ledger_row_text import ROWS, row_text
from benchledger.projections.read_models.payload_text import canonical_text, json_or_none
from benchledger.projections.read_models.tables import (
    AGGREGATE_CASES,
    AGGREGATE_FACTS,
    COMPARE_FACTS,
    LEDGER_CASES,
    LEDGER_ROWS,
    LEDGERS,
)
from benchledger.projections.read_models.upsert import upsert_rows as _upsert

# Ledger-row text a replay holds back before writing (latest row per key): 30,000 rows of
# ~2 KB fit, and the buffer costs about 85 MB of memory at most.
REPLAY_BUFFER_BYTES = 64 * 1024 * 1024

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
    from benchledger.ledger.store.events import StoredEvent


class _ResolvedRows(TableSpec):
    """``rm_ledger_rows`` with each row's text resolved (``ledger_row_text``), so a store
    that keeps rows in their events compares equal to a scratch replay that cannot."""

    def select_for(self, conn: Connection) -> str:
        names = [row_text(conn) if c == "row" else f"r.{quote(c)}" for c in self.columns]
        return f"SELECT {', '.join(names)} FROM {ROWS}"


# ``rm_ledger_rows`` without its render cache: what a replay must reproduce exactly (the
# cache is checked against the rows instead, see ``LedgerRowsProjection.check_cache``).
LEDGER_ROW_FACTS = _ResolvedRows(
    LEDGER_ROWS.name,
    tuple(c for c in LEDGER_ROWS.columns if c not in CACHE_COLUMNS),
    LEDGER_ROWS.primary_key,
)


class LedgerRowsProjection:
    """Ledger rows by (ledger, run_id), plus one row per ledger with its path and policy."""

    name = "ledger_rows"
    light_replay = True  # apply reads position, event_id, event_type, payload, recorded_at
    handles = frozenset(
        {
            ev.LEDGER_UPSERTED,
            ev.LEDGER_RUNS_ARCHIVED,
            ev.LEDGER_RUNS_RESTORED,
            ev.LEDGER_MERGED,
            ev.LEDGER_IMPORTED,
        }
    )
    tables = (LEDGERS, LEDGER_ROWS, LEDGER_CASES, COMPARE_FACTS, AGGREGATE_FACTS, AGGREGATE_CASES)
    # What replay reproduces; the render cache (filled at render, never replayed), compare's
    # and the aggregate's (filled at compare and run-ledger-aggregate) are not.
    compared_tables = (LEDGERS, LEDGER_ROW_FACTS)

    def check_cache(self, conn: Connection, limit: int) -> list[dict[str, Any]]:
        """Cached render pieces, compare and aggregate facts and aggregate case results that
        differ from what their rows give now."""
        from benchledger.projections.read_models.compare_facts import (
            check_compare_cache,  # numpy: compare's alone
        )

        found = check_render_cache(conn, limit)
        for check in (check_compare_cache, check_aggregate_cache, check_aggregate_cases):
            if len(found) < limit:
                found += check(conn, limit - len(found))
        return found

    def apply(self, conn: Connection, events: list[StoredEvent]) -> None:
        buffer = LedgerRowsBuffer()
        buffer.apply(conn, events)
        buffer.flush(conn)

    def replayer(self, *, resume: bool = False, self_contained: bool = False) -> LedgerRowsBuffer:
        """A replay sink that writes each ledger row once per flush instead of once per event.

        A busy ledger rewrites the same few thousand runs over and over; replay keeps only
        the latest row per key until ``REPLAY_BUFFER_BYTES`` of row text is pending.
        ``resume``: the tables already hold an earlier state (``--as-of`` from a snapshot),
        so cached cases the replayed rows touch are dropped, as a live append does.
        ``self_contained``: the tables go where no events are (a scratch database for
        ``--as-of`` or a snapshot), so every row keeps its own text.
        """
        return LedgerRowsBuffer(
            max_bytes=REPLAY_BUFFER_BYTES, resume=resume, in_events=not self_contained
        )

    def database_plan(self, conn: Connection) -> DatabasePlan | None:
        """Single-row upserts by SQL (their rows stay in the events); the other ledger events,
        and the upserts each ledger's own row is decided by, through ``replayer``."""
        if not supported(conn, self.handles):
            return None
        return DatabasePlan(
            (_LEDGER_ROWS_FOLD,), _ledger_events_for_python, only=_upserts_not_superseded
        )


class LedgerRowsBuffer:
    """The ledger rows and ledgers decided since the last flush, latest per key.

    Every change this projection makes is an upsert by key (nothing is ever deleted), so
    writing only the latest row per key leaves the tables exactly as writing every row in
    position order would. Ledgers are read back through this buffer, never behind it.
    """

    def __init__(
        self, max_bytes: int | None = None, *, resume: bool = False, in_events: bool = True
    ) -> None:
        self.max_bytes = max_bytes
        # Rows of single-row upserts are left in their events (``ledger_row_text``) unless the
        # tables go where the events are not, or an upcaster would change the stored row.
        self.in_events = in_events and ev.LEDGER_UPSERTED not in CURRENT_SCHEMA_VERSION
        # A replay from empty tables: no render cache can be stale, nothing to drop.
        self.fresh = max_bytes is not None and not resume
        self.ledgers: dict[str, dict[str, Any]] = {}
        # (ledger_id, run_id) -> (benchmark_id, case_id, recorded_at, archived, row, position,
        # (benchmark, case) node of the document)
        self.rows: dict[tuple[str, str], tuple[Any, ...]] = {}
        self.pending_bytes = 0

    def apply(self, conn: Connection, events: list[Any]) -> None:
        """Take ``StoredEvent``s or ``ReplayEvent``s. Each row is serialised as it arrives:
        holding payload text and decoding it again at the write (to skip superseded rows)
        cost a second decode of every row of a realistic log, where most rows are written
        once; on SQLite a replay from position 1 skips superseded upserts before decoding
        them (``sparse_replay``)."""
        ledgers, rows = self.ledgers, self.rows
        in_events = self.in_events
        added = 0
        for event in events:
            payload = event.payload
            ledger_id = payload["ledger_id"]
            ledgers[ledger_id] = _ledger_row(conn, ledgers.get(ledger_id), event)
            single = in_events and "row" in payload and event.event_type == ev.LEDGER_UPSERTED
            for row in _rows_of(event.event_type, payload):
                entry = _row_entry(row, event.position, in_event=single)
                key = (ledger_id, row["run_id"])
                old = rows.get(key)
                added += _entry_size(entry) - (_entry_size(old) if old is not None else 0)
                rows[key] = entry
        self.pending_bytes += added
        if self.max_bytes is not None and self.pending_bytes >= self.max_bytes:
            self._spill(conn)

    sparse_event_type = ev.LEDGER_UPSERTED

    def sparse_supported(self, conn: Connection) -> bool:
        """Whether ``sparse_replay`` can read this store: SQLite (its JSON functions), and
        upserts stored as replay sees them (no upcaster: the stored text is the payload).
        Not PostgreSQL: ``payload::jsonb`` cost ~45 us an event there (TOASTed text), three
        times what decoding it in Python does."""
        return conn.dialect == "sqlite" and ev.LEDGER_UPSERTED not in CURRENT_SCHEMA_VERSION

    def sparse_replay(self, conn: Connection, upto: int) -> list[int] | None:
        """The ``ledger_upserted`` events up to ``upto`` a full replay needs, in position order
        (see ``replay_feed._light_replay``; a pure read, safe on another connection and thread).

        An upsert that a later upsert of the same (ledger, run id) supersedes changes the
        row only for the later one to overwrite it, so it is skipped unless the ledger's own
        row needs it: the first upsert of each ledger (``created_at``), its first one with a
        non-empty ``update_policy`` and its last one with a non-empty ``ledger_path`` (its
        last upsert, which sets ``updated_at`` and ``position``, is the last of its run).
        The other ledger events carry several rows and are all replayed; replaying this
        subset in position order therefore ends with the same tables. The keys are read by
        SQLite's JSON functions without the rows leaving the database (see
        ``sparse_supported``).
        """
        try:
            found = conn.execute(_SQLITE_KEPT_UPSERTS, (ev.LEDGER_UPSERTED, upto)).all()
        except conn.errors:  # a payload SQLite cannot parse: the full replay reports it
            return None
        return [position for (position,) in found]

    def flush(self, conn: Connection) -> None:
        """Write what is pending. The render cache is not built here: the rows are written
        without their pieces and the cases they touch are decided at the next render
        (``ledger_cases.fill_render_cache``)."""
        self._spill(conn)

    def _spill(self, conn: Connection) -> None:
        """Write what is pending (the ledgers stay cached, they are what the table now holds)."""
        _upsert(conn, LEDGERS, list(self.ledgers.values()))
        items = [
            {
                "ledger_id": ledger_id,
                "run_id": run_id,
                "benchmark_id": benchmark_id,
                "case_id": case_id,
                "recorded_at": recorded_at,
                "archived": archived,
                "row": text,
                "position": position,
                "bucket": bucket,
            }
            for (ledger_id, run_id), (
                benchmark_id,
                case_id,
                recorded_at,
                archived,
                text,
                position,
                bucket,
            ) in self.rows.items()
        ]
        self.rows = {}
        self.pending_bytes = 0
        write_rows(conn, items, fresh=self.fresh)


def _sql_flag(value: str) -> str:
    """SQL: 1 when a ``json_extract`` result is certainly truthy in Python (a non-empty string
    or container, a non-zero number, true), 0 when falsy, 2 for ``'{}'``/``'[]'`` text (an
    empty container, or a two-character string: only the JSON type could tell). A simple
    CASE evaluates ``value`` once."""
    return (
        f"CASE coalesce({value}, '') WHEN '' THEN 0 WHEN 0 THEN 0"
        f" WHEN '{{}}' THEN 2 WHEN '[]' THEN 2 ELSE 1 END"
    )


def _sql_plain_text(value: str) -> str:
    """SQL: a ``json_extract`` result that is certainly a JSON string (objects and arrays
    come back as text too, starting with a bracket; a string that does is not trusted)."""
    return f"(typeof({value}) = 'text' AND substr({value}, 1, 1) NOT IN ('{{', '['))"


# The upserts ``LedgerRowsBuffer.sparse_replay`` keeps, in position order. SQLite caches the
# parsed payload between the JSON calls on one row, so each event is parsed once; the inner
# query (a co-routine: LIMIT stops it being flattened) computes each value once, and walks
# the table in position order (``|| ''``: a type-index lookup per row cost 15% more). A key only
# counts when ledger id and run id are certainly strings and neither ledger_path nor
# update_policy is ambiguous; any other event is its own group (an integer position never
# equals a text run id), so it is kept and replayed as it is.
_SQLITE_KEPT_UPSERTS = f"""
WITH keys AS MATERIALIZED (
  SELECT lid, min(p) AS first_p, max(p) AS last_p,
         min(CASE WHEN qf = 1 THEN p END) AS policy_p,
         max(CASE WHEN pf = 1 THEN p END) AS path_p
  FROM (
    SELECT position AS p,
           json_extract(payload, '$.ledger_id') AS lid,
           json_extract(payload, '$.row.run_id') AS rid,
           {_sql_flag("json_extract(payload, '$.ledger_path')")} AS pf,
           {_sql_flag("json_extract(payload, '$.update_policy')")} AS qf
    FROM events WHERE event_type || '' = ? AND position <= ?
    LIMIT -1)
  GROUP BY lid, CASE WHEN {_sql_plain_text("lid")} AND {_sql_plain_text("rid")}
                          AND pf < 2 AND qf < 2 THEN rid ELSE p END),
ledgers AS MATERIALIZED (
  SELECT min(first_p) AS a, min(policy_p) AS c, max(path_p) AS d FROM keys GROUP BY lid)
SELECT last_p FROM keys
UNION SELECT a FROM ledgers
UNION SELECT c FROM ledgers WHERE c IS NOT NULL UNION SELECT d FROM ledgers WHERE d IS NOT NULL
ORDER BY 1
"""


_ROW = "$.row"
# A single-row upsert as ``LedgerRowsBuffer.apply`` writes it on a live replay (the row stays in
# its event: ``row`` NULL; the render cache empty).
_LEDGER_ROWS_FOLD = Fold(
    LEDGER_ROWS,
    ev.LEDGER_UPSERTED,
    {
        "ledger_id": text("$.ledger_id"),
        "run_id": text("$.row.run_id"),
        "benchmark_id": or_else("$.row.benchmark_id", "''"),
        "case_id": or_else("$.row.case_id", "''"),
        "recorded_at": or_else("$.row.recorded_at", "''"),
        "archived": f"CASE WHEN {text('$.row.archive_state')} = 'archived' THEN 1 ELSE 0 END",
        "row": "NULL",
        "position": "e.position",
        **dict.fromkeys(CACHE_COLUMNS, "NULL"),
    },
    " AND ".join(
        [
            is_text("$.ledger_id"),
            f"e.stream = 'ledger/' || {text('$.ledger_id')}",
            f"json_type(e.payload, '{_ROW}') = 'object'",
            is_text("$.row.run_id"),
            text_or_null("$.row.benchmark_id"),
            text_or_null("$.row.case_id"),
            text_or_null("$.row.recorded_at"),
        ]
    ),
    self_contained={"row": text(_ROW)},
)


def _upserts_not_superseded(conn: Connection, upto: int) -> list[int] | None:
    """The upserts the ledger fold needs (``LedgerRowsBuffer.sparse_replay``): a log that
    rewrites the same runs over and over is folded from its latest upserts only."""
    return LedgerRowsBuffer().sparse_replay(conn, upto)


def _ledger_events_for_python(conn: Connection, upto: int) -> list[int]:
    """The ledger events the database replay leaves to ``replayer``: all but the single-row
    upserts, and per ledger the upserts its own row (``_ledger_row``) is decided by — its first
    and last, its first with an update policy and its last with a ledger path. The fold only
    takes upserts on their own ledger's stream, so these are found through the stream index,
    reading a ledger's events from either end only until one qualifies."""
    others = sorted(LedgerRowsProjection.handles - {ev.LEDGER_UPSERTED})
    found = {
        position
        for (position,) in conn.execute(
            f"SELECT position FROM events WHERE event_type IN ({placeholders(len(others))})"
            " AND position <= ?",
            [*others, upto],
        )
    }
    streams = conn.execute(
        "SELECT DISTINCT stream FROM events WHERE stream >= 'ledger/' AND stream < 'ledger0'"
    ).all()
    for (stream,) in streams:
        for sql in _LEDGER_UPSERT_PICKS:
            hit = conn.execute(sql, (stream, upto)).first()
            if hit is not None:
                found.add(hit[0])
    return sorted(found)


def _pick_upsert(condition: str, direction: str) -> str:
    """SQL: the first (``ASC``) or last (``DESC``) upsert the ledger fold takes on a stream that
    meets ``condition`` (``|| ''`` keeps the planner on the stream index)."""
    return (
        "SELECT e.position FROM events AS e WHERE e.stream = ?"
        f" AND e.event_type || '' = '{ev.LEDGER_UPSERTED}' AND e.position <= ?"
        f" AND ({_LEDGER_ROWS_FOLD.clean}) AND ({condition})"
        f" ORDER BY e.stream_version {direction} LIMIT 1"
    )


_LEDGER_UPSERT_PICKS = (
    _pick_upsert("1", "ASC"),
    _pick_upsert("1", "DESC"),
    _pick_upsert(truthy("$.update_policy"), "ASC"),
    _pick_upsert(truthy("$.ledger_path"), "DESC"),
)


def _row_entry(row: dict[str, Any], position: int, *, in_event: bool = False) -> tuple[Any, ...]:
    """A ``LedgerRowsBuffer.rows`` value: the filter columns, the canonical row (None: it
    stays in the event at ``position``), position, and the document's case the row is in
    (whose cached render it invalidates)."""
    return (
        row.get("benchmark_id") or "",
        row.get("case_id") or "",
        row.get("recorded_at") or "",
        1 if row.get("archive_state") == "archived" else 0,
        None if in_event else canonical_text(row),
        position,
        bucket_of(row),
    )


# What a pending row left in its event costs the buffer in memory (its key, filter columns
# and tuple), so the buffer stays bounded when rows keep no text.
_IN_EVENT_BYTES = 1024


def _entry_size(entry: tuple[Any, ...]) -> int:
    text = entry[4]
    return _IN_EVENT_BYTES if text is None else len(text)


def _ledger_row(
    conn: Connection, known: dict[str, Any] | None, event: StoredEvent
) -> dict[str, Any]:
    """The ledger's own row after ``event``; ``known`` (owned by the caller) is updated."""
    payload = event.payload
    if known is None:
        known = _stored_ledger(conn, payload["ledger_id"])
    updated_at = payload.get("updated_at") or event.recorded_at
    if known is None:
        return {
            "ledger_id": payload["ledger_id"],
            "ledger_path": payload.get("ledger_path") or payload["ledger_id"],
            "update_policy": json_or_none(payload.get("update_policy")),
            "created_at": updated_at,
            "updated_at": updated_at,
            "position": event.position,
        }
    known["updated_at"] = updated_at
    known["position"] = event.position
    if payload.get("update_policy") and not known.get("update_policy"):
        known["update_policy"] = json_or_none(payload["update_policy"])
    if payload.get("ledger_path"):
        known["ledger_path"] = payload["ledger_path"]
    return known


def _stored_ledger(conn: Connection, ledger_id: str) -> dict[str, Any] | None:
    found = conn.execute(f"{LEDGERS.select_sql} WHERE ledger_id = ?", (ledger_id,)).first()
    return dict(zip(LEDGERS.columns, found, strict=True)) if found else None


def _rows_of(event_type: str, payload: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows an event puts in the read model: an imported row as loopx 0.4.8 reads it."""
    if "row" in payload:
        return [payload["row"]]
    if event_type == ev.LEDGER_IMPORTED:
        return read_imported_rows(payload)
    return list(payload.get("rows") or [])
