"""``canonical_json`` refuses NaN and infinities wherever they sit: orjson writes them as
``null``, so a payload whose JSON holds a null is walked (``ledger/store/chain.py``).

Every case is one orjson accepts (it writes the non-finite float as ``null``), and the test
asks for our message: a float subclass would prove nothing, orjson refuses it on its own."""

from __future__ import annotations

import math

import pytest

from benchledger.ledger.store.chain import canonical_json


class _Dict(dict):
    pass


@pytest.mark.parametrize(
    "value",
    [
        math.nan,
        {"a": None, "b": [1, {"c": math.inf}]},
        [None, _Dict(b=[(math.inf,)])],  # a dict subclass, a list, a tuple: all walked
        {"t": (None, -math.inf)},
        _Dict(a=None, b=math.nan),
        {"t": ({"u": [None, math.nan]},), "s": "null"},  # a dict inside a tuple
    ],
)
def test_non_finite_floats_are_refused_at_any_depth(value: object) -> None:
    with pytest.raises(TypeError, match="NaN or Infinity is not valid JSON"):
        canonical_json(value)


def test_real_nulls_and_finite_floats_pass() -> None:
    value = {"b": [1.5, None, 1e308, -0.0, True], "a": {"x": None, "y": (2, "z")}}
    assert canonical_json(value) == '{"a":{"x":null,"y":[2,"z"]},"b":[1.5,null,1e+308,-0.0,true]}'
