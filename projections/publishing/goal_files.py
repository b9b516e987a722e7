"""Rendering the loopx-compatible files under the runtime root from the read models.

``goals/<goal>/runs/<stem>.json|.md``, ``index.jsonl``, ``rollout-event-log.jsonl`` and
``registry.global.json`` are all re-derivable from the store; each is written atomically, and
the whole index and log are re-rendered (not appended to), so a crash mid-render is healed by
the next render instead of leaving a torn line.

The run records, the index and the log are not fsynced, like the ledger files
(``projections/publishing/ledger_files.py``): the store is their durable copy, and a file a power
loss
takes back (old, empty or gone) no longer matches its committed ``export_written`` digest, so
``verify --files`` reports it and ``render`` writes it again (tests/test_ledger_file_crash.py).
The two fsyncs cost a 3,000-trial ingest ~10 ms of waiting. The global registry is a user's
file shared by every project: it is merged under a lock and fsynced
(``projections/publishing/global_registry_file.py``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from benchledger.ledger.core.jsonfmt import orjson_prints_as_stdlib
from benchledger.ledger.rules.history.goal_runs import (
    goal_dir_rel,
    index_path_rel,
    record_paths_rel,
    runs_dir_rel,
)
from benchledger.ledger.rules.history.rollout import render_event_line
from benchledger.ledger.store.chain import CanonicalJson
from benchledger.ledger.store.connection import placeholders
from benchledger.ledger.store.faults import reach
from benchledger.projections.publishing.files import atomic_write, write_unless_same
from benchledger.projections.publishing.global_registry_file import (
    own_entries,
    registry_bytes,
    sync_pending,
    write_global_registry,
)
from benchledger.projections.publishing.goal_runs import (
    index_row,
    render_canonical_index_line_bytes,
    render_index_line,
    render_record_json_bytes,
    render_record_markdown,
)

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection


def _export(path: Path, kind: str, data: bytes, *, durable: bool = True) -> dict[str, str]:
    atomic_write(path, data, durable=durable)
    return {"path": str(path), "kind": kind, "sha256": hashlib.sha256(data).hexdigest()}


def _export_str(path: str, kind: str, data: bytes, *, fresh: bool) -> dict[str, str]:
    """``_export`` of a run file (not fsynced) whose path is already a ``str``. A run rendered
    again (not ``fresh``: read back from the read model) is left alone when its file already
    holds these bytes (``write_unless_same``)."""
    if fresh:
        atomic_write(path, data, durable=False)
    else:
        write_unless_same(path, data)
    return {"path": path, "kind": kind, "sha256": hashlib.sha256(data).hexdigest()}


def _record_paths(runtime_root: Path, runs_dir: str, goal_id: str, stem: str) -> tuple[str, str]:
    """``str(runtime_root / p)`` for both of ``record_paths_rel``: spliced onto the runs
    directory (``runs_dir``, printed once) when the stem is one path component, as pathlib
    would print it; any other stem is left to pathlib. Why: 20,000 ``Path`` joins and prints
    were a tenth of a 10,000-run render."""
    if "/" not in stem and os.sep not in stem:
        return f"{runs_dir}{os.sep}{stem}.json", f"{runs_dir}{os.sep}{stem}.md"
    json_rel, md_rel = record_paths_rel(goal_id, stem)
    return os.fspath(runtime_root / json_rel), os.fspath(runtime_root / md_rel)


def render_goal_files(
    conn: Connection,
    goal_id: str,
    runtime_root: Path,
    stems: Iterable[str] | None = None,
    appended: Mapping[str, CanonicalJson] | None = None,
) -> list[dict[str, str]]:
    """Write the run records named by ``stems`` (all when None), then the whole index.

    ``appended``: the run records the command just appended, by stem, as the immutable text
    their events and the read model hold (``CanonicalJson``). Their text is not read back from
    the read model, and their proof spares the walk; the index line is that text with the
    two paths spliced in. Earlier runs are read from the read model.
    """
    wanted = set(stems) if stems is not None else None
    known = appended or {}
    exports: list[dict[str, str]] = []
    index_lines: list[bytes] = []
    runs_dir = os.fspath(runtime_root / runs_dir_rel(goal_id))
    for stem, text in _records(conn, goal_id, known):
        frozen = known.get(stem)
        record = orjson.loads(text if frozen is None else frozen.text)
        # One walk for both dumps: the index row is the record plus two path strings.
        plain = orjson_prints_as_stdlib(record) if frozen is None else frozen.plain
        if wanted is None or stem in wanted:
            json_path, md_path = _record_paths(runtime_root, runs_dir, goal_id, stem)
            json_data = render_record_json_bytes(record, plain=plain)
            fresh = frozen is not None
            exports.append(_export_str(json_path, "run_record_json", json_data, fresh=fresh))
            reach("mid_render")
            md_data = render_record_markdown(record, goal_id=goal_id, stem=stem).encode()
            exports.append(_export_str(md_path, "run_record_markdown", md_data, fresh=fresh))
        if frozen is not None:
            line = render_canonical_index_line_bytes(frozen, goal_id=goal_id, stem=stem)
            index_lines.append(line)
        else:
            row = index_row(record, goal_id=goal_id, stem=stem)
            index_lines.append(render_index_line(row, plain=plain).encode())
    index = b"".join(index_lines)
    exports.append(
        _export(runtime_root / index_path_rel(goal_id), "run_index", index, durable=False)
    )
    return exports


# Beyond this many appended stems their texts are simply read (and not used), unless they are
# all of the goal's runs: a statement with more parameters than that is refused by old SQLite
# builds.
_MAX_SKIPPED_TEXTS = 900
_ORDER = "FROM rm_goal_runs WHERE goal_id = ? ORDER BY position, stem"


def _records(conn: Connection, goal_id: str, known: Mapping[str, Any]) -> Iterable[Any]:
    """The goal's (stem, record text) in index order; NULL text for the ``known`` stems.

    When more stems are known than one statement may name and they are all of the goal's runs
    (a first ingest of a large log), the stems alone are read: reading and dropping 10,000
    record texts (~60 MB) was ~40 ms of the render."""
    if len(known) > _MAX_SKIPPED_TEXTS:
        stems = [stem for (stem,) in conn.execute(f"SELECT stem {_ORDER}", (goal_id,))]
        if all(stem in known for stem in stems):
            return [(stem, None) for stem in stems]
    query, params = _records_query(goal_id, known)
    return conn.execute(query, params)


def _records_query(goal_id: str, known: Mapping[str, Any]) -> tuple[str, tuple[Any, ...]]:
    """The goal's (stem, record text) in index order; NULL text for the ``known`` stems."""
    if not known or len(known) > _MAX_SKIPPED_TEXTS:
        return f"SELECT stem, record {_ORDER}", (goal_id,)
    skipped = f"CASE WHEN stem IN ({placeholders(len(known))}) THEN NULL ELSE record END"
    return f"SELECT stem, {skipped} {_ORDER}", (*known, goal_id)


def rollout_log_rel(goal_id: str) -> str:
    return f"{goal_dir_rel(goal_id)}/rollout-event-log.jsonl"


def render_rollout_log(conn: Connection, goal_id: str, runtime_root: Path) -> list[dict[str, str]]:
    query = "SELECT record FROM rm_rollout_events WHERE goal_id = ? ORDER BY position, event_id"
    lines = [render_event_line(orjson.loads(text)) for (text,) in conn.execute(query, (goal_id,))]
    if not lines:
        return []
    log = "".join(lines).encode()
    return [_export(runtime_root / rollout_log_rel(goal_id), "rollout_log", log, durable=False)]


def render_global_registry(
    conn: Connection,
    runtime_root: Path,
    backup: dict[str, Any] | None = None,
    *,
    forced: Iterable[str] = (),
) -> list[dict[str, str]]:
    """This store's entries merged into ``registry.global.json`` under its lock, plus the
    backup a replaced route took (``projections.publishing.global_registry_file``: the file is
    shared by every project, so it is never rendered from one store's copy alone)."""
    own = own_entries(conn, runtime_root)
    if own is None:
        return []
    exports = []
    if backup and backup.get("name") and backup.get("document") is not None:
        exports.append(
            _export(
                runtime_root / backup["name"],
                "global_registry_backup",
                registry_bytes(backup["document"]),
            )
        )
    pending = sync_pending(conn, runtime_root, own)
    exports.append(
        write_global_registry(
            runtime_root,
            own,
            operation="sync" if pending else "repair",
            pending=pending,
            forced=forced,
        )
    )
    return exports
