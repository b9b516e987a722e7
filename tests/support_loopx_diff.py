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
# No value is compared loosely: every next action, case-routing action and aggregate rule text
# is loopx 0.4.8's own sentence for the same inputs (issue 33).
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
    # check / archive / merge outputs by file suffix (``.check.json``, ``.archive.md``, ...)
    maintenance: dict[str, str] = field(default_factory=dict)


MAINTENANCE_SUFFIXES = (
    ".check.json",
    ".archive.json",
    ".archive.md",
    ".merge.json",
    ".merge.md",
    ".merged.json",
    ".maintenance.error",
)


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

    def read(
        self,
        ledger: Path,
        aggregates: list[dict[str, Any]] = (),  # type: ignore[assignment]
        maintenance: dict[str, Any] | None = None,
    ) -> Reading:
        """loopx's reading of ``ledger``; ``maintenance`` may ask for ``check`` (history
        records, oldest first), ``archive`` and ``merge`` (run in that order on a copy)."""
        self.count += 1
        stem = self.workdir / f"oracle-{self.count}"
        job = {"ledger": str(ledger), "stem": str(stem), "aggregates": list(aggregates)}
        job.update(maintenance or {})
        if "check" in job:  # loopx reads the history newest first, as the index lists it
            job["check"] = {**job["check"], "history": list(reversed(job["check"]["history"]))}
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
            maintenance={
                suffix: Path(f"{stem}{suffix}").read_text(encoding="utf-8")
                for suffix in MAINTENANCE_SUFFIXES
                if Path(f"{stem}{suffix}").exists()
            },
        )

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


def benchledger_read(
    ledger: Path,
    workdir: Path,
    aggregates: list[dict[str, Any]] = (),  # type: ignore[assignment]
    maintenance: dict[str, Any] | None = None,
) -> Reading:
    """``benchledger import loopx-ledger`` into a fresh store, then the rendered files, the
    ``run-ledger-aggregate`` payloads and the check / archive / merge outputs asked for, all
    through the CLI (in-process)."""
    from click.testing import CliRunner

    from benchledger.commands.cli import cli

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
    reading = Reading(
        json_text=out.read_text(encoding="utf-8"),
        markdown=out.with_suffix(".md").read_text(encoding="utf-8"),
        aggregates=payloads,
    )
    try:
        reading.maintenance = _benchledger_maintenance(runner, db, out, maintenance or {})
    except _CommandFailed as failed:
        reading.maintenance = {".maintenance.error": str(failed)}
    return reading


class _CommandFailed(Exception):
    """A maintenance command exited non-zero (its last stderr line is the message)."""


def _json_command(runner: Any, argv: list[str]) -> dict[str, Any]:
    from benchledger.commands.cli import cli

    result = runner.invoke(cli, argv)
    if result.exit_code != 0:
        lines = (result.stderr or result.output).strip().splitlines()
        raise _CommandFailed(lines[-1] if lines else f"exit {result.exit_code}")
    return json.loads(result.stdout)


def seed_history(db: str, goal_id: str, records: list[dict[str, Any]]) -> None:
    """The goal's run history as ``benchmark run`` appends it (one ``run_appended`` event per
    record, oldest first, built by the same functions): what ``run-ledger-check`` reads."""
    from benchledger.commands.runtime import command_metadata
    from benchledger.ledger.rules.history.goal_runs import build_run_record
    from benchledger.ledger.rules.history.rollout import benchmark_run_event
    from benchledger.ledger.rules.row.build import build_row
    from benchledger.ledger.store.events import RUN_APPENDED, NewEvent
    from benchledger.services.store_session import open_store

    events = []
    for index, record in enumerate(records):
        run, when, stem = record["benchmark_run"], record["generated_at"], f"run-{index:04d}"
        run_id = build_row(run, now=when)[0]["run_id"]
        payload = {
            "goal_id": goal_id,
            "stem": stem,
            "run_key": None,
            "run_id": run_id,
            "generated_at": when,
            "record": build_run_record(run, goal_id=goal_id, generated_at=when),
            "rollout_event": benchmark_run_event(
                run,
                goal_id=goal_id,
                run_id=run_id,
                action="record compact benchmark run",
                recorded_at=when,
                history_stem=stem,
            ),
        }
        events.append(NewEvent(f"goal/{goal_id}", RUN_APPENDED, payload))
    with open_store(db) as opened:
        opened.store.append(events, metadata=command_metadata("differential-suite"))


def _benchledger_maintenance(
    runner: Any, db: str, out: Path, asked: dict[str, Any]
) -> dict[str, str]:
    """check, then archive and merge with ``--execute``, as the oracle runs them."""
    found: dict[str, str] = {}
    base = ["--db", db, "--format", "json", "benchmark"]
    ledger = ["--run-ledger-path", str(out)]
    if "check" in asked:
        seed_history(db, HISTORY_GOAL, asked["check"]["history"])
        limit = str(asked["check"].get("limit", 20))
        payload = _json_command(
            runner,
            [*base, "run-ledger-check", *ledger, "--goal-id", HISTORY_GOAL, "--limit", limit],
        )
        found[".check.json"] = _dump(payload["benchmark_run_ledger_drift"])
    if "archive" in asked:
        options = asked["archive"]
        argv = [*base, "run-ledger-archive", *ledger, "--benchmark-id", options["benchmark_id"]]
        argv += ["--reason", options["reason"], "--execute"]
        if options.get("archive_batch_id"):
            argv += ["--archive-batch-id", options["archive_batch_id"]]
        for flag, key in (
            ("--run-group-contains", "run_group_contains"),
            ("--keep-run-group-contains", "keep_run_group_contains"),
            ("--case-id", "case_ids"),
            ("--arm-id", "arm_ids"),
        ):
            for value in options.get(key) or []:
                argv += [flag, value]
        if options.get("all"):
            argv.append("--archive-all-matching-benchmark")
        found[".archive.json"] = _dump(_json_command(runner, argv)["archive"])
        found[".archive.md"] = out.with_suffix(".md").read_text(encoding="utf-8")
    if "merge" in asked:
        options = asked["merge"]
        argv = [*base, "run-ledger-merge", *ledger, "--execute"]
        for source in options["sources"]:
            argv += ["--source-run-ledger-path", str(source)]
        for value in options.get("benchmark_ids") or []:
            argv += ["--benchmark-id", value]
        for value in options.get("run_group_contains") or []:
            argv += ["--run-group-contains", value]
        found[".merge.json"] = _dump(_json_command(runner, argv)["merge"])
        found[".merge.md"] = out.with_suffix(".md").read_text(encoding="utf-8")
        found[".merged.json"] = out.read_text(encoding="utf-8")
    return found


HISTORY_GOAL = "differential"


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def first_line_difference(ours: str, theirs: str) -> str | None:
    """``None`` when byte-identical, else the first differing line of each side."""
    if ours == theirs:
        return None
    our_lines, their_lines = ours.splitlines(), theirs.splitlines()
    for number, (mine, loopx) in enumerate(zip(our_lines, their_lines, strict=False), start=1):
        if mine != loopx:
            return f"line {number}:\n  benchledger: {mine}\n  loopx:       {loopx}"
    if len(our_lines) == len(their_lines) and ours.endswith("\n") == theirs.endswith("\n"):
        return None
    return f"line counts differ ({len(our_lines)} vs {len(their_lines)}) or trailing bytes differ"


def first_key_difference(
    ours: Any,
    theirs: Any,
    path: str = "$",
    additions: frozenset[str] = ROW_ADDITIONS,
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


# Values set from the clock when the command runs (``archived_at``, ``updated_at``) and the
# deliberate differences of the drift check (docs/loopx-compat.md): benchledger's run ids come
# from content, not from the history file's path, and its catch-up template names benchledger.
CLOCK_KEYS = (".archived_at", ".updated_at")
CHECK_DELIBERATE = (".run_id", ".catch_up_command_template")
# A merge summary names the working copy's path; benchledger adds ``self_source_skipped`` and
# ``changed_run_count``.
MERGE_PATH_KEYS = frozenset({"ledger_path", "markdown_path"})
MERGE_ADDITIONS = frozenset({"self_source_skipped", "changed_run_count"})
# The command adds ``ok`` to its ``archive`` block (loopx has it only in its error block).
ARCHIVE_ADDITIONS = frozenset({"ok"})
MERGED_ROW_ADDITIONS = ROW_ADDITIONS | {"last_upserted_at"}


def _without(value: Any, drop: tuple[str, ...], path: str = "$") -> Any:
    """``value`` with the keys whose path ends in one of ``drop`` replaced by a marker."""
    if isinstance(value, dict):
        return {
            key: "<deliberate>"
            if f"{path}.{key}".endswith(drop)
            else _without(item, drop, f"{path}.{key}")
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_without(item, drop, f"{path}[]") for item in value]
    return value


def maintenance_difference(ours: Reading, theirs: Reading) -> str | None:
    """check, archive and merge outputs: JSON key for key, Markdown byte for byte; a loopx
    crash must be a one-line error in benchledger."""
    loopx_error = theirs.maintenance.get(".maintenance.error")
    our_error = ours.maintenance.get(".maintenance.error")
    if loopx_error is not None:
        if our_error is None:
            return f"loopx failed ({loopx_error.strip()}); benchledger did not"
        if "\n" in our_error.strip() or "Traceback" in our_error:
            return f"benchledger's error is not one line: {our_error!r}"
        return None
    if our_error is not None:
        return f"benchledger failed: {our_error}"
    for suffix in MAINTENANCE_SUFFIXES[:-1]:
        if (suffix in ours.maintenance) != (suffix in theirs.maintenance):
            return f"{suffix}: produced by one side only"
        if suffix not in theirs.maintenance:
            continue
        mine, loopx = ours.maintenance[suffix], theirs.maintenance[suffix]
        if suffix.endswith(".md"):
            found = first_line_difference(_clock_line_out(mine), _clock_line_out(loopx))
        else:
            found = _json_suffix_difference(suffix, json.loads(mine), json.loads(loopx))
        if found:
            return f"{suffix}: {found}"
    return None


def _clock_line_out(markdown: str) -> str:
    """The Markdown's ``updated_at`` line is the command's clock (benchledger writes UTC):
    the line must be there on both sides, its time may differ."""
    return "\n".join(
        "- updated_at: <clock>" if line.startswith("- updated_at: ") else line
        for line in markdown.split("\n")
    )


def _json_suffix_difference(suffix: str, mine: Any, loopx: Any) -> str | None:
    if suffix == ".check.json":
        return first_key_difference(
            _without(mine, CHECK_DELIBERATE), _without(loopx, CHECK_DELIBERATE)
        )
    if suffix == ".merge.json":
        if mine.get("changed_run_count") == 0:
            # benchledger writes nothing when nothing changed and says so (``updated`` false;
            # loopx rewrites the file on every --execute): docs/loopx-compat.md.
            if mine.get("updated") is not False:
                return "$.updated: true although no run changed"
            mine = {**mine, "updated": loopx.get("updated")}
        mine = {k: v for k, v in mine.items() if k not in MERGE_PATH_KEYS}
        loopx = {k: v for k, v in loopx.items() if k not in MERGE_PATH_KEYS}
        return first_key_difference(mine, loopx, additions=MERGE_ADDITIONS)
    if suffix == ".merged.json":
        return first_key_difference(
            _without(mine, CLOCK_KEYS),
            _without(loopx, CLOCK_KEYS),
            additions=MERGED_ROW_ADDITIONS,
        )
    return first_key_difference(mine, loopx, additions=ARCHIVE_ADDITIONS)
