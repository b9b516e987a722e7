"""Terminal control characters in a value never reach stdout or a Markdown file raw
(issue 36, item 8): a task name holding ESC or BEL could otherwise recolour, move the cursor
of or ring the terminal of whoever reads the ledger, its run records or the command output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchledger.commands import output
from benchledger.ledger.core import markdown as md
from tests.support_bad_input import workspace
from tests.test_ledger_cli import compact_run

ESC_NAME = "fix-git\x1b[2J\x1b]0;pwned\x07\x9b31m\x7fend"
RAW_CONTROLS = ("\x1b", "\x07", "\x9b", "\x7f")


def _raw_controls(text: str) -> list[str]:
    return [c for c in RAW_CONTROLS if c in text]


RENDERERS = ["code_span", "table_code", "table_text", "one_line", "human_printable"]


def _renderer(name: str):  # noqa: ANN202
    return getattr(output if name == "human_printable" else md, name)


@pytest.mark.parametrize("render", RENDERERS)
def test_markdown_layer_and_human_printer_escape_controls(render: str) -> None:
    shown = _renderer(render)(ESC_NAME)
    assert _raw_controls(shown) == []
    assert "\\x1b[2J" in shown and "\\x07" in shown and "\\x9b" in shown


@pytest.mark.parametrize("render", RENDERERS)
def test_ordinary_values_are_unchanged(render: str) -> None:
    assert _renderer(render)("fix-git\ttab é") in ("fix-git\ttab é", "`fix-git\ttab é`")


def test_human_printer_keeps_lines() -> None:
    assert output.human_printable("# T\n\n- a: `x`") == "# T\n\n- a: `x`"


def test_json_printer_escapes_c1_and_keeps_the_value() -> None:
    text = json.dumps({"task": ESC_NAME}, ensure_ascii=False)
    shown = output.json_printable(text)
    assert _raw_controls(shown) == []
    assert json.loads(shown) == {"task": ESC_NAME}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("safety-controls")


@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_control_characters_in_a_task_name_never_reach_output_raw(base: Path, fmt: str) -> None:
    with workspace(base) as ws:
        run = compact_run(ESC_NAME, score=1, job="tb_fix_git_esc")
        run["notes"] = ESC_NAME
        (ws.project / "run.json").write_text(json.dumps(run), encoding="utf-8")
        upsert = ws.invoke(
            "benchmark", "run-ledger-upsert", "--benchmark-run-json", "run.json", "--execute",
            "--run-ledger-note", ESC_NAME, "--format", fmt,
        )  # fmt: skip
        assert upsert.exit_code == 0, upsert.output
        planned = ws.invoke(
            "benchmark", "run", "terminal-bench", "--goal-id", "g", "--execute",
            "--include-task-name", ESC_NAME, "--format", fmt,
        )  # fmt: skip
        assert planned.exit_code == 0, planned.output
        published = ws.published()
        markdown = {name: data for name, data in published.items() if name.endswith(".md")}
        assert "benchmark-run-ledger.md" in markdown
        assert any("/runs/" in name for name in markdown), sorted(published)
        leaks = {name: _raw_controls(data.decode("utf-8")) for name, data in markdown.items()}
        leaks.update(stdout_upsert=_raw_controls(upsert.stdout))
        leaks.update(stdout_planned=_raw_controls(planned.stdout))
        assert {name: found for name, found in leaks.items() if found} == {}
        # the name is still shown, escaped
        assert "\\x1b[2J" in markdown["benchmark-run-ledger.md"].decode("utf-8")
