"""The rules the source adapters share (``ledger/sources/common.py``): pass@k and the three slug
rules, which differ on purpose and are pinned here so none drifts into another."""

from __future__ import annotations

from math import comb

from benchledger.ledger.sources.common import analysis_slug, pass_at_k, slug, slug_uncut_trim

CUT_ON_DASH = "a" * 59 + "/b"  # the 60-character cut ends on the '-' that replaced '/'


def test_harbor_slug_trims_again_after_the_cut() -> None:
    assert slug(CUT_ON_DASH) == "a" * 59
    assert slug("  Claude Code/Opus_4.5 ") == "claude-code-opus_4.5"


def test_benchflow_slug_keeps_the_cut_as_it_falls() -> None:
    assert slug_uncut_trim(CUT_ON_DASH) == "a" * 59 + "-"
    assert slug_uncut_trim("  Claude Code/Opus_4.5 ") == "claude-code-opus_4.5"


def test_analysis_slug_keeps_only_letters_and_digits_and_never_is_empty() -> None:
    assert analysis_slug("Claude Code/Opus_4.5") == "claude-code-opus-4-5"
    assert analysis_slug("___") == "unknown"
    assert analysis_slug("x" * 100) == "x" * 100  # no cut


def test_every_slug_turns_unsafe_text_into_unsafe() -> None:
    secret = "token=ghp_" + "A1b2C3d4E5" * 4
    assert {slug(secret), slug_uncut_trim(secret), analysis_slug(secret)} == {"unsafe"}


def test_pass_at_k_over_powers_of_two_and_multiples_of_five() -> None:
    result = pass_at_k(10, 3)
    assert list(result) == ["2", "4", "5", "8", "10"]
    assert result["2"] == 1 - comb(7, 2) / comb(10, 2)
    assert result["8"] == 1.0  # 7 failures cannot fill 8 draws
    assert pass_at_k(1, 1) == {}
