"""Files under the runtime root that the store did not write but a decision must not clobber.

A runtime root shared with loopx can already hold run files and a global registry the store has
never recorded. They are inputs read before deciding, never rendered output read back.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

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


def unrecorded_global_registry(context: CommandContext) -> dict[str, Any] | None:
    """The global registry file, read only when the store holds no global registry yet."""
    path = context.global_registry_path
    try:
        raw = read_regular_file(path, shown=f"global registry {path.name}", limit=REGISTRY_LIMIT)
    except FileNotFoundError:
        return None
    data = parse_json(raw, what=f"global registry is not readable JSON: {path.name}")
    return data if isinstance(data, dict) else None
