"""Files under the runtime root that the store did not write but a decision must not clobber.

A runtime root shared with loopx can already hold run files the store has never recorded, and
the global registry is shared by every project synced into the runtime root. They are inputs
read before deciding.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.input_files import REGISTRY_LIMIT, read_regular_file
from benchledger.ledger.core.json_input import parse_json
from benchledger.ledger.core.registry import CommandContext
from benchledger.ledger.rules.history.goal_runs import stems_on_disk


def stems_taken_on_disk(runtime_root: Path, goal_id: str) -> frozenset[str]:
    """Stems of run files already under the goal's runs directory (none when it is missing)."""
    runs = runtime_root / "goals" / goal_id / "runs"
    try:
        return frozenset(stems_on_disk(os.listdir(runs)))
    except OSError:
        return frozenset()


def global_registry_file(context: CommandContext) -> dict[str, Any] | None:
    """The global registry file as it is now (None when there is none): other projects may
    have synced into it since this store last did."""
    path = context.global_registry_path
    try:
        raw = read_regular_file(path, shown=f"global registry {path.name}", limit=REGISTRY_LIMIT)
    except FileNotFoundError:
        return None
    try:
        data = parse_json(
            raw, what=f"global registry is not readable JSON: {path.name}", exact_integers=False
        )
    except InputError as err:
        raise InputError(
            f"{err.message}; fix it, or run `benchledger render` in each project to set it "
            "aside and write the project's goals again"
        ) from None
    return data if isinstance(data, dict) else None
