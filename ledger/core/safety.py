"""The public-safety filter and the text/list/number compaction helpers built on it.

Everything that reaches a public file (run records, ledger rows, history, rollout events) passes
through here, so the rules live in one place (docs/formats/benchmark_run_v0.md §1, §3). A value
that fails the filter is dropped, never masked: masking would still leak the shape and length of
a secret.

The rules are compiled once, on the first check, into one pattern (plus a 40-character run
search for bare AWS secret keys): compiling them takes ~18 ms, which a command that checks
nothing (``--help``, a read) should not pay. ``is_public_safe`` runs on every text field of
ledgers with tens of thousands of rows, so it is one ``search`` in the common case.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from benchledger.ledger.core.secret_rules import (
    CASED_RULES,
    KEYWORD_RULES,
    NAMED_VALUE_RULES,
    NG,
    TOKEN_RULES,
)

ELLIPSIS = "\u2026"

# --- local-path rules ------------------------------------------------------------------------
# A local path is found anywhere in a value, not only at the start of a word: a path glued to
# ``run__``, ``jobs-`` or ``x.`` is still the same leak (issue #13). Two strengths:
# * a home or per-user root with a name below it (``/home/x``, ``/Users/x``, ``/Volumes/x``) and
#   ``/var/folders``, ``/private/tmp|var`` fail whatever precedes them, unless they are the path
#   of a URL on a remote host (``https://host/home/x`` names no local file);
# * generic roots (``/tmp``, ``/root``, ``/srv``, ``/mnt``, ``/media``, ``/private``,
#   ``/var/tmp``, ``/run/user``, ``/dev/shm``, a bare ``/home``) fail unless glued to a letter
#   or digit: that is a relative path's inner segment (``jobs/tmp/run``) and stays public, as
#   do ``./tmp``, ``../tmp`` and the ``<tmp>`` placeholder. The fixtures' host root
#   ``/srv/bench`` is local.
# A segment ends at ``/``, at the end of the text or where the path ends (whitespace, backtick,
# quote, ``<``/``>``), so ``/tmpfoo`` or ``/rootfs`` are not local paths. Container paths
# (``/app``, ``/logs``, ``/skills``) are public. Windows drive paths (``C:\``, ``D:/``) and home
# paths (``~/``, ``~alice/``) fail too.
#
# Every rule is written as (first character, rest): the combined pattern is one alternation per
# first character, so the engine skips positions that cannot start a rule in C. A rule that must
# not be glued to a preceding letter or digit checks that after its first character (``NG``).
_SEGMENT_END = r"(?=[/\s`'\"<>]|\Z)"
_PATH_RULES: tuple[tuple[str, str], ...] = (
    (
        "/",
        r"(?P<home>(?:Users|home|Volumes)/[^\s/`'\"<>]|(?:var/folders|private/(?:tmp|var))"
        + _SEGMENT_END
        + ")",
    ),
    (
        "/",
        r"(?:(?<![A-Za-z0-9.<]/)|(?<=[A-Za-z0-9_-]\./))"
        r"(?:tmp|root|srv|mnt|media|private|var/tmp|run/user|dev/shm|Users|home|Volumes)"
        + _SEGMENT_END,
    ),
    (":", r"(?<=(?<![A-Za-z0-9])[A-Za-z]:)[\\/]"),
    ("\\", r"(?<=[A-Za-z]:\\)(?i:users)\\"),
    ("~", r"/"),
    ("~", NG + r"[a-z_][a-z0-9_.-]*/"),
    # the same roots escaped: percent-encoded (``%2Fhome%2F``) or JSON-escaped (``\/home\/``)
    ("%", r"(?i:2f)(?:Users|home|Volumes|tmp|root|private|var%2[fF]folders)%2[fF]"),
    ("\\", r"/(?:Users|home|Volumes|tmp|root|private)\\/"),
)

# Credentials inside a URL of any scheme: ``scheme://user:password@host``.
_URL_CREDENTIAL_RULE = (":", r"//[^\s/?#@:]*+:[^\s/?#@]++@")


# ``NG`` moved one character on: checks the character two before the current one.
_NG_AFTER_ONE = r"(?<![A-Za-z0-9][\s\S][\s\S])"


def _insensitive(rest: str) -> str:
    """``rest`` case-insensitive, spelled so that it starts with a character class: the engine
    skips an alternative whose first class does not match without entering it, where a
    case-insensitive literal or a look-behind is entered at every position (a third of the
    filter's time on ordinary text). ``NG`` first moves after that class."""
    glued = rest.startswith(NG)
    body = rest[len(NG) :] if glued else rest
    if not body[:1].isalpha():
        return "(?i:" + rest + ")"
    head = "[" + body[0].lower() + body[0].upper() + "]"
    return head + (_NG_AFTER_ONE if glued else "") + "(?i:" + body[1:] + ")"


def _combined_pattern() -> re.Pattern[str]:
    """One alternation per first character; keyword rules are listed under both cases of
    theirs. ``re.ASCII``: Unicode case tables cost tens of milliseconds to compile on every
    start, and non-ASCII text is checked case-folded instead (``is_public_safe``)."""
    tails: dict[str, list[str]] = {}
    for first, rest in (*_PATH_RULES, _URL_CREDENTIAL_RULE, *TOKEN_RULES, *CASED_RULES):
        tails.setdefault(re.escape(first), []).append(rest)
    for first, rest in (*KEYWORD_RULES, *NAMED_VALUE_RULES):
        for case in dict.fromkeys((first, first.upper())):
            tails.setdefault(re.escape(case), []).append(_insensitive(rest))
    groups = (first + "(?:" + "|".join(rests) + ")" for first, rests in tails.items())
    return re.compile("|".join(groups), re.ASCII)


_unsafe_re = lru_cache(maxsize=1)(_combined_pattern)

# A bare AWS secret access key: exactly 40 base64 characters mixing upper case, lower case and
# digits (a git sha or a hex checksum never does). It has no first character to dispatch on,
# so runs of exactly 40 are found first (cheap) and their mix is checked only on a hit.
_B64 = r"[A-Za-z0-9/+]"
_B64_RUN_40_RE = re.compile(r"(?<!" + _B64 + r")" + _B64 + r"{40}(?!" + _B64 + r")")
_AWS_SECRET_LEN = 40


def _is_aws_secret_shaped(run: str) -> bool:
    return (
        any(c.isupper() for c in run)
        and any(c.islower() for c in run)
        and any(c.isdigit() for c in run)
    )


# A remote URL: ``scheme://host`` and its path, up to whitespace, a quote, a backtick or
# ``<``/``>``. A home-root match inside one (after its host) is the URL's path on a remote host,
# not a local file (credentials in it are caught by their own rule). A ``file:`` URL is local.
_REMOTE_URL = (
    r"(?<![A-Za-z0-9+.-])(?!file:)[A-Za-z][A-Za-z0-9+.-]*://"
    r"(?P<host>[^\s/?#\"'`<>]+)(?:/[^\s\"'`<>]*)?"
)


@lru_cache(maxsize=1)
def _remote_url_re() -> re.Pattern[str]:
    """Compiled on the first home-root match, not at import: most texts never hold one, and
    the Unicode ``IGNORECASE`` compile costs about half a millisecond on every start."""
    return re.compile(_REMOTE_URL, re.IGNORECASE)


def _remote_url_extents(text: str) -> tuple[list[int], list[int]]:
    """Where each remote URL's host starts and where the URL ends, in order.

    One left-to-right scan of ``text`` (every match is consumed whole, and a scheme is only
    tried where a run of scheme characters begins), so a text of many home roots inside URLs
    costs a scan plus a binary search per match: searching backwards from every match for a
    URL prefix (as this used to) took time quadratic in the text (issue 36)."""
    starts: list[int] = []
    ends: list[int] = []
    for url in _remote_url_re().finditer(text):
        starts.append(url.start("host"))
        ends.append(url.end())
    return starts, ends


def _has_unsafe_match(text: str) -> bool:
    urls: tuple[list[int], list[int]] | None = None
    match = _unsafe_re().search(text)
    while match is not None:
        if match.lastgroup != "home":
            return True
        if urls is None:
            urls = _remote_url_extents(text)
        at = match.start()
        index = bisect_right(urls[0], at) - 1
        if index < 0 or at >= urls[1][index]:
            return True
        match = _unsafe_re().search(text, match.end())
    return False


# ``%3D``, ``%253D`` (encoded twice), ``\u003d`` and ``\x3d``: a secret or path spelled with
# escapes is still one, so text holding them is checked decoded too (twice, for the double
# encoding of URLs nested in URLs). Percent escapes are decoded by splitting at ``%`` and a
# table lookup, several times faster than a substitution with a callback per escape.
_HEX = "0123456789abcdefABCDEF"
_PERCENT_TABLE = {a + b: chr(int(a + b, 16)) for a in _HEX for b in _HEX}
_BACKSLASH_ESCAPE_RE = re.compile(r"\\u[0-9A-Fa-f]{4}|\\x[0-9A-Fa-f]{2}")
_ESCAPE_ROUNDS = 2
# ``mysql -p<password>`` (the password glued to ``-p``): ``-p`` means a password only to the
# MySQL/MariaDB clients, so the rule needs one of them named in the same text.
_SHORT_P_RE = re.compile(r"(?<![^\s\"'])-p[^\s\"'-]")
_MYSQL_RE = re.compile(r"mysql|mariadb", re.ASCII | re.IGNORECASE)


def _unescape_backslash(match: re.Match[str]) -> str:
    return chr(int(match.group()[2:], 16))


def _unescaped(text: str) -> str:
    """``text`` with its percent and ``\\u``/``\\x`` escapes decoded once."""
    if "%" in text:
        head, *parts = text.split("%")
        table = _PERCENT_TABLE
        text = head + "".join(
            table[part[:2]] + part[2:] if part[:2] in table else "%" + part for part in parts
        )
    if "\\" in text:
        text = _BACKSLASH_ESCAPE_RE.sub(_unescape_backslash, text)
    return text


def _is_unsafe(text: str) -> bool:
    """The rules on ``text`` as it is (and case-folded when it is not ASCII)."""
    if _has_unsafe_match(text):
        return True
    if len(text) >= _AWS_SECRET_LEN and any(
        _is_aws_secret_shaped(m.group()) for m in _B64_RUN_40_RE.finditer(text)
    ):
        return True
    if "-p" in text and _SHORT_P_RE.search(text) and _MYSQL_RE.search(text):
        return True
    return not text.isascii() and _has_unsafe_match(" ".join(text.casefold().split()))


def is_public_safe(text: str) -> bool:
    """True when ``text`` holds no absolute local path and nothing that looks like a secret.

    Non-ASCII text is also checked case-folded with its whitespace normalised: keywords may be
    spelled with characters that fold to ASCII letters (the Kelvin sign, the long s) or spaced
    with non-ASCII whitespace, which the ASCII-mode pattern does not know. Text with percent or
    backslash escapes is also checked decoded. Every pass is one linear scan (issue 36)."""
    if _is_unsafe(text):
        return False
    if "%" in text or "\\" in text:
        for _ in range(_ESCAPE_ROUNDS):
            decoded = _unescaped(text)
            if decoded == text:
                break
            if _is_unsafe(decoded):
                return False
            text = decoded
    return True


UNSAFE_PART = "unsafe"


def join_public(separator: str, *parts: str) -> str:
    """``parts`` joined by ``separator``, each part that fails the filter replaced by
    ``unsafe``, for every value we build from parts (run keys, evals keys, arm ids).

    A blocked part must block the built value even where joining or slugging would hide it
    from the filter (``/Users/bob`` slugged is ``users-bob``); the part is replaced rather than
    the whole value dropped so the value still tells runs apart by their public parts, and it
    is never hashed (a digest of a secret would confirm a guess)."""
    return separator.join(part if is_public_safe(part) else UNSAFE_PART for part in parts)


def public_json(value: Any) -> tuple[Any, int]:
    """A JSON value with every string that fails the filter dropped, and how many were.

    For rows that arrive whole rather than field by field (an imported or merged ledger): a
    failing string value is removed from its object or list, an entry under a failing key is
    removed with its key. Everything else is kept exactly, so a clean row is unchanged."""
    if isinstance(value, str):
        return (value, 0) if is_public_safe(value) else (None, 1)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        dropped = 0
        for key, child in value.items():
            if isinstance(key, str) and not is_public_safe(key):
                dropped += 1
                continue
            kept, n = public_json(child)
            dropped += n
            if kept is not None or child is None:
                out[key] = kept
        return out, dropped
    if isinstance(value, list):
        items: list[Any] = []
        dropped = 0
        for child in value:
            kept, n = public_json(child)
            dropped += n
            if kept is not None or child is None:
                items.append(kept)
        return items, dropped
    return value, 0


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
    """Whitespace normalised, filtered, cut to L-1 characters plus ``…`` (§1)."""
    return cut_text_status(raw, limit, ELLIPSIS, trim=True)


def cut_text_status(raw: str, limit: int, suffix: str, *, trim: bool) -> tuple[str | None, bool]:
    """``raw`` with its whitespace normalised, filtered, and cut to ``limit`` characters ending
    in ``suffix`` (``trim``: the space before the suffix dropped): (text, unsafe), the text None
    when empty or unsafe. Filtered before the cut too: a secret cut short must not slip through
    (docs/formats/benchmark_run_v0.md §1). The record, ledger and rollout texts differ only in
    the suffix and the trim."""
    text = " ".join(raw.split())
    if not text:
        return None, False
    if not is_public_safe(text):
        return None, True
    if len(text) > limit:
        text = text[: max(limit - len(suffix), 0)]
        text = (text.rstrip(" ") if trim else text) + suffix
        if not is_public_safe(text):
            return None, True
    return text, False


def ctext(value: Any, limit: int) -> str | None:
    """Record text compaction (§1): normalise whitespace, filter, cut to ``limit`` with ``…``."""
    return ctext_status(value, limit)[0]


def ledger_text_status(value: Any, limit: int) -> tuple[str | None, bool]:
    """``ledger_text`` that also says whether the safety filter dropped the value.

    Short strings go through a cache, as in ``ctext_status``: the rows of one ingest repeat
    their benchmark, agent, model, mode and status texts in every row."""
    if type(value) is str and len(value) <= _CACHED_TEXT_MAX:
        return _ledger_str_status(value, limit)
    raw = _scalar_text(value)
    if raw is None:
        return None, False
    return _ledger_text_status(raw, limit)


@lru_cache(maxsize=1 << 14)
def _ledger_str_status(value: str, limit: int) -> tuple[str | None, bool]:
    """``ledger_text_status`` of a plain ``str`` of at most ``_CACHED_TEXT_MAX`` characters,
    memoised (the filter is a pure function of it)."""
    return _ledger_text_status(value, limit)


def _ledger_text_status(raw: str, limit: int) -> tuple[str | None, bool]:
    """Whitespace normalised, filtered, cut to L-3 characters plus ``...`` (§1, §7)."""
    return cut_text_status(raw, limit, "...", trim=False)


def ledger_short_text(value: str, limit: int) -> str | None:
    """``ledger_text`` of a plain ``str`` (the caller has checked its type), one call shorter:
    the row rules pass ~30 texts per row."""
    if len(value) <= _CACHED_TEXT_MAX:
        return _ledger_str_status(value, limit)[0]
    return _ledger_text_status(value, limit)[0]


def ledger_text(value: Any, limit: int) -> str | None:
    """Ledger-variant text compaction (docs/formats/ledger_v0.md intro): L−3 characters plus
    ``...``."""
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


def _parsed_number(value: Any) -> int | float | None:
    """``parse_number`` with its most common case, a float (every reward and score), first."""
    if type(value) is float:
        return value if math.isfinite(value) else None
    return parse_number(value)


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
            if raw is None:  # an absent key, most of a fixed key list: nothing to parse
                continue
            number = _parsed_number(raw)
            if number is not None:
                out[key] = number
        return out, 0
    dropped = 0
    for key, raw in value.items():
        number = _parsed_number(raw)
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
