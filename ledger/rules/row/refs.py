"""Artifact references of a row (ledger_v0.md §5.13): relative, public, never identity.

A ref is kept by directory policy (private directories and files are refused) rather than by
file-name suffix, and refs never enter the run id, so moving a job directory moves no row.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchledger.ledger.core.safety import is_public_safe
from benchledger.ledger.rules.row.values import as_str

_PRIVATE_SEGMENTS = frozenset(
    {
        ".local",
        "private",
        "private-benchmark-jobs",
        "users",
        "volumes",
        "var",
        "tmp",
        "logs",
        "raw",
        "sessions",
        "screenshots",
    }
)
_PRIVATE_BASENAMES = frozenset({"trajectory.json", "instruction.md", "task.md"})
REF_KEYS = ("artifact_ref", "result_ref", "compact_artifact_ref", "history_ref")


def _looks_absolute(text: str) -> bool:
    return text.startswith(("/", "~", "\\")) or bool(re.match(r"^[A-Za-z]:[\\/]", text))


def check_relative_ref(text: str) -> str | None:
    """Directory policy for a ref already relative to its root (§5.13)."""
    if not text or _looks_absolute(text):
        return None
    parts = [part for part in text.replace("\\", "/").split("/") if part not in ("", ".")]
    if not parts:
        return None
    for part in parts:
        if part.startswith(".") or part.lower() in _PRIVATE_SEGMENTS:
            return None
    base = parts[-1].lower()
    if base in _PRIVATE_BASENAMES or base.endswith((".local.json", ".private.json")):
        return None
    rel = "/".join(parts)
    return rel if is_public_safe(rel) else None


def public_ref(value: Any, *, root: str | Path | None = None) -> str | None:
    """A ref as a POSIX path relative to the ref root, or None when policy drops it."""
    text = as_str(value).strip()
    if not text:
        return None
    if root is None:
        return check_relative_ref(text)
    root_path = Path(root).expanduser().resolve()
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = root_path / path
    try:
        rel = path.resolve().relative_to(root_path)
    except ValueError:
        return None
    return check_relative_ref(rel.as_posix())


def history_ref_for(value: Any, *, runtime_root: str | Path | None = None) -> str | None:
    """``goals/<goal>/runs/<file>`` whatever spelling the index used (absolute in loopx)."""
    text = as_str(value).strip().replace("\\", "/")
    if not text:
        return None
    parts = [part for part in text.split("/") if part]
    for index in range(len(parts) - 4, -1, -1):
        if parts[index] == "goals" and parts[index + 2] == "runs":
            return check_relative_ref("/".join(parts[index : index + 4]))
    if runtime_root is not None:
        return public_ref(text, root=runtime_root)
    return None


def artifact_refs(
    *,
    artifact_ref: Any = None,
    result_ref: Any = None,
    compact_artifact_ref: Any = None,
    history_ref: Any = None,
    ref_root: str | Path | None = None,
    runtime_root: str | Path | None = None,
) -> dict[str, str]:
    refs = {
        "artifact_ref": public_ref(artifact_ref, root=ref_root),
        "result_ref": public_ref(result_ref, root=ref_root),
        "compact_artifact_ref": public_ref(compact_artifact_ref, root=ref_root),
        "history_ref": history_ref_for(history_ref, runtime_root=runtime_root),
    }
    return {key: value for key, value in refs.items() if value}


def recheck_refs(refs: Any) -> dict[str, str]:
    if not isinstance(refs, Mapping):
        return {}
    out = {key: check_relative_ref(as_str(refs[key])) for key in REF_KEYS if refs.get(key)}
    return {key: value for key, value in out.items() if value}
