"""``render`` (ledger files from the store, or a past ledger) and ``import loopx-ledger``."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.input_files import LEDGER_JSON_LIMIT
from benchledger.ledger.core.ledger_target import LedgerTarget, resolve_ledger_target
from benchledger.ledger.handlers.import_loopx import import_idempotency_key, plan_import
from benchledger.ledger.requests.ledger import ImportLoopxRequest, RenderRequest
from benchledger.projections.history.past_render import render_past_ledger
from benchledger.projections.publishing.render import (
    render_global_registries,
    render_ledger,
    render_stale_goal_files,
)
from benchledger.projections.read_models.ledger_cases import fill_render_cache
from benchledger.projections.read_models.queries import StoreReads
from benchledger.services.as_of_reads import Progress, read_database
from benchledger.services.inputs import read_input
from benchledger.services.store_session import open_store


def run_render(request: RenderRequest, *, db: str | None) -> dict[str, Any]:
    """Re-render the stale goal files, this store's global registry entries and the named
    ledger (or every ledger)."""
    with open_store(db) as opened:
        with opened.store.database.connect() as conn:
            targets = _render_targets(StoreReads(conn), request)
        written = render_stale_goal_files(opened)
        written += render_global_registries(opened)
        for target in targets:
            written += render_ledger(opened, target)
    rendered = [{"kind": f["kind"], "sha256": f["sha256"], "path": f["path"]} for f in written]
    return {"ok": True, "rendered": rendered}


def _render_targets(reads: Any, request: RenderRequest) -> list[LedgerTarget]:
    """The named ledger; every ledger with ``--all``, or when the default one is not stored
    (plain `benchledger render`, what a failed render says to run, repairs them all)."""
    named = request.run_ledger_path is not None or request.ledger_id is not None
    target = resolve_ledger_target(request.run_ledger_path, ledger_id=request.ledger_id)
    if request.all_ledgers or (not named and reads.ledger(target.ledger_id) is None):
        return [stored_target(reads, i) for i in reads.ledger_ids()]
    if reads.ledger(target.ledger_id) is None:
        raise InputError(f"no ledger {target.ledger_id} in the store")
    return [target]


def stored_target(reads: Any, ledger_id: str) -> LedgerTarget:
    """The files of a ledger the store holds, by its stored id.

    A ledger outside the project is keyed by its absolute real path, which is no ``--ledger-id``
    a user may type (``validate_ledger_id`` refuses it) but names its file exactly; any other id
    is resolved from the path it was written with. The stored id is kept either way, so plain
    `benchledger render` (what a failed render says to run) repairs every ledger."""
    if os.path.isabs(ledger_id):
        return replace(resolve_ledger_target(ledger_id), ledger_id=ledger_id)
    return resolve_ledger_target(reads.ledger(ledger_id)["ledger_path"], ledger_id=ledger_id)


def run_render_as_of(
    request: RenderRequest, *, db: str | None, progress: Progress | None = None
) -> dict[str, Any]:
    """``render --as-of``: the past ledger (its ``markdown`` for printing), or written to an
    explicit path; the published files are never overwritten."""
    if request.as_of is None:
        raise InputError(
            "--output-json goes with --as-of (a live render writes the ledger's own files)"
        )
    if request.all_ledgers:
        raise InputError(
            "render --as-of renders one ledger: drop --all and name it with --ledger-id"
        )
    target = resolve_ledger_target(request.run_ledger_path, ledger_id=request.ledger_id)
    given = request.output_json
    output = Path(os.path.abspath(Path(given).expanduser())) if given else None
    with open_store(db) as opened:
        with read_database(opened, request.as_of, progress) as (database, moment):
            result = render_past_ledger(opened.store, database, target, output)
    if "rendered" in result:
        result["rendered"] = [
            {"kind": f["kind"], "sha256": f["sha256"], "path": f["path"]}
            for f in result["rendered"]
        ]
    return {"ok": True, "as_of": moment, **result}


def run_import_loopx(
    request: ImportLoopxRequest, *, db: str | None, metadata: dict[str, Any]
) -> dict[str, Any]:
    """Import a loopx ledger as events; PATH is only re-rendered with --in-place."""
    request.check("import loopx-ledger")
    path = request.path
    data, _ = read_input(path, LEDGER_JSON_LIMIT)
    target = resolve_ledger_target(request.run_ledger_path or path, ledger_id=request.ledger_id)
    events, summary = plan_import(data, name=Path(path).name, target=target)
    already = False
    render = request.execute and (request.in_place or request.run_ledger_path is not None)
    if request.execute:
        with open_store(db) as opened:
            result = opened.store.append(
                events, metadata=metadata, idempotency_key=import_idempotency_key(target, data)
            )
            already = result.already_recorded
            if render:
                render_ledger(opened, target)
            elif not already:
                _fill_render_cache(opened, target.ledger_id)
    return {
        "ok": True,
        "dry_run": not request.execute,
        "imported": request.execute and not already,
        "already_recorded": already,
        "ledger_id": target.ledger_id,
        "ledger_path": target.display_path,
        "markdown_path": target.display_markdown_path,
        "rendered": render,
        "source_rewritten": render and _same_file(target.json_path, path),
        **summary,
    }


def _fill_render_cache(opened: Any, ledger_id: str) -> None:
    """Compute the imported rows' render pieces now, in a transaction of their own after the
    import's, holding the append lock as a render does.

    The render cache is filled lazily (``projections.read_models.ledger_cases``), so without this
    the
    first upsert into an imported ledger paid for every row's pieces: ~3 s of CPU at 30,000
    rows instead of ~0.5 s. An import reads and writes every row anyway, so it is the command
    that pays; a crash between the two transactions only leaves the fill to the first render.
    """
    with opened.store.transaction() as uow:  # the writers' lock: rows cannot change meanwhile
        fill_render_cache(uow.conn, ledger_id)


def _same_file(rendered: Path, given: str) -> bool:
    return given != "-" and Path(rendered).resolve() == Path(given).expanduser().resolve()
