"""Planned → completed link (docs/formats/cli.md §7.5): the pure function, and the CLI once it is
wired."""

from __future__ import annotations

import json

import pytest

from benchledger.ledger.handlers.planned_link import link_planned, planned_runs_by_job
from tests.support_planned_cli import copy_harbor_job_renamed, invoke, ledger_rows


def planned(
    job: str,
    key: str,
    case: str = "fix-git",
    at: str = "2026-05-01T00:00:00Z",
    status: str = "planned",
) -> dict:
    """A goal run record as ``StoreReads.goal_records`` returns it."""
    return {
        "generated_at": at,
        "stem": at.replace(":", "-"),
        "benchmark_run": {
            "schema_version": "benchmark_run_v0",
            "source_runner": "benchledger_planner",
            "run_status": status,
            "job_name": job,
            "case_id": case,
            "run_key": key,
            "launch_preview": {"job_name": job, "argv": ["harbor", "run", "--job-name", job]},
        },
    }


def ingest(job: str, case: str = "fix-git", **extra) -> dict:
    return {
        "schema_version": "benchmark_run_v0",
        "source_runner": "harbor",
        "job_name": job,
        "case_id": case,
        "run_status": "completed",
        "run_key": f"harbor:{job}:{case}",
        **extra,
    }


def test_matching_job_name_gets_the_planned_run_key():
    records = [ingest("J"), ingest("other")]
    linked = link_planned(records, [planned("J", "planned:aaaa")])
    assert linked[0]["planned_run_key"] == "planned:aaaa"
    assert "planned_run_key" not in linked[1]
    assert "planned_run_key" not in records[0], "inputs are not mutated"


def test_bare_planned_records_are_accepted():
    bare = planned("J", "planned:bare")["benchmark_run"]
    assert link_planned([ingest("J")], [bare])[0]["planned_run_key"] == "planned:bare"


@pytest.mark.parametrize(
    "target",
    [
        planned("J", "planned:f", status="fixture"),
        {**planned("J", "planned:x"), "benchmark_run": {
            **planned("J", "planned:x")["benchmark_run"], "launch_preview": None}},
        {"benchmark_run": ingest("J")},
        {"unrelated": True},
        "not a record",
    ],
)  # fmt: skip
def test_only_planned_records_with_a_preview_are_link_targets(target):
    assert "planned_run_key" not in link_planned([ingest("J")], [target])[0]


def test_planned_and_fixture_records_are_never_linked():
    plan = planned("J", "planned:p")
    as_record = dict(plan["benchmark_run"])
    linked = link_planned([as_record, {**as_record, "run_status": "fixture"}], [plan])
    assert all("planned_run_key" not in r for r in linked)


def test_an_existing_link_is_kept():
    record = ingest("J", planned_run_key="planned:explicit")
    assert link_planned([record], [planned("J", "planned:new")])[0]["planned_run_key"] == (
        "planned:explicit"
    )


def test_multi_task_plan_prefers_the_same_case_then_the_newest():
    plans = [
        planned("J", "planned:old-other", case="b", at="2026-05-01T00:00:00Z"),
        planned("J", "planned:new-other", case="c", at="2026-05-03T00:00:00Z"),
        planned("J", "planned:fix", case="fix-git", at="2026-05-02T00:00:00Z"),
    ]
    linked = link_planned([ingest("J", "fix-git"), ingest("J", "unplanned")], plans)
    assert linked[0]["planned_run_key"] == "planned:fix"
    assert linked[1]["planned_run_key"] == "planned:new-other"


def test_ties_keep_input_order():
    plans = [planned("J", "planned:first", at=""), planned("J", "planned:second", at="")]
    assert [r.run_key for r in planned_runs_by_job(plans)["J"]] == [
        "planned:first",
        "planned:second",
    ]


# --- through the CLI ----------------------------------------------------------------------------


def _plan_then_ingest(fixtures_dir, tmp_path):
    db = f"sqlite:///{tmp_path / 'store.db'}"
    rt = tmp_path / "rt"
    ledger = tmp_path / "ledger.json"
    common = ["--goal-id", "link", "--run-ledger-path", str(ledger), "--update-run-ledger",
              "--execute", "--format", "json"]  # fmt: skip
    plan = invoke(["benchmark", "run", "terminal-bench", "--include-task-name", "fix-git",
                   "--agent", "codex", "--job-name", "tb-link-job", *common],
                  db=db, runtime_root=rt)  # fmt: skip
    assert plan.code == 0, plan.stderr
    job_dir = copy_harbor_job_renamed(fixtures_dir, "01_all_pass", "tb-link-job", tmp_path)
    done = invoke(["benchmark", "run", "terminal-bench", "--harbor-job-dir", str(job_dir),
                   *common], db=db, runtime_root=rt)  # fmt: skip
    assert done.code == 0, done.stderr
    return plan.payload, done.payload, rt, ledger


def test_cli_plan_then_ingest_keeps_both_in_goal_history(fixtures_dir, tmp_path):
    """What holds without the link: both runs are in the goal history, the plan off the ledger."""
    plan, done, rt, ledger = _plan_then_ingest(fixtures_dir, tmp_path)
    planned_run = plan["benchmark_run"]
    assert planned_run["run_status"] == "planned"
    assert planned_run["launch_preview"]["job_name"] == planned_run["job_name"] == "tb-link-job"
    assert plan["benchmark_run_ledger"]["skipped"] is True
    assert {r["job_name"] for r in done["benchmark_runs"]} == {"tb-link-job"}
    index = [
        json.loads(line)
        for line in (rt / "goals" / "link" / "runs" / "index.jsonl").read_text("utf-8").splitlines()
    ]
    statuses = sorted(row["benchmark_run"]["run_status"] for row in index)
    assert statuses.count("planned") == 1 and len(statuses) == 1 + len(done["benchmark_runs"])
    rows = ledger_rows(ledger)
    assert rows and all(row["status"] != "planned" for row in rows)


def test_cli_ingest_of_the_planned_job_carries_planned_run_key(fixtures_dir, tmp_path):
    plan, done, rt, ledger = _plan_then_ingest(fixtures_dir, tmp_path)
    key = plan["benchmark_run"]["run_key"]
    assert all(r["planned_run_key"] == key for r in done["benchmark_runs"])
    fix_git = [r for r in ledger_rows(ledger) if r["case_id"] == "fix-git"]
    assert fix_git and all(row.get("planned_run_key") == key for row in fix_git)
    index = [
        json.loads(line)
        for line in (rt / "goals" / "link" / "runs" / "index.jsonl").read_text("utf-8").splitlines()
    ]
    completed = [
        row["benchmark_run"] for row in index if row["benchmark_run"]["run_status"] != "planned"
    ]
    assert completed and all(r.get("planned_run_key") == key for r in completed)
