"""Helpers for the end-to-end Harbor ingest tests: fixture copies, CLI calls, expectations.

Expected values are rebuilt from ``fixtures/harbor/manifest.json`` (what the fixture generator
wrote and what Harbor itself computed), never from benchledger's own helpers, so a wrong rule in
the adapter cannot make its own test pass.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import uuid
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from typing import Any

from click.testing import CliRunner, Result

from tests.conftest import FIXTURES_DIR

MANIFEST_REL = Path("harbor/manifest.json")
DOMAIN_EVENTS = ("run_built", "run_appended", "ledger_upserted", "global_synced")


def load_manifest(fixtures_dir: Path = FIXTURES_DIR) -> dict:
    return json.loads((fixtures_dir / MANIFEST_REL).read_text(encoding="utf-8"))


def job_keys() -> list[str]:
    """Job keys for parametrisation (collection time: the ``fixtures_dir`` fixture is not there)."""
    return [job["key"] for job in load_manifest()["jobs"]]


def make_writable(root: Path) -> None:
    """The fixture tree is read-only; copies must be editable (and removable by pytest)."""
    for dirpath, _dirs, files in os.walk(root):
        os.chmod(dirpath, os.stat(dirpath).st_mode | stat.S_IWUSR | stat.S_IXUSR)
        for name in files:
            path = os.path.join(dirpath, name)
            os.chmod(path, os.stat(path).st_mode | stat.S_IWUSR)


def copy_job(fixtures_dir: Path, manifest: dict, job: dict, dest: Path) -> Path:
    """Copy one job under ``dest/harbor/<job_dir>`` with the empty dirs git could not keep.

    The group/jobs/<name> layout is preserved so the derived run group is the real one.
    """
    src = fixtures_dir / "harbor" / job["job_dir"]
    dst = dest / "harbor" / job["job_dir"]
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dst)
    prefix = job["job_dir"].rstrip("/")
    for rel in manifest["empty_dirs"]:
        if rel == prefix or rel.startswith(prefix + "/"):
            (dest / "harbor" / rel).mkdir(parents=True, exist_ok=True)
    make_writable(dest / "harbor")
    return dst


def copy_all_jobs(fixtures_dir: Path, manifest: dict, dest: Path) -> Path:
    root = dest / "harbor"
    shutil.copytree(fixtures_dir / "harbor", root)
    for rel in manifest["empty_dirs"]:
        (root / rel).mkdir(parents=True, exist_ok=True)
    make_writable(root)
    return root


# --------------------------------------------------------------------------- CLI


@dataclass
class Call:
    result: Result
    payload: dict[str, Any] | None

    @property
    def code(self) -> int:
        return self.result.exit_code

    @property
    def stderr(self) -> str:
        return self.result.stderr


def cli(args: list[str], *, db: str, runtime_root: Path | None = None) -> Call:
    from benchledger.commands.cli import cli as root

    prefix = ["--db", db]
    if runtime_root is not None:
        prefix += ["--runtime-root", str(runtime_root)]
    result = CliRunner().invoke(root, [*prefix, *args], catch_exceptions=False)
    try:
        payload = json.loads(result.stdout)
    except ValueError:
        payload = None
    return Call(result, payload)


def ingest(
    job_dir: str | Path,
    *,
    db: str,
    runtime_root: Path,
    execute: bool = True,
    extra: tuple[str, ...] = (),
) -> Call:
    args = [
        "benchmark", "run", "terminal-bench", "--goal-id", "g",
        "--harbor-job-dir", str(job_dir), "--update-run-ledger", "--format", "json", *extra,
    ]  # fmt: skip
    if execute:
        args.append("--execute")
    return cli(args, db=db, runtime_root=runtime_root)


def event_counts(db: str) -> dict[str, int]:
    """Events in the store by type, read through the documented SQL view."""
    call = cli(
        ["sql", "SELECT event_type, count(*) AS n FROM events_v GROUP BY event_type",
         "--format", "json"],
        db=db,
    )  # fmt: skip
    never_created = ("no benchledger store here yet", 'relation "events_v" does not exist')
    if call.code == 1 and any(text in call.stderr for text in never_created):
        return {}  # nothing was ever written: no SQLite file, no PostgreSQL tables
    assert call.code == 0, call.result.output
    return {row[0]: row[1] for row in call.payload["rows"]}


def domain_counts(db: str) -> dict[str, int]:
    return {k: v for k, v in event_counts(db).items() if k in DOMAIN_EVENTS}


def ledger_entries(payload: dict) -> list[dict]:
    """Ledger batch entries: loopx prints one ``entry`` for one record, else ``entries``."""
    ledger = payload["benchmark_run_ledger"]
    if "entries" in ledger:
        return ledger["entries"]
    return [ledger["entry"]]


def run_ids(payload: dict) -> list[str]:
    return [e["run_id"] for e in ledger_entries(payload)]


def files_under(root: Path) -> list[str]:
    if not root.exists():
        return []
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


# --------------------------------------------------------------------------- ledger file


def ledger_rows(ledger_path: Path) -> dict[str, dict]:
    """Every run row of a ledger JSON file, keyed by run id."""
    if not ledger_path.exists():
        return {}
    document = json.loads(ledger_path.read_text(encoding="utf-8"))
    rows = {}
    for benchmark in document.get("benchmarks", {}).values():
        for case in benchmark.get("cases", {}).values():
            for row in case.get("runs", []):
                rows[row["run_id"]] = row
    return rows


# --------------------------------------------------------------------------- expectations


def primary_reward(rewards: dict | None) -> float | None:
    """docs/formats/harbor.md §5.4 restated: the single key, else ``reward``, else no primary
    reward."""
    if not rewards:
        return None
    if len(rewards) == 1:
        return float(next(iter(rewards.values())))
    return float(rewards["reward"]) if "reward" in rewards else None


def expected_case_status(job: dict, task: str, agent: str) -> str:
    """docs/formats/harbor.md §3 per case, from the manifest's trials of (task, agent):
    ``cancelled`` when one
    ended in CancelledError; else, when one has no result, ``running`` in a running job and
    ``incomplete`` otherwise; else ``completed``. A job that never started a trial leaves its
    cases ``not_started``. (Every fixture job planned exactly the trials it has directories
    for, except the config-only one.)"""
    if job["job_state"] == "config_only":
        return "not_started"
    trials = [t for t in job["trials"] if t["task_name"] == task and t["agent"] == agent]
    assert trials, (job["key"], task, agent)
    if any(t["has_result"] and t["exception"] == "CancelledError" for t in trials):
        return "cancelled"
    if any(not t["has_result"] for t in trials):
        return "running" if job["job_state"] == "running" else "incomplete"
    return "completed"


def expected_job_status(job: dict) -> str | None:
    """docs/formats/harbor.md §5.2 from the manifest's description of the job; None = the ingest
    fails."""
    state = job["job_state"]
    if state == "finished":
        counters = (job["harbor"] or {}).get("counters", {})
        return "cancelled" if counters.get("n_cancelled_trials") else "completed"
    return {
        "running": "running",
        "no_result": "incomplete",
        "corrupt_result": "corrupt",
        "config_only": "not_started",
        "empty": None,
    }[state]


@dataclass
class ExpectedCase:
    trials: dict[str, dict]
    scored: list[float]

    @property
    def score(self) -> float | None:
        return mean(self.scored) if self.scored else None

    @property
    def passed(self) -> bool | None:
        return all(v == 1.0 for v in self.scored) if self.scored else None


def expected_cases(job: dict) -> dict[tuple, ExpectedCase]:
    """(task, agent, short model) -> the case's trials, exceptions and scored rewards."""
    cases: dict[tuple, ExpectedCase] = defaultdict(lambda: ExpectedCase({}, []))
    for trial in job["trials"]:
        corrupt = trial["dir"] == job.get("corrupt_trial")
        readable = trial["has_result"] and not corrupt
        primary = primary_reward(trial["rewards"]) if readable else None
        case = cases[(trial["task_name"], trial["agent"], trial["model"])]
        case.trials[trial["dir"]] = {
            "primary": primary,
            "exception": (trial["exception"] or "none") if readable else None,
        }
        if primary is not None:
            case.scored.append(primary)
    return dict(cases)


def case_key(record: dict) -> tuple:
    model = record["agent"].get("model")
    return (record["case_id"], record["agent"]["name"], model.split("/")[-1] if model else None)


# --------------------------------------------------------------------------- job edits


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _write(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=4, ensure_ascii=False), encoding="utf-8")


def set_trial_reward(job_dir: Path, trial: str, reward: float) -> None:
    """What a regrade looks like on disk: the trial's result and reward file change."""
    result = _read(job_dir / trial / "result.json")
    result["verifier_result"] = {"rewards": {"reward": reward}}
    _write(job_dir / trial / "result.json", result)
    (job_dir / trial / "verifier").mkdir(exist_ok=True)
    (job_dir / trial / "verifier" / "reward.txt").write_text(f"{reward:g}\n", encoding="utf-8")


def finish_job(job_dir: Path, reward: float = 1.0) -> list[str]:
    """Let a running/interrupted job finish: every trial without a result gets one, written the
    way Harbor writes it (a finished sibling's result with this trial's identity), and the job
    result gets ``finished_at`` and final counters. Returns the trials that were finished."""
    trial_dirs = sorted(p for p in job_dir.iterdir() if p.is_dir() and (p / "config.json").exists())
    template = next(_read(p / "result.json") for p in trial_dirs if (p / "result.json").exists())
    finished = []
    for trial in trial_dirs:
        if (trial / "result.json").exists():
            continue
        config = _read(trial / "config.json")
        result = json.loads(json.dumps(template))
        task = config["task"]
        result.update(
            id=str(uuid.uuid5(uuid.NAMESPACE_URL, trial.name)),
            task_name=task.get("name") or Path(task["path"]).name,
            trial_name=trial.name,
            trial_uri=f"file:///srv/bench/{trial.name}",
            source=task.get("source", result.get("source")),
            verifier_result={"rewards": {"reward": reward}},
            exception_info=None,
        )
        result["config"] = {**result["config"], "task": {**result["config"]["task"], **task},
                            "trial_name": trial.name}  # fmt: skip
        if isinstance(result.get("task_id"), dict) and "path" in task:
            result["task_id"] = {**result["task_id"], "path": task["path"]}
        _write(trial / "result.json", result)
        (trial / "verifier").mkdir(exist_ok=True)
        (trial / "verifier" / "reward.txt").write_text(f"{reward:g}\n", encoding="utf-8")
        finished.append(trial.name)
    _finish_job_result(job_dir, len(trial_dirs), template)
    return finished


def _finish_job_result(job_dir: Path, n_trials: int, template: dict) -> None:
    path = job_dir / "result.json"
    try:
        job = _read(path)
    except (OSError, ValueError):
        job = {"id": str(uuid.uuid5(uuid.NAMESPACE_URL, job_dir.name)),
               "started_at": template["started_at"].rstrip("Z")}  # fmt: skip
    stats = job.get("stats") or {}
    stats.update(n_completed_trials=n_trials, n_running_trials=0, n_pending_trials=0,
                 n_errored_trials=0, n_cancelled_trials=0)  # fmt: skip
    stats.setdefault("n_retries", 0)
    stats.setdefault("evals", {})
    job.update(
        updated_at="2026-05-04T18:00:00.000000",
        finished_at="2026-05-04T18:00:00.000000",
        n_total_trials=n_trials,
        stats=stats,
    )
    _write(path, job)


def head_position(db: str) -> int:
    """The position of the store's last event, as ``events list`` prints it."""
    events = cli(["--format", "json", "events", "list"], db=db).payload["events"]
    return max(e["position"] for e in events)
