"""Helpers for the bad-input suites: a fresh workspace per example and the one outcome rule.

Every malformed input must end in one of two honest ways: exit 0 with a store that still
verifies and rebuilds identically, or exit 1 (2 for usage) with exactly one ``error:`` line on
stderr, no new event and no file published. ``assert_honest`` checks exactly that, so each
suite only has to produce the input.

Hypothesis runs many examples inside one test function, so the workspace cannot be a pytest
fixture; ``workspace()`` makes a new directory (and copies a pre-migrated SQLite store, which
keeps an example cheap) for each example instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, settings

from tests.conftest import FIXTURES_DIR

# Bounded and reproducible so the whole bad-input suite stays well under a minute on two cores;
# BENCHLEDGER_BAD_INPUT_EXAMPLES=500 turns it into a random bug hunt.
_HUNT = int(os.environ.get("BENCHLEDGER_BAD_INPUT_EXAMPLES") or 0)
BOUNDED = settings(
    max_examples=_HUNT or 20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=not _HUNT,
    database=None,
)

HARBOR_JOB = "tb2-arm-compare-20260505/jobs/tb2-baseline-gpt-5-codex"
BENCHFLOW_CASE = "cases/23_multi_task_root"
LEDGER_FILES = ("benchmark-run-ledger.json", "benchmark-run-ledger.md")

_TEMPLATE: dict[str, Path] = {}


def _template_store(base: Path) -> Path:
    """One migrated, empty SQLite store per session; examples copy it instead of migrating."""
    if "db" not in _TEMPLATE:
        path = base / "template" / "ledger.db"
        path.parent.mkdir(parents=True, exist_ok=True)
        result = _invoke(["--db", f"sqlite:///{path}", "db", "upgrade"], None)
        assert result.exit_code == 0, result.output
        _TEMPLATE["db"] = path
    return _TEMPLATE["db"]


def _invoke(argv: list[str], stdin: str | bytes | None) -> Result:
    from benchledger.commands.cli import cli

    return CliRunner().invoke(cli, argv, input=stdin, catch_exceptions=True)


@dataclass
class Workspace:
    """One project directory (the cwd), one SQLite store and one runtime root."""

    project: Path
    store: Path
    monkeypatch: pytest.MonkeyPatch
    extra_public: list[Path] = field(default_factory=list)

    @property
    def db(self) -> str:
        return f"sqlite:///{self.store}"

    @property
    def rt(self) -> Path:
        return self.project / "rt"

    def invoke(self, *args: str, stdin: str | bytes | None = None) -> Result:
        argv = ["--db", self.db, "--runtime-root", str(self.rt), *args]
        return _invoke(argv, stdin)

    def ok(self, *args: str) -> dict[str, Any]:
        result = self.invoke(*args, "--format", "json")
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    def event_count(self) -> int:
        """Straight from the table, so counting never itself migrates or writes anything."""
        if not self.store.exists():
            return 0
        with contextlib.closing(sqlite3.connect(f"file:{self.store}?mode=ro", uri=True)) as db:
            return db.execute("SELECT count(*) FROM events").fetchone()[0]

    def published(self) -> dict[str, bytes]:
        """Every file a command may publish: ledger files, run records, rollout log, extras."""
        found: dict[str, bytes] = {}
        candidates = [self.project / name for name in LEDGER_FILES] + self.extra_public
        if self.rt.exists():
            candidates += [p for p in self.rt.rglob("*") if p.is_file()]
        for path in candidates:
            if path.is_file() and not path.name.endswith(".lock"):
                found[str(path.relative_to(self.project))] = path.read_bytes()
        return found

    def snapshot(self) -> tuple[int, dict[str, bytes]]:
        return self.event_count(), self.published()

    def assert_store_clean(self, *, verify_files: bool = True) -> None:
        verified = self.ok("verify", *(["--files"] if verify_files else []))
        assert verified["verify"]["ok"] is True, verified
        rebuilt = self.ok("rebuild", "--verify")
        assert rebuilt["ok"] is True and rebuilt["rebuild_verify"]["differences"] == [], rebuilt


@contextlib.contextmanager
def workspace(base: Path) -> Iterator[Workspace]:
    """A fresh directory, store and monkeypatch scope for one hypothesis example."""
    template = _template_store(base)
    project = Path(tempfile.mkdtemp(prefix="ex-", dir=base))
    store = project / ".store" / "ledger.db"
    store.parent.mkdir()
    shutil.copyfile(template, store)
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.chdir(project)
            for name in ("BENCHLEDGER_REGISTRY", "BENCHLEDGER_DATABASE_URL"):
                mp.delenv(name, raising=False)
            yield Workspace(project, store, mp)
    finally:
        shutil.rmtree(project, ignore_errors=True)


def make_writable_copy(src: Path, dst: Path, empty_dirs: Sequence[str] = ()) -> Path:
    """Copy a read-only fixture tree so a test may corrupt it."""
    shutil.copytree(src, dst, symlinks=True)
    for rel in empty_dirs:
        (dst / rel).mkdir(parents=True, exist_ok=True)
    for dirpath, _dirs, files in os.walk(dst):
        os.chmod(dirpath, 0o755)
        for name in files:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chmod(path, 0o644)
    return dst


def harbor_empty_dirs(job_rel: str) -> list[str]:
    manifest = json.loads((FIXTURES_DIR / "harbor/manifest.json").read_text("utf-8"))
    prefix = job_rel.rstrip("/") + "/"
    return [r[len(prefix) :] for r in manifest["empty_dirs"] if r.startswith(prefix)]


def benchflow_empty_dirs(case_rel: str) -> list[str]:
    manifest = json.loads((FIXTURES_DIR / "benchflow/manifest.json").read_text("utf-8"))
    prefix = case_rel.rstrip("/") + "/"
    return [r[len(prefix) :] for r in manifest["empty_dirs"] if r.startswith(prefix)]


# --------------------------------------------------------------------------- the outcome rule


def _traceback_of(result: Result) -> str:
    if result.exc_info is None:
        return ""
    import traceback

    return "".join(traceback.format_exception(*result.exc_info))


def assert_honest(
    ws: Workspace,
    result: Result,
    before: tuple[int, dict[str, bytes]],
    *,
    exit_codes: Sequence[int] = (0, 1),
    check_store: bool = True,
    verify_files: bool = True,
) -> None:
    """Exit 0 with a clean store, or a one-line refusal that changed nothing at all.

    ``verify_files=False`` when the test itself edited a file the store had published (the
    drift ``verify --files`` then rightly reports is the test's, not the command's)."""
    out = result.stdout + result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        pytest.fail(f"unhandled exception:\n{_traceback_of(result)}")
    assert "Traceback" not in out, out
    assert "internal error" not in out, out
    assert result.exit_code in exit_codes, (result.exit_code, out)
    if result.exit_code == 0:
        if check_store:
            ws.assert_store_clean(verify_files=verify_files)
        return
    lines = result.stderr.splitlines()
    if result.exit_code == 2 and len(lines) > 1:  # click's usage text: the error is last
        lines = [line for line in lines if line.startswith("Error:")]
        assert len(lines) == 1, result.stderr
    else:
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith("error: ") and len(lines[0]) > len("error: "), lines
    events, files = before
    assert ws.event_count() == events, "a refused input appended events"
    assert ws.published() == files, "a refused input changed published files"
