"""The public-safety filter takes time linear in its text (issue 36, item 3).

A 700 KB task name made of a URL and many path-like segments used to take hours: every home
root inside a URL searched the whole text before it for the URL's prefix. Each adversarial
text below is built to make a backtracking rule rescan what it already scanned; the filter must
take about as long as one plain regular-expression scan of the same text, at 1 MB and at 10 MB.
The bound is generous (a loaded 2-core machine), a quadratic filter misses it by orders of
magnitude.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest

from benchledger.ledger.core.safety import ctext, is_public_safe

MB = 1 << 20
# A plain scan: one character-class test at every position of the text.
_PLAIN_SCAN = re.compile(r"[\x00-\x08]")
# The filter may be this many times slower than the plain scan of the same text (it runs
# several passes and a large alternation); a quadratic filter is 10,000+ times slower at 1 MB.
RATIO_BOUND = 400


def _repeat_to(unit: str, size: int, head: str = "", tail: str = "") -> str:
    return head + unit * ((size - len(head) - len(tail)) // len(unit)) + tail


ADVERSARIAL: dict[str, Callable[[int], str]] = {
    # the text: a URL, then home roots as path segments (a remote URL's path is public)
    "url-then-home-roots": lambda n: _repeat_to("/home/x", n, head="https://h.example"),
    "url-then-segments": lambda n: _repeat_to("/a-b.c", n, head="https://h.example"),
    "many-urls": lambda n: _repeat_to("https://h/home/x ", n),
    "scheme-run": lambda n: _repeat_to("a+b.", n, tail=":/"),
    "userinfo-without-at": lambda n: _repeat_to("a:b", n, head="x://"),
    "env-reference-name": lambda n: _repeat_to("A", n, head="api_key=$", tail="!"),
    "keyword-spaces": lambda n: _repeat_to(" ", n, head="token", tail="x"),
    "home-tilde-run": lambda n: _repeat_to("a", n, head="~"),
    "pem-header-run": lambda n: _repeat_to("A ", n, head="-----BEGIN "),
    "sk-run": lambda n: _repeat_to("a", n, head="sk-"),
    "base64-run": lambda n: _repeat_to("Ab0", n),
    "flag-name-segments": lambda n: _repeat_to("a-", n, head="--"),
    "name-segments": lambda n: _repeat_to("a_", n),
    "query-segments": lambda n: _repeat_to("a.", n, head="?"),
    "percent-escapes": lambda n: _repeat_to("%41", n),
    "non-ascii-keywords": lambda n: _repeat_to("é token ", n),
    "curl-user": lambda n: _repeat_to("a", n, head="-u "),
}


def _best_of(runs: int, func: Callable[[str], object], text: str) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        func(text)
        best = min(best, time.perf_counter() - start)
    return best


# 10 MB for the shape and a few others: every shape at 10 MB would take minutes of a
# shared CI machine, and a quadratic rule already misses the bound by far at 1 MB.
SHAPES_AT_10MB = ("url-then-home-roots", "many-urls", "flag-name-segments", "percent-escapes")
CASES = [(shape, MB) for shape in sorted(ADVERSARIAL)]
CASES += [(shape, 10 * MB) for shape in SHAPES_AT_10MB]


@pytest.mark.parametrize(
    ("shape", "size"), CASES, ids=[f"{shape}-{size // MB}MB" for shape, size in CASES]
)
def test_filter_is_linear_on_adversarial_text(shape: str, size: int) -> None:
    text = ADVERSARIAL[shape](size)
    assert len(text) > size * 0.9
    plain = _best_of(3, _PLAIN_SCAN.search, text)
    filtered = _best_of(2 if size == MB else 1, is_public_safe, text)
    assert filtered < RATIO_BOUND * plain + 0.05, (
        f"{shape}: the filter took {filtered:.3f}s, a plain scan {plain:.4f}s"
    )


def test_ctext_of_a_huge_task_name_finishes() -> None:
    # the case end to end: the compaction of a 10 MB URL-and-segments task name
    text = ADVERSARIAL["url-then-home-roots"](10 * MB)
    start = time.perf_counter()
    assert ctext(text, 160) is not None
    assert time.perf_counter() - start < 10
