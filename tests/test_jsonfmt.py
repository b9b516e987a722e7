"""``json_like_stdlib`` writes exactly ``json.dumps``'s bytes, and only falls back to ``json``
when a float token could differ (not for hex ids that merely look like exponents)."""

from __future__ import annotations

import json
import random

from benchledger.ledger.core import jsonfmt
from benchledger.ledger.core.jsonfmt import json_like_stdlib


def _stdlib(value: object) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def _floats() -> list[float]:
    rng = random.Random(7)
    values = [0.0, -0.0, 1e-4, 9.999e-5, 1e-5, 1e16, 1e16 - 2, 5e-324, 1.7976931348623157e308]
    for exp in range(-30, 30):
        values += [rng.random() * 10**exp, -rng.random() * 10**exp]
    return values


def test_every_float_magnitude_prints_like_json():
    for value in _floats():
        for doc in ({"a": value}, {"a": [value, 1]}, {"a": {"b": [[value]]}}):
            assert json_like_stdlib(doc, sort_keys=True) == _stdlib(doc)


def test_hex_ids_that_look_like_exponents_stay_on_the_fast_path(monkeypatch):
    doc = {"run_id": "3e048a99f8bd", "ids": ["1e0023cbf8aa", "9E9"], "n": 3, "x": 0.5}
    monkeypatch.setattr(jsonfmt.json, "dumps", None)  # the fallback would fail loudly
    assert json_like_stdlib(doc, sort_keys=True).startswith(b"{\n")


def test_a_string_holding_a_number_like_token_is_still_exact():
    doc = {"k": '": 1e5', "l": ["\\n 1e5"], "m": 1e-7}
    assert json_like_stdlib(doc, sort_keys=True) == _stdlib(doc)


def test_a_dict_proven_plain_is_not_walked_and_prints_as_a_dict(monkeypatch):
    """``PlainJsonDict``: its builder's proof stands in for the walk (so a float the walk would
    send to ``json`` is printed by orjson), and both encoders print it as the dict it is."""
    doc = {"ok": True, "cases": jsonfmt.PlainJsonDict({"c1": {"score": 0.5, "ids": ["x"]}})}
    assert jsonfmt.orjson_prints_as_stdlib(doc)
    assert json_like_stdlib(doc, sort_keys=True) == _stdlib(doc)
    walked = {"cases": {"c1": {"score": 1e-7}}}
    assert not jsonfmt.orjson_prints_as_stdlib(walked)
    assert jsonfmt.orjson_prints_as_stdlib({"cases": jsonfmt.PlainJsonDict(walked["cases"])})
    assert jsonfmt.orjson_prints_as_stdlib(jsonfmt.PlainJsonDict(walked))
