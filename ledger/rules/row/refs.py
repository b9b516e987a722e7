"""Artifact references of a row (docs/formats/ledger_v0.md §5.13): relative, public, never identity.

A ref passes loopx 0.4.8's public-ref rule (``loopx_public_ref``, docs/loopx-compat.md): a
compact or public artifact is kept, reduced to its basename when it sits under a private
marker; any other ref is kept only when it is a plain relative path to a lineage result file or
a name without a dot. Rows benchledger writes apply the same rule after making the ref relative
to its root, with two guards of ours on top (nothing absolute-looking, the secret filter).
Refs never enter the run id, so moving a job directory moves no row.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchledger.ledger.core.safety import is_public_safe
from benchledger.ledger.rules.row.values import as_str, compact_text

# The refs loopx keeps on a row; ``history_ref`` is benchledger's own (runtime-root relative).
LOOPX_REF_KEYS = ("artifact_ref", "result_ref", "compact_artifact_ref")
REF_KEYS = (*LOOPX_REF_KEYS, "history_ref")

# What makes a file a compact/public artifact, safe to read and to name (the default artifact
# policy of loopx 0.4.8; suffixes and names compared lower-cased).
_PUBLIC_SUFFIXES = (".compact.json", ".public.json")
_PUBLIC_NAMES = frozenset(
    {
        "paired_comparison.compact.json",
        "launch_status.public.json",
        "launch_summaries.public.json",
        "loopx-active-user-observation.json",
    }
)
# Raw surfaces (trajectories, logs, task text, screenshots): substrings of the lower-cased path
# with a leading slash, so ``logs/x`` matches ``/logs/`` at the start too.
_RAW_MARKERS = (
    "/agent/trajectory.json",
    "/sessions/",
    "/logs/",
    "/raw/",
    "trajectory.json",
    "origin_log",
    "instruction.md",
    "task.md",
    "/screenshots/",
    "screenshot",
)
_PRIVATE_MANIFEST_SUFFIXES = (".local.json", ".private.json")
# A compact artifact under one of these (case-sensitive substrings) is named by its basename.
_PRIVATE_MARKERS = (
    ".local/",
    "/private/",
    "private-benchmark-jobs",
    "/Users/",
    "/Volumes/",
    "/var/folders/",
    "/tmp/",
)
# Any other ref is refused when one of its parts is one of these (case-insensitive).
_PRIVATE_PARTS = frozenset(
    {".local", "private", "private-benchmark-jobs", "users", "volumes", "var", "tmp"}
)
# Result files that name a run's lineage: publishable wherever they sit (private parts aside).
LINEAGE_RESULT_FILES = frozenset(
    {
        "benchmark-run.json",
        "benchmark_run.json",
        "compact-run.json",
        "loopx-worker-benchmark-run.json",
        "result.json",
        "skillsbench-compact-benchmark-run-v0.json",
    }
)


def _posix_spelling(text: str) -> str:
    """The ref as a POSIX path spells it: repeated slashes and ``.`` parts gone, no trailing
    slash (``..`` and backslashes are left alone)."""
    lead = "/" if text.startswith("/") else ""
    if text.startswith("//") and not text.startswith("///"):
        lead = "//"
    parts = [part for part in text.split("/") if part not in ("", ".")]
    return lead + "/".join(parts) if (lead or parts) else "."


def _is_readable_artifact(path: str) -> tuple[bool, bool, str]:
    """(public compact artifact, private raw surface, basename) of a relative ref."""
    normalised = path.replace("\\", "/").rstrip("/")
    basename = normalised.rsplit("/", 1)[-1] if normalised else ""
    lower_base = basename.lower()
    boundary = "/" + normalised.lower().lstrip("/")
    public = lower_base.endswith(_PUBLIC_SUFFIXES) or lower_base in _PUBLIC_NAMES
    raw = any(marker in boundary for marker in _RAW_MARKERS)
    manifest = lower_base.endswith(_PRIVATE_MANIFEST_SUFFIXES)
    return public and not raw and not manifest, raw or manifest, basename


def loopx_public_ref(value: Any) -> str | None:
    """A stored ref as loopx 0.4.8 publishes it when it loads a ledger, or None (dropped).

    A compact/public artifact keeps its path, or only its basename under a private marker
    (``.local/private-benchmark-jobs/<job>/<case>/benchmark_run.compact.json`` becomes
    ``benchmark_run.compact.json``). Anything else is dropped when it is absolute, under ``~``,
    holds a drive or ``:``, an empty, dot or private part, or a raw/private surface; what is
    left is kept only for a lineage result file or a basename without a dot.

    loopx makes an absolute ref relative to the directory it runs in when the ref lies below
    it; a stored ledger has no such directory, so absolute and ``~`` refs are always dropped
    here (docs/loopx-compat.md).
    """
    if not isinstance(value, str):
        return None
    raw = value.strip()
    if not raw or raw.startswith(("/", "~")):
        return None
    ref = _posix_spelling(raw)
    readable, private_surface, basename = _is_readable_artifact(ref)
    if readable:
        spelled = ref.replace("\\", "/")
        if any(marker in spelled for marker in _PRIVATE_MARKERS):
            return compact_text(basename, 160) or None
        return spelled
    normalised = ref.replace("\\", "/").strip("/")
    pieces = normalised.split("/")
    if (
        not normalised
        or ":" in normalised
        or "" in pieces
        or any(part.startswith(".") or part.lower() in _PRIVATE_PARTS for part in pieces)
        or private_surface
    ):
        return None
    name = compact_text(basename, 160)
    return normalised if name in LINEAGE_RESULT_FILES or "." not in name else None


def loopx_public_refs(refs: Any) -> dict[str, str]:
    """The ``artifact_refs`` loopx keeps on load: its three keys through the rule, the rest
    gone; empty when none is left (the caller drops the field)."""
    if not isinstance(refs, Mapping):
        return {}
    kept = {key: loopx_public_ref(refs.get(key)) for key in LOOPX_REF_KEYS}
    return {key: value for key, value in kept.items() if value}


def _looks_absolute(text: str) -> bool:
    return text.startswith(("/", "~", "\\")) or bool(re.match(r"^[A-Za-z]:[\\/]", text))


def check_relative_ref(text: str) -> str | None:
    """A ref already relative to its root, as a row benchledger writes may hold it (§5.13):
    nothing absolute-looking or climbing out (loopx keeps ``C:/x.compact.json`` and
    ``../x.compact.json`` whole), then loopx's public-ref rule, then the secret filter."""
    if not text or _looks_absolute(text) or ".." in text.replace("\\", "/").split("/"):
        return None
    rel = loopx_public_ref(text)
    return rel if rel and is_public_safe(rel) else None


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
            return _history_policy("/".join(parts[index : index + 4]))
    if runtime_root is None:
        return None
    root_path = Path(runtime_root).expanduser().resolve()
    path = Path(text).expanduser()
    try:
        rel = (path if path.is_absolute() else root_path / path).resolve().relative_to(root_path)
    except ValueError:
        return None
    return _history_policy(rel.as_posix())


def _history_policy(rel: str) -> str | None:
    """A history file under the runtime root: benchledger's own ref (loopx keeps none), so its
    own directory policy: no dot or private part, nothing the secret filter refuses."""
    parts = rel.split("/")
    if _looks_absolute(rel) or any(
        not part or part.startswith(".") or part.lower() in _PRIVATE_PARTS for part in parts
    ):
        return None
    return rel if is_public_safe(rel) else None


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
    out = {key: _recheck(key, as_str(refs[key])) for key in REF_KEYS if refs.get(key)}
    return {key: value for key, value in out.items() if value}


def _recheck(key: str, text: str) -> str | None:
    return history_ref_for(text) if key == "history_ref" else check_relative_ref(text)
