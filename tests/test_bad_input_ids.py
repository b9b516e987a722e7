"""Goal ids and ledger ids that try to leave their directory or stream are refused up front.

A goal id becomes a directory under the runtime root and a ledger id names a stream, so a
refusal must come before anything is written: exit 1 (or 2 for a usage error), one line, no
event, no file anywhere. Ledger ids may have several segments (a path-derived id is
``sub/benchmark-run-ledger.json``), so ``a/b`` is a valid ledger id but not a valid goal id.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support_bad_input import BOUNDED, Workspace, assert_honest, workspace
from tests.test_bad_input_ledger import INPUTS

HOSTILE = [
    "../x",
    "..",
    ".",
    "a/b",
    "a\\b",
    "/etc",
    "/Users/alice/goal",
    "C:\\Users\\bob",
    "~/x",
    "x\x00y",
    "x\ny",
    "",
    "   ",
    "x" * 256,
    "é" * 150,  # 300 bytes
    "x" * 5000,
    "token=abcdef1234567890",
    "sk-proj-abcdefghijklmnop",
]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bad-ids")


def _all_files(root: Path) -> set[str]:
    return {
        os.path.relpath(os.path.join(d, f), root)
        for d, _dirs, files in os.walk(root)
        for f in files
        if ".store" not in d
    }


def _refused(ws: Workspace, *args: str) -> None:
    before = ws.snapshot()
    files = _all_files(ws.project.parent)
    result = ws.invoke(*args)
    assert_honest(ws, result, before, exit_codes=(1, 2))
    assert _all_files(ws.project.parent) == files


GOAL_COMMANDS = {
    "planned": ["benchmark", "run", "terminal-bench", "--execute"],
    "skillsbench": ["benchmark", "run", "skillsbench", "--execute"],
    "check": ["benchmark", "run-ledger-check"],
}


@pytest.mark.parametrize("goal_id", HOSTILE, ids=lambda g: repr(g)[:20])
@pytest.mark.parametrize("command", sorted(GOAL_COMMANDS))
def test_hostile_goal_id_is_refused(base: Path, command: str, goal_id: str) -> None:
    with workspace(base) as ws:
        _refused(ws, *GOAL_COMMANDS[command], "--goal-id", goal_id)


# Valid ledger ids among HOSTILE: "" (means "not given"), several segments, 150 characters,
# and separator-free names (their safety is the public-safety suite's business).
LEDGER_VALID = {"", "a/b", "é" * 150, "token=abcdef1234567890", "sk-proj-abcdefghijklmnop"}


@pytest.mark.parametrize(
    "ledger_id", [g for g in HOSTILE if g not in LEDGER_VALID], ids=lambda g: repr(g)[:20]
)
def test_hostile_ledger_id_is_refused(base: Path, ledger_id: str) -> None:
    with workspace(base) as ws:
        (ws.project / "run.json").write_bytes(INPUTS["record"])
        (ws.project / "L.json").write_bytes(b"{}")
        _refused(
            ws, "benchmark", "run-ledger-upsert", "--benchmark-run-json", "run.json",
            "--ledger-id", ledger_id, "--execute",
        )  # fmt: skip
        _refused(ws, "import", "loopx-ledger", "L.json", "--ledger-id", ledger_id, "--execute")


def test_multi_segment_ledger_id_stays_a_stream_name(base: Path) -> None:
    with workspace(base) as ws:
        (ws.project / "run.json").write_bytes(INPUTS["record"])
        out = ws.ok(
            "benchmark", "run-ledger-upsert", "--benchmark-run-json", "run.json",
            "--ledger-id", "team/a", "--execute",
        )  # fmt: skip
        assert out["ok"] is True
        assert not (ws.project / "team").exists()
        ws.assert_store_clean()


@BOUNDED
@given(goal_id=st.text(alphabet=st.sampled_from("./\\~:x\x00é \n"), min_size=0, max_size=8))
def test_generated_goal_ids_stay_inside_the_runtime_root(base: Path, goal_id: str) -> None:
    """Accepted ids live directly under ``rt/goals``; refused ones leave no trace."""
    with workspace(base) as ws:
        before = ws.snapshot()
        outside = _all_files(ws.project.parent)
        result = ws.invoke(*GOAL_COMMANDS["planned"], "--goal-id", goal_id, "--format", "json")
        assert_honest(ws, result, before, exit_codes=(0, 1, 2))
        if result.exit_code == 0:
            goals = ws.rt / "goals"
            assert [p.name for p in goals.iterdir()] == [goal_id.strip()]
        else:
            assert _all_files(ws.project.parent) == outside


@pytest.mark.parametrize("flag", ["--goal-id", "--ledger-id"])
def test_over_long_ids_are_refused_on_both_backends(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: str
) -> None:
    """PostgreSQL enforces the 300-character stream column; the refusal must come first."""
    from click.testing import CliRunner

    from benchledger.commands.cli import cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.json").write_bytes(INPUTS["record"])
    args = {
        "--goal-id": ["benchmark", "run", "terminal-bench", "--goal-id", "g" * 290, "--execute"],
        "--ledger-id": ["benchmark", "run-ledger-upsert", "--benchmark-run-json", "run.json",
                        "--ledger-id", "l" * 290, "--execute"],
    }[flag]  # fmt: skip
    result = CliRunner().invoke(
        cli, ["--db", db_url, "--runtime-root", str(tmp_path / "rt"), *args]
    )
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines() == [result.stderr.strip()]
    assert "too long" in result.stderr and "internal error" not in result.stderr
    assert not (tmp_path / "rt").exists()
    assert not (tmp_path / "benchmark-run-ledger.json").exists()
    events = CliRunner().invoke(cli, ["--db", db_url, "events", "list", "--format", "json"])
    assert events.exit_code != 0 or '"count": 0' in events.stdout
