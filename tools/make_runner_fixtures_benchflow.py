"""BenchFlow part of tools/make_runner_fixtures.py (run through it: ``... benchflow``).

BenchFlow 0.7.11's ``Evaluation.run()`` needs a sandbox provider (docker, daytona, modal,
agentcore, apple container); none runs on the machine the fixtures were made on, and BenchFlow
has no provider for a plain host directory. So the rollouts here are written by BenchFlow's own
rollout writers, the functions ``Rollout`` calls after the oracle agent and the verifier have run:
``_write_config`` (config.json) and ``_build_rollout_result`` (timing.json, prompts.json,
rewards.jsonl, trainer/*, results.jsonl and, last and atomically, result.json), with
``RolloutPaths.mkdir`` for the agent/verifier/artifacts dirs. A rollout killed while writing is
made by stopping that same write sequence at the file being written and cutting it in half.

The expected numbers come from BenchFlow's own readers: ``iter_task_result_paths``,
``load_task_results``, ``collect_metrics`` and ``classify_score_outcome``.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

from make_runner_fixtures import OUT, scrub_text, scrub_tree, write_manifest

JOB = "2026-12-01__12-00-00"
STARTED = datetime(2026, 12, 1, 12, 0, 0)
# The order in which _build_rollout_result writes a rollout's files (result.json last).
WRITE_ORDER = ["trajectory/acp_trajectory.jsonl", "timing.json", "prompts.json", "rewards.jsonl",
               "trainer/verifiers.jsonl", "trainer/atif.json", "trainer/adp.jsonl",
               "results.jsonl", "result.json"]  # fmt: skip

# case -> rollouts: (task, rollout hash, reward or None, how it ends)
#   "finished": every file written;  "killed_mid_agent": config.json and empty dirs only;
#   "killed_writing:<file>": stopped while writing <file> (cut in half), later files absent.
BENCHFLOW_CASES: list[dict[str, Any]] = [
    {
        "key": "01_oracle_finished",
        "items": [],
        "description": "oracle on two tasks, both rollouts finished (reward 1.0 and 0.0)",
        "rollouts": [("alpha", "0a1b2c3d", 1.0, "finished"), ("beta", "1b2c3d4e", 0.0, "finished")],
    },
    *[
        {
            "key": f"0{n}_killed_writing_{name.replace('/', '_').replace('.', '_')}",
            "items": [4],
            "description": f"rollout beta killed while writing {name}: it is cut in half, no "
            "result.json; rollout alpha finished",
            "rollouts": [
                ("alpha", "0a1b2c3d", 1.0, "finished"),
                ("beta", "1b2c3d4e", 1.0, f"killed_writing:{name}"),
            ],
        }
        for n, name in enumerate(
            [
                "timing.json",
                "prompts.json",
                "rewards.jsonl",
                "trainer/verifiers.jsonl",
                "results.jsonl",
            ],
            start=2,
        )
    ],
    {
        "key": "07_killed_mid_agent",
        "items": [5],
        "description": "rollout beta killed mid-agent: config.json and empty agent/, verifier/, "
        "artifacts/, trajectory/; rollout alpha finished",
        "rollouts": [
            ("alpha", "0a1b2c3d", 1.0, "finished"),
            ("beta", "1b2c3d4e", None, "killed_mid_agent"),
        ],
    },
]


def write_rollout(tasks: Path, job_dir: Path, task: str, suffix: str, reward: float | None,
                  ends: str) -> Path:  # fmt: skip
    from benchflow.rollout._results import _build_rollout_result, _write_config
    from benchflow.skill_policy import SKILL_MODE_NO_SKILL, resolve_task_skill_policy
    from benchflow.task.paths import RolloutPaths

    task_path = tasks / task
    task_path.mkdir(parents=True, exist_ok=True)
    rollout_dir = job_dir / f"{task}__{suffix}"
    paths = RolloutPaths(rollout_dir)
    paths.mkdir()
    (rollout_dir / "trajectory").mkdir(parents=True, exist_ok=True)
    policy = resolve_task_skill_policy(task_path=task_path, skill_mode=SKILL_MODE_NO_SKILL,
                                       runtime_skills_dir=None,
                                       declared_sandbox_skills_dir=None)  # fmt: skip
    _write_config(rollout_dir, task_path=task_path, agent="oracle", model=None,
                  environment="docker", skill_policy=policy, sandbox_user="agent",
                  context_root=None, timeout=900, started_at=STARTED, agent_env={})  # fmt: skip
    if ends == "killed_mid_agent":
        return rollout_dir
    # Written in place (files name their own rollout dir), then set aside for a killed rollout.
    _build_rollout_result(
        rollout_dir, task_name=task, rollout_name=rollout_dir.name, agent="oracle",
        agent_name="oracle", model=None, n_tool_calls=0, prompts=["Solve the task."],
        error=None, verifier_error=None, trajectory=[], partial_trajectory=False,
        rewards={"reward": reward}, started_at=STARTED,
        timing={"environment_setup": 1.0, "agent_execution": 2.0, "verifier": 1.0, "total": 4.0},
    )  # fmt: skip
    if ends == "finished":
        return rollout_dir
    staging = Path(tempfile.mkdtemp(prefix="runner-fixture-rollout-")) / rollout_dir.name
    for name in WRITE_ORDER:
        if (rollout_dir / name).exists():
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            (rollout_dir / name).rename(staging / name)
    (rollout_dir / "trainer").rmdir()  # not there yet when the kill came before it
    cut = ends.split(":", 1)[1]
    for name in WRITE_ORDER:
        source = staging / name
        if not source.exists():
            continue
        target = rollout_dir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        data = source.read_bytes()
        if name == cut:
            target.write_bytes(data[: max(1, len(data) // 2)])
            break
        target.write_bytes(data)
    return rollout_dir


def benchflow_numbers(root: Path) -> dict[str, Any]:
    from benchflow._utils.result_paths import iter_task_result_paths, load_task_results
    from benchflow._utils.scoring import classify_score_outcome
    from benchflow.metrics import collect_metrics

    counted = [str(p.relative_to(root)) for p in iter_task_result_paths(root)]
    selected = load_task_results(root)
    metrics = collect_metrics(root)
    rollouts = []
    for rollout in sorted(p for p in root.glob("jobs/*/*__*") if p.is_dir()):
        result_path = rollout / "result.json"
        result = json.loads(result_path.read_text()) if result_path.exists() else None
        rollouts.append(
            {
                "dir": str(rollout.relative_to(root)),
                "task_name": rollout.name.split("__")[0],
                "has_result": result is not None,
                "files": sorted(
                    str(p.relative_to(rollout)) for p in rollout.rglob("*") if p.is_file()
                ),
                "verdict": classify_score_outcome(result) if result else None,
                "reward": (result.get("rewards") or {}).get("reward") if result else None,
            }
        )
    return {
        "benchflow": {
            "counted_result_files": counted,
            "selected": {
                task: {
                    "reward": (r.get("rewards") or {}).get("reward"),
                    "verdict": classify_score_outcome(r),
                }
                for task, r in sorted(selected.items())
            },
            "metrics": {
                "n_tasks": len(metrics.tasks),
                "rewards": {t.task_name: t.reward for t in metrics.tasks},
            },
        },
        "rollouts": rollouts,
    }


def expected_cases(numbers: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 31 items 4-6 for BenchFlow: one case per task; a rollout without result.json is an
    unfinished attempt (never a score); the case is completed only when every rollout has one."""
    by_task: dict[str, list[dict[str, Any]]] = {}
    for rollout in numbers["rollouts"]:
        by_task.setdefault(rollout["task_name"], []).append(rollout)
    cases = []
    for task, rows in sorted(by_task.items()):
        finished = [r for r in rows if r["has_result"]]
        cases.append(
            {
                "task_name": task,
                "attempts": len(rows),
                "attempts_with_result": len(finished),
                "unfinished": len(rows) - len(finished),
                "score": numbers["benchflow"]["selected"].get(task, {}).get("reward"),
                "run_status": "completed" if len(finished) == len(rows) else "incomplete",
            }
        )
    return cases


def generate_benchflow(only: list[str]) -> None:
    manifest_path = OUT / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    cases = {c["key"]: c for c in manifest.get("benchflow", [])}
    for spec in BENCHFLOW_CASES:
        if only and spec["key"] not in only:
            continue
        work = Path(tempfile.mkdtemp(prefix="runner-fixture-bf-"))
        job_dir = work / "result-root" / "jobs" / JOB
        for task, suffix, reward, ends in spec["rollouts"]:
            write_rollout(work / "tasks", job_dir, task, suffix, reward, ends)
        dest = OUT / "benchflow" / spec["key"]
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(work / "result-root", dest)
        scrub_tree(dest, str(work))
        numbers = json.loads(scrub_text(json.dumps(benchflow_numbers(dest)), str(work)))
        cases[spec["key"]] = {
            "key": spec["key"],
            "issue_items": spec["items"],
            "description": spec["description"],
            "root": f"benchflow/{spec['key']}",
            "how": "BenchFlow 0.7.11 rollout writers (_write_config, _build_rollout_result)",
            **numbers,
            "cases": expected_cases(numbers),
        }
        shutil.rmtree(work, ignore_errors=True)
    manifest["benchflow"] = [cases[k] for k in sorted(cases)]
    write_manifest(manifest)


if __name__ == "__main__":
    generate_benchflow(sys.argv[1:])
