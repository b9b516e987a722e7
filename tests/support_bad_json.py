"""Hypothesis strategies that damage a JSON document the ways real files get damaged.

A damaged file is produced from a real one: cut short, one value swapped for a value of the
wrong type, a literal no JSON encoder writes (``1e400``, a 400-digit integer, ``NaN``), very deep
nesting, bytes that are not UTF-8, or nothing at all. Literal tokens are spliced in as text
because ``json.dumps`` cannot produce most of them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

DEEP = 100_000


@dataclass(frozen=True)
class Raw:
    """A token written verbatim into the JSON text."""

    text: str


RAW_TOKENS = [
    Raw("1e400"),
    Raw("-1e400"),
    Raw("1" + "0" * 400),
    Raw("-" + "9" * 400),
    Raw("1" + "0" * 5000),  # beyond Python's default int-string limit
    Raw("NaN"),
    Raw("Infinity"),
    Raw("-Infinity"),
    Raw("-1"),
    Raw("-2147483649"),
    Raw("18446744073709551616"),
    Raw("[" * DEEP + "]" * DEEP),
    Raw('{"a":' * 2000 + "1" + "}" * 2000),
    Raw('"\\ud800"'),  # a lone surrogate: valid JSON escape, not encodable as UTF-8
    Raw('"\\u0000"'),
]

weird_values = st.one_of(
    st.sampled_from(RAW_TOKENS),
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


def paths_of(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key/index path into a parsed document (the root itself is ``()``)."""
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += paths_of(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value[:5]):
            found += paths_of(child, (*prefix, index))
    return found


def set_at(document: dict, path: tuple, value: object) -> None:
    """Put ``value`` at ``path`` inside ``document`` (in place)."""
    for key in path[:-1]:
        document = document[key]
    document[path[-1]] = value


def _replace(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new)}
    copy = list(value)
    copy[head] = _replace(copy[head], rest, new)
    return copy


def dumps_with_raw(value: Any) -> bytes:
    """JSON text with every ``Raw`` placeholder spliced in verbatim."""
    tokens: list[str] = []

    def default(obj: Any) -> str:
        if isinstance(obj, Raw):
            tokens.append(obj.text)
            return f"\u0000raw{len(tokens) - 1}\u0000"
        raise TypeError(type(obj).__name__)

    text = json.dumps(value, indent=2, ensure_ascii=False, default=default)
    for index, token in enumerate(tokens):
        text = text.replace(json.dumps(f"\u0000raw{index}\u0000"), token)
    return text.encode("utf-8")


@st.composite
def damaged_json(draw: st.DrawFn, original: bytes) -> bytes:
    """One damaged version of ``original`` (a JSON document)."""
    kind = draw(st.sampled_from(["truncate", "swap", "swap", "bytes", "empty", "root"]))
    if kind == "empty":
        return draw(st.sampled_from([b"", b" ", b"\n", b"\x00"]))
    if kind == "truncate":
        return original[: draw(st.integers(min_value=1, max_value=max(1, len(original) - 1)))]
    if kind == "bytes":
        at = draw(st.integers(min_value=0, max_value=len(original)))
        junk = draw(st.sampled_from([b"\xff\xfe", b"\x80", b"\xc3\x28", b"\xed\xa0\x80", b"\xef"]))
        return original[:at] + junk + original[at:]
    if kind == "root":
        return dumps_with_raw(draw(weird_values))
    document = json.loads(original)
    path = draw(st.sampled_from(paths_of(document)[1:] or [()]))
    return dumps_with_raw(_replace(document, path, draw(weird_values)))
