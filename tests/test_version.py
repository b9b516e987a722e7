"""The version is written once, as ``benchledger.__version__``; everything that reports one
reads it, and the packaging metadata is built from it (``pyproject.toml``'s dynamic version)."""

from __future__ import annotations

from importlib.metadata import version

from click.testing import CliRunner

import benchledger
from benchledger.commands.cli import cli
from benchledger.commands.runtime import command_metadata


def test_the_installed_distribution_reports_the_package_version():
    assert version("benchledger") == benchledger.__version__


def test_version_option_and_event_metadata_report_it():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"benchledger, version {benchledger.__version__}\n"
    assert command_metadata()["tool_version"] == benchledger.__version__
    assert command_metadata("bench")["tool_version"] == "bench"
