"""The summary's pieces on hand-made payloads: counts, the score table, odd values, paths."""

from __future__ import annotations

from pathlib import Path

from benchledger.projections.reports.run_summary import (
    attempt_count,
    code,
    intake_line,
    recorded_line,
    runs_table,
    score_table,
    short_markdown,
    shown_path,
    summary_lines,
)


def run(case: str, score: float | None, *, agent: str = "codex", model: str = "gpt-5",
        job: str = "J", attempts: int | None = 1, passed: bool | None = None) -> dict:  # fmt: skip
    record = {"benchmark_id": "tb@2", "case_id": case, "source_runner": "harbor",
              "job_name": job, "agent": {"name": agent, "model": model},
              "official_score": score}  # fmt: skip
    if attempts is not None:
        record["score_aggregation"] = {"attempt_count": attempts}
    if passed is not None:
        record["official_task_score"] = {"value": score, "passed": passed}
    return record


def test_attempts_fall_back_to_the_trial_count_then_to_none() -> None:
    assert attempt_count(run("a", 1.0, attempts=3)) == 3
    assert attempt_count({**run("a", 1.0, attempts=None), "progress": {"n_total_trials": 2}}) == 2
    assert attempt_count(run("a", 1.0, attempts=None)) == 0
    assert attempt_count({"score_aggregation": {"attempt_count": True}}) == 0


def test_intake_names_runs_only_when_they_differ_from_cases_and_caps_the_jobs() -> None:
    same = [run("a", 1.0), run("b", 0.0)]
    assert intake_line(same) == "**2 cases, 2 attempts** from harbor job `J` (tb@2)"
    two_agents = [run("a", 1.0), run("a", 0.0, agent="other")]
    assert intake_line(two_agents).startswith("**1 case, 2 attempts** in 2 runs ")
    many = [run(c, 1.0, job=f"job-{c}") for c in "abcde"]
    assert "jobs `job-a`, `job-b`, `job-c` and 2 more" in intake_line(many)


def test_score_table_rows_per_agent_and_model() -> None:
    rows = score_table([
        run("a", 1.0, passed=True), run("b", 0.5, passed=False), run("c", None),
        run("a", 0.0, model="m|2\nx", passed=False),
    ])  # fmt: skip
    assert rows[2] == "| codex | gpt-5 | 3 | 1 | 0.75 | 1 |"
    assert rows[3] == "| codex | m\\|2 x | 1 | 0 | 0.00 | 0 |"  # a pipe cannot split the row


def test_inline_code_survives_a_backtick() -> None:
    assert code("plain") == "`plain`"
    assert code("a`b") == "``a`b``"
    assert code("`a") == "`` `a ``"


def test_paths_under_the_working_directory_are_shown_relative(tmp_path: Path) -> None:
    assert shown_path(str(tmp_path / "rt" / "x"), tmp_path) == "rt/x"
    assert shown_path("/elsewhere/rt", tmp_path) == "/elsewhere/rt"
    assert shown_path("out/ledger.json", tmp_path) == "out/ledger.json"


def test_recorded_line_for_each_outcome() -> None:
    ledger = {"entries": [{}, {}], "upserted_count": 1, "unchanged_count": 1,
              "skipped_entry_count": 0, "ledger_path": "L.json"}  # fmt: skip
    dry = {"dry_run": True, "goal_id": "g", "benchmark_run_ledger": ledger}
    assert recorded_line(dry, 2) == (
        "- dry run: nothing written; `--execute` would append 2 runs to goal `g` and 2 ledger rows"
    )
    done = {"dry_run": False, "goal_id": "g", "appended_count": 2, "benchmark_run_ledger": ledger}
    assert recorded_line(done, 2) == (
        "- recorded: 2 runs appended to goal `g`; ledger: 1 row written, 1 unchanged, 0 skipped"
    )
    assert recorded_line({"already_recorded": True}, 2).startswith("- already recorded:")


def test_a_payload_without_runs_or_ledger_still_reads(tmp_path: Path) -> None:
    lines = summary_lines({"dry_run": True, "goal_id": "g"}, cwd=tmp_path)
    assert lines[0] == "**0 cases, 0 attempts**"
    assert "- ledger: not updated (add `--update-run-ledger`)" in lines


def test_the_score_table_lists_the_first_arms_then_how_many_more() -> None:
    runs = [run("a", 1.0, agent=f"agent-{n}") for n in range(5)]
    assert len(score_table(runs)) == 2 + 5
    cut = score_table(runs, 3)
    assert cut[2:5] == [f"| agent-{n} | gpt-5 | 1 | 0 | 1.00 | 0 |" for n in range(3)]
    assert cut[5:] == ["", "… and 2 more agents and models (`--verbose` to list all)"]
    assert score_table(runs, 4)[-1] == "… and 1 more agent and model (`--verbose` to list all)"


def test_the_runs_table_has_a_row_per_run() -> None:
    rows = runs_table([{**run("a|b", 0.5, attempts=3), "arm_id": "x", "run_status": "completed"},
                       {"case_id": "c"}])  # fmt: skip
    assert rows[2] == "| a\\|b | x | completed | 0.50 | 3 |"
    assert rows[3] == "| c | - | - | - | 0 |"


def test_the_short_output_cuts_the_runs_and_says_how_many_more(tmp_path: Path) -> None:
    runs = [{**run(f"case-{n:02d}", 1.0), "arm_id": "x"} for n in range(25)]
    payload = {"dry_run": True, "goal_id": "g", "benchmark_runs": runs,
               "recommended_action": "look\nat it"}  # fmt: skip
    lines = short_markdown(payload, cwd=tmp_path).splitlines()
    assert "- next: look at it" in lines
    listed = [line for line in lines if line.startswith("| case-")]
    assert listed == [f"| case-{n:02d} | x | - | 1.00 | 1 |" for n in range(10)]
    assert lines[-1] == "… and 15 more runs (`--verbose` to list all)"
    planned = [{**r, "run_status": "planned", "launch_preview": {"command": "harbor run"}}
               for r in runs[:3]]  # fmt: skip
    payload = {"dry_run": True, "goal_id": "g", "benchmark_runs": planned}
    text = short_markdown(payload, cwd=tmp_path)
    assert text.count("## Benchmark Run") == 2 and text.count("- launch command: `harbor run`") == 2
    assert text.endswith("… and 1 more planned run (`--verbose` to list all)")


def test_an_already_recorded_input_says_when_it_was_recorded() -> None:
    payload = {
        "already_recorded": True,
        "message": "nothing to append: this input was already recorded at positions 1-4",
    }
    assert recorded_line(payload, 2) == (
        "- already recorded: nothing appended (this input was already recorded at positions 1-4)"
    )
