"""The public-safety filter and the compaction helpers (docs/formats/benchmark_run_v0.md §1, §3)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchledger.ledger.core.safety import (
    _ctext_text_status,
    clist,
    ctext,
    ctext_status,
    is_public_safe,
    ledger_text,
    nummap,
    parse_number,
)

LOCAL_PATHS = [
    "/srv/bench/jobs",  # (new) host mount points fail too
    "/mnt/data/run",
    "/Users/x",
    "/Users/alice/proj/run.json",
    "/Volumes/data/jobs",
    "/var/folders/ab/T/tmp1",
    "/tmp/x",
    "/tmp",
    "/private/tmp/x",
    "/private/var/x",
    "/home/x",
    "/home/runner/.codex/auth.json",
    "/root/x",
    "C:\\x",
    "c:\\Users\\bob",
    "C:/x",
    "D:/jobs/run",
    "~/x",
    "~/.codex/config.toml",
    "file:///tmp/x",
    "file:///Users/x/run",
    '"/Users/x"',
    "'/home/x'",
    "see `/tmp/x` for details",
    "written to /tmp/x.",
    "log at (/home/x)",
    "path=/Users/x",
    "a:/Users/x",
    "x /tmp",
    "x /tmp y",
    "/tmp<br>",
    "jobs dir\t/root",
    # (new, issue #13) glued to a preceding ``_``, ``-``, ``.`` or letter: still a local path
    "a-/tmp/x",
    "a_/tmp/x",
    "a./tmp/x",
    "a~/x",
    "run__/home/alice/jobs",
    "jobs-/home/alice/tasks",
    "codex__gpt-5__/Users/bob/tasks",
    "x/Users/bob",
    "runs/Volumes/x",
    "pre/var/folders/ab/T",
    "tb_/private/tmp/x",
    "fooC:\\Users\\bob",
    "x_D:/jobs",
    "~alice/x",
    "job-/srv/bench/jobs",
    "a-/var/tmp/x",
    "file://localhost/home/alice",
]

PUBLIC_PATHS = [
    "jobs/tmp/run",
    "runs/tmp/x/result.json",
    "<tmp>/x",
    "<tmp>/jobs/run",
    "<jobs-dir>",
    "/tmpfoo/x",
    "/rootfs/x",
    "/homes/x",
    "/users/x",  # the rule is case-sensitive, like the loopx prefixes it extends
    "/var/log/x",
    "/var",
    "/logs/verifier/reward.txt",
    "/app",
    "/skills",
    "../tmp/x",
    "./tmp/x",
    "https://example.org/tmp/x",
    "http://host/Users/x",
    "s3://bucket/home/x",
    "openai/gpt-5",
    "terminal-bench/terminal-bench-2-1",
    "~user",
    "ratio 3/4",
    "C:",
    "12:30",
    "jobs/root/x",
    "assets/media/x",
    "https://host.example/tmp/x",
    "git+ssh://git@github.com/org/home/repo",
    "http://example.org:8080/Users/x",
    "/app/tmp/x",
    "/logs/agent/home",
]

SECRETS = [
    "Bearer abcdefghijklmnop",
    "authorization header: bearer abcdefghijklmnopqrstuvwxyz012345",
    "BEARER abc.def~ghi+jkl/mn=",
    "secret_key: x",
    "secret-key=x",
    "secretkey = abc",
    "ACCESS_KEY: AKIAIOSFODNN7EXAMPLE",
    "access-key:abc",
    "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI",
    '"secret_key": "abc"',
    "sk=abc",
    "ak: 123",
    "SK = value",
    "sk-proj1234567890",
    "key is sk-proj-abcdefghijklmnop",
    "AK_1234567890abcd",
    "sk_live_1234567890",
    "token=abcdef123456",
    "token: abcdef123456",
    "TOKEN=ABCDEF123456XYZ",
    "GITHUB_TOKEN=ghp_abcdefghijklmnop",
    "access_token=abcdefghijkl",
    "Authorization: Basic xyz",
    "authorization:",
    "api_key=abc",
    "apikey=abc",
    "API-KEY=abc",
    "OPENAI_API_KEY=sk1",
    "password=hunter2",
    "PASSWORD = hunter2",
    "secret=s3cr3t",
    "client_secret=abc",
    "api_key=<redacted>",  # only ${NAME}/$NAME references are exempt
    # (new) well-known credential shapes that need no keyword
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "clone with gho_ABCDEFGHIJKLMNOPQRSTUV1234",
    "github_pat_11ABCDEFG0123456789_abcdefghij",
    "AKIAIOSFODNN7EXAMPLE",
    "key id ASIAABCDEFGHIJKLMNOP.",
    "xoxb-1234567890-abcdefghij",
    "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----",
    # (new, issue #13) anywhere inside a value, and the formats that were not recognised
    "foo_sk-proj-AAAABBBBCCCCDDDD",
    "xsk-proj-AAAABBBBCCCCDDDD",
    "sk-ant-api03-AbCdEfGh1234567890",
    "run-sk-ant-api03-AbCdEfGh1234567890",
    "keysk-AbCdEfGhIjKlMnOpQrStUvWx0123456789",
    "sk_live_51HabcdefGHIJ",
    "jobxghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "run_github_pat_11ABCDEFG0123456789_abcdefghij",
    "glpat-abcdefghij0123456789",
    "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
    "model-hf_abcdefghijklmnopqrstuvwxyz",
    "npm_abcdefghijklmnopqrstuvwxyz0123456789",
    "runAKIAIOSFODNN7EXAMPLE",
    "x_ASIAABCDEFGHIJKLMNOPq",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "arm_wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY-x",
    "abcdefghijklmnopqrstuvwxyzABCDEFGH012345",
    "xoxp-1234567890-abcdefghij",
    "botxoxb-1234567890-abcdefghij",
    "keyAIzaSyA1234567890abcdefghijklmnopqrstuv",
    "ya29.a0AfH6SMBabcdefghijklmnop",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig",
    "tok_eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
    "-----BEGIN OPENSSH PRIVATE KEY-----",
    "x-----BEGIN EC PRIVATE KEY-----",
    "https://alice:hunter2pass@example.com/x",
    "db postgresql://admin:S3cretPass@db/prod",
    "redis://:pw123@cache:6379",
    "mysql+pymysql://u:p@h/d",
    "dbpassword=hunter2",
    "DB_PASSWORD: hunter2",
    '"password": "hunter2"',
    "passwd=x",
    "MYTOKEN=abcdef1234567890",
    "x-api-key: abc123",
    "client_secret: abc",
    "\u017fK=abc",  # the long s folds to s
    "token\u00a0=\u00a0abcdef1234567890",  # non-ASCII whitespace
    "file:%2F%2F%2Fhome%2Falice%2Fx",
    "run..%2fUsers%2fbob%2f",
    '{"path": "\\/home\\/alice\\/x"}',
    "AccountKey=abc123==",
    "private_key: abc",
    "sk-None-abcdefghijklmnop",
]

NOT_SECRETS = [
    "bearer token missing",
    "Bearer abc",  # fewer than 16 characters
    "bearerabcdefghijklmnopq",
    "secret_key",
    "secret_key:",
    "task=abc",
    "ask: why",
    "risk: high",
    "desk-123456789012345",
    "task-1234567890abcdef",
    "sk-short",
    "token=abc",
    "token=abcdefghijk",  # 11 characters
    "tokens=abcdefghijklmnop",
    "n_input_tokens: 905793",
    "max_tokens=409600000000",
    "token_count: 1234567890123",
    "authorization missing",
    "password reset",
    "password=",
    "secret recipe",
    "--agent-env CODEX_FORCE_AUTH_JSON=${CODEX_FORCE_AUTH_JSON}",
    "--agent-env OPENAI_API_KEY=${OPENAI_API_KEY}",
    "'OPENAI_API_KEY=${OPENAI_API_KEY}'",
    "GITHUB_TOKEN=$GITHUB_TOKEN",
    "official_verifier_solution_failure",
    "codex__openai-gpt-5",
    "harbor:2026-05-03__08-00-41:terminal-bench@2.0:fix-git:codex:openai-gpt-5",
    "skillsbench@1.1",
    "",
    "ghp_short",
    "high_throughput_mode",
    "AKIA-profile",
    "AKIAIOSFODNN7EXAMPLEX",  # 17 characters after the prefix: not an access key id
    "xox-game",
    "BEGIN PRIVATE KEY section of the docs",
    "fix-git",
    "openai/gpt-5",
    "anthropic/claude-sonnet-4",
    "terminal-bench@2.0",
    "cfec10fbd9f614fd134b4ecd7077994e98c3a598",  # a git sha: no upper case
    "cf1d4133e0e0a5f58075d41e2cdd7ba09d40559e75e1876b382853bb0a18ec58",
    "89f1c69f-74d7-4ee6-9fdd-baa1e65a7bf6",
    "ssh://git@github.com/org/repo",
    "https://github.com/laude-institute/terminal-bench-2.git",
    "mask-ABCDEFGHIJKLMNOPQRSTUV",  # no digit, no lower case: not an sk- key
    "desk-proj",
    "hf_short",
    "eyJ",
    "password: ",
    "secret_key:",
    "model_api_key_name",
    "pass=3 fail=2",
    "codex__openai-gpt-5-codex",
    "single_arm_recorded",
    # task names ending in a keyword, joined into our ids with ``:``
    "harbor:2026-05-03__08-00-41:terminal-bench@2.0:vulnerable-secret:codex:openai-gpt-5",
    "harbor:job:tb@2.0:refresh-token:codex:openai-gpt-5-codex",
    "benchflow:job:sb@1.1:reset-password:codex:-",
]


@pytest.mark.parametrize("text", LOCAL_PATHS)
def test_local_paths_fail(text: str) -> None:
    assert not is_public_safe(text)


@pytest.mark.parametrize("text", PUBLIC_PATHS)
def test_relative_and_container_paths_pass(text: str) -> None:
    assert is_public_safe(text)


@pytest.mark.parametrize("text", SECRETS)
def test_secrets_fail(text: str) -> None:
    assert not is_public_safe(text)


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_lookalikes_pass(text: str) -> None:
    assert is_public_safe(text)


def test_case_folding_outside_ascii_is_still_caught() -> None:
    # U+212A KELVIN SIGN folds to "k" under case-insensitive matching; the fast ASCII screen
    # must not hide it from the regex.
    assert not is_public_safe("s\u212a=abc")
    assert is_public_safe("données-météo-分析")


def test_ctext_normalises_whitespace_and_trims() -> None:
    assert ctext("  a \n\t b  ", 10) == "a b"
    assert ctext("   ", 10) is None
    assert ctext("", 10) is None
    assert ctext(None, 10) is None


def test_ctext_converts_numbers_but_not_bools_or_containers() -> None:
    assert ctext(42, 10) == "42"
    assert ctext(0.5, 10) == "0.5"
    assert ctext(True, 10) is None
    assert ctext({"a": 1}, 10) is None
    assert ctext(["a"], 10) is None
    assert ctext(math.nan, 10) is None
    assert ctext(math.inf, 10) is None


def test_ctext_truncates_with_ellipsis_and_strips_trailing_spaces() -> None:
    assert ctext("abcdefghij", 5) == "abcd\u2026"
    assert ctext("abc defghij", 5) == "abc\u2026"  # "abc " -> trailing space stripped
    assert ctext("abcde", 5) == "abcde"
    assert len(ctext("x" * 500, 140)) == 140


def test_ctext_filters_before_truncation() -> None:
    # loopx 0.4.8 only filtered the cut text: the token below is cut to 7 characters and
    # would have passed. The full text is checked first now.
    text = "see token=abcdef123456789"
    assert ctext(text, 18) is None
    assert ctext_status(text, 18) == (None, True)
    assert ctext_status("/Users/x/" + "a" * 300, 20) == (None, True)


def test_ctext_status_flags_only_filter_failures() -> None:
    assert ctext_status("", 10) == (None, False)
    assert ctext_status(None, 10) == (None, False)
    assert ctext_status("ok", 10) == ("ok", False)


def test_ledger_text_variant() -> None:
    assert ledger_text("  a   b ", 10) == "a b"
    assert ledger_text("abcdefghijkl", 10) == "abcdefg..."
    assert len(ledger_text("y" * 400, 220)) == 220
    assert ledger_text("notes under /Users/alice/x", 220) is None
    assert ledger_text("token=abcdef123456789 " + "z" * 300, 20) is None
    assert ledger_text("relative jobs/tmp/run", 220) == "relative jobs/tmp/run"


def test_clist() -> None:
    assert clist("one", 5) == ["one"]
    assert clist(None, 5) == []
    assert clist(["a", "", "/tmp/x", "b", None, "c"], 2) == ["a", "b"]
    assert clist(["x" * 200], 5, 10) == ["x" * 9 + "\u2026"]
    assert clist([" a  b "], 5) == ["a b"]


def test_nummap() -> None:
    raw = {"a": 1, "b": "2", "c": "2.5", "d": True, "e": None, "f": "x", "g": math.nan}
    assert nummap(raw) == {"a": 1, "b": 2, "c": 2.5}
    assert nummap(raw, ["c", "a", "zz"]) == {"c": 2.5, "a": 1}
    assert list(nummap(raw, ["c", "a"])) == ["c", "a"]
    assert nummap({"x": "nan", "y": "inf", "z": "1e5", "w": "1.5e3"}) == {"w": 1500.0}
    assert nummap(["a"]) == {}
    assert nummap({"/Users/x": 1, "ok": 2}) == {"ok": 2}


def test_parse_number_types() -> None:
    assert parse_number("3") == 3 and isinstance(parse_number("3"), int)
    assert isinstance(parse_number("3.0"), float)
    assert parse_number(False) is None
    assert parse_number(-math.inf) is None


@given(st.text(max_size=300), st.integers(min_value=2, max_value=200))
def test_ctext_is_idempotent(text: str, limit: int) -> None:
    once = ctext(text, limit)
    if once is not None:
        assert ctext(once, limit) == once
        assert len(once) <= limit
        assert is_public_safe(once)


@given(st.text(max_size=300), st.integers(min_value=4, max_value=200))
def test_ledger_text_is_idempotent(text: str, limit: int) -> None:
    once = ledger_text(text, limit)
    if once is not None:
        assert ledger_text(once, limit) == once
        assert len(once) <= limit


class _Text(str):
    """A str subclass: never served from the cache, always filtered the same way."""


@given(
    st.one_of(
        st.text(max_size=400),
        st.sampled_from([*LOCAL_PATHS, *PUBLIC_PATHS, *SECRETS]),
        st.builds(lambda s: f"see {s} " * 40, st.sampled_from(LOCAL_PATHS)),  # longer than cached
    ),
    st.integers(min_value=1, max_value=300),
)
def test_ctext_status_is_the_same_cached_or_not(text: str, limit: int) -> None:
    """The cache is an optimisation only: first call, repeat call and subclass all agree."""
    expected = _ctext_text_status(text, limit)
    assert ctext_status(text, limit) == expected
    assert ctext_status(text, limit) == expected  # served from the cache when short enough
    assert ctext_status(_Text(text), limit) == expected
    if expected[0] is not None:
        assert is_public_safe(expected[0])


def test_join_public_replaces_a_failing_part() -> None:
    """A built value never carries a blocked part, however it is joined (issue #13)."""
    from benchledger.ledger.core.safety import join_public

    assert join_public("__", "codex", "gpt-5", "/Users/bob/tasks") == "codex__gpt-5__unsafe"
    assert join_public(":", "harbor", "job", "fix-git") == "harbor:job:fix-git"
    parts = ("harbor", "run__/home/alice/jobs", "tb@2.0", "hf_abcdefghijklmnopqrstuvwxyz")
    assert join_public(":", *parts) == "harbor:unsafe:tb@2.0:unsafe"


def test_public_json_drops_failing_strings_and_keys_and_counts_them() -> None:
    from benchledger.ledger.core.safety import public_json

    row = {
        "case_id": "fix-git",
        "notes": "see /home/alice/x",
        "labels": ["ok", "token=abcdef1234567890", None],
        "/tmp/key": 1,
        "nested": {"model": "openai/gpt-5", "url": "https://u:pw123@host/x"},
        "score": 1.0,
        "flag": False,
        "missing": None,
    }
    cleaned, dropped = public_json(row)
    assert dropped == 4
    assert cleaned == {
        "case_id": "fix-git",
        "labels": ["ok", None],
        "nested": {"model": "openai/gpt-5"},
        "score": 1.0,
        "flag": False,
        "missing": None,
    }
    assert public_json(cleaned) == (cleaned, 0)  # a clean row is unchanged


def test_imported_row_ids_never_come_from_a_dropped_value() -> None:
    from benchledger.ledger.sources.loopx import read_loopx_row

    row = read_loopx_row(
        {"run_id": "/Users/bob/run", "notes": "ok"},
        benchmark_key="tb@2.0 /home/x/y",
        case_key="fix-git",
    )
    assert row["benchmark_id"] == "unsafe" and row["case_id"] == "fix-git"
    assert row["run_id"].startswith("imported-")
    assert row["public_safety"] == {"dropped_field_count": 1}
    kept = read_loopx_row(
        {"run_id": "r1", "benchmark_id": "tb@2.0"}, benchmark_key="tb@2.0", case_key="fix-git"
    )
    assert (kept["run_id"], kept["benchmark_id"], kept["case_id"]) == ("r1", "tb@2.0", "fix-git")
    assert "public_safety" not in kept
