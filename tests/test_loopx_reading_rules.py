"""Two rules of the loopx reading (ledger/sources/loopx.py) on single rows, without the oracle:
the public-ref rule on the three refs loopx keeps, and the repair route's sentence recomputed on
load whatever the row stored (issue 33; the differential suite checks both against loopx)."""

from __future__ import annotations

from benchledger.ledger.sources.loopx import read_loopx_row

APT_RISK_ACTION = (
    "select a SkillsBench task without Docker package-bootstrap setup risk for the next full "
    "baseline/treatment pair, or repair the Docker setup route before rerunning this task"
)


def _row(**fields):
    row = {
        "run_id": "r1",
        "benchmark_id": "skillsbench@1.1",
        "case_id": "case-a",
        "arm_id": "codex_goal_mode_baseline",
        "status": "blocked",
        "failure_class": "skillsbench_compose_setup_blocked_before_agent_rounds",
        "failure_scope": "runner_or_setup",
        "score_failure_attribution": "skillsbench_docker_apt_setup_risk_preflight_blocked",
        "recorded_at": "2026-06-01T09:00:00+08:00",
    }
    row.update(fields)
    return row


def _read(row):
    return read_loopx_row(row, benchmark_key="skillsbench@1.1", case_key="case-a")


def test_refs_under_a_private_marker_keep_their_basename_and_unpublishable_ones_go() -> None:
    read = _read(
        _row(
            artifact_refs={
                "artifact_ref": "docs/research/skillsbench-notes.md",
                "result_ref": "cloud-ecs/job-7/result.json",
                "compact_artifact_ref": (
                    ".local/private-benchmark-jobs/job-7/case-a/benchmark_run.compact.json"
                ),
                "history_ref": "goals/g/runs/x.json",
            }
        )
    )
    assert read["artifact_refs"] == {
        "result_ref": "cloud-ecs/job-7/result.json",
        "compact_artifact_ref": "benchmark_run.compact.json",
    }


def test_artifact_refs_go_when_no_ref_is_left() -> None:
    read = _read(_row(artifact_refs={"artifact_ref": "/Users/alice/jobs/result.json"}))
    assert "artifact_refs" not in read
    assert "public_safety" not in read  # the rule dropped it, not the secret filter


def test_the_route_sentence_is_loopx_s_whatever_the_row_stored() -> None:
    read = _read(
        _row(
            repair_class="skillsbench_setup_preflight_selection",
            next_action="select a non-apt-risk SkillsBench task (an older wording)",
        )
    )
    assert read["repair_class"] == "skillsbench_setup_preflight_selection"
    assert read["next_action"] == APT_RISK_ACTION
    rerouted = _read(_row(repair_class="something_else", next_action="older advice"))
    assert rerouted["next_action"] == APT_RISK_ACTION
