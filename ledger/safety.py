"""The public-safety filter and the text/list/number compaction helpers built on it.

Everything that reaches a public file (run records, ledger rows, history, rollout events) passes
through here, so the rules live in one place (benchmark_run_v0.md §1, §3). A value that fails the
filter is dropped, never masked: masking would still leak the shape and length of a secret.

The regexes are compiled once at import; ``is_public_safe`` runs on every text field of ledgers
with tens of thousands of rows, so it is two ``search`` calls and nothing else.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

ELLIPSIS = "\u2026"

# --- local-path rule -------------------------------------------------------------------------
# (new) ``/srv``, ``/mnt`` and ``/media`` are host mount points too (the Harbor and BenchFlow
# fixtures were produced under ``/srv/bench``), so they are local paths as well.
# A path must start at the beginning of the text or after a character that cannot be part of a
# relative path or a placeholder (letters, digits, ``_ - . <``); that keeps ``jobs/tmp/run`` and
# ``<tmp>/x`` public while ``file:///tmp/x`` and ``"/Users/x"`` fail. The first segment(s) must
# match exactly: a segment ends at ``/``, at the end of the text, or where the path itself ends
# (whitespace, backtick, quote, ``<``/``>``), so ``/tmpfoo`` or ``/rootfs`` are not local paths.
_PATH_BOUNDARY = r"(?<![\w\-.<])"
_SEGMENT_END = r"(?=[/\s`'\"<>]|\Z)"
_LOCAL_PATH_RE = re.compile(
    _PATH_BOUNDARY
    + r"(?:"
    + r"/(?:Users|Volumes|var/folders|tmp|private|home|root|srv|mnt|media)"
    + _SEGMENT_END
    + r"|[A-Za-z]:[\\/]"  # Windows drive path, any letter
    + r"|~/"  # home-relative path
    + r")"
)

# --- secret-like rule (case-insensitive) -----------------------------------------------------
# "Word" is read as "not glued to a preceding letter or digit": an underscore or dash before the
# keyword still counts as a boundary so ``GITHUB_TOKEN=…`` and ``AWS_SECRET_ACCESS_KEY=…`` fail
# (a plain ``\b`` would let them through). Key/value forms tolerate a quote after the key and
# before the value so the JSON/YAML spellings of the same secret fail too. A value that is only an
# environment reference (``${NAME}``/``$NAME``) is a name, not a secret, so it passes: launch
# previews legitimately carry ``--agent-env OPENAI_API_KEY=${OPENAI_API_KEY}``.
_W = r"(?<![a-z0-9])"
_Q = r"[\"']?"
_NOT_ENV_REF = r"(?!\$\{?[a-z_][a-z0-9_]*\}?(?=[\s\"'`]|\Z))"
_KV = _Q + r"\s*[=:]\s*" + _Q + _NOT_ENV_REF
# Every alternative starts with one of a/b/p/s/t; the leading lookahead lets the engine skip
# other positions without trying each alternative's lookbehind (about 3x faster).
_SECRET_RE = re.compile(
    r"(?=[abpst])(?:"
    + r"|".join(
        (
            _W + r"bearer\s+[a-z0-9._~+/=-]{16,}",
            _W + r"(?:access|secret)[_-]?key" + _KV + r"[^\s\"']",
            r"(?<![a-z0-9_])(?:ak|sk)" + _KV + r"[^\s\"']",
            r"(?<![a-z0-9_])(?:ak|sk)[-_=:][a-z0-9_=-]{10,}",
            _W + r"token" + _KV + r"[^\s\"']{12,}",
            _W + r"authorization" + _Q + r"\s*:",
            _W
            + r"(?:api[_-]?key|password|secret)"
            + _Q
            + r"\s*=\s*"
            + _Q
            + _NOT_ENV_REF
            + r"[^\s\"']",
        )
    )
    + r")",
    re.IGNORECASE,
)


# Credentials with a fixed, well-known shape that carry no keyword the rule above needs:
# GitHub tokens, AWS access key ids, Slack and Google API keys, PEM private keys. The formats
# are case-sensitive, so this regex is too.
_KNOWN_TOKEN_RE = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}"
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|AIza[0-9A-Za-z_-]{35}"
    r")|-----BEGIN [A-Z ]*PRIVATE KEY-----"
)


def _may_hold_known_token(text: str) -> bool:
    """Substring screen for ``_KNOWN_TOKEN_RE``: every text of a record passes through here, and
    plain ``in`` tests cost a fraction of a generator over a hint tuple."""
    return (
        "gh" in text
        or "AKIA" in text
        or "ASIA" in text
        or "xox" in text
        or "AIza" in text
        or "PRIVATE KEY" in text
    )


def _may_hold_path(text: str) -> bool:
    """Every local-path form contains a slash or a backslash; most texts have neither."""
    return "/" in text or "\\" in text


def _may_hold_secret(text: str) -> bool:
    """Cheap keyword screen before the full secret regex (about 10x faster on ledger text).

    Non-ASCII text skips the screen: case-insensitive matching folds characters such as the
    Kelvin sign into ``k``, which ``str.lower`` does not, so only the regex is exact there.
    """
    if not text.isascii():
        return True
    t = text.lower()
    return (
        "ak" in t
        or "sk" in t
        or "key" in t
        or "token" in t
        or "bearer" in t
        or "authorization" in t
        or "password" in t
        or "secret" in t
    )


def is_public_safe(text: str) -> bool:
    """True when ``text`` holds no absolute local path and nothing that looks like a secret."""
    if _may_hold_path(text) and _LOCAL_PATH_RE.search(text) is not None:
        return False
    if _may_hold_known_token(text) and _KNOWN_TOKEN_RE.search(text):
        return False
    return not (_may_hold_secret(text) and _SECRET_RE.search(text) is not None)


def _scalar_text(value: Any) -> str | None:
    """Strings and finite numbers become text; bools, containers and NaN never do.

    ``str(True)`` or the repr of a dict would be a made-up value, not the producer's text.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    return None


# Texts up to this length are remembered by ``ctext_status``; longer ones are rarely repeated
# and would make the cache hold on to large strings.
_CACHED_TEXT_MAX = 256


def ctext_status(value: Any, limit: int) -> tuple[str | None, bool]:
    """``ctext`` that also says whether the value was dropped by the safety filter.

    The record compactor needs the second half to name dropped fields in ``public_safety``.
    Short strings go through a cache: a large ingest compacts the same task ids, sources,
    status words and phase names thousands of times, and the result depends on the text alone.
    """
    if type(value) is str and len(value) <= _CACHED_TEXT_MAX:
        return _ctext_str_status(value, limit)
    raw = _scalar_text(value)
    if raw is None:
        return None, False
    return _ctext_text_status(raw, limit)


@lru_cache(maxsize=1 << 14)
def _ctext_str_status(value: str, limit: int) -> tuple[str | None, bool]:
    """``ctext_status`` of a plain ``str`` of at most ``_CACHED_TEXT_MAX`` characters, memoised
    (the filter is a pure function of it)."""
    return _ctext_text_status(value, limit)


@lru_cache(maxsize=1 << 10)
def _is_public_safe_key(key: str) -> bool:
    """``is_public_safe`` of a short map key, memoised: reward and metric maps repeat theirs."""
    return is_public_safe(key)


def _ctext_text_status(raw: str, limit: int) -> tuple[str | None, bool]:
    """Whitespace normalised, filtered, cut: filtered before and after the cut (§1)."""
    text = " ".join(raw.split())
    if not text:
        return None, False
    if not is_public_safe(text):
        return None, True
    if len(text) > limit:
        text = text[: max(limit - 1, 0)].rstrip(" ") + ELLIPSIS
        if not is_public_safe(text):
            return None, True
    return text, False


def ctext(value: Any, limit: int) -> str | None:
    """Record text compaction (§1): normalise whitespace, filter, cut to ``limit`` with ``…``."""
    return ctext_status(value, limit)[0]


def ledger_text_status(value: Any, limit: int) -> tuple[str | None, bool]:
    """``ledger_text`` that also says whether the safety filter dropped the value."""
    raw = _scalar_text(value)
    if raw is None:
        return None, False
    text = " ".join(raw.split())
    if not text:
        return None, False
    # Filtered before truncation too: a secret cut short must not slip through (§1, §7).
    if not is_public_safe(text):
        return None, True
    if len(text) > limit:
        text = text[: max(limit - 3, 0)] + "..."
        if not is_public_safe(text):
            return None, True
    return text, False


def ledger_text(value: Any, limit: int) -> str | None:
    """Ledger-variant text compaction (ledger_v0.md intro): L−3 characters plus ``...``."""
    return ledger_text_status(value, limit)[0]


def clist_status(value: Any, n: int, limit: int = 160) -> tuple[list[str], list[int]]:
    """``clist`` plus the input indexes of items the safety filter dropped."""
    items = value if isinstance(value, list) else [value]
    kept: list[str] = []
    dropped: list[int] = []
    for index, item in enumerate(items):
        if len(kept) >= n:
            break
        text, unsafe = ctext_status(item, limit)
        if unsafe:
            dropped.append(index)
        if text is not None:
            kept.append(text)
    return kept, dropped


def clist(value: Any, n: int, limit: int = 160) -> list[str]:
    """List compaction (§1): each item through ``ctext``; unusable items are not counted."""
    return clist_status(value, n, limit)[0]


# Integers a store column and the JSON encoder can hold; a 400-digit literal is as unusable as
# NaN (stdlib-parsed BenchFlow files can carry one), so it is dropped the same way.
INT64 = range(-(2**63), 2**63)


def finite_number(value: Any) -> int | float | None:
    """A JSON number that is not a bool, not NaN/±Infinity and not beyond 64 bits, else None."""
    if type(value) is float:  # the common case first: every reward, duration and cost
        return value if math.isfinite(value) else None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value in INT64 else None
    if isinstance(value, float) and math.isfinite(value):
        return value
    return None


def parse_number(value: Any) -> int | float | None:
    """A number, or a string that parses as one (``.`` → float, else int); else None."""
    if isinstance(value, str):
        try:
            parsed: int | float = float(value) if "." in value else int(value)
        except ValueError:
            return None
        return finite_number(parsed)
    return finite_number(value)


def nummap_status(
    value: Any, keys: Iterable[str] | None = None
) -> tuple[dict[str, int | float], int]:
    """``nummap`` plus how many free keys the safety filter dropped.

    Only a count: an unsafe key is itself unsafe text and must not be echoed as a field name.
    """
    if type(value) is not dict and not isinstance(value, Mapping):  # plain dicts skip the ABC
        return {}, 0
    out: dict[str, int | float] = {}
    if keys is not None:
        for key in keys:
            raw = value.get(key)
            number = parse_number(raw)
            if number is not None:
                out[key] = number
        return out, 0
    dropped = 0
    for key, raw in value.items():
        number = parse_number(raw)
        if number is None or not isinstance(key, str) or not key:
            continue
        if _is_public_safe_key(key) if len(key) <= _CACHED_TEXT_MAX else is_public_safe(key):
            out[key] = number
        else:
            dropped += 1
    return out, dropped


def nummap(value: Any, keys: Iterable[str] | None = None) -> dict[str, int | float]:
    """Numeric map (§1): only number-like values survive; ``keys`` selects and orders them.

    Free keys (no ``keys`` given) are producer-chosen names, so they must pass the filter too.
    """
    return nummap_status(value, keys)[0]
