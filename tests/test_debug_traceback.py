"""``--debug`` (or ``BENCHLEDGER_DEBUG=1``) shows an internal error's traceback; without it the
error is one line."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from benchledger.commands import schema_commands
from benchledger.commands.cli import cli


def _boom() -> list[str]:
    raise RuntimeError("boom inside the service")


@pytest.mark.parametrize("debug", [False, True])
def test_an_internal_error_shows_its_traceback_only_with_debug(monkeypatch, debug):
    monkeypatch.setattr(schema_commands, "schema_names", _boom)
    result = CliRunner().invoke(cli, ["--debug", "schema"] if debug else ["schema"])
    assert result.exit_code == 1
    assert "internal error (RuntimeError): boom inside the service" in result.stderr
    shown = "Traceback (most recent call last):" in result.stderr
    assert shown == debug
    if debug:  # the frame that raised, and the exception line, as Python prints them
        assert "in _boom" in result.stderr
        assert "RuntimeError: boom inside the service" in result.stderr
