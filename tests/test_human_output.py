"""Every command's human output reads as text (issue 34): no JSON fragment, no Python repr
(``None``, ``True``, ``False``), no float with more than 6 significant digits, no "(1 files)".

A realistic project is built once (the shipped Harbor example, a two-arm Harbor job, a BenchFlow
result tree recorded without the ledger, an upsert, an archive, an import, a snapshot); then
every command of the click tree runs in the human format with the argv listed in ``CASES``. The
tree is walked from the root group, so a new command without an entry fails
``test_every_command_has_a_case``. Failure paths (edited and deleted published files, a
tampered read model and snapshot, drift) run on a project of their own.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from benchledger.commands.cli import cli
from benchledger.ledger.core.readable import number, outline, plural, score, word
from tests.conftest import FIXTURES_DIR
from tests.support_benchflow_source import materialize
from tests.support_harbor_ingest_cli import copy_job, load_manifest

EXAMPLE_JOB = Path(__file__).resolve().parents[1] / "examples" / "harbor" / "2026-05-02__09-14-07"
TWO_ARM_JOB = "tb2-arm-compare-20260505/jobs/2026-05-05__14-10-10"
LOOPX_LEDGER = FIXTURES_DIR / "loopx-ledger" / "benchmark-run-ledger.json"
TB = "terminal-bench@2.0"
# A score with float noise a person must not see (``0.6666666666666666``).
RUN = {
    "schema_version": "benchmark_run_v0", "source_runner": "harbor", "benchmark_id": "tb@2.0",
    "case_id": "c1", "run_status": "completed", "runner_return_status": "completed",
    "official_score": 2 / 3, "official_score_status": "completed",
    "official_task_score": {"kind": "harbor_verifier_reward", "value": 2 / 3, "passed": False},
}  # fmt: skip
PARITY_RUN = {
    "schema_version": "benchmark_run_v0", "benchmark_id": TB, "mode": "codex_loopx_treatment",
    "agent_activity": {"tool_call_count": 12},
}  # fmt: skip
ANALYSIS = {
    "schema_version": "benchmark_case_analysis_v0",
    "cases": [{"benchmark_id": TB, "case_id": "fix-git", "classification": "hand_written",
               "decision": "kept"}],
}  # fmt: skip

# The argv (after ``benchledger``) each command runs with, on success paths. ``schema NAME``
# is left out on purpose: it prints the JSON Schema document itself, which is JSON by design.
CASES: dict[str, list[list[str]]] = {
    "benchmark run": [
        ["benchmark", "run", "terminal-bench", "--goal-id", "tb2", "--harbor-job-dir", "job"],
        ["benchmark", "run", "skillsbench", "--goal-id", "sb2",
         "--skillsbench-result-root", "bf/cases/02_fail"],
        ["benchmark", "run", "terminal-bench", "--goal-id", "plan",
         "--include-task-name", "fix-git"],
        # every run in full: the run sections spelled for a person, not as the .md files are
        ["benchmark", "run", "terminal-bench", "--goal-id", "tb2", "--harbor-job-dir", "job",
         "--verbose"],
        # already recorded: nothing appended, the payload through the generic view
        ["benchmark", "run", "terminal-bench", "--goal-id", "tb2", "--harbor-job-dir", "job",
         "--update-run-ledger", "--execute"],
    ],
    "benchmark run-ledger-upsert": [
        ["benchmark", "run-ledger-upsert", "--benchmark-run-json", "run.json"],
        ["benchmark", "run-ledger-upsert", "--benchmark-run-json", "batch.json"],
    ],
    "benchmark run-ledger-archive": [
        ["benchmark", "run-ledger-archive", "--benchmark-id", TB, "--case-id", "regex-log",
         "--reason", "broken image"],
        ["benchmark", "run-ledger-archive", "--benchmark-id", TB, "--case-id", "fix-git",
         "--reason", "broken image"],
    ],
    "benchmark run-ledger-restore": [
        ["benchmark", "run-ledger-restore", "--benchmark-id", TB, "--case-id", "fix-git",
         "--reason", "fixed"],
    ],
    "benchmark run-ledger-merge": [
        ["benchmark", "run-ledger-merge", "--source-run-ledger-path", "loopx.json"],
    ],
    "benchmark run-ledger-aggregate": [
        ["benchmark", "run-ledger-aggregate", "--benchmark-id", TB],
        ["benchmark", "run-ledger-aggregate", "--benchmark-id", TB, "--output-json", "agg.json"],
        ["benchmark", "run-ledger-aggregate", "--benchmark-id", TB, "--canonical-case-id",
         "fix-git", "--canonical-case-id", "not-run-yet"],
    ],
    "benchmark run-ledger-check": [
        ["benchmark", "run-ledger-check", "--goal-id", "tb2"],
        ["benchmark", "run-ledger-check", "--goal-id", "sb"],  # drift: history not in ledger
    ],
    "benchmark parity-check": [
        ["benchmark", "parity-check", "--benchmark-run-json", "parity.json"],
    ],
    "benchmark case-analysis-candidates": [["benchmark", "case-analysis-candidates"]],
    "compare": [["compare", "--benchmark-id", TB]],
    "db current": [["db", "current"]],
    "db upgrade": [["db", "upgrade"]],
    "diff": [["diff", "--from", "1"], ["diff", "--from", "3", "--benchmark-id", TB]],
    "events list": [["events", "list"], ["events", "list", "--type", "ledger_upserted",
                                         "--limit", "2"]],
    "events show": [["events", "show", "1"], ["events", "show", "HEAD"]],
    "events verify": [["events", "verify"]],
    "import loopx-ledger": [
        ["import", "loopx-ledger", "loopx.json", "--run-ledger-path", "imported.json"],
        ["import", "loopx-ledger", "loopx.json", "--run-ledger-path", "other.json"],
    ],
    "rebuild": [["rebuild"], ["rebuild", "--verify"]],
    "render": [["render"], ["render", "--as-of", "20"],
               ["render", "--as-of", "20", "--output-json", "past.json"]],
    "report": [["report", "--out", "report"]],
    "schema": [["schema"]],
    "snapshot create": [["snapshot", "create"]],
    "snapshot list": [["snapshot", "list"]],
    "snapshot verify": [["snapshot", "verify"]],
    "sql": [["sql", "SELECT case_id, official_score, status FROM ledger_runs_v"]],
    "sync-global": [["sync-global"], ["sync-global", "--execute"]],
    "verify": [["verify"], ["verify", "--files", "--schemas"]],
}  # fmt: skip

# What a person must never read, each with the name the failure message gives it.
BAD = (
    (re.compile(r'\{"|\["|": '), "a JSON fragment"),
    (re.compile(r"\b(?:None|True|False)\b"), "a Python repr"),
    # a value spelled as JSON (inside a shell command, ``FLAG=true`` is the user's own text)
    (re.compile(r"`(?:true|false|null)`|(?:^|:)\s*(?:true|false|null)\b"), "a JSON word"),
    (re.compile(r"\b1 (?:file|run|event|row|case|snapshot|difference|goal|arm|benchmark|payload"
                r"|trial|ledger|model|item|record)s\b|\w\(s\)"), "a plural error"),
)  # fmt: skip
# A decimal number standing alone (not part of a time, a version or a name).
FLOAT = re.compile(r"(?<![\w.:-])(\d+\.\d+)(?![\w.])")


def offending_lines(text: str) -> list[str]:
    """Each line of ``text`` that breaks a rule, with the rule it breaks."""
    found = []
    for line in text.splitlines():
        for pattern, name in BAD:
            if pattern.search(line):
                found.append(f"{name}: {line}")
        for literal in FLOAT.findall(line):
            digits = literal.replace(".", "").lstrip("0")
            if len(digits) > 6:
                found.append(f"a float of {len(digits)} significant digits ({literal}): {line}")
    return found


def command_paths() -> list[str]:
    """Every leaf command of the click tree, as ``group command``."""
    found: list[str] = []

    def walk(group: click.Group, ctx: click.Context, prefix: list[str]) -> None:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            assert command is not None, name
            if isinstance(command, click.Group):
                walk(command, click.Context(command, parent=ctx, info_name=name), [*prefix, name])
            else:
                found.append(" ".join([*prefix, name]))

    walk(cli, click.Context(cli, info_name="benchledger"), [])
    return found


def invoke(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def must(args: list[str]) -> str:
    code, out, err = invoke(args)
    assert code == 0, f"{args}: {out}{err}"
    return out


def write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data), encoding="utf-8")


def build_project(project: Path, *, full: bool) -> None:
    """A project in ``project``, the working directory (its store in ``.benchledger/``): the
    Harbor example
    recorded in the ledger; with ``full``, also a two-arm job, a BenchFlow result tree
    recorded in goal ``sb`` without the ledger, an upsert, an archive, an import and a
    snapshot."""
    (project / ".benchledger").mkdir(parents=True)
    shutil.copytree(EXAMPLE_JOB, project / "job")
    must(["benchmark", "run", "terminal-bench", "--goal-id", "tb2", "--harbor-job-dir", "job",
          "--update-run-ledger", "--execute"])  # fmt: skip
    if not full:
        return
    manifest = load_manifest()
    job = next(j for j in manifest["jobs"] if j["job_dir"] == TWO_ARM_JOB)
    two_arm = copy_job(FIXTURES_DIR, manifest, job, project)
    must(["benchmark", "run", "terminal-bench", "--goal-id", "tb2", "--harbor-job-dir",
          str(two_arm), "--update-run-ledger", "--execute"])  # fmt: skip
    materialize(FIXTURES_DIR, project / "bf")
    must(["benchmark", "run", "skillsbench", "--goal-id", "sb", "--skillsbench-result-root",
          "bf/cases/01_pass", "--execute"])  # fmt: skip
    write_json(project / "run.json", RUN)
    second = {**RUN, "case_id": "c2", "official_score": 0.1 + 0.2}
    write_json(project / "batch.json", {"schema_version": "benchmark_run_batch_v0",
                                        "benchmark_runs": [RUN, second]})  # fmt: skip
    write_json(project / "parity.json", PARITY_RUN)
    write_json(project / "benchmark-case-analysis.json", ANALYSIS)
    shutil.copyfile(LOOPX_LEDGER, project / "loopx.json")
    (project / "loopx.json").chmod(0o644)
    must(["benchmark", "run-ledger-upsert", "--benchmark-run-json", "run.json", "--execute"])
    must(["benchmark", "run-ledger-archive", "--benchmark-id", TB, "--case-id", "fix-git",
          "--reason", "broken image", "--execute"])  # fmt: skip
    must(["import", "loopx-ledger", "loopx.json", "--run-ledger-path", "imported.json",
          "--execute"])  # fmt: skip
    must(["snapshot", "create"])


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("BENCHLEDGER_DATABASE_URL", raising=False)
        patch.delenv("BENCHLEDGER_REGISTRY", raising=False)
        built = tmp_path_factory.mktemp("human")
        patch.chdir(built)
        build_project(built, full=True)
        yield built


def _case_ids() -> list[str]:
    return [" ".join(args) for cases in CASES.values() for args in cases]


def test_every_command_has_a_case() -> None:
    tree = set(command_paths())
    missing = sorted(tree - set(CASES))
    stale = sorted(set(CASES) - tree)
    assert not missing, f"commands without a human-output case in CASES: {missing}"
    assert not stale, f"CASES names commands the CLI does not have: {stale}"


@pytest.mark.parametrize("args", [a for cases in CASES.values() for a in cases], ids=_case_ids())
def test_human_output_reads_as_text(project: Path, args: list[str]) -> None:
    if args[0] == "events" and args[1] == "show" and args[2] == "HEAD":
        head = json.loads(must(["events", "list", "--format", "json", "--limit", "100000"]))
        args = [*args[:2], str(head["events"][-1]["position"])]
    code, out, err = invoke(args)
    assert code == 0, f"{args} exited {code}: {out}{err}"
    assert out.strip(), f"{args} printed nothing"
    problems = offending_lines(out + err)
    assert not problems, f"benchledger {' '.join(args)}:\n" + "\n".join(problems)


# --------------------------------------------------------------------------- failure paths


@pytest.fixture
def small(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("BENCHLEDGER_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    build_project(tmp_path, full=False)
    return tmp_path


def _readable_failure(args: list[str]) -> tuple[str, str]:
    """Run a command that must fail: exit 1, one readable line on stderr, a readable
    summary on stdout."""
    code, out, err = invoke(args)
    assert code == 1, f"{args} exited {code}: {out}{err}"
    assert err.startswith("error: ") and err.count("\n") == 1, err
    problems = offending_lines(out + err)
    assert not problems, f"benchledger {' '.join(args)}:\n" + "\n".join(problems)
    return out, err


def test_verify_files_names_each_bad_file_and_the_repair(small: Path) -> None:
    (small / "benchmark-run-ledger.md").write_text("edited\n", encoding="utf-8")
    run_file = sorted((small / ".benchledger" / "goals" / "tb2" / "runs").glob("*.json"))[0]
    run_file.unlink()
    out, err = _readable_failure(["verify", "--files"])
    assert "| benchmark-run-ledger.md | ledger_markdown | edited since it was written |" in out
    assert f"{run_file.relative_to(small)} | run_record_json | deleted |" in out
    assert "`benchledger render`" in out and "`benchledger render`" in err
    assert "Result: FAILED" in out
    must(["render"])
    assert "Result: ok" in must(["verify", "--files"])


def test_rebuild_verify_lists_the_rows_that_differ(small: Path) -> None:
    with sqlite3.connect(small / ".benchledger" / "ledger.db") as conn:
        conn.execute("UPDATE rm_ledger_rows SET case_id = 'filed-elsewhere' "
                     "WHERE case_id = 'fix-git'")  # fmt: skip
    out, err = _readable_failure(["rebuild", "--verify"])
    assert "rm_ledger_rows" in out and "`benchledger rebuild`" in out, out
    assert "`benchledger rebuild`" in err


def test_snapshot_verify_names_the_snapshot_that_differs(small: Path) -> None:
    must(["snapshot", "create"])
    (snapshot,) = (small / ".benchledger" / "snapshots").glob("*.db")
    with sqlite3.connect(snapshot) as conn:
        conn.execute("UPDATE rm_ledger_rows SET case_id = 'x' WHERE case_id = 'fix-git'")
    out, err = _readable_failure(["snapshot", "verify"])
    assert snapshot.name in out and "FAILED" in out and "snapshot create" in out, out
    assert snapshot.name in err


def test_check_with_drift_lists_missing_runs_and_the_catch_up(project: Path) -> None:
    out, err = _readable_failure(["benchmark", "run-ledger-check", "--goal-id", "sb",
                                  "--fail-on-drift"])  # fmt: skip
    assert "| missing run | case | arm | score status |" in out
    assert "benchledger benchmark run-ledger-upsert" in out
    assert "missing from the ledger" in err


# Mistakes a user makes: each is refused in one readable line that names what exists.
MISTAKES = [
    ["events", "show", "99999"],
    ["events", "list", "--type", "ledger_upsert"],
    ["compare", "--benchmark-id", "terminal-bench@9"],
    ["report", "--benchmark-id", "terminal-bench@9", "--out", "report-none"],
    ["diff", "--from", "99999"],
    ["render", "--ledger-id", "nope.json"],
    ["sql", "DELETE FROM events"],
    ["schema", "benchmark_run_v9"],
]


@pytest.mark.parametrize("args", MISTAKES, ids=[" ".join(a) for a in MISTAKES])
def test_a_mistake_is_one_readable_line(project: Path, args: list[str]) -> None:
    _readable_failure(args)


def test_the_checks_catch_what_they_are_for() -> None:
    """The rules themselves: each bad line is caught, a readable one passes."""
    bad = ['- verify: {"ok": true}', "- dry_run: True", "- output_json: None", "- ready: `true`",
           "- cost: 6.445093000000001", "report: x (1 files)", "3 row(s)"]  # fmt: skip
    for line in bad:
        assert offending_lines(line), line
    good = ["- chain: ok, 18 events checked, head at position 18",
            "- recorded at: 2026-12-06T17:26:43.456892Z", "- version 0.25.0, score 0.667",
            "- cost: 6.44509", "report: x (1 file)"]  # fmt: skip
    for line in good:
        assert not offending_lines(line), line


def test_numbers_words_and_the_generic_view() -> None:
    """The shared rules every view uses (``ledger/core/readable.py``)."""
    assert number(6.445093000000001) == "6.44509"  # 6 significant digits
    assert number(0.1 + 0.2) == "0.3" and number(3.0) == "3" and number(1234567.0) == "1234567"
    assert number(0.0000123456789) == "0.0000123457"  # never an exponent
    assert number(3951477.25) == "3951477" and number(123456.5) == "123456"
    assert score(2 / 3) == "0.667" and score(None) == "none"
    assert (word(None), word(True), word(False), word([])) == ("none", "yes", "no", "none")
    assert plural(1, "file") == "1 file" and plural(2, "file") == "2 files"
    assert plural(1, "match", "matches") == "1 match"
    assert plural(0, "match", "matches") == "0 matches"
    view = outline("Thing", {
        "ok": True, "dry_run": False, "output_json": None, "cost_usd": 6.445093000000001,
        "read_boundary": {"raw_logs_read": False}, "nested": {"inner_count": 2},
        "ids": [f"case-{i}" for i in range(12)], "records": [{"run_id": "r1", "score": 0.5}],
        "codex__gpt-5": 1,
    })  # fmt: skip
    assert offending_lines(view) == [], view
    assert "- ok: yes" in view and "- dry run: no" in view and "- output json: none" in view
    assert "- cost usd: 6.44509" in view and "read boundary" not in view
    assert "- nested:\n  - inner count: 2" in view
    assert "case-9 and 2 more (--format json shows all)" in view
    assert "- records: 1\n  - run id r1, score 0.5" in view
    assert "- codex__gpt-5: 1" in view  # a key that is data stays as it is
