"""The types a hand-written compact run must have before it is compacted.

Compaction is lenient on purpose (adapters hand it whatever a runner wrote, and ``ctext``
turns any scalar into text), but for a record a user gives us that leniency is silent
coercion: ``case_id: 123`` would become ``"123"``, ``benchmark_id: {}`` would vanish into
``unknown-benchmark`` and ``official_score: "1.0"`` into a missing score. So every field the
compaction spec declares as text, a vocabulary word, a boolean, an integer, a number or an
object is checked first, and the first wrong one is an error naming its path and the type
found. ``null`` means absent, as it does in compaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.json_input import json_type
from benchledger.ledger.core.safety import finite_number
from benchledger.ledger.rules.record import fields as spec
from benchledger.ledger.rules.record import kinds

_INTEGER_KINDS = frozenset({kinds.INT, kinds.NNINT})
_NUMBER_KINDS = frozenset({kinds.NUM, kinds.NNNUM, kinds.POSNUM, kinds.FLOAT})
_TOP_LEVEL = (spec.IDENTITY_SPEC, spec.IDENTITY_TAIL_SPEC, spec.BODY_SPEC)
_CASE_TEXT = ("case_id", "task_id")


def check_input_types(raw: Mapping[str, Any]) -> None:
    """Raise ``InputError`` at the first field whose type the spec does not allow."""
    for fields in _TOP_LEVEL:
        _check_object(raw, fields, "")
    for key in _CASE_TEXT:
        _check_value(raw.get(key), spec.T120, key)
    case_ids = raw.get("case_ids")
    if isinstance(case_ids, list):
        for index, item in enumerate(case_ids):
            _check_value(item, spec.T120, f"case_ids[{index}]")
    else:
        _check_value(case_ids, spec.T120, "case_ids")
    trials = raw.get("trials")
    if trials is not None:
        if not isinstance(trials, list):
            _wrong("trials", "a list of objects", trials)
        for index, trial in enumerate(trials):
            if not isinstance(trial, Mapping):
                _wrong(f"trials[{index}]", "an object", trial)
            _check_object(trial, spec.TRIAL_SPEC, f"trials[{index}].")
    _check_value(raw.get("trial_count"), kinds.NNINT, "trial_count")


def _check_object(raw: Mapping[str, Any], fields: Mapping[str, Any], prefix: str) -> None:
    for key, kind in fields.items():
        _check_value(raw.get(key), kind, prefix + key)


def _check_value(value: Any, kind: Any, path: str) -> None:
    if value is None:
        return
    if hasattr(kind, "text_limit"):
        if not isinstance(value, str):
            _wrong(path, "a string", value)
    elif hasattr(kind, "values"):
        # a word outside the vocabulary is the spec's own drop (loopx writes e.g. "unknown")
        if not isinstance(value, str):
            _wrong(path, "a string", value)
    elif kind is kinds.BOOL:
        if not isinstance(value, bool):
            _wrong(path, "true or false", value)
    elif kind in _INTEGER_KINDS:
        if isinstance(value, bool) or not isinstance(value, int):
            _wrong(path, "an integer", value)
        _require_64_bits(value, path)
    elif kind in _NUMBER_KINDS:
        if isinstance(value, bool) or not isinstance(value, int | float):
            _wrong(path, "a number", value)
        _require_64_bits(value, path)
    elif hasattr(kind, "spec"):
        if not isinstance(value, Mapping):
            _wrong(path, "an object", value)
        _check_object(value, kind.spec, path + ".")


def _require_64_bits(value: int | float, path: str) -> None:
    """Compaction drops an integer beyond 64 bits (no database column holds it); say so."""
    if finite_number(value) is None:
        raise InputError(
            f"{path} is beyond the 64-bit integer range; write it as a decimal number "
            "(e.g. 1.8e19) or fix the input"
        )


def _wrong(path: str, expected: str, value: Any) -> None:
    raise InputError(
        f"{path} must be {expected}, got {json_type(value)}; fix the input and rerun "
        "(nothing was recorded)"
    )
