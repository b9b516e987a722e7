"""Source ledgers, canonical id files and case roots: files the user names for merge and
aggregate. Reading them is input handling, like the source adapters."""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.input_files import (
    LEDGER_JSON_LIMIT,
    TEXT_LIST_LIMIT,
    read_regular_file,
)
from benchledger.ledger.handlers.import_loopx import load_ledger_document
from benchledger.ledger.handlers.ledger_store import display_path_text


@dataclass
class LedgerSources:
    """Loaded source ledgers in the order given, and what happened to the rest."""

    documents: list[dict] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    missing: int = 0
    self_skipped: int = 0
    unique_paths: int = 0


def load_sources(
    paths: Sequence[str],
    globs: Sequence[str],
    *,
    target_json_path: Path | None,
    cwd: Path | None = None,
) -> LedgerSources:
    """Resolve ``--source-run-ledger-path``/``-glob`` (recursive ``**``), de-duplicated by
    resolved path; missing files are counted, the target itself is skipped (new)."""
    cwd = cwd or Path.cwd()
    target = target_json_path.resolve() if target_json_path else None
    out = LedgerSources()
    seen: set[Path] = set()
    for given in _candidates(paths, globs, cwd):
        path = Path(os.path.abspath(cwd / Path(given).expanduser())).resolve()
        if path in seen:
            continue
        seen.add(path)
        if target is not None and path == target:
            out.self_skipped += 1
            continue
        if path.is_dir():  # a glob matches directories too; like loopx, they are not sources
            out.missing += 1
            continue
        try:
            shown = display_path_text(given)
            data = read_regular_file(path, shown=shown, limit=LEDGER_JSON_LIMIT)
        except FileNotFoundError:
            out.missing += 1
            continue
        out.documents.append(load_ledger_document(data, path.name))
        out.names.append(display_path_text(given))
    out.unique_paths = len(seen)
    return out


def _candidates(paths: Sequence[str], globs: Sequence[str], cwd: Path) -> Iterator[str]:
    yield from (p for p in paths if str(p).strip())
    for pattern in globs:
        if not str(pattern).strip():
            continue
        expanded = os.path.expanduser(pattern)
        if os.path.isabs(expanded):
            yield from sorted(glob.glob(expanded, recursive=True))
        else:
            yield from sorted(glob.glob(expanded, root_dir=cwd, recursive=True))


def read_case_ids_file(path: str, flag: str) -> list[str]:
    """One id per line, blank lines ignored; OS errors named without the directory."""
    name = Path(path).name
    try:
        raw = read_regular_file(
            Path(path).expanduser(), shown=f"{flag} {name}", limit=TEXT_LIST_LIMIT
        )
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise InputError(f"{flag}: file not found: {name}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{flag}: {name} is not UTF-8 text (at byte {exc.start})") from None
    return [line.strip() for line in text.splitlines() if line.strip()]


def case_root_ids(path: str) -> list[str]:
    """Names of the immediate sub-directories, sorted (hidden ones left out)."""
    root = Path(path).expanduser()
    if not root.is_dir():
        shown = display_path_text(path)
        raise InputError(f"--canonical-case-root is not a directory: {shown}")
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
