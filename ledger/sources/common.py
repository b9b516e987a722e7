"""Rules the source adapters share: pass@k and the slugs that turn names into id parts.

One place for each, so the adapters cannot drift apart. The three slug rules below really
differ and each is kept as its ids were first written (changing one would change run keys and
arm ids already in users' stores), so they are named for where they apply, side by side:

* ``slug``: Harbor ids (docs/formats/harbor.md §5.6): ``[a-z0-9._-]`` kept, cut to 60 and trimmed
again, so
  an id never ends in ``-``.
* ``slug_uncut_trim``: BenchFlow ids: the same, but the cut is not trimmed again (a 60-character
  cut may end in ``-``).
* ``analysis_slug``: case-analysis ids: only ``[0-9a-z]`` kept (``.`` and ``_`` become ``-``,
  since ``__`` separates the parts), no cut, ``unknown`` when nothing is left.

Every rule first turns text that fails the public-safety filter into ``unsafe``: slugging would
launder it into an id that passes (``token=abc…`` -> ``token-abc…``), and ids reach the public
ledger.
"""

from __future__ import annotations

import re

from benchledger.ledger.core.safety import UNSAFE_PART, is_public_safe
from benchledger.ledger.rules.record.pass_at_k import pass_at_k

__all__ = ["analysis_slug", "pass_at_k", "slug", "slug_uncut_trim"]

_ID_RUNS = re.compile(r"[^a-z0-9._-]+")
_ANALYSIS_RUNS = re.compile(r"[^0-9a-z]+")
_ID_LIMIT = 60


def slug(value: str) -> str:
    """Lowercase; other runs -> ``-``; trimmed; at most 60 characters, trimmed again."""
    if not is_public_safe(value):
        return UNSAFE_PART
    return _ID_RUNS.sub("-", value.lower()).strip("-")[:_ID_LIMIT].strip("-")


def slug_uncut_trim(value: str) -> str:
    """``slug`` without the second trim: the 60-character cut is kept as it falls."""
    if not is_public_safe(value):
        return UNSAFE_PART
    return _ID_RUNS.sub("-", value.lower()).strip("-")[:_ID_LIMIT]


def analysis_slug(value: str) -> str:
    """Lowercase letters and digits; every other run -> ``-``; ``unknown`` when empty."""
    if not is_public_safe(value):
        return UNSAFE_PART
    return _ANALYSIS_RUNS.sub("-", value.lower()).strip("-") or "unknown"
