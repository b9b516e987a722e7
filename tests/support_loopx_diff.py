"""Differential harness: the same ledger through loopx 0.4.8 (the oracle) and through benchledger.

loopx lives in its own venv, never in ours: ``$BENCHLEDGER_LOOPX_VENV`` names an existing one,
else ``.cache/loopx-venv`` in the repository (git-ignored) is created on first use with
``pip install loopx==0.4.8``. In CI a missing oracle fails the tests; elsewhere they skip with
a one-line reason.

One oracle process serves a whole test session (``tests/loopx_oracle/driver.py --serve``), so a
generated ledger costs loopx's normalisation, not loopx's start-up.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
DRIVER = REPO / "tests" / "loopx_oracle" / "driver.py"
CACHE_VENV = REPO / ".cache" / "loopx-venv"
LOOPX_VENV_ENV = "BENCHLEDGER_LOOPX_VENV"

# Row fields benchledger adds to an imported row (docs/loopx-compat.md, "Additions"): present in
# ours, absent from loopx's, never renamed or removed.
ROW_ADDITIONS = frozenset({"arm_source"})
# Values that are benchledger's own wording by design (ledger_v0.md §5.12, §7: "wording is not
# part of the contract"): the key must be there on both sides, its text may differ.
WORDING_PATHS = (".next_action", ".current_evidence_rule", ".duplicate_case_rule")
# Aggregate fields benchledger adds (docs/loopx-compat.md): the chosen run's arm role, job, mode
# and rounds, the named selection policy, the rules version, and empty buckets listed as such.
AGGREGATE_ADDITIONS = frozenset(
    {
        "arm_role",
        "job_name",
        "mode",
        "official_score_bool_fallback_used",
        "first_success_round",
        "final_round_reward",
        "best_round_reward",
        "next_action",
        "rules_version",
        "selection",
        "description",
        "absolute_paths_recorded",
    }
)


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"loopx 0.4.8 oracle required in CI: {reason}")
    pytest.skip(f"loopx 0.4.8 oracle unavailable: {reason}")


def loopx_python() -> Path:
    """The oracle's interpreter, installing loopx 0.4.8 into the cache venv when needed."""
    named = os.environ.get(LOOPX_VENV_ENV)
    if named:
        python = Path(named) / "bin" / "python"
        if not python.exists():
            _unavailable(f"${LOOPX_VENV_ENV} has no bin/python")
        return python
    from bench._loopx import ensure_loopx

    try:
        return ensure_loopx(CACHE_VENV).python
    except (SystemExit, OSError, subprocess.SubprocessError) as exc:
        _unavailable(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    raise AssertionError("unreachable")


@dataclass
class Reading:
    """What one side produced for one ledger file."""

    json_text: str | None = None
    markdown: str | None = None
    aggregates: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None


class Oracle:
    """A long-lived loopx driver answering one ledger at a time."""

    def __init__(self, python: Path, workdir: Path) -> None:
        self.workdir = workdir
        self.count = 0
        self.proc = subprocess.Popen(
            [str(python), str(DRIVER), "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"},
        )

    def read(self, ledger: Path, aggregates: list[dict[str, Any]] = ()) -> Reading:  # type: ignore[assignment]
        self.count += 1
        stem = self.workdir / f"oracle-{self.count}"
        job = {"ledger": str(ledger), "stem": str(stem), "aggregates": list(aggregates)}
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if answer.strip() != "done":
            raise RuntimeError(f"loopx oracle stopped answering (got {answer!r})")
        error = stem.with_suffix(".error")
        if error.exists():
            return Reading(error=error.read_text(encoding="utf-8").strip())
        return Reading(
            json_text=stem.with_suffix(".json").read_text(encoding="utf-8"),
            markdown=stem.with_suffix(".md").read_text(encoding="utf-8"),
            aggregates=[
                json.loads(Path(f"{stem}.aggregate-{i}.json").read_text(encoding="utf-8"))
                for i in range(len(aggregates))
            ],
        )

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


def benchledger_read(
    ledger: Path,
    workdir: Path,
    aggregates: list[dict[str, Any]] = (),  # type: ignore[assignment]
) -> Reading:
    """``benchledger import loopx-ledger`` into a fresh store, then the rendered files and the
    ``run-ledger-aggregate`` payloads asked for, all through the CLI (in-process)."""
    from click.testing import CliRunner

    from commands.cli import cli

    workdir.mkdir(parents=True, exist_ok=True)
    db = f"sqlite:///{workdir / 'store.db'}"
    out = workdir / "ledger.json"
    runner = CliRunner()
    done = runner.invoke(
        cli,
        ["--db", db, "import", "loopx-ledger", str(ledger), "--run-ledger-path", str(out)]
        + ["--execute"],
    )
    if done.exit_code != 0:
        message = (done.stderr or done.output).strip().splitlines()
        return Reading(error=message[-1] if message else f"exit {done.exit_code}")
    payloads = []
    for options in aggregates:
        argv = ["--db", db, "--format", "json", "benchmark", "run-ledger-aggregate"]
        argv += ["--run-ledger-path", str(out), "--benchmark-id", options["benchmark_id"]]
        for flag, key in (
            ("--target-run-group-contains", "target"),
            ("--target-current-run-group-contains", "current"),
            ("--target-backfill-run-group-contains", "backfill"),
            ("--canonical-case-id", "canonical_case_ids"),
            ("--active-case-id", "active_case_ids"),
        ):
            for value in options.get(key) or []:
                argv += [flag, value]
        if options.get("target_lane_id"):
            argv += ["--target-lane-id", options["target_lane_id"]]
        if options.get("include_noncanonical"):
            argv.append("--include-noncanonical-sanity-sources")
        result = runner.invoke(cli, argv)
        payloads.append(
            json.loads(result.stdout) if result.stdout.strip() else {"error": result.stderr}
        )
    return Reading(
        json_text=out.read_text(encoding="utf-8"),
        markdown=out.with_suffix(".md").read_text(encoding="utf-8"),
        aggregates=payloads,
    )


def _without_next_action(line: str) -> str:
    """A Repair Backlog line minus its last cell, the next action (benchledger's wording when
    loopx's reading gives a row a route it did not store, docs/loopx-compat.md)."""
    cells = line.split(" | ")
    return " | ".join(cells[:-1]) if line.startswith("| `P") and len(cells) == 8 else line


def first_line_difference(ours: str, theirs: str) -> str | None:
    """``None`` when byte-identical (Repair Backlog next actions aside), else the first
    differing line of each side."""
    if ours == theirs:
        return None
    our_lines, their_lines = ours.splitlines(), theirs.splitlines()
    if len(our_lines) == len(their_lines) and ours.endswith("\n") == theirs.endswith("\n"):
        if all(
            _without_next_action(a) == _without_next_action(b)
            for a, b in zip(our_lines, their_lines, strict=True)
        ):
            return None
    for number, (mine, loopx) in enumerate(zip(our_lines, their_lines, strict=False), start=1):
        if _without_next_action(mine) != _without_next_action(loopx):
            return f"line {number}:\n  benchledger: {mine}\n  loopx:       {loopx}"
    return f"line counts differ ({len(our_lines)} vs {len(their_lines)}) or trailing bytes differ"


def first_key_difference(
    ours: Any, theirs: Any, path: str = "$", additions: frozenset[str] = ROW_ADDITIONS
) -> str | None:
    """``None`` when equal key for key (keys in ``additions`` may exist only in ours)."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for key in sorted(set(ours) | set(theirs)):
            if key not in theirs:
                if key in additions or _empty_bucket(path, ours[key]):
                    continue
                return f"{path}.{key}: only in benchledger ({_short(ours[key])})"
            if key not in ours:
                return f"{path}.{key}: missing in benchledger (loopx: {_short(theirs[key])})"
            found = first_key_difference(ours[key], theirs[key], f"{path}.{key}", additions)
            if found:
                return found
        return None
    if isinstance(ours, list) and isinstance(theirs, list):
        if len(ours) != len(theirs):
            return f"{path}: {len(ours)} items in benchledger, {len(theirs)} in loopx"
        for index, (mine, loopx) in enumerate(zip(ours, theirs, strict=True)):
            found = first_key_difference(mine, loopx, f"{path}[{index}]", additions)
            if found:
                return found
        return None
    if path.endswith(WORDING_PATHS) and isinstance(ours, str) and isinstance(theirs, str):
        return None
    if type(ours) is not type(theirs) or ours != theirs:
        return f"{path}: benchledger {_short(ours)} != loopx {_short(theirs)}"
    return None


def _empty_bucket(path: str, value: Any) -> bool:
    """benchledger lists every bucket, empty ones included; loopx only the ones it saw."""
    return path.endswith((".distribution", ".cases_by_bucket")) and value in (0, [])


def aggregate_difference(ours: dict[str, Any], theirs: dict[str, Any]) -> str | None:
    """``run-ledger-aggregate`` payloads compared key for key (additions allowed)."""
    mine = {key: ours.get(key) for key in ("aggregate", "merge_preview")}
    return first_key_difference(mine, theirs, additions=AGGREGATE_ADDITIONS)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 160 else text[:157] + "..."
