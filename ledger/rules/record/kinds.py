"""Value kinds of the ``benchmark_run_v0`` compaction (docs/formats/benchmark_run_v0.md §1, §5).

A kind takes (raw value, dropped-field sink, field path) and returns the compact value or None.
Compaction is a whitelist: a field survives only if a table names it with a kind and its value
has that kind, so a new adapter field can never leak by accident.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from math import isfinite
from typing import Any

from benchledger.ledger.core.safety import (
    INT64,
    clist_status,
    ctext_status,
    finite_number,
    nummap_status,
)

MAX_LIST_ITEMS = 5

Drops = list[str]
Kind = Callable[[Any, Drops, str], Any]


def T(limit: int) -> Kind:
    """Free text compacted with ``ctext(limit)``; a filter failure names the field path."""

    def kind(value: Any, drops: Drops, path: str) -> str | None:
        text, unsafe = ctext_status(value, limit)
        if unsafe:
            drops.append(path)
        return text

    kind.text_limit = limit  # type: ignore[attr-defined]  # lets _rows write text fields out
    return kind


def ENUM(values: frozenset[str]) -> Kind:
    """A closed vocabulary: anything else is a wrong value, not text worth keeping."""

    def kind(value: Any, drops: Drops, path: str) -> str | None:
        return value if isinstance(value, str) and value in values else None

    kind.values = values  # type: ignore[attr-defined]  # lets an input check name them
    return kind


def BOOL(value: Any, drops: Drops, path: str) -> bool | None:
    return value if isinstance(value, bool) else None


def INT(value: Any, drops: Drops, path: str) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value in INT64:
        return value
    return None


def NNINT(value: Any, drops: Drops, path: str) -> int | None:
    number = INT(value, drops, path)
    return number if number is not None and number >= 0 else None


def NUM(value: Any, drops: Drops, path: str) -> int | float | None:
    return finite_number(value)


def NNNUM(value: Any, drops: Drops, path: str) -> int | float | None:
    if type(value) is float:  # every duration: finite_number's own first case, written out
        return value if value >= 0 and isfinite(value) else None
    number = finite_number(value)
    return number if number is not None and number >= 0 else None


def POSNUM(value: Any, drops: Drops, path: str) -> int | float | None:
    number = finite_number(value)
    return number if number is not None and number > 0 else None


def FLOAT(value: Any, drops: Drops, path: str) -> float | None:
    number = finite_number(value)
    return float(number) if number is not None else None


def LIST(n: int = MAX_LIST_ITEMS, limit: int = 160) -> Kind:
    """``clist(n, limit)``; each dropped item is named by its input index."""

    def kind(value: Any, drops: Drops, path: str) -> list[str] | None:
        if value is None:
            return None
        kept, dropped = clist_status(value, n, limit)
        drops.extend(f"{path}[{index}]" for index in dropped)
        return kept

    return kind


def NUMMAP(keys: tuple[str, ...] | None = None) -> Kind:
    def kind(value: Any, drops: Drops, path: str) -> dict | None:
        out, dropped = nummap_status(value, keys)
        if dropped:
            drops.append(f"{path}.<key>")
        return out

    return kind


def is_mapping(value: Any) -> bool:
    """``isinstance(value, Mapping)``, with parsed JSON's plain dicts spared the ABC check."""
    return type(value) is dict or isinstance(value, Mapping)


def OBJ(spec: Mapping[str, Kind]) -> Kind:
    def kind(value: Any, drops: Drops, path: str) -> dict | None:
        return shape(value, spec, drops, path + ".") if is_mapping(value) else None

    kind.spec = spec  # type: ignore[attr-defined]  # lets an input check walk into it
    return kind


def LIST_OF(spec: Mapping[str, Kind], cap: int) -> Kind:
    """A capped list of small objects; non-objects and items that end up empty are skipped."""

    def kind(value: Any, drops: Drops, path: str) -> list[dict] | None:
        if not isinstance(value, list):
            return None
        out: list[dict] = []
        for index, item in enumerate(value):
            if len(out) >= cap:
                break
            if is_mapping(item):
                compact = shape(item, spec, drops, f"{path}[{index}].")
                if compact:
                    out.append(compact)
        return out

    return kind


def KEYED(value_kind: Kind, key_limit: int = 60, cap: int | None = None) -> Kind:
    """An object with producer-chosen keys (timing phases, reason codes): keys are text too."""
    seconds = value_kind is NNNUM  # every trial's timing: NNNUM's float case is written out

    def kind(value: Any, drops: Drops, path: str) -> dict | None:
        if not is_mapping(value):
            return None
        out: dict[str, Any] = {}
        for raw_key, raw_value in value.items():
            if cap is not None and len(out) >= cap:
                break
            if seconds and type(raw_value) is float:
                compact = raw_value if raw_value >= 0 and isfinite(raw_value) else None
            else:
                compact = value_kind(raw_value, drops, path)
            if compact is None:
                continue
            key, unsafe = ctext_status(raw_key, key_limit)
            if unsafe:
                drops.append(f"{path}.<key>")
            if key is not None and key not in out:
                out[key] = compact
        return out

    return kind


def TEXT_OR_NUM(limit: int) -> Kind:
    text_kind = T(limit)

    def kind(value: Any, drops: Drops, path: str) -> Any:
        number = finite_number(value)
        return number if number is not None else text_kind(value, drops, path)

    return kind


def GENERIC(value: Any, drops: Drops, path: str) -> dict | None:
    """§4.14 nested loopx blocks: scalars, string lists and one nested object level."""
    return _generic(value, drops, path, nested_ok=True)


def _generic(value: Any, drops: Drops, path: str, *, nested_ok: bool) -> dict | None:
    if not isinstance(value, Mapping):
        return None
    out: dict[str, Any] = {}
    for key, raw in value.items():
        if not isinstance(key, str):
            continue
        name, unsafe = ctext_status(key, 120)
        if unsafe or name != key:
            if unsafe:
                drops.append(f"{path}.<key>")
            continue
        sub = f"{path}.{key}"
        if isinstance(raw, bool):
            compact: Any = raw
        elif isinstance(raw, int | float):
            compact = finite_number(raw)
        elif isinstance(raw, str):
            compact = T(140)(raw, drops, sub)
        elif isinstance(raw, Mapping) and nested_ok:
            compact = _generic(raw, drops, sub, nested_ok=False)
        elif isinstance(raw, list):
            strings = [item for item in raw if isinstance(item, str)]
            compact = LIST()(strings, drops, sub) if strings else None
        else:
            compact = None
        if present(compact):
            out[key] = compact
    return out


def present(value: Any) -> bool:
    """Compaction's emptiness rule: null, "", [] and {} are omitted; false and 0 are kept."""
    return value is not None and value != "" and value != [] and value != {}


def shape(src: Mapping[str, Any], spec: Mapping[str, Kind], drops: Drops, prefix: str) -> dict:
    """Copy the fields ``spec`` names, each through its kind, dropping empties.

    Kinds return text, numbers, booleans, lists and dicts, and none of those is empty when it is
    truthy, so most values are kept on one truth test (this loop runs for every trial).
    """
    out: dict[str, Any] = {}
    for key, kind in spec.items():
        if key in src:
            value = kind(src[key], drops, prefix + key)
            if value or present(value):
                out[key] = value
    return out


_PLAIN, _TEXT, _BOOL = 0, 1, 2
_ABSENT = object()
Rows = tuple[tuple[str, Kind, int, Any], ...]


def _rows(spec: Mapping[str, Kind]) -> Rows:
    """A spec as ``(key, kind, tag, text limit)`` rows for ``shape_rows``."""
    rows = []
    for key, kind in spec.items():
        limit = getattr(kind, "text_limit", None)
        tag = _BOOL if kind is BOOL else _PLAIN if limit is None else _TEXT
        rows.append((key, kind, tag, limit))
    return tuple(rows)


def shape_rows(src: Mapping[str, Any], rows: Rows, drops: Drops, prefix: str) -> dict:
    """``shape`` over ``_rows(spec)``, with the same result, for specs applied to every trial.

    ``BOOL`` and ``T(limit)`` fields, most of a trial, are written out: a text kind returns None
    or a non-empty string and any bool is kept, so their emptiness test is a None test, and a
    field path is only built when it is needed (a dropped text, or another kind's argument).
    """
    out: dict[str, Any] = {}
    get = src.get
    for key, kind, tag, limit in rows:
        value = get(key, _ABSENT)
        if value is _ABSENT:
            continue
        if tag == _BOOL:
            if isinstance(value, bool):
                out[key] = value
        elif tag == _TEXT:
            text, unsafe = ctext_status(value, limit)
            if unsafe:
                drops.append(prefix + key)
            if text is not None:
                out[key] = text
        else:
            value = kind(value, drops, prefix + key)
            if value or present(value):
                out[key] = value
    return out
