"""``CanonicalDict``: a run record walked and serialised once, whose bytes every event and read
model that carries it reuses (``ledger/core/jsonfmt.py``). Reusing them must never change a byte,
and
a record the walk cannot prove keeps the old paths, NaN refusal included."""

from __future__ import annotations

import math

import orjson
import pytest

from benchledger.ledger.core.jsonfmt import (
    CanonicalDict,
    canonical_dict,
    json_like_stdlib,
    orjson_prints_as_stdlib,
)
from benchledger.ledger.rules.history.goal_runs import build_run_record
from benchledger.ledger.store.chain import canonical_json
from benchledger.projections.read_models.models import _canonical

RECORD = {
    "schema_version": "benchmark_run_v0",
    "case_id": "c1",
    "trials": [{"reward": 0.5, "timing": {"verifier": 1.25, "agent_setup": 0.0}}, {"x": None}],
    "agent": {"name": "codex", "kwargs_keys": ["b", "a"]},
    "nested": {"é": "ünïcode", "a": [1, 2, {"z": True, "m": None}]},
}


def _plain_sorted(value: object) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def test_a_proven_record_carries_its_canonical_bytes() -> None:
    record = canonical_dict(dict(RECORD))
    assert type(record) is CanonicalDict
    assert record == RECORD
    assert record.canonical == _plain_sorted(RECORD)
    assert canonical_json(record) == _plain_sorted(RECORD).decode()
    assert _canonical(record) == _plain_sorted(RECORD).decode()


def test_payloads_holding_it_serialise_to_the_same_bytes() -> None:
    record = canonical_dict(dict(RECORD))
    payload = {"z": 1, "record": record, "a": None, "warnings": []}
    assert canonical_json(payload) == _plain_sorted({**payload, "record": RECORD}).decode()
    run_record = build_run_record(record, goal_id="g", generated_at="2026-12-02T00:00:00Z")
    assert run_record["benchmark_run"] is record  # shared, never copied or re-serialised
    wrapped = canonical_dict(run_record)
    expected = _plain_sorted({**run_record, "benchmark_run": RECORD})
    assert type(wrapped) is CanonicalDict
    assert wrapped.canonical == expected
    assert canonical_json({"record": wrapped}) == '{"record":' + expected.decode() + "}"
    assert _canonical(wrapped) == expected.decode()


def test_printed_files_and_payloads_are_unchanged() -> None:
    record = canonical_dict(dict(RECORD))
    assert orjson_prints_as_stdlib({"benchmark_runs": [record]})
    assert json_like_stdlib({"runs": [record]}) == json_like_stdlib({"runs": [RECORD]})
    assert json_like_stdlib(record, sort_keys=True) == json_like_stdlib(RECORD, sort_keys=True)


@pytest.mark.parametrize(
    "value",
    [
        {**RECORD, "tiny": 1e-7},  # orjson and json print it differently: not proven
        {**RECORD, "bad": math.nan},
        {**RECORD, "big": 2**70},  # orjson refuses it
        {**RECORD, "t": (1, 2)},  # a type the walk does not vouch for
    ],
)
def test_what_the_walk_cannot_prove_is_left_as_it_was(value: dict) -> None:
    assert canonical_dict(value) is value


def test_nan_beside_a_proven_record_is_still_refused() -> None:
    record = canonical_dict(dict(RECORD))
    with pytest.raises(TypeError):
        canonical_json({"record": record, "score": math.nan})
    with pytest.raises(TypeError):
        canonical_json({"record": record, "rows": [{"score": -math.inf}, None]})
    unproven = canonical_dict({**RECORD, "bad": math.inf})
    with pytest.raises(TypeError):
        canonical_json({"record": unproven})
