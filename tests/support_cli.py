"""One command run in-process through click's runner, its JSON output parsed.

Shared by the CLI tests that read a command's ``--format json`` payload, exit code and stderr
together (a wrong exit with a right payload is a bug too).
"""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner


def invoke_json(*args: str, db_url: str | None = None) -> tuple[int, Any, str]:
    """(exit code, parsed stdout or None when it is not JSON, stderr) of ``benchledger
    [--db URL] --format json ARGS``; an exception other than click's exit is raised."""
    from benchledger.commands.cli import cli

    argv = (["--db", db_url] if db_url else []) + ["--format", "json", *args]
    result = CliRunner().invoke(cli, argv)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    try:
        payload = json.loads(result.stdout)
    except ValueError:
        payload = None
    return result.exit_code, payload, result.stderr
