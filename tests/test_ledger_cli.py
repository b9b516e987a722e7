"""The run-ledger commands end to end through click, on SQLite and PostgreSQL.

Every sequence ends with ``rebuild --verify`` clean: whatever a command appended, replaying the
events gives the same read models the incremental updates produced.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchledger.commands.cli import cli

PILOT_GROUP = "tb2-pilot-20260502"
PILOT_JOB = "2026-05-02__09-14-07"
TB = "terminal-bench@2.0"


@pytest.fixture
def env(db_url, tmp_path, monkeypatch):
    """A CLI bound to a fresh store, run from an empty project directory."""
    monkeypatch.chdir(tmp_path)
    return Cli(db_url, tmp_path)


class Cli:
    def __init__(self, db_url: str, root: Path) -> None:
        self.db_url = db_url
        self.root = root

    def run(self, *args: str, stdin: str | None = None):
        runner = CliRunner()
        return runner.invoke(cli, ["--db", self.db_url, *args], input=stdin)

    def ok(self, *args: str) -> dict:
        result = self.run(*args, "--format", "json")
        assert result.exit_code == 0, result.stderr + result.stdout
        return json.loads(result.stdout)

    def fails(self, *args: str, code: int = 1) -> str:
        """Run expecting a handled error; returns its one stderr line (without ``error: ``)."""
        result = self.run(*args)
        assert result.exit_code == code, result.stdout + result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith("error: ")
        assert "Traceback" not in result.stderr + result.stdout
        return lines[0][len("error: ") :]

    def rebuild_clean(self) -> None:
        out = self.ok("rebuild", "--verify")
        assert out["ok"] and out["rebuild_verify"]["differences"] == []
        assert self.ok("verify")["verify"]["ok"]

    def event_count(self) -> int:
        return self.ok("events", "list", "--limit", "100000")["count"]

    def import_fixture(
        self, fixtures_dir: Path, name: str = "L.json", *, in_place: bool = True
    ) -> Path:
        src = fixtures_dir / "loopx-ledger" / "benchmark-run-ledger.json"
        shutil.copyfile(src, self.root / name)
        extra = ["--in-place"] if in_place else []
        out = self.ok("import", "loopx-ledger", name, "--execute", *extra)
        assert out["imported"] and out["row_count"] == 303
        return self.root / name


def rows_of(path: Path) -> dict[str, dict]:
    doc = json.loads(path.read_text())
    return {
        run["run_id"]: run
        for node in doc["benchmarks"].values()
        for case in node["cases"].values()
        for run in case["runs"]
    }


def compact_run(case: str, *, score: float | None, job: str, mode: str = "codex_loopx") -> dict:
    run = {
        "schema_version": "benchmark_run_v0",
        "source_runner": "harbor",
        "benchmark_id": TB,
        "job_name": job,
        "mode": mode,
        "case_id": case,
        "official_score_status": "completed",
        "runner_return_status": "completed",
        "agent": {"name": "codex", "model": "gpt-5.5"},
        "progress": {"n_total_trials": 1, "n_completed_trials": 1, "n_running_trials": 0},
    }
    if score is not None:
        run["official_task_score"] = {
            "kind": "verifier_reward",
            "value": score,
            "passed": score >= 1,
        }
        if score == 0:
            run["score_failure_attribution"] = "official_verifier_solution_failure"
    return run


def write_json(path: Path, data: dict) -> str:
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path.name


# ------------------------------------------------------------------------- import and upsert


def test_import_and_render_give_back_the_loopx_ledger(env, fixtures_dir):
    fixture = fixtures_dir / "loopx-ledger"
    ledger = env.import_fixture(fixtures_dir, in_place=False)
    # the source is left as it was (no --in-place); rendering is asked for separately
    assert ledger.read_bytes() == (fixture / "benchmark-run-ledger.json").read_bytes()
    assert not (env.root / "L.md").exists()
    env.ok("render", "--run-ledger-path", "L.json")
    # Each row reads as loopx 0.4.8 reads it back, plus the arm source benchledger adds.
    read_back = rows_of(ledger)
    assert {row.pop("arm_source") for row in read_back.values()} == {"inferred"}
    assert read_back == rows_of(fixture / "benchmark-run-ledger.loopx-normalized.json")
    expected = (fixture / "benchmark-run-ledger.md").read_text().splitlines()
    assert (env.root / "L.md").read_text().splitlines() == expected
    # The same source file again is already recorded (the rendered L.json is loopx's reading
    # of it, a different file).
    shutil.copyfile(fixture / "benchmark-run-ledger.json", env.root / "source.json")
    again = env.ok(
        "import", "loopx-ledger", "source.json", "--run-ledger-path", "L.json", "--execute"
    )
    assert again["already_recorded"] and not again["imported"]
    env.rebuild_clean()


def test_reupserting_the_same_compact_run_is_a_noop_that_says_so(env):
    name = write_json(env.root / "run.json", compact_run("fix-git", score=1, job="tb_fix_git_a"))
    first = env.ok("benchmark", "run-ledger-upsert", "--benchmark-run-json", name, "--execute")
    assert first["benchmark_run_ledger"]["updated"]
    assert first["benchmark_run_ledger"]["merged_into"] == "appended"
    before_json = (env.root / "benchmark-run-ledger.json").read_bytes()
    events = env.event_count()
    second = env.ok("benchmark", "run-ledger-upsert", "--benchmark-run-json", name, "--execute")
    block = second["benchmark_run_ledger"]
    assert block["updated"] is False and block["unchanged"] is True
    assert block["merged_into"] == "unchanged"
    assert env.event_count() == events
    assert (env.root / "benchmark-run-ledger.json").read_bytes() == before_json
    env.rebuild_clean()


# ------------------------------------------------------------------------- archive / restore


def test_archive_then_restore_gives_back_identical_files(env, fixtures_dir):
    ledger = env.import_fixture(fixtures_dir)
    md = env.root / "L.md"
    json_before, md_before = ledger.read_bytes(), md.read_bytes()
    args = ["--run-ledger-path", "L.json", "--benchmark-id", TB, "--case-id", "build-cython-ext"]

    dry = env.ok("benchmark", "run-ledger-archive", *args, "--reason", "superseded")
    assert dry["dry_run"] and not dry["updated"]
    assert dry["archive"]["newly_archived_run_count"] == 11
    assert ledger.read_bytes() == json_before

    done = env.ok("benchmark", "run-ledger-archive", *args, "--reason", "superseded", "--execute")
    archive = done["archive"]
    assert done["updated"] and archive["newly_archived_run_count"] == 11
    assert archive["matched_run_count"] == 11 and len(archive["archived_samples"]) == 11
    archived = [r for r in rows_of(ledger).values() if r.get("archive_batch_id")]
    assert {r["archive_batch_id"] for r in archived} >= {archive["archive_batch_id"]}
    assert "build-cython-ext" not in _decision_cases(md.read_text())

    again = env.ok("benchmark", "run-ledger-archive", *args, "--reason", "superseded", "--execute")
    assert not again["updated"] and again["unchanged"]
    assert again["archive"]["newly_archived_run_count"] == 0
    assert again["archive"]["already_archived_run_count"] == 11
    assert again["archive"]["archive_batch_id"] == archive["archive_batch_id"]

    restored = env.ok("benchmark", "run-ledger-restore", *args, "--reason", "wrong", "--execute")
    assert restored["updated"] and restored["archive"]["restored_run_count"] == 11
    assert restored["archive"]["restored_previous_state"] is True
    assert ledger.read_bytes() == json_before
    assert md.read_bytes() == md_before
    env.rebuild_clean()


def _decision_cases(markdown: str) -> set[str]:
    section = markdown.split("## Case Decisions", 1)[1].split("\n## ", 1)[0]
    return {line.split("|")[2].strip(" `") for line in section.splitlines()[3:] if "|" in line}


def test_archive_restore_flag_and_a_later_write_stamp_now(env, fixtures_dir):
    ledger = env.import_fixture(fixtures_dir)
    arm = "swe_marathon_host_codex_app_server_goal_baseline"
    args = ["--run-ledger-path", "L.json", "--benchmark-id", "swe-marathon", "--arm-id", arm]
    env.ok("benchmark", "run-ledger-archive", *args, "--reason", "r1", "--execute")
    archived = {k for k, r in rows_of(ledger).items() if r.get("archive_reason") == "r1"}
    assert archived
    name = write_json(env.root / "run.json", compact_run("fix-git", score=1, job="tb_fix_git_b"))
    env.ok("benchmark", "run-ledger-upsert", "--benchmark-run-json", name,
           "--run-ledger-path", "L.json", "--execute")  # fmt: skip
    out = env.ok("benchmark", "run-ledger-archive", *args, "--reason", "r1", "--restore",
                 "--execute")  # fmt: skip
    assert out["archive"]["restored_run_count"] == len(archived)
    assert out["archive"]["restored_previous_state"] is False
    rows = rows_of(ledger)
    assert not any(rows[k].get("archive_state") for k in archived)
    env.rebuild_clean()


# ------------------------------------------------------------------------- merge


def test_merge_sources_into_the_store_ledger(env, fixtures_dir):
    src = fixtures_dir / "loopx-ledger" / "benchmark-run-ledger.json"
    (env.root / "in").mkdir()
    shutil.copyfile(src, env.root / "in" / "a.json")
    out = env.ok("benchmark", "run-ledger-merge", "--run-ledger-path", "T.json",
                 "--source-run-ledger-path", "in/a.json", "--source-run-ledger-path", "gone.json",
                 "--benchmark-id", "swe-marathon", "--execute")  # fmt: skip
    merge = out["merge"]
    assert out["updated"] and merge["merged_run_count"] == 7 and merge["new_run_id_count"] == 7
    assert merge["missing_source_count"] == 1 and merge["source_run_count"] == 303
    assert merge["skipped_by_reason"] == {"benchmark_filter": 296}
    assert merge["source_paths_recorded"] is False
    merged = rows_of(env.root / "T.json")
    source_rows = {k: v for k, v in rows_of(src).items() if v["benchmark_id"] == "swe-marathon"}
    assert set(merged) == set(source_rows)
    assert all(merged[k]["recorded_at"] == source_rows[k]["recorded_at"] for k in merged)
    assert (env.root / "T.md").exists()

    events = env.event_count()
    again = env.ok("benchmark", "run-ledger-merge", "--run-ledger-path", "T.json",
                   "--source-run-ledger-glob", "**/*.json", "--benchmark-id", "swe-marathon",
                   "--execute")  # fmt: skip
    assert not again["updated"] and again["merge"]["changed_run_count"] == 0
    assert again["merge"]["self_source_skipped"] == 1
    assert env.event_count() == events
    env.rebuild_clean()


def test_merge_keeps_an_archived_target_row_archived(env, fixtures_dir):
    env.import_fixture(fixtures_dir)
    env.ok("benchmark", "run-ledger-archive", "--run-ledger-path", "L.json", "--benchmark-id",
           "swe-marathon", "--archive-all-matching-benchmark", "--reason", "old",
           "--execute")  # fmt: skip
    src = fixtures_dir / "loopx-ledger" / "benchmark-run-ledger.json"
    shutil.copyfile(src, env.root / "src.json")
    env.ok("benchmark", "run-ledger-merge", "--run-ledger-path", "L.json",
           "--source-run-ledger-path", "src.json", "--benchmark-id", "swe-marathon",
           "--execute")  # fmt: skip
    rows = [r for r in rows_of(env.root / "L.json").values() if r["benchmark_id"] == "swe-marathon"]
    assert rows and all(r.get("archive_state") == "archived" for r in rows)
    env.rebuild_clean()


# ------------------------------------------------------------------------- aggregate


def _pass_then_fail_ledger(env) -> None:
    """Case fix-git: a pass first, a countable zero later; case regex-log: only a later zero."""
    runs = [
        ("fix-git", 1, "tb_fix_git_r1", "2026-06-01T00:00:00Z"),
        ("fix-git", 0, "tb_fix_git_r2", "2026-06-02T00:00:00Z"),
        ("regex-log", 0, "tb_regex_log_r1", "2026-06-01T00:00:00Z"),
    ]
    for case, score, job, stamp in runs:
        name = write_json(env.root / f"{job}.json", compact_run(case, score=score, job=job))
        env.ok("benchmark", "run-ledger-upsert", "--benchmark-run-json", name,
               "--recorded-at", stamp, "--execute")  # fmt: skip


@pytest.mark.parametrize(
    ("policy", "used", "fix_git"),
    [
        ("best", "best", "pass"),
        ("best-of-n", "best", "pass"),
        ("latest_countable", "latest_countable", "official_zero"),
        ("latest-countable", "latest_countable", "official_zero"),
    ],
)
def test_aggregate_selection_policies(env, policy, used, fix_git):
    _pass_then_fail_ledger(env)
    out = env.ok("benchmark", "run-ledger-aggregate", "--benchmark-id", TB,
                 "--selection-policy", policy)  # fmt: skip
    agg = out["aggregate"]
    assert out["selection_policy"] == used and agg["selection_policy"]["selection"] == used
    assert agg["case_best"]["fix-git"]["bucket"] == fix_git
    assert agg["case_best"]["regex-log"]["bucket"] == "official_zero"
    assert agg["canonical_total"] == 2 and agg["deduped_run_count"] == 3
    assert out["dry_run"] and not (env.root / "agg.json").exists()
    md = env.run("benchmark", "run-ledger-aggregate", "--benchmark-id", TB,
                 "--selection-policy", policy).stdout  # fmt: skip
    assert f"- selection policy: {used} (" in md


def test_aggregate_output_json_canonical_ids_and_sources(env, fixtures_dir):
    _pass_then_fail_ledger(env)
    (env.root / "ids.txt").write_text("fix-git\n\nbuild-cython-ext\nfix-git\n")
    src = fixtures_dir / "loopx-ledger" / "benchmark-run-ledger.json"
    shutil.copyfile(src, env.root / "loopx.json")
    out = env.ok("benchmark", "run-ledger-aggregate", "--benchmark-id", TB,
                 "--canonical-case-ids-file", "ids.txt", "--source-run-ledger-path", "loopx.json",
                 "--output-json", "out/agg.json", "--execute")  # fmt: skip
    agg = out["aggregate"]
    assert agg["canonical_total"] == 2
    assert list(agg["case_best"]) == ["fix-git", "build-cython-ext"]
    assert agg["case_best"]["build-cython-ext"]["bucket"] != "missing"
    assert out["merge_preview"]["source_ledger_count"] == 2  # primary + loopx.json
    assert agg["source_ledger_files"] == 2  # a count, as loopx writes it (no paths recorded)
    written = (env.root / "out" / "agg.json").read_text()
    assert json.loads(written) == agg
    assert written == json.dumps(agg, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert str(env.root) not in written
    env.rebuild_clean()


# ------------------------------------------------------------------------- drift check


def _pilot_job(fixtures_dir: Path, root: Path) -> str:
    group = root / "harbor" / PILOT_GROUP
    shutil.copytree(fixtures_dir / "harbor" / PILOT_GROUP, group)
    manifest = json.loads((fixtures_dir / "harbor" / "manifest.json").read_text())
    for rel in manifest["empty_dirs"]:
        if rel.startswith(PILOT_GROUP + "/"):
            (root / "harbor" / rel).mkdir(parents=True, exist_ok=True)
    return str(group / "jobs" / PILOT_JOB)


def test_check_reports_drift_and_the_gate(env, fixtures_dir):
    job = _pilot_job(fixtures_dir, env.root)
    ingest = ["--runtime-root", "rt", "benchmark", "run", "terminal-bench", "--harbor-job-dir",
              job, "--no-global-sync", "--execute"]  # fmt: skip
    assert env.run(*ingest[:5], "--goal-id", "g", *ingest[5:]).exit_code == 0

    out = env.ok("benchmark", "run-ledger-check", "--goal-id", "g", "--limit", "2")
    drift = out["benchmark_run_ledger_drift"]
    assert drift["drift_detected"] and drift["missing_ledger_run_count"] == 5
    assert drift["terminal_history_run_count"] == 5 and drift["truncated"]
    assert len(drift["missing_runs"]) == 2 and "drift_gate_failed" not in out
    template = drift["missing_runs"][0]["catch_up_command_template"]
    assert template.startswith("benchledger benchmark run-ledger-upsert ")
    assert "--recorded-at" in template and str(env.root) not in json.dumps(out)

    gated = env.run("benchmark", "run-ledger-check", "--goal-id", "g", "--fail-on-drift",
                    "--format", "json")  # fmt: skip
    assert gated.exit_code == 1
    body = json.loads(gated.stdout)
    assert body["ok"] is True and body["drift_gate_failed"] is True
    assert gated.stderr.strip().splitlines() == [
        "error: drift detected: 5 finished history runs missing from the ledger"
    ]

    update = env.run(*ingest[:5], "--goal-id", "g2", *ingest[5:], "--update-run-ledger")
    assert update.exit_code == 0, update.stderr
    clean = env.ok("benchmark", "run-ledger-check", "--goal-id", "g", "--fail-on-drift")
    assert clean["drift_gate_failed"] is False
    assert not clean["benchmark_run_ledger_drift"]["drift_detected"]
    assert clean["benchmark_run_ledger_drift"]["matched_history_run_count"] == 5
    assert clean["benchmark_run_ledger_drift"]["ledger_run_count"] == 5
    empty = env.ok("benchmark", "run-ledger-check", "--goal-id", "nobody", "--history-limit", "-3")
    assert empty["history_limit"] == 0
    assert empty["benchmark_run_ledger_drift"]["checked_history_run_count"] == 0
    env.rebuild_clean()


def test_check_against_a_large_imported_ledger(env, fixtures_dir):
    """The check reads only the history's cases in full; every other row still counts."""
    env.import_fixture(fixtures_dir, "benchmark-run-ledger.json")
    job = _pilot_job(fixtures_dir, env.root)
    result = env.run("--runtime-root", "rt", "benchmark", "run", "terminal-bench", "--goal-id",
                     "g", "--harbor-job-dir", job, "--no-global-sync", "--update-run-ledger",
                     "--execute")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    drift = env.ok("benchmark", "run-ledger-check", "--goal-id", "g")["benchmark_run_ledger_drift"]
    assert drift["ledger_run_count"] == 308
    assert drift["matched_history_run_count"] == 5 and not drift["drift_detected"]
    env.rebuild_clean()


# ------------------------------------------------------------------------- errors


ARCHIVE = ["benchmark", "run-ledger-archive", "--benchmark-id", TB]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            [*ARCHIVE, "--reason", "r", "--case-id", "x", "--dry-run", "--execute"],
            "benchmark run-ledger-archive accepts either --dry-run or --execute, not both",
        ),
        (
            ["benchmark", "run-ledger-restore", "--benchmark-id", TB, "--reason", "r",
             "--case-id", "x", "--dry-run", "--execute"],
            "benchmark run-ledger-restore accepts either --dry-run or --execute, not both",
        ),
        (
            [*ARCHIVE, "--reason", "r"],
            "provide a run/case/arm filter, or pass --archive-all-matching-benchmark",
        ),
        (
            ["benchmark", "run-ledger-archive", "--benchmark-id", " ", "--reason", "r",
             "--case-id", "x"],
            "--benchmark-id is required (or --run-id, whose runs name their benchmark)",
        ),
        ([*ARCHIVE, "--reason", "  ", "--case-id", "x"], "archive reason is required"),
        (
            ["benchmark", "run-ledger-merge", "--dry-run", "--execute", "--source-run-ledger-path",
             "a.json"],
            "benchmark run-ledger-merge accepts either --dry-run or --execute, not both",
        ),
        (
            ["benchmark", "run-ledger-merge"],
            "provide at least one --source-run-ledger-path or --source-run-ledger-glob",
        ),
        (
            ["benchmark", "run-ledger-merge", "--source-run-ledger-path", "bad.json"],
            "bad.json is not valid JSON: unexpected character, expected a string key "
            "(at line 1, column 2)",
        ),
        (
            ["benchmark", "run-ledger-merge", "--source-run-ledger-path", "other.json"],
            "benchmark run ledger must use schema_version=benchmark_run_ledger_v0",
        ),
        (
            ["benchmark", "run-ledger-aggregate", "--benchmark-id", TB, "--dry-run", "--execute"],
            "benchmark run-ledger-aggregate accepts either --dry-run or --execute, not both",
        ),
        (
            ["benchmark", "run-ledger-aggregate", "--benchmark-id", TB, "--execute"],
            "--execute requires --output-json",
        ),
        (
            ["benchmark", "run-ledger-aggregate", "--benchmark-id", TB,
             "--canonical-case-root", "nope"],
            "--canonical-case-root is not a directory: nope",
        ),
        (
            ["benchmark", "run-ledger-aggregate", "--benchmark-id", TB,
             "--canonical-case-ids-file", "missing.txt"],
            "--canonical-case-ids-file: file not found: missing.txt",
        ),
        (
            ["benchmark", "run-ledger-check", "--goal-id", "a/b"],
            "goal id must be a single path segment",
        ),
        (
            ["benchmark", "run-ledger-check", "--goal-id", "g", "--run-ledger-path",
             "foreign.json"],
            "foreign.json is not in the store; import it first with "
            "`benchledger import loopx-ledger foreign.json --execute`",
        ),
        (
            [*ARCHIVE, "--reason", "r", "--case-id", "x", "--run-ledger-path", "foreign.json"],
            "foreign.json is not in the store; import it first with "
            "`benchledger import loopx-ledger foreign.json --execute`",
        ),
        (
            ["benchmark", "run-ledger-upsert", "--benchmark-run-json", "run.json",
             "--run-ledger-path", "foreign.json", "--execute"],
            "foreign.json is not in the store; import it first with "
            "`benchledger import loopx-ledger foreign.json --execute`",
        ),
    ],
)  # fmt: skip
def test_error_messages_are_one_line_exit_1(env, args, message):
    (env.root / "bad.json").write_text("{oops")
    (env.root / "other.json").write_text('{"schema_version": "x"}')
    foreign = '{"schema_version": "benchmark_run_ledger_v0"}'
    (env.root / "foreign.json").write_text(foreign)
    write_json(env.root / "run.json", compact_run("fix-git", score=1, job="tb_fix_git_f"))
    assert env.fails(*args) == message
    assert (env.root / "foreign.json").read_text() == foreign
    assert not (env.root / "benchmark-run-ledger.json").exists()


@pytest.mark.parametrize(
    ("args", "block", "schema"),
    [
        ([*ARCHIVE, "--reason", "r"], "archive", "benchmark_run_ledger_archive_v0"),
        (["benchmark", "run-ledger-merge"], "merge", "benchmark_run_ledger_merge_v0"),
        (["benchmark", "run-ledger-aggregate", "--benchmark-id", TB, "--execute"], "aggregate",
         None),
        (["benchmark", "run-ledger-check", "--goal-id", ".."], "benchmark_run_ledger_drift",
         "benchmark_run_ledger_drift_v0"),
    ],
)  # fmt: skip
def test_error_envelopes_in_json(env, args, block, schema):
    result = env.run(*args, "--format", "json")
    assert result.exit_code == 1
    body = json.loads(result.stdout)
    assert body["ok"] is False and body["error"] and body[block]["ok"] is False
    if schema:
        assert body[block]["schema_version"] == schema


def test_missing_required_flags_are_usage_errors(env):
    assert env.run("benchmark", "run-ledger-archive", "--reason", "r").exit_code == 2
    assert env.run("benchmark", "run-ledger-restore", "--benchmark-id", TB).exit_code == 2
    assert env.run("benchmark", "run-ledger-aggregate").exit_code == 2
    assert env.run("benchmark", "run-ledger-check").exit_code == 2
    bad = env.run("benchmark", "run-ledger-aggregate", "--benchmark-id", TB,
                  "--selection-policy", "newest")  # fmt: skip
    assert bad.exit_code == 2


# ------------------------------------------------------------------------- public safety


def test_planted_paths_and_tokens_never_reach_the_ledger_files(env):
    name = write_json(env.root / "run.json", compact_run("fix-git", score=1, job="tb_fix_git_c"))
    out = env.ok("benchmark", "run-ledger-upsert", "--benchmark-run-json", name,
                 "--run-ledger-note", "/home/me/x", "--execute")  # fmt: skip
    assert "note_dropped_public_safety" in out["benchmark_run_ledger"]["warnings"]
    message = env.fails("benchmark", "run-ledger-upsert", "--benchmark-run-json", name,
                        "--run-group-id", "/home/me/group", "--execute")  # fmt: skip
    assert message == "--run-group-id is not public-safe"
    message = env.fails("benchmark", "run-ledger-archive", "--benchmark-id", TB, "--case-id",
                        "fix-git", "--reason", "token=abcdefabcdef12", "--execute")  # fmt: skip
    assert message == "--reason is not public-safe"
    message = env.fails("benchmark", "run-ledger-restore", "--benchmark-id", TB, "--case-id",
                        "fix-git", "--reason", "/home/me/why", "--execute")  # fmt: skip
    assert message == "--reason is not public-safe"
    env.ok("benchmark", "run-ledger-archive", "--benchmark-id", TB, "--case-id", "fix-git",
           "--reason", "ok", "--archive-batch-id", "/home/me/batch", "--execute")  # fmt: skip
    for path in (env.root / "benchmark-run-ledger.json", env.root / "benchmark-run-ledger.md"):
        text = path.read_text()
        for planted in ("/home/me", "token=", "abcdefabcdef12"):
            assert planted not in text, (path.name, planted)
    events = env.ok("events", "list", "--limit", "1000")
    assert "/home/me" not in json.dumps([e.get("payload") for e in events["events"]])
    env.rebuild_clean()
