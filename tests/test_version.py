"""The version is written once, in ``pyproject.toml``; everything that reports one reads it."""

from __future__ import annotations

import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

from click.testing import CliRunner

from commands.cli import cli
from commands.runtime import command_metadata
from ledger.version import UNKNOWN, _checkout_version, installed_version, tool_version

ROOT = Path(__file__).resolve().parents[1]
DECLARED = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
    "version"
]


def test_the_installed_version_is_the_declared_one():
    assert tool_version() == DECLARED


def test_it_is_what_importlib_metadata_reads():
    """The cheap directory lookup agrees with the standard library's."""
    assert installed_version(sys.path) == version("benchledger") == DECLARED


def test_the_first_distribution_on_the_path_wins_and_other_entries_are_skipped(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    (first / "benchledger_extra-9.0.dist-info").mkdir(parents=True)
    (first / "benchledger-2.0.0.dist-info").mkdir()
    (second / "benchledger-1.0.0.dist-info").mkdir(parents=True)
    (tmp_path / "file.zip").write_bytes(b"PK")
    path = [str(tmp_path / "missing"), str(tmp_path / "file.zip"), str(second), str(first)]
    assert installed_version(path) == "1.0.0"
    assert installed_version(path[:2]) is None


def test_version_option_and_event_metadata_report_it():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"benchledger, version {DECLARED}\n"
    assert command_metadata()["tool_version"] == DECLARED
    assert command_metadata("bench")["tool_version"] == "bench"


def test_a_checkout_that_is_not_installed_reads_its_pyproject(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "benchledger"\nversion = "9.8.7"\n', encoding="utf-8")
    assert _checkout_version(pyproject) == "9.8.7"


def test_without_a_readable_version_it_says_unknown(tmp_path):
    assert _checkout_version(tmp_path / "missing.toml") == UNKNOWN
    broken = tmp_path / "pyproject.toml"
    broken.write_text("[project\n", encoding="utf-8")
    assert _checkout_version(broken) == UNKNOWN
    broken.write_text("[project]\nversion = 3\n", encoding="utf-8")
    assert _checkout_version(broken) == UNKNOWN
