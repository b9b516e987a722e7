"""The two kinds of model every contract is built from, and the value types they share.

Validation is strict (no coercion: ``"1"`` is not an int, ``true`` is not a number) because the
point is to catch a writer that put the wrong type in a stored payload. ``optional()`` declares
a field that may be absent but is never ``null`` when present, which is what compaction writes
(it omits empties rather than writing ``null``).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field


class Open(BaseModel):
    """A format that allows keys it does not name (the spec says readers keep or ignore them)."""

    model_config = ConfigDict(strict=True, extra="allow", allow_inf_nan=False)


class Closed(BaseModel):
    """A format benchledger alone writes: a key it does not name is a writer's mistake."""

    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)


def _no_null_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def optional() -> Any:
    """A field that may be missing but, when present, has its declared type (never null)."""
    return Field(default=None, json_schema_extra=_no_null_default)


# A JSON number that is finite (never NaN or Infinity); ints are accepted, bools are not.
Number = float
Count = Annotated[int, Field(ge=0)]
NonNegative = Annotated[float, Field(ge=0)]
Positive = Annotated[float, Field(gt=0)]
NumberMap = dict[str, float]
JsonObject = dict[str, Any]
