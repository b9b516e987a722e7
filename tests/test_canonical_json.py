"""``canonical_json`` refuses NaN and infinities wherever they sit: orjson writes them as
``null``, so a payload whose JSON holds a null is walked (``ledger/store/chain.py``)."""

from __future__ import annotations

import math

import pytest

from benchledger.ledger.store.chain import canonical_json


class _Float(float):
    pass


class _Dict(dict):
    pass


@pytest.mark.parametrize(
    "value",
    [
        math.nan,
        {"a": None, "b": [1, {"c": math.inf}]},
        [None, _Float("nan")],
        {"t": (None, -math.inf)},
        _Dict(a=None, b=math.nan),
        [None, _Dict(b=[(_Float("inf"),)])],
    ],
)
def test_non_finite_floats_are_refused_at_any_depth(value: object) -> None:
    with pytest.raises(TypeError):  # orjson itself refuses a float subclass
        canonical_json(value)


def test_real_nulls_and_finite_floats_pass() -> None:
    value = {"b": [1.5, None, 1e308, -0.0, True], "a": {"x": None, "y": (2, "z")}}
    assert canonical_json(value) == '{"a":{"x":null,"y":[2,"z"]},"b":[1.5,null,1e+308,-0.0,true]}'
