"""Checking payloads against their models: one payload (the test suite's append check) or
every stored event (``verify --schemas``), which stops at the first that does not conform.

Stored payloads are checked as stored, before any upcaster, against the model of the version
they were written as.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import orjson
from pydantic import ValidationError

from benchledger.ledger.contracts.catalog import EVENT_MODELS


@dataclass(frozen=True)
class Nonconformity:
    """Why one payload does not conform: the first error pydantic reports."""

    event_type: str
    schema_version: int
    field: str
    message: str
    position: int | None = None

    def describe(self) -> str:
        where = f"position {self.position}: " if self.position is not None else ""
        return (
            f"{where}{self.event_type} v{self.schema_version} payload does not conform at "
            f"{self.field or '(payload)'}: {self.message}"
        )


@dataclass
class SchemaReport:
    """Outcome of ``verify --schemas``: how many payloads conformed before the first that failed."""

    ok: bool
    checked: int
    first_nonconforming: Nonconformity | None = None

    def as_dict(self) -> dict[str, Any]:
        bad = self.first_nonconforming
        return {
            "ok": self.ok,
            "checked": self.checked,
            "first_nonconforming": asdict(bad) if bad else None,
            "reason": bad.describe() if bad else None,
        }


def check_payload(
    event_type: str, schema_version: int, payload: Any, position: int | None = None
) -> Nonconformity | None:
    """None when the payload conforms to its model; an event type or version without a model
    does not conform either (nothing may be stored that no contract describes)."""
    model = EVENT_MODELS.get((event_type, schema_version))
    if model is None:
        message = f"no model for event type {event_type!r} version {schema_version}"
        return Nonconformity(event_type, schema_version, "", message, position)
    try:
        model.model_validate(payload)
    except ValidationError as exc:
        error = exc.errors(include_url=False, include_input=False)[0]
        field = ".".join(str(part) for part in error["loc"])
        return Nonconformity(event_type, schema_version, field, error["msg"], position)
    return None


def check_rows(rows: Iterable[Mapping[str, Any]]) -> SchemaReport:
    """Check stored event rows (``position``, ``event_type``, ``schema_version``, ``payload``
    text) in order, stopping at the first payload that does not conform."""
    checked = 0
    for row in rows:
        payload = orjson.loads(row["payload"])
        problem = check_payload(
            row["event_type"], row["schema_version"], payload, position=row["position"]
        )
        if problem is not None:
            return SchemaReport(False, checked, problem)
        checked += 1
    return SchemaReport(True, checked)


def check_store(store: Any) -> SchemaReport:
    """``check_rows`` over every event of an ``EventStore``, in position order."""
    return check_rows(row for rows in store.read_rows(batch_size=2000) for row in rows)
