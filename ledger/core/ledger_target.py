"""Which ledger a command addresses: its id in the store and the files it renders to.

Several ledgers can live in one store. A ledger is keyed by its JSON path relative to the
project directory (so the id does not change with the working directory or the spelling of the
path), or by an explicit ``--ledger-id``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.store.database import find_project_dir

DEFAULT_LEDGER_FILE = "benchmark-run-ledger.json"
# The ``ledger/<id>`` stream column holds 300 characters.
LEDGER_ID_MAX = 250


@dataclass(frozen=True)
class LedgerTarget:
    ledger_id: str
    json_path: Path
    markdown_path: Path
    display_path: str
    display_markdown_path: str

    @property
    def stream(self) -> str:
        return f"ledger/{self.ledger_id}"


def project_dir_for_ledgers(cwd: Path | None = None) -> Path:
    """Ledger ids are relative to the project (the nearest ``.benchledger/``), else the cwd."""
    return find_project_dir(cwd) or (cwd or Path.cwd()).resolve()


def markdown_path_for(path: Path) -> Path:
    """The ledger path with its last extension replaced by ``.md`` (appended when none)."""
    return path.with_suffix(".md") if path.suffix else path.with_name(path.name + ".md")


def validate_ledger_id(ledger_id: str) -> str:
    """Explicit ids name a stream; refuse anything that could walk out of a directory."""
    text = ledger_id.strip()
    parts = text.replace("\\", "/").split("/")
    if (
        not text
        or text.startswith(("/", "~"))
        or ":" in text
        or "\\" in text
        or any(p in ("", ".", "..") for p in parts)
        or any(ord(c) < 32 for c in text)
    ):
        # The value is not echoed: a refused id may be an absolute path or a pasted secret.
        raise InputError("--ledger-id is not a safe relative name")
    if len(text) > LEDGER_ID_MAX:
        raise InputError(f"--ledger-id is too long (at most {LEDGER_ID_MAX} characters)")
    return text


def resolve_ledger_target(
    run_ledger_path: str | None,
    *,
    project_dir: Path | None = None,
    ledger_id: str | None = None,
    cwd: Path | None = None,
) -> LedgerTarget:
    """Resolve ``--run-ledger-path`` (relative to the cwd) and derive a path-independent id."""
    cwd = cwd or Path.cwd()
    project_dir = project_dir or project_dir_for_ledgers(cwd)
    given = run_ledger_path or str(project_dir / DEFAULT_LEDGER_FILE)
    json_path = Path(os.path.abspath(cwd / Path(given).expanduser()))
    if json_path.exists() and json_path.is_dir():
        raise InputError(f"--run-ledger-path is a directory: {run_ledger_path}")
    for published in (json_path, markdown_path_for(json_path)):
        if published.is_symlink():  # published files are never written through a link
            raise InputError(
                f"--run-ledger-path: {published.name} is a symbolic link; name the file itself"
            )
    try:
        real = json_path.resolve()
    except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13)
        raise InputError(f"--run-ledger-path cannot be resolved: {given}") from None
    project = project_dir.resolve()
    if ledger_id:
        key = validate_ledger_id(ledger_id)
    elif real.is_relative_to(project):
        key = real.relative_to(project).as_posix()
    else:
        key = real.as_posix()
    if len(key) > LEDGER_ID_MAX:
        raise InputError("--run-ledger-path is too long to name a ledger; pass a --ledger-id")
    display = run_ledger_path or DEFAULT_LEDGER_FILE
    md = markdown_path_for(json_path)
    return LedgerTarget(key, json_path, md, display, str(markdown_path_for(Path(display))))
