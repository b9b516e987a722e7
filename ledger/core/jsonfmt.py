"""JSON text byte-identical to ``json.dumps(indent=2, ensure_ascii=False) + "\\n"``, fast.

loopx wrote every file with the standard library; orjson writes the same bytes many times
faster except for floats Python prints in exponent form or not at all (|x| < 1e-4,
|x| >= 1e16, NaN, ±inf), ints beyond 64 bits, non-string keys, lone surrogates and unusual
types. A cheap scan sends those documents to ``json`` instead, so output never changes.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_INDENT = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE


class PlainJsonDict(dict):
    """A dict its builder has proven prints the same through orjson as through ``json`` (every
    value passed the walk below, or is made of values that did), so the walk skips it.

    Why: the walk is linear in the document; a 29,722-case aggregate prints 55 MB whose bulk is
    the chosen runs' summary fields, each already walked once when its facts were stored
    (``ledger.rules.operations.aggregate_facts``), and walking them again at every print was 0.17 s
    of a 1.4 s
    command. Both encoders print a dict subclass as a dict."""

    __slots__ = ()


def orjson_prints_as_stdlib(value: Any, *, trust_proven: bool = True) -> bool:
    """Whether orjson writes ``value`` exactly as ``json`` would (the walk below): a caller that
    dumps one document twice (a run record and its index line) walks it once and passes the
    answer as ``plain``. ``trust_proven=False`` walks into every ``PlainJsonDict`` too, so
    the answer (which also proves every float finite) rests on nobody's earlier proof: the
    hash chain's ``CanonicalJson`` asks so."""
    return not _orjson_would_differ(value, PlainJsonDict if trust_proven else _NoProof)


def json_like_stdlib(value: Any, *, sort_keys: bool = False, plain: bool | None = None) -> bytes:
    """The bytes ``json.dumps`` would write, from orjson whenever the walk proves them equal.

    The walk checks values, not orjson's output text: a regex over the text cannot tell a hex id
    such as ``"3e048a99"`` from an exponent, nor see that orjson writes ``1e-05`` as
    ``0.00001``, and a sound one is slower over a large document than the walk. ``plain`` is
    the walk's answer when the caller already has it (``orjson_prints_as_stdlib``).
    """
    data = orjson_like_stdlib(value, sort_keys=sort_keys, plain=plain)
    if data is not None:
        return data
    text = json.dumps(value, indent=2, sort_keys=sort_keys, ensure_ascii=False) + "\n"
    return text.encode("utf-8", "surrogatepass")


def orjson_like_stdlib(
    value: Any, *, sort_keys: bool = False, plain: bool | None = None
) -> bytes | None:
    """``json_like_stdlib``'s orjson path alone: its bytes, or None when only ``json`` prints
    ``value`` right. Bytes from here are valid UTF-8 (orjson refuses lone surrogates), so a
    caller may write them to a UTF-8 stream as they are."""
    if plain if plain is not None else not _orjson_would_differ(value):
        try:
            return orjson.dumps(value, option=_INDENT | (orjson.OPT_SORT_KEYS if sort_keys else 0))
        except (TypeError, orjson.JSONEncodeError):
            pass
    return None


def float_prints_as_stdlib(value: float) -> bool:
    """Whether orjson prints ``value`` as ``json`` does: not in exponent form, not NaN or ±inf."""
    return value == 0.0 or 1e-4 <= abs(value) < 1e16


class _NoProof:
    """No value is of this type: a walk told to trust it trusts nothing."""


def _orjson_would_differ(
    obj: Any,
    _proven: type = PlainJsonDict,
    _str=str,
    _int=int,
    _bool=bool,
    _float=float,
    _dict=dict,
    _list=list,
) -> bool:
    """True when orjson could print something differently from ``json`` (or json would refuse).

    Runs on every dump, so the common types are tested first and bound as locals. A value of
    type ``_proven`` is taken as proven (by default a ``PlainJsonDict``); any other subclass
    is left to ``json``.
    """
    kind = type(obj)
    if kind is _proven:
        return False
    if kind is not _dict and kind is not _list:
        return kind is _float and not float_prints_as_stdlib(obj)
    for value in obj.values() if kind is _dict else obj:
        kind = type(value)
        if kind is _str or kind is _bool or kind is _int:
            continue
        if kind is _dict or kind is _list:
            if _orjson_would_differ(value, _proven):
                return True
        elif kind is _float:
            if value != 0.0 and not 1e-4 <= abs(value) < 1e16:
                return True
        elif kind is _proven:
            continue
        elif value is not None:
            return True  # subclasses, tuples, other types: let json decide, never guess
    return False


def json_line_like_stdlib(value: Any, *, plain: bool | None = None) -> str:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``, via orjson when equal
    (``plain`` as for ``json_like_stdlib``)."""
    if plain if plain is not None else not _orjson_would_differ(value):
        try:
            return orjson.dumps(value).decode("utf-8")
        except (TypeError, orjson.JSONEncodeError):
            pass
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
