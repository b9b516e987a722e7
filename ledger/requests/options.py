"""Turning parsed click options into a frozen request, the same way for every command family."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any, TypeVar

T = TypeVar("T")


def request_from_options(cls: type[T], options: Mapping[str, Any]) -> T:
    """Build ``cls`` from options named as its fields; repeatable options become tuples.

    An option the request does not declare is a programming error, raised here, so a renamed
    flag cannot silently stop reaching the code that reads it.
    """
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(options) - names)
    if unknown:
        raise TypeError(f"{cls.__name__} has no option(s): {', '.join(unknown)}")
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}
    return cls(**values)
