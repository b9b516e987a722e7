"""Markdown cells and code spans a value cannot break (issue #13): ``ledger/core/markdown.py`` and
every table that uses it."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchledger.ledger.core.markdown import code_span, one_line, table_code, table_text
from benchledger.ledger.rules.operations.case_analysis import (
    render_analysis_markdown,
    render_candidates_markdown,
)
from benchledger.ledger.rules.row.build import build_row
from benchledger.projections.publishing.goal_runs import render_append_markdown
from benchledger.projections.publishing.ledger_v0 import build_document, render_markdown
from tests.conftest import FIXTURES_DIR
from tests.test_ledger_cli import compact_run

ORDINARY = ["fix-git", "terminal-bench@2.0", "codex__openai-gpt-5", "", "a b", "0.5", "x\\y"]
HOSTILE = ["a|b", "a`b", "`a", "b`", "a``b|c", "line\nbreak", "cr\r\nlf", "|", "`", "a\\|b"]


def _cells(line: str) -> list[str]:
    """GFM's cell split: on every ``|`` not escaped by a backslash, outer pipes dropped."""
    assert line.startswith("|") and line.endswith("|"), line
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line[1:-1])]


def _code_content(span: str) -> str:
    """The text a CommonMark code span shows (one leading/trailing space stripped when both)."""
    if span == "``":  # loopx's spelling of an empty value
        return ""
    fence = re.match(r"`+", span)
    assert fence is not None, span
    n = len(fence.group())
    assert span.endswith("`" * n) and len(span) >= 2 * n, span
    inner = span[n:-n]
    assert not re.search(rf"(?<!`)`{{{n}}}(?!`)", inner), span  # no run that would close it
    return _strip_one_space(inner)


def _strip_one_space(text: str) -> str:
    """CommonMark: a span's content that begins and ends with a space loses one of each."""
    if len(text) >= 2 and text.startswith(" ") and text.endswith(" ") and text.strip(" "):
        return text[1:-1]
    return text


def _shown(text: str) -> str:
    """What a reader sees of ``text`` in a code span: line breaks as spaces."""
    return _strip_one_space(re.sub(r"\r\n|[\r\n]", " ", text))


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_values_are_written_as_loopx_writes_them(text: str) -> None:
    assert code_span(text) == table_code(text) == f"`{text}`"
    assert table_text(text) == text
    assert one_line(text) == text


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_values_stay_in_one_cell_and_one_span(text: str) -> None:
    line = "| " + table_code(text) + " | " + table_text(text) + " |"
    assert "\n" not in line and "\r" not in line
    code_cell, text_cell = _cells(line)
    shown = _code_content(code_cell.replace("\\|", "|"))
    assert shown == re.sub(r"\r\n|[\r\n]", " ", text)
    assert text_cell.replace("\\|", "|").replace("\\`", "`") == shown
    assert _code_content(code_span(text)) == shown


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.text(alphabet=st.sampled_from("ab |`\\\n\r"), max_size=12))
def test_any_value_is_one_cell(text: str) -> None:
    row = "| " + table_code(text) + " | " + table_text(text) + " | `end` |"
    assert len(_cells(row)) == 3
    shown = _code_content(_cells(row)[0].replace("\\|", "|"))
    assert shown.strip() == _shown(text).strip()  # padding spaces are not the point here


def _ledger_markdown(case_id: str, arm: str) -> str:
    run = compact_run(case_id, score=None, job="tb_job")  # unscored: a P0 repair backlog row
    row, _ = build_row(run, arm_id=arm, now="2026-05-02T09:14:07Z")
    document = build_document([row], updated_at="2026-05-02T09:14:07Z", update_policy=None)
    return render_markdown(document)


def _table_rows(markdown: str, header_prefix: str) -> list[list[str]]:
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_prefix))
    width = len(_cells(lines[start]))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(_cells(line))
        assert len(rows[-1]) == width, line
    return rows


def test_ledger_tables_hold_a_hostile_task_name() -> None:
    markdown = _ledger_markdown("a|b`c", "arm|x")
    for header in ("| Benchmark | Case | Decision", "| Priority |", "| Benchmark | Case | Arm"):
        rows = _table_rows(markdown, header)
        assert rows, header
        cells = [cell for row in rows for cell in row if "a\\|b" in cell]
        assert cells and all(_code_content(c.replace("\\|", "|")) == "a|b`c" for c in cells)


def test_ledger_markdown_of_ordinary_values_matches_loopx_bytes() -> None:
    """The shipped loopx 0.4.8 ledger renders to loopx's own Markdown, byte for byte."""
    fixture = FIXTURES_DIR / "loopx-ledger"
    document = json.loads((fixture / "benchmark-run-ledger.loopx-normalized.json").read_text())
    assert render_markdown(document) == (fixture / "benchmark-run-ledger.md").read_text()


def test_goal_run_markdown_bullets_hold_backticks_and_newlines() -> None:
    text = render_append_markdown({"ok": True, "goal_id": "g`x", "classification": "a\nb"})
    assert "- goal_id: ``g`x``" in text
    assert "- classification: `a b`" in text


def test_case_analysis_tables_hold_hostile_values() -> None:
    candidates = render_candidates_markdown(
        {
            "report": {
                "candidates": [
                    {
                        "promotion_priority": "P0",
                        "candidate_class": "c",
                        "benchmark_id": "tb",
                        "case_id": "a|b`c",
                        "latest_decision": "d\ne",
                        "run_count": 1,
                        "recommended_handling": "h",
                    }
                ]
            }
        }
    )
    assert len(_table_rows(candidates, "| Priority |")[0]) == 7
    analysis = render_analysis_markdown(
        {"cases": [{"benchmark_id": "tb", "case_id": "a|b`c", "decision": "x", "scores": {}}]},
        None,
    )
    row = _table_rows(analysis, "| Benchmark |")[0]
    assert len(row) == 7 and _code_content(row[1].replace("\\|", "|")) == "a|b`c"
