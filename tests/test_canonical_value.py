"""``CanonicalJson`` (``ledger/store/chain.py``): a record serialised once for the events and the
read model that carry it. Its text is the canonical JSON of the value when it was made, a
NaN or an infinity is refused then, and nothing done to the value afterwards, nor to the
object itself, changes a byte the store records."""

from __future__ import annotations

import copy
import math

import orjson
import pytest

from benchledger.ledger.core.jsonfmt import PlainJsonDict
from benchledger.ledger.store.chain import CanonicalJson, canonical_json
from benchledger.ledger.store.events import RUN_BUILT, NewEvent
from benchledger.projections.read_models.payload_text import canonical_text
from tests.support_store import opened

RECORD = {
    "schema_version": "benchmark_run_v0",
    "case_id": "c1",
    "trials": [{"reward": 0.5, "timing": {"verifier": 1.25, "agent_setup": 0.0}}, {"x": None}],
    "agent": {"name": "codex", "kwargs_keys": ["b", "a"]},
    "nested": {"é": "ünïcode", "a": [1, 2, {"z": True, "m": None}], "tiny": 1e-7},
}


def _sorted(value: object) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def test_its_text_is_the_canonical_json_of_the_value() -> None:
    frozen = CanonicalJson(copy.deepcopy(RECORD))
    assert frozen.text == _sorted(RECORD)
    assert canonical_text(frozen) == _sorted(RECORD).decode()  # the goal run read model's text
    payload = {"z": 1, "record": frozen, "a": None, "warnings": []}
    assert canonical_json(payload) == canonical_json({**payload, "record": RECORD})
    # a run record around it (``run_appended``): the record's text spliced in, same bytes
    run_record = {"goal_id": "g", "generated_at": "2026-12-02T00:00:00Z", "benchmark_run": frozen}
    wrapped = CanonicalJson(run_record)
    expected = _sorted({**run_record, "benchmark_run": RECORD})
    assert wrapped.text == expected
    assert canonical_json({"record": wrapped}) == '{"record":' + expected.decode() + "}"
    assert CanonicalJson(copy.deepcopy(RECORD)) == frozen


def test_it_cannot_be_changed() -> None:
    frozen = CanonicalJson(copy.deepcopy(RECORD))
    with pytest.raises(AttributeError):
        frozen.text = b'{"case_id":"other"}'  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del frozen.text
    with pytest.raises(AttributeError):
        frozen.extra = 1  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        frozen["case_id"] = "other"  # type: ignore[index]
    assert frozen.text == _sorted(RECORD)


@pytest.mark.parametrize(
    "value",
    [
        {**RECORD, "bad": math.nan},
        {"a": None, "b": [1, {"c": -math.inf}]},
        {"t": (None, math.inf)},
    ],
)
def test_nan_and_infinities_are_refused_when_it_is_made(value: dict) -> None:
    with pytest.raises(TypeError, match="NaN or Infinity is not valid JSON"):
        CanonicalJson(value)


@pytest.mark.parametrize("value", [[1, 2], "text", {"big": 2**70}, {1: "non-string key"}])
def test_only_a_json_object_is_accepted(value: object) -> None:
    with pytest.raises(TypeError):
        CanonicalJson(value)  # type: ignore[arg-type]


def test_it_trusts_no_earlier_proof() -> None:
    """A ``PlainJsonDict`` was proven (finite, printed alike) when built; changed since, it
    must be walked again on the hash path, not taken on its word."""
    stale = PlainJsonDict({"score": 0.5})
    stale["score"] = math.nan
    with pytest.raises(TypeError, match="NaN or Infinity is not valid JSON"):
        CanonicalJson({"row": stale})
    with pytest.raises(TypeError, match="NaN or Infinity is not valid JSON"):
        canonical_json({"rows": [stale]})
    assert CanonicalJson({"ok": 0.5}).plain
    assert not CanonicalJson({"tiny": 1e-7}).plain  # json prints 1e-07, orjson 1e-7


def test_nan_beside_it_in_a_payload_is_still_refused() -> None:
    frozen = CanonicalJson(copy.deepcopy(RECORD))  # its text holds nulls: the payload is walked
    with pytest.raises(TypeError, match="NaN or Infinity"):
        canonical_json({"record": frozen, "score": math.nan})
    with pytest.raises(TypeError, match="NaN or Infinity"):
        canonical_json({"record": frozen, "rows": [{"score": -math.inf}, None]})


@pytest.mark.synthetic_events  # a bare run_built payload: the record is what is tested here
def test_a_record_changed_after_it_was_made_does_not_reach_the_chain(db_url: str) -> None:
    """The old attack: the record is serialised, then changed (a NaN put in, a field edited)
    before the event is appended. The store must record the text of the value as it was
    made, the chain must verify, and the NaN must not become a stored ``null``."""
    record = copy.deepcopy(RECORD)
    frozen = CanonicalJson(record)
    before = canonical_json(record)
    record["case_id"] = "edited after it was serialised"
    record["score"] = math.nan
    record["nested"]["a"].append(math.inf)
    record["trials"][0]["reward"] = 1.0
    store = opened(db_url)
    try:
        store.store.append([NewEvent("goal/g", RUN_BUILT, {"goal_id": "g", "record": frozen})])
        with store.store.database.connect() as conn:
            (text,) = conn.execute("SELECT payload FROM events WHERE position = 1").first()
        assert text == '{"goal_id":"g","record":' + before + "}"
        assert orjson.loads(text)["record"] == RECORD
        report = store.store.verify()
        assert report.ok and report.checked == 1
    finally:
        store.close()
