"""Make the issue-31 fixtures with the runners' own code: tests/fixtures/runners/.

Run with a Python >= 3.12 virtual environment that has ``harbor==0.25.0`` (and, for the BenchFlow
part, a second one with ``benchflow==0.7.11``; the two packages cannot share one environment
because their ``litellm`` pins conflict)::

    /tmp/harbor-venv/bin/python tools/make_runner_fixtures.py harbor
    /tmp/benchflow-venv/bin/python tools/make_runner_fixtures.py benchflow

Why a generator and not hand-written JSON: issue 31 found cases where benchledger disagreed with
what the runners compute, and hand-written files had hidden them. Every Harbor job here is a real
``harbor.job.Job`` run: Harbor's own trials, agents (``oracle``, ``nop``, and agents given by
import path), verifier, retry queue, resume logic and writers. Only the environment is ours:
``LocalDirEnvironment`` (a subclass of Harbor's ``BaseEnvironment``) runs each command with
``bash`` in a throw-away host directory instead of a Docker container, mapping the container
paths Harbor uses (``/app``, ``/logs``, ``/tests``, ``/solution``) below that directory.

Killing and interrupting are real too: a job that must die mid-trial runs in a child process
(``python tools/make_runner_fixtures.py harbor-child <spec>``) which the parent kills with SIGKILL
or interrupts with SIGINT while an agent waits on a barrier file.

The numbers the tests compare with (``manifest.json``) are computed here by Harbor's own code:
``TrialResult``/``JobResult`` models, ``JobStats.from_trial_results`` and the ``Mean`` metric.

Paths: the runner writes the absolute temp directory into configs and URIs. Every text file is
rewritten with that directory replaced by ``/runs`` (``manifest.fake_root``), so no local path
reaches the repository. Ids and clocks are the runner's own (random, wall clock): the data is not
byte-reproducible, only shape-reproducible; re-running the generator changes ids and times.

The test suite never imports this file (it needs Python 3.12 and the runners' packages).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "runners"
FAKE_ROOT = "/runs"
JOB_NAME = "2026-12-01__12-00-00"
HARBOR_VERSION = "0.25.0"
TOKEN_KEYS = ("n_input_tokens", "n_cache_tokens", "n_output_tokens")
BENCHFLOW_VERSION = "0.7.11"

# --------------------------------------------------------------------------- Harbor pieces
# The environment and the agents (tools/runner_fixture_agents.py) are copied next to the jobs as
# ``fixture_agents``: Harbor loads import-path classes by module name.

AGENTS_MODULE = Path(__file__).with_name("runner_fixture_agents.py")

SOLVE_SH = "#!/bin/bash\necho 42 > /app/answer.txt\n"
TEST_SH = (
    "#!/bin/bash\n"
    'if [ "$(cat /app/answer.txt 2>/dev/null)" = "42" ]; then echo 1 > /logs/verifier/reward.txt;'
    " else echo 0 > /logs/verifier/reward.txt; fi\n"
)


def make_task(
    tasks_dir: Path, name: str, mode: str, *, dir_name: str | None = None, package: bool = False
) -> Path:
    """A task made by ``harbor init``'s own code, then given our solution, test and instruction.

    With ``package`` it is what ``harbor init`` writes by default: ``[task] name = "org/<name>"``
    in a directory ``<name>`` (issue 31 item 1: the toml name and the directory differ), and
    ``dir_name`` renames the directory too. Without it (``harbor init --no-package``) the task
    has no ``[task]`` table and Harbor names it after its directory, so the other items can be
    seen on their own."""
    from harbor.cli.init import _init_task
    from harbor.models.task.verifier_mode import VerifierEnvironmentMode

    _init_task(f"org/{name}", tasks_dir, verifier_mode=VerifierEnvironmentMode.SHARED,
               no_pytest=True, no_package=not package)  # fmt: skip
    task_dir = tasks_dir / name
    instruction = f"Write 42 to /app/answer.txt. TASK={name} MODE={mode}\n"
    (task_dir / "instruction.md").write_text(instruction)
    (task_dir / "solution" / "solve.sh").write_text(SOLVE_SH)
    (task_dir / "tests" / "test.sh").write_text(TEST_SH)
    if dir_name is not None and dir_name != name:
        task_dir = task_dir.rename(tasks_dir / dir_name)
    return task_dir


# One spec per Harbor case: tasks (name, mode, dir name), agents, and what happens to the job.
# fmt: off
HARBOR_CASES: list[dict[str, Any]] = [
    {"key": "01_oracle_nop_finished", "items": [3],
     "description": "finished job, oracle and nop on two tasks; every agent_result field is null",
     "tasks": [("alpha", "pass", None), ("beta", "pass", None)],
     "agents": [{"name": "oracle"}, {"name": "nop"}], "action": "finish"},
    {"key": "02_task_name_differs", "items": [1],
     "description": "finished job; tasks made by 'harbor init' (name 'org/<name>'): task dir "
                    "'renamed-dir' holds task.toml name 'org/alpha', dir 'beta' 'org/beta'",
     "tasks": [("alpha", "pass", "renamed-dir"), ("beta", "pass", None)],
     "agents": [{"name": "oracle"}], "action": "finish", "harbor_init_names": True},
    {"key": "03_import_path_sigkill", "items": [2],
     "description": "import-path agent; the job process is killed with SIGKILL while one trial "
                    "runs: that trial has no result.json and the job no finished_at",
     "tasks": [("alpha", "pass", None), ("beta", "hang", None)],
     "agents": [{"import_path": "fixture_agents:ScriptedAgent", "model_name": "acme/m1"}],
     "action": "sigkill", "wait_for": ["alpha.done", "beta.started"]},
    {"key": "04_one_cancelled_trial", "items": [6],
     "description": "finished job of three tasks where one trial ended in CancelledError: "
                    "Ctrl-C while that trial ran, then the job resumed (Harbor keeps a "
                    "trial dir that has a result.json, cancelled or not)",
     "tasks": [("alpha", "pass", None), ("beta", "hang", None), ("gamma", "fail", None)],
     "agents": [{"import_path": "fixture_agents:ScriptedAgent", "model_name": "acme/m1"}],
     "action": "sigint_resume", "wait_for": ["alpha.done", "beta.started", "gamma.done"]},
    {"key": "05_running_job", "items": [2, 6],
     "description": "a copy of the job dir taken while one trial is still running "
                    "(the job then finished; the copy is what a reader sees mid-run)",
     "tasks": [("alpha", "pass", None), ("beta", "hang", None)],
     "agents": [{"import_path": "fixture_agents:ScriptedAgent", "model_name": "acme/m1"}],
     "action": "snapshot", "wait_for": ["alpha.done", "beta.started"]},
    {"key": "06_ctrl_c", "items": [6],
     "description": "Ctrl-C (SIGINT) while two trials run: CancelledError results, job "
                    "finished_at null",
     "tasks": [("alpha", "pass", None), ("beta", "hang", None), ("gamma", "hang", None)],
     "agents": [{"import_path": "fixture_agents:ScriptedAgent", "model_name": "acme/m1"}],
     "action": "sigint", "wait_for": ["alpha.done", "beta.started", "gamma.started"]},
    {"key": "07_resumed", "items": [],
     "description": "killed with SIGKILL mid-trial, then resumed by running the same job again: "
                    "Harbor deletes the unfinished trial dir and reruns it under a new name",
     "tasks": [("alpha", "pass", None), ("beta", "hang", None)],
     "agents": [{"import_path": "fixture_agents:ScriptedAgent", "model_name": "acme/m1"}],
     "action": "sigkill_resume", "wait_for": ["alpha.done", "beta.started"]},
    {"key": "08_retries", "items": [],
     "description": "retry.max_retries=1; one trial fails on its first attempt, Harbor deletes "
                    "its dir and reruns it under the same name (n_retries=1)",
     "tasks": [("alpha", "pass", None), ("beta", "flaky", None)],
     "agents": [{"import_path": "fixture_agents:ScriptedAgent", "model_name": "acme/m1"}],
     "action": "finish", "retries": 1},
]
# fmt: on


def job_config(spec: dict[str, Any], work: Path) -> Any:
    from harbor.models.job.config import JobConfig, RetryConfig
    from harbor.models.trial.config import AgentConfig, EnvironmentConfig, TaskConfig

    tasks = [TaskConfig(path=Path("tasks") / (d or n)) for n, _m, d in spec["tasks"]]
    return JobConfig(
        job_name=JOB_NAME,
        jobs_dir=Path("jobs"),
        n_concurrent_trials=4,
        quiet=True,
        retry=RetryConfig(max_retries=spec.get("retries", 0), min_wait_sec=0, max_wait_sec=0),
        environment=EnvironmentConfig(
            import_path="fixture_agents:LocalDirEnvironment", delete=True
        ),
        agents=[AgentConfig(**a) for a in spec["agents"]],
        tasks=tasks,
    )


def run_job_in_process(spec: dict[str, Any], work: Path) -> None:
    """Harbor's ``Job.create(config).run()``, as ``harbor run`` does it."""
    from harbor.job import Job

    os.chdir(work)
    sys.path.insert(0, str(work))
    os.environ["H9_STATE_DIR"] = str(work / "state")

    async def main() -> None:
        job = await Job.create(job_config(spec, work))
        await job.run()

    asyncio.run(main())


def start_child(spec: dict[str, Any], work: Path) -> subprocess.Popen[bytes]:
    (work / "spec.json").write_text(json.dumps(spec))
    # LiteLLM (a Harbor dependency) would fetch its price list from the network first.
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "harbor-child", str(work)],
        env=env,
        stdout=(work / "child.log").open("wb"),
        stderr=subprocess.STDOUT,
    )


def wait_for(
    work: Path, names: list[str], proc: subprocess.Popen[bytes], limit: float = 120
) -> None:
    deadline = time.time() + limit
    while not all((work / "state" / n).exists() for n in names):
        if proc.poll() is not None or time.time() > deadline:
            raise SystemExit(f"child ended or timed out before {names}: see {work}/child.log")
        time.sleep(0.1)
    time.sleep(1.0)  # let Harbor write the finished trial's result.json and the job result


def run_harbor_case(spec: dict[str, Any], work: Path) -> Path:
    """Run one case; return the job directory to keep."""
    (work / "state").mkdir(parents=True)
    shutil.copy(AGENTS_MODULE, work / "fixture_agents.py")
    for name, mode, dir_name in spec["tasks"]:
        make_task(work / "tasks", name, mode, dir_name=dir_name,
                  package=spec.get("harbor_init_names", False))  # fmt: skip
    job_dir = work / "jobs" / JOB_NAME
    action = spec["action"]
    if action == "finish":
        proc = start_child(spec, work)
        if proc.wait() != 0:
            raise SystemExit(f"job failed: see {work}/child.log")
        return job_dir
    proc = start_child(spec, work)
    wait_for(work, spec["wait_for"], proc)
    if action == "snapshot":
        snapshot = work / "snapshot" / JOB_NAME
        shutil.copytree(job_dir, snapshot, symlinks=True)
        (work / "state" / "release").touch()
        proc.wait()
        return snapshot
    if action in ("sigkill", "sigkill_resume"):
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if action == "sigkill":
            return job_dir
        spec["dirs_before_resume"] = sorted(p.name for p in job_dir.iterdir() if p.is_dir())
        (work / "state" / "release").touch()
        proc = start_child(spec, work)
        if proc.wait() != 0:
            raise SystemExit(f"resume failed: see {work}/child.log")
        return job_dir
    if action in ("sigint", "sigint_resume"):
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise SystemExit("job did not stop on SIGINT") from None
        if action == "sigint":
            return job_dir
        (work / "state" / "release").touch()
        proc = start_child(spec, work)
        if proc.wait() != 0:
            raise SystemExit(f"resume failed: see {work}/child.log")
        return job_dir
    raise SystemExit(f"unknown action {action}")


# --------------------------------------------------------------------------- Harbor numbers


def harbor_numbers(job_dir: Path, spec: dict[str, Any], work: Path) -> dict[str, Any]:
    """What Harbor's own code says about the job on disk, and the per-case expectations the
    issue-31 rules give from it."""
    from harbor.metrics.mean import Mean
    from harbor.models.job.result import JobResult, JobStats
    from harbor.models.task.task import Task
    from harbor.models.trial.config import TrialConfig
    from harbor.models.trial.result import TrialResult

    sys.path.insert(0, str(work))
    job_result = None
    if (job_dir / "result.json").exists():
        job_result = JobResult.model_validate_json((job_dir / "result.json").read_text())
    trials: list[dict[str, Any]] = []
    results: list[Any] = []
    for trial_dir in sorted(p for p in job_dir.iterdir() if p.is_dir()):
        config = TrialConfig.model_validate_json((trial_dir / "config.json").read_text())
        # The task's own name (task.toml), as Harbor puts it in the trial result.
        task = Task(work / config.task.path)
        agent_cfg = config.agent
        if agent_cfg.import_path:
            module, cls = agent_cfg.import_path.split(":")
            agent_name = getattr(__import__(module), cls).name()
        else:
            agent_name = agent_cfg.name
        row: dict[str, Any] = {
            "dir": trial_dir.name,
            "config_task_dir": Path(config.task.path).name,
            "task_name": task.name,
            "agent": agent_name,
            "import_path": agent_cfg.import_path,
            "model": agent_cfg.model_name,
            "has_result": (trial_dir / "result.json").exists(),
        }
        if row["has_result"]:
            result = TrialResult.model_validate_json((trial_dir / "result.json").read_text())
            results.append(result)
            ar = result.agent_result
            row.update(
                task_name=result.task_name,
                agent=result.agent_info.name,
                rewards=result.verifier_result.rewards if result.verifier_result else None,
                exception=result.exception_info.exception_type if result.exception_info else None,
                finished_at=result.finished_at.isoformat() if result.finished_at else None,
                usage={
                    "n_input_tokens": ar.n_input_tokens if ar else None,
                    "n_cache_tokens": ar.n_cache_tokens if ar else None,
                    "n_output_tokens": ar.n_output_tokens if ar else None,
                    "cost_usd": ar.cost_usd if ar else None,
                },
            )
        trials.append(row)
    stats = JobStats.from_trial_results(
        results,
        n_total_trials=job_result.n_total_trials if job_result else len(trials),
        n_running_trials=sum(not t["has_result"] for t in trials),
        n_retries=job_result.stats.n_retries if job_result else 0,
    )
    harbor: dict[str, Any] = {
        "job_result_present": job_result is not None,
        "finished_at": None,
        "n_total_trials": None,
        "stats_on_disk": None,
        "evals_on_disk": None,
        "recomputed": json.loads(stats.model_dump_json(exclude={"evals"})),
    }
    if job_result is not None:
        finished = job_result.finished_at
        harbor.update(
            finished_at=finished.isoformat() if finished else None,
            n_total_trials=job_result.n_total_trials,
            stats_on_disk=json.loads(job_result.stats.model_dump_json(exclude={"evals"})),
            evals_on_disk={
                k: {"n_trials": v.n_trials, "n_errors": v.n_errors, "metrics": v.metrics}
                for k, v in job_result.stats.evals.items()
            },
        )
    cases: dict[tuple[str, str, str | None], list[dict[str, Any]]] = {}
    for t in trials:
        cases.setdefault((t["task_name"], t["agent"], t["model"]), []).append(t)
    case_rows = []
    mean = Mean()
    for (task_name, agent, model), rows in sorted(cases.items(), key=lambda kv: str(kv[0])):
        with_result = [r for r in rows if r["has_result"]]
        cancelled = [r for r in with_result if r["exception"] == "CancelledError"]
        running = [r for r in rows if not r["has_result"]]
        rewards = [r["rewards"] for r in with_result]
        scored = [float(r["rewards"]["reward"]) for r in with_result if r["rewards"]]
        usage_rows = [r for r in with_result if any(v is not None for v in r["usage"].values())]

        def total(key: str, rows: list[dict[str, Any]] = with_result) -> Any:
            values = [r["usage"][key] for r in rows if r["usage"][key] is not None]
            return sum(values) if values else None

        # Issue 31 item 6, in the order of the job-status table (docs/formats/harbor.md §5.2):
        # cancelled, then running (job not finished), then incomplete (job over or unknown).
        if cancelled:
            status = "cancelled"
        elif running:
            status = "running" if harbor["finished_at"] is None and job_result else "incomplete"
        else:
            status = "completed"
        case_rows.append(
            {
                "task_name": task_name,
                "agent": agent,
                "model": model,
                "planned_attempts": len(rows),
                "attempts_with_result": len(with_result),
                "running": len(running),
                "cancelled": len(cancelled),
                "scored_rewards": scored,
                "mean_of_scored": sum(scored) / len(scored) if scored else None,
                "harbor_mean": mean.compute(rewards)["mean"] if rewards else None,
                "attempts_with_usage": len(usage_rows),
                "tokens": {k: total(k) for k in TOKEN_KEYS},
                "cost_usd": total("cost_usd"),
                "run_status": status,
            }
        )
    return {"harbor": harbor, "trials": trials, "cases": case_rows}


def harbor_job_status(numbers: dict[str, Any]) -> str:
    """The job status of docs/formats/harbor.md §5.2 (unchanged by issue 31), from Harbor's
    own data: no result -> incomplete; cancelled; running; an attempt without result; else
    completed."""
    h = numbers["harbor"]
    if not h["job_result_present"]:
        return "incomplete"
    cancelled = any(t.get("exception") == "CancelledError" for t in numbers["trials"])
    if cancelled or (h["stats_on_disk"] or {}).get("n_cancelled_trials"):
        return "cancelled"
    if h["finished_at"] is None:
        return "running"
    if not all(t["has_result"] for t in numbers["trials"]):
        return "incomplete"
    return "completed"


# --------------------------------------------------------------------------- writing out


def scrub_pairs(real_root: str) -> list[tuple[str, str]]:
    """Local paths the runner may write, longest first, and what replaces them."""
    pairs = [
        (real_root, FAKE_ROOT),
        (sys.prefix, FAKE_ROOT + "/.venv"),
        (sys.base_prefix, FAKE_ROOT + "/.python"),
        (str(ROOT), FAKE_ROOT + "/repo"),
        (tempfile.gettempdir() + "/fixture-env-", FAKE_ROOT + "/env-"),
    ]
    return sorted(pairs, key=lambda pair: -len(pair[0]))


def scrub_text(text: str, real_root: str) -> str:
    for old, new in scrub_pairs(real_root):
        text = text.replace(old, new)
    return text


def scrub_tree(root: Path, real_root: str) -> None:
    """Replace local paths (temp root, interpreter) in every text file (URIs percent-encode
    nothing here: all these paths are ASCII)."""
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            new = scrub_text(text, real_root)
            if new != text:
                path.write_text(new, encoding="utf-8")


def empty_dirs(root: Path, base: Path) -> list[str]:
    return sorted(
        str(p.relative_to(base)) for p in root.rglob("*") if p.is_dir() and not any(p.iterdir())
    )


def generate_harbor(only: list[str]) -> None:
    manifest_path = OUT / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    cases = {c["key"]: c for c in manifest.get("harbor", [])}
    for spec in HARBOR_CASES:
        if only and spec["key"] not in only:
            continue
        work = Path(tempfile.mkdtemp(prefix="runner-fixture-harbor-"))
        job_dir = run_harbor_case(spec, work)
        numbers = harbor_numbers(job_dir, spec, work)
        dest = OUT / "harbor" / spec["key"] / JOB_NAME
        shutil.rmtree(dest.parent, ignore_errors=True)
        shutil.copytree(job_dir, dest, symlinks=True)
        scrub_tree(dest, str(work))
        for log in dest.rglob("*.log"):
            # Harbor's debug logs carry timings and temp paths only; keep them tiny.
            log.write_text("")
        numbers_text = scrub_text(json.dumps(numbers), str(work))
        cases[spec["key"]] = {
            "key": spec["key"],
            "issue_items": spec["items"],
            "description": spec["description"],
            "action": spec["action"],
            "dirs_before_resume": spec.get("dirs_before_resume"),
            "job_dir": f"harbor/{spec['key']}/{JOB_NAME}",
            "job_status": None,
            **json.loads(numbers_text),
        }
        cases[spec["key"]]["job_status"] = harbor_job_status(numbers)
        shutil.rmtree(work, ignore_errors=True)
        manifest["harbor"] = [cases[k] for k in sorted(cases)]
        write_manifest(manifest)


def write_manifest(manifest: dict[str, Any]) -> None:
    manifest.update(
        schema_version=1,
        generator="tools/make_runner_fixtures.py",
        harbor_version=HARBOR_VERSION,
        benchflow_version=BENCHFLOW_VERSION,
        fake_root=FAKE_ROOT,
        fake_root_note=f"the runners wrote absolute temp paths; they are replaced by {FAKE_ROOT}",
    )
    manifest["empty_dirs"] = empty_dirs(OUT, OUT)
    OUT.mkdir(parents=True, exist_ok=True)
    text = json.dumps(dict(sorted(manifest.items())), indent=1, ensure_ascii=False) + "\n"
    (OUT / "manifest.json").write_text(text)


def main(argv: list[str]) -> None:
    if len(argv) >= 2 and argv[0] == "harbor-child":
        work = Path(argv[1])
        run_job_in_process(json.loads((work / "spec.json").read_text()), work)
        return
    if argv and argv[0] == "harbor":
        generate_harbor(argv[1:])
        return
    if argv and argv[0] == "benchflow":
        from make_runner_fixtures_benchflow import generate_benchflow  # type: ignore[import-not-found]

        generate_benchflow(argv[1:])
        return
    raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
