"""``benchmark run --help`` groups its sixty options by what a user is doing, and keeps loopx's
fixture switches out of it while still accepting them (docs/cli.md lists them)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from benchledger.commands.cli import cli

LOOPX_SWITCHES = (
    "--worker-materialization-probe-only",
    "--setup-timeout-repair-profile",
    "--fake-worker",
    "--cli-bridge-contract",
    "--worker-cli-bridge-fixture",
    "--active-cli-bridge",
    "--active-user-assisted-treatment",
    "--active-user-observation-fixture",
)


def _help() -> str:
    result = CliRunner().invoke(cli, ["benchmark", "run", "--help"])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_options_come_in_sections_in_a_user_s_order() -> None:
    text = _help()
    titles = [
        "Source (what to read):",
        "Selection:",
        "Recording:",
        "Planning a run (no runner output yet):",
        "loopx compatibility:",
    ]
    places = [text.index(title) for title in titles]
    assert places == sorted(places)
    assert text.index("--harbor-job-dir") < places[1] < text.index("--include-task-name")
    assert places[2] < text.index("--update-run-ledger") < places[3]
    # every option is placed in a section; only --help is left for the last one
    assert text[text.index("Other options:") :].count("--") == 1


def test_loopx_fixture_switches_are_hidden_but_accepted_and_documented() -> None:
    text = _help()
    docs = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text("utf-8")
    for switch in LOOPX_SWITCHES:
        assert switch not in text
        assert f"`{switch}`" in docs
    result = CliRunner().invoke(cli, ["benchmark", "run", "--fake-worker", "--help"])
    assert result.exit_code == 0, result.output
