"""Credential shapes never reach a public file or stdout (issue 36, item 4).

Each shape rides in a task name and in ``--run-ledger-note`` of a ``run-ledger-upsert``; its
secret part must not appear in ``benchmark-run-ledger.json``/``.md``, the run records or the
command's output, in Markdown or JSON. The shapes are the providers gitleaks knows, the generic
"value after a name that says key, token, secret or password" forms and URL credentials, in
the spellings that slipped through before: other separators, quotes, URL encoding.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchledger.ledger.core.safety import is_public_safe
from tests.support_bad_input import workspace
from tests.test_ledger_cli import compact_run

# (text carrying a secret, the secret part that must not leak)
SHAPES: list[tuple[str, str]] = [
    ("gsk_Qz7aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789abcdefghij", "Qz7aBcDeFgHiJk"),  # Groq
    ("xai-Qz7aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789abcdefghijklmnop", "Qz7aBcDeFgHiJk"),
    ("nvapi-Qz7aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "Qz7aBcDeFgHiJk"),  # NVIDIA
    ("pplx-Qz7aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "Qz7aBcDeFgHiJk"),  # Perplexity
    ("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", "0f1e2d3c4b5a6978"),  # LangSmith
    ("--api-key 0f1e2d3c4b5a69788796a5b4c3d2e1f0", "0f1e2d3c4b5a6978"),
    ("AZURE_OPENAI_KEY=0f1e2d3c4b5a69788796a5b4c3d2e1f0", "0f1e2d3c4b5a6978"),
    ("curl -u admin:Qz7hunter2pass https://api.example", "Qz7hunter2pass"),
    ("https://acct.blob.core.windows.net/c?sv=2022-11-02&sig=Qz7aBcDeFgHi%2BJk%3D", "Qz7aBcDeFgHi"),
    ("mysql -u root -pQz7hunter2 prod", "Qz7hunter2"),
    ("sk-proj-Qz7aBcDeFgHiJkLmNoPqRsTuVwXyZ01", "Qz7aBcDeFgHiJk"),  # OpenAI
    ("sk-Qz7aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789abcdef", "Qz7aBcDeFgHiJk"),
    ("sk-ant-api03-Qz7aBcDeFgHiJkLmNoPqRsTuVwXyZ", "Qz7aBcDeFgHiJk"),  # Anthropic
    ("AKIAQZ7ABCDEFGHIJKLM", "QZ7ABCDEFGHIJKLM"),  # AWS
    ("ghp_Qz7aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456", "Qz7aBcDeFgHiJk"),
    ("github_pat_11Qz7aBcDeFgHiJkLmNoPq_RsTuVwXyZ0123456789", "Qz7aBcDeFgHiJk"),
    ("xoxb-1234567890-Qz7aBcDeFgHiJk", "Qz7aBcDeFgHiJk"),  # Slack
    ("AIzaQz7aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567", "Qz7aBcDeFgHiJk"),  # Google
    ("hf_Qz7aBcDeFgHiJkLmNoPqRsTuVwXyZ0123", "Qz7aBcDeFgHiJk"),
    ("rk_live_Qz7aBcDeFgHiJkLmNoPq", "Qz7aBcDeFgHiJk"),  # Stripe
    ("eyJhbGciOiJIUzI1NiJ9.eyJRejdhQmNEZUZnSGlKayI6MX0.Qz7aBcDeFgHiJk", "Qz7aBcDeFgHiJk"),
    ("-----BEGIN OPENSSH PRIVATE KEY----- Qz7aBcDeFgHiJk", "Qz7aBcDeFgHiJk"),
    ("Authorization: Bearer Qz7aBcDeFgHiJkLmNoPq", "Qz7aBcDeFgHiJk"),
    ("amqp://guest:Qz7hunter2@mq.example:5672/vh", "Qz7hunter2"),
    ("https://x.example/cb?access_token=Qz7aBcDeFg", "Qz7aBcDeFg"),
    ("https://x.example/v1?key=Qz7aBc", "Qz7aBc"),
    ("api_key%3DQz7aBcDeFgHi", "Qz7aBcDeFgHi"),  # URL-encoded
    ("password%253DQz7hunter2", "Qz7hunter2"),  # encoded twice
    ("OPENAI_API_KEY = Qz7aBc1234", "Qz7aBc1234"),
    ("OPENAI_API_KEY Qz7aBcDeFgHi1234", "Qz7aBcDeFgHi1234"),  # split by a space
    ('export ANTHROPIC_API_KEY="Qz7aBc1234"', "Qz7aBc1234"),
    ("GH_TOKEN='Qz7aBc1234'", "Qz7aBc1234"),
    ('{"db_password": "Qz7hunter2"}', "Qz7hunter2"),
    ("--password Qz7hunter", "Qz7hunter"),
    ("Authorization: Basic UXo3YWRtaW46aHVudGVyMg==", "UXo3YWRtaW46aHVudGVy"),
    ("123456789:AAQz7aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456", "Qz7aBcDeFgHiJk"),  # Telegram bot
]

# Checked by the filter alone: the remaining shapes the README names.
FILTER_SHAPES = [
    "r8_Qz7aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456",  # Replicate
    "fw_Qz7aBcDeFgHiJkLmNoPqRsTu",  # Fireworks
    "csk-qz7abcdefghijklmnopqrstuvwxyz0123",  # Cerebras
    "tvly-Qz7aBcDeFgHiJkLmNoPqRsTu",  # Tavily
    "SG.Qz7aBcDeFgHiJkLmNoPqRs.Qz7aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789ab",  # SendGrid
    "SK0123456789abcdef0123456789abcdef",  # Twilio
    "https://hooks.slack.com/services/T0000/B0000/Qz7aBcDeFgHiJkLmNoPqRsTu",
    "https://discord.com/api/webhooks/123456/Qz7aBcDeFgHiJkLmNoPqRsTu",
    "hvs.Qz7aBcDeFgHiJkLmNoPqRsTuVwXyZ",  # Vault
    "ATATT3xFfGF0Qz7aBcDeFgHiJkLmNoPqRsTuVwXyZ0123",  # Atlassian
    "abc8Q~Qz7aBcDeFgHiJkLmNoPqRsTuVwXyZ0123",  # Azure AD client secret
    "X-Amz-Signature=0123456789abcdef0123456789abcdef",
    "sig=Qz7aBcDeFgHi%2BJk%3D",
    "basic UXo3YWRtaW46aHVudGVyMg==",
    "api_key\\u003dQz7aBc",  # \uXXXX escape
    "token\\x3dQz7aBcDeFgHi1234",
    "--auth Qz7aBcDeFg12",
    "DB_PASSWORD hunter2x1",
    "MYSQL_PWD=hunter2",
    "sshpass -p hunter2 ssh host",
]


@pytest.mark.parametrize("text", FILTER_SHAPES)
def test_more_shapes_fail_the_filter(text: str) -> None:
    assert not is_public_safe(text)


# Near misses that must stay public (the filter drops a value, so a false alarm costs data).
LOOKALIKES = [
    "max_tokens=409600000000",
    "monkey=banana12345",
    "--token flag",
    "harbor:job:tb@2.0:sig:codex:openai-gpt-5-codex",
    "git push -u origin main",
    "pip install -p somewhere",  # ``-p`` is a password only to mysql
    "xai-grok-4-fast-reasoning",
    "--api-key ${OPENAI_API_KEY}",
    "OPENAI_API_KEY=$OPENAI_API_KEY",
    "task-cfec10fbd9f614fd134b4ecd7077994e",
    "100%25 done",
    "https://example.org/page?sort=name",
]


@pytest.mark.parametrize(("text", "secret"), SHAPES, ids=[s[:14] for s, _ in SHAPES])
def test_secret_shapes_fail_the_filter(text: str, secret: str) -> None:
    assert secret in text
    assert not is_public_safe(text)


@pytest.mark.parametrize("text", LOOKALIKES)
def test_lookalikes_pass_the_filter(text: str) -> None:
    assert is_public_safe(text)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("safety-secrets")


@pytest.mark.parametrize(("text", "secret"), SHAPES, ids=[s[:14] for s, _ in SHAPES])
def test_secret_in_task_name_and_note_never_reaches_public_output(
    base: Path, text: str, secret: str
) -> None:
    with workspace(base) as ws:
        run = compact_run(f"fix-git {text}", score=1, job="tb_fix_git_secret")
        run["notes"] = text
        (ws.project / "run.json").write_text(json.dumps(run), encoding="utf-8")
        outputs = []
        for fmt in ("markdown", "json"):
            result = ws.invoke(
                "benchmark", "run-ledger-upsert", "--benchmark-run-json", "run.json",
                "--execute", "--run-ledger-note", text, "--format", fmt,
            )  # fmt: skip
            assert result.exit_code == 0, result.output
            outputs.append(result.output)
        published = ws.published()
        assert {"benchmark-run-ledger.json", "benchmark-run-ledger.md"} <= set(published)
        leaks = [name for name, data in published.items() if secret.encode() in data]
        leaks += [f"stdout {n}" for n, out in enumerate(outputs) if secret in out]
        assert leaks == []
