"""Store URLs are shown without any credential (issue 36, item 4): the userinfo password and
query parameters named like a password, token, key, secret or signature, in ``db current`` and
in connection errors, whether the URL comes from ``--db`` or ``BENCHLEDGER_DATABASE_URL``."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from benchledger.commands.cli import cli
from benchledger.ledger.store import url_display
from benchledger.ledger.store.url_display import display_url

SECRET = "Qz7hunter2"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"postgresql://db/x?password={SECRET}", "postgresql://db/x?password=***"),
        (
            f"postgresql+psycopg://bob:{SECRET}@db:5432/x?sslmode=disable&password={SECRET}",
            "postgresql+psycopg://bob:***@db:5432/x?sslmode=disable&password=***",
        ),
        (f"postgresql://db/x?sslpassword={SECRET}&application_name=a",
         "postgresql://db/x?sslpassword=***&application_name=a"),
        (f"mysql://db/x?api_key={SECRET}&Token={SECRET}", "mysql://db/x?api_key=***&Token=***"),
        (f"https://acct.blob/x?sv=2022&sig={SECRET}%3D", "https://acct.blob/x?sv=2022&sig=***"),
        (f"postgresql://db/x?pass%77ord={SECRET}", "postgresql://db/x?pass%77ord=***"),
        ("postgresql://db/x?options=-c&sslmode=require", "postgresql://db/x?options=-c&sslmode=require"),
    ],
)  # fmt: skip
def test_display_masks_every_credential(url: str, shown: str) -> None:
    assert display_url(url) == shown


def test_scrub_removes_credentials_quoted_by_a_driver() -> None:
    url = f"postgresql://u:{SECRET}@db/x?password=p%40{SECRET}"
    message = f'bad password "{SECRET}" or "p@{SECRET}"'
    assert SECRET not in url_display.scrub_url_secrets(message, url)


def _run(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, args, env=env or {})
    return result.exit_code, result.stdout + result.stderr


PG_TRUST = "postgresql://127.0.0.1:5432/test"
REFUSED = "postgresql://u@127.0.0.1:1/x"


@pytest.mark.parametrize("via", ["--db", "env"])
@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_db_current_never_shows_a_query_password(via: str, fmt: str) -> None:
    url = f"{PG_TRUST}?password={SECRET}&sslmode=disable"
    if via == "--db":
        code, out = _run(["--db", url, "db", "current", "--format", fmt])
    else:
        code, out = _run(["db", "current", "--format", fmt], {"BENCHLEDGER_DATABASE_URL": url})
    assert code == 0, out
    assert "password=***" in out
    assert SECRET not in out


@pytest.mark.parametrize("via", ["--db", "env"])
def test_connection_error_never_shows_a_query_password(via: str) -> None:
    url = f"{REFUSED}?password={SECRET}&sslpassword={SECRET}x"
    if via == "--db":
        code, out = _run(["--db", url, "db", "current"])
    else:
        code, out = _run(["db", "current"], {"BENCHLEDGER_DATABASE_URL": url})
    assert code != 0
    assert "cannot connect to the store" in out and "password=***" in out
    assert SECRET not in out
