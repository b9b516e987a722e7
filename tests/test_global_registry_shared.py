"""The global registry is shared by every project synced into a runtime root (issue 36 item 1).

Each project here has its own registry file and its own store; they share one runtime root and
so one ``registry.global.json``. No store's write may drop another project's goals, whoever
writes last, whether they write one after the other, all at once, or die half-way.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import _drop_pg_schema, _fresh_pg_schema
from tests.support_faults import child_env
from tests.support_harbor_ingest_cli import copy_job, load_manifest

REGISTRY = "registry.global.json"
CLI = [sys.executable, "-c", "from benchledger.commands.cli import main; main()"]
NewStore = Callable[[str], str]


@pytest.fixture(params=["sqlite", "postgresql"])
def new_store(request, tmp_path: Path, postgres_ok: bool) -> Iterator[NewStore]:
    """A factory of fresh, separate stores on one backend: one per project."""
    if request.param == "postgresql" and not postgres_ok:
        pytest.skip("PostgreSQL not reachable")
    schemas: list[str] = []

    def make(name: str) -> str:
        if request.param == "sqlite":
            return f"sqlite:///{tmp_path / 'stores' / name / 'ledger.db'}"
        schemas.append(_fresh_pg_schema())
        return pg_url(schemas[-1])

    yield make
    for schema in schemas:
        _drop_pg_schema(schema)


def pg_url(schema: str) -> str:
    from tests.conftest import PG_BASE_URL

    return f"{PG_BASE_URL}?options=-csearch_path%3D{schema}"


def project(tmp_path: Path, name: str, goals: list[str]) -> Path:
    """A project directory with its registry naming its goals."""
    registry = tmp_path / "projects" / name / ".benchledger" / "registry.json"
    registry.parent.mkdir(parents=True, exist_ok=True)
    document = {"schema_version": "0.1", "goals": [{"id": g, "repo": name} for g in goals]}
    registry.write_text(json.dumps(document), encoding="utf-8")
    return registry


def run(db: str, registry: Path, runtime_root: Path, *args: str) -> tuple[int, Any, str]:
    """One command in this process (CliRunner), as project ``registry`` with store ``db``."""
    from benchledger.commands.cli import cli as root

    prefix = ["--db", db, "--registry", str(registry), "--runtime-root", str(runtime_root)]
    result = CliRunner().invoke(root, [*prefix, "--format", "json", *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    payload = json.loads(result.stdout) if result.stdout.strip() else None
    return result.exit_code, payload, result.stderr


def sync(db: str, registry: Path, runtime_root: Path) -> None:
    code, payload, err = run(db, registry, runtime_root, "sync-global", "--execute")
    assert code == 0 and payload["ok"], err


def global_goals(runtime_root: Path) -> list[str]:
    document = json.loads((runtime_root / REGISTRY).read_text(encoding="utf-8"))
    return [goal["id"] for goal in document["goals"]]


def registry_files(db: str, registry: Path, runtime_root: Path) -> list[dict[str, Any]]:
    code, payload, err = run(db, registry, runtime_root, "verify", "--files")
    assert payload is not None, err
    return [f for f in payload["verify"]["files"] if f["kind"] == "global_registry"]


def registry_status(db: str, registry: Path, runtime_root: Path) -> str:
    (entry,) = registry_files(db, registry, runtime_root)
    return entry["status"]


# --- one after the other ------------------------------------------------------------------------


def test_a_then_b_then_a_keeps_b(tmp_path: Path, new_store: NewStore) -> None:
    rt = tmp_path / "rt"
    a, b = project(tmp_path, "a", ["ga"]), project(tmp_path, "b", ["gb"])
    db_a, db_b = new_store("a"), new_store("b")
    sync(db_a, a, rt)
    sync(db_b, b, rt)
    sync(db_a, a, rt)
    assert global_goals(rt) == ["gb", "ga"]  # a re-synced goal moves last (§7.2 step 6)
    assert registry_status(db_a, a, rt) == "match"
    assert registry_status(db_b, b, rt) == "match"  # A's rewrite is not B's change


def test_ingest_a_then_b_then_a_keeps_b(
    tmp_path: Path, new_store: NewStore, fixtures_dir: Path
) -> None:
    """The issue's own steps with ``benchmark run`` (which syncs its goal by default)."""
    manifest = load_manifest(fixtures_dir)
    job = copy_job(fixtures_dir, manifest, manifest["jobs"][0], tmp_path / "src")
    rt = tmp_path / "rt"
    a, b = project(tmp_path, "a", ["ga"]), project(tmp_path, "b", ["gb"])
    db_a, db_b = new_store("a"), new_store("b")

    def ingest(db: str, registry: Path, goal: str, ledger: str) -> None:
        args = ["benchmark", "run", "terminal-bench", "--goal-id", goal, "--harbor-job-dir",
                str(job), "--update-run-ledger", "--run-ledger-path", str(tmp_path / ledger),
                "--execute"]  # fmt: skip
        code, payload, err = run(db, registry, rt, *args)
        assert code == 0 and payload["global_sync"]["ok"], err

    ingest(db_a, a, "ga", "a.json")
    ingest(db_b, b, "gb", "b.json")
    ingest(db_a, a, "ga", "a2.json")
    assert sorted(global_goals(rt)) == ["ga", "gb"]
    assert registry_status(db_b, b, rt) == "match"


def test_sync_global_keeps_every_other_goal(tmp_path: Path, new_store: NewStore) -> None:
    """A four-goal registry stays four goals; the other three keep their exact text."""
    rt = tmp_path / "rt"
    mine = project(tmp_path, "mine", ["g-mine"])
    db = new_store("mine")
    sync(db, mine, rt)  # the store now holds a one-goal copy of the registry
    others = [
        (f"o{i}", project(tmp_path, f"o{i}", [f"g-o{i}"]), new_store(f"o{i}")) for i in (1, 2, 3)
    ]  # noqa: E501
    for _name, registry, other_db in others:
        sync(other_db, registry, rt)
    before = json.loads((rt / REGISTRY).read_text(encoding="utf-8"))
    theirs = {g["id"]: g for g in before["goals"] if g["id"] != "g-mine"}

    code, payload, err = run(db, mine, rt, "sync-global", "--execute")

    assert code == 0, err
    assert payload["global_goal_count"] == 4 and payload["actions"] == ["g-mine:updated"]
    after = json.loads((rt / REGISTRY).read_text(encoding="utf-8"))
    assert [g["id"] for g in after["goals"]] == ["g-o1", "g-o2", "g-o3", "g-mine"]
    assert {g["id"]: g for g in after["goals"] if g["id"] != "g-mine"} == theirs
    for _name, registry, other_db in others:
        assert registry_status(other_db, registry, rt) == "match"


def test_entries_written_by_another_tool_survive_byte_for_byte(
    tmp_path: Path, new_store: NewStore
) -> None:
    """Goals a loopx install wrote are not this store's: their text is left exactly as it was."""
    rt = tmp_path / "rt"
    rt.mkdir()
    foreign = {
        "schema_version": "0.1",
        "updated_at": "2026-11-30T17:47:34Z",
        "common_runtime_root": str(rt),
        "registry_role": "global-local",
        "goals": [{"id": "loopx-goal", "source_registry": "/elsewhere/registry.json",
                   "note": "Ünïcode kept", "big": 123456789012345678901234567890, "f": 0.1}],
    }  # fmt: skip
    text = json.dumps(foreign, indent=2, ensure_ascii=False) + "\n"
    (rt / REGISTRY).write_text(text, encoding="utf-8")
    sync(new_store("a"), project(tmp_path, "a", ["ga"]), rt)
    after = (rt / REGISTRY).read_text(encoding="utf-8")
    entry = json.dumps(foreign["goals"][0], indent=2, ensure_ascii=False).replace("\n", "\n    ")
    assert "    " + entry in after
    assert global_goals(rt) == ["loopx-goal", "ga"]


# --- render and verify --files ------------------------------------------------------------------


def test_render_repairs_an_edited_or_deleted_registry(tmp_path: Path, new_store: NewStore) -> None:
    rt = tmp_path / "rt"
    a, b = project(tmp_path, "a", ["ga", "ga2"]), project(tmp_path, "b", ["gb"])
    db_a, db_b = new_store("a"), new_store("b")
    sync(db_a, a, rt)
    sync(db_b, b, rt)
    assert registry_status(db_a, a, rt) == "match"

    # someone edits one of A's goals and drops the other
    document = json.loads((rt / REGISTRY).read_text(encoding="utf-8"))
    document["goals"] = [g for g in document["goals"] if g["id"] != "ga2"]
    next(g for g in document["goals"] if g["id"] == "ga")["repo"] = "edited"
    (rt / REGISTRY).write_text(json.dumps(document, indent=2), encoding="utf-8")
    assert registry_status(db_a, a, rt) == "changed"
    assert registry_status(db_b, b, rt) == "match"  # B's entry is untouched

    code, payload, err = run(db_a, a, rt, "render")
    assert code == 0, err
    assert [f["kind"] for f in payload["rendered"]].count("global_registry") == 1
    repaired = {g["id"]: g for g in json.loads((rt / REGISTRY).read_text("utf-8"))["goals"]}
    assert sorted(repaired) == ["ga", "ga2", "gb"] and repaired["ga"]["repo"] == "a"
    assert registry_status(db_a, a, rt) == "match"
    assert registry_status(db_b, b, rt) == "match"

    # the whole file deleted: each project's render puts back its own goals
    (rt / REGISTRY).unlink()
    assert registry_status(db_a, a, rt) == "missing"
    assert run(db_a, a, rt, "render")[0] == 0
    assert sorted(global_goals(rt)) == ["ga", "ga2"]
    assert registry_status(db_a, a, rt) == "match"
    assert registry_status(db_b, b, rt) == "changed"  # B's goal is gone until B renders
    assert run(db_b, b, rt, "render")[0] == 0
    assert sorted(global_goals(rt)) == ["ga", "ga2", "gb"]
    assert registry_status(db_a, a, rt) == registry_status(db_b, b, rt) == "match"

    # nothing to repair: render writes nothing and records nothing new
    before = (rt / REGISTRY).read_bytes()
    code, payload, _ = run(db_a, a, rt, "render")
    assert code == 0 and (rt / REGISTRY).read_bytes() == before


def test_render_sets_an_unreadable_registry_aside(tmp_path: Path, new_store: NewStore) -> None:
    rt = tmp_path / "rt"
    a = project(tmp_path, "a", ["ga"])
    db = new_store("a")
    sync(db, a, rt)
    (rt / REGISTRY).write_text('{"goals": [', encoding="utf-8")  # a torn hand edit
    assert registry_status(db, a, rt) == "changed"
    assert run(db, a, rt, "render")[0] == 0
    assert global_goals(rt) == ["ga"] and registry_status(db, a, rt) == "match"
    (kept,) = rt.glob(f"{REGISTRY}.unreadable-*.bak")
    assert kept.read_text(encoding="utf-8") == '{"goals": ['


def test_sync_refuses_an_unreadable_registry_and_names_the_repair(
    tmp_path: Path, new_store: NewStore
) -> None:
    """Other projects' goals may be in a torn file: a sync never overwrites it, it says how."""
    rt = tmp_path / "rt"
    a = project(tmp_path, "a", ["ga"])
    db = new_store("a")
    sync(db, a, rt)
    (rt / REGISTRY).write_text('{"goals": [', encoding="utf-8")
    code, _payload, err = run(db, a, rt, "sync-global", "--execute")
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "global registry is not readable JSON" in err and "benchledger render" in err
    assert (rt / REGISTRY).read_text(encoding="utf-8") == '{"goals": ['


# --- many processes, crashes and locks ---------------------------------------------------------


def _spawn(db: str, registry: Path, rt: Path, *args: str, fault: str | None = None):
    argv = [*CLI, "--db", db, "--registry", str(registry), "--runtime-root", str(rt),
            "--format", "json", *args]  # fmt: skip
    return subprocess.Popen(
        argv, env=child_env(fault), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def test_twelve_projects_syncing_at_once_keep_every_goal(tmp_path: Path, postgres_ok: bool) -> None:
    """Twelve processes, each its own project and store (half on PostgreSQL when it is there),
    all syncing into one runtime root at the same moment."""
    rt = tmp_path / "rt"
    schemas = [_fresh_pg_schema() for _ in range(6)] if postgres_ok else []
    try:
        stores = [f"sqlite:///{tmp_path / 'stores' / f'p{i}.db'}" for i in range(12 - len(schemas))]
        stores += [pg_url(s) for s in schemas]
        projects = [project(tmp_path, f"p{i}", [f"g{i:02d}"]) for i in range(12)]
        procs = [
            _spawn(db, reg, rt, "sync-global", "--execute")
            for db, reg in zip(stores, projects, strict=True)
        ]  # noqa: E501
        results = [proc.communicate(timeout=300) for proc in procs]
        for proc, (_out, err) in zip(procs, results, strict=True):
            assert proc.returncode == 0, err.decode()
        assert sorted(global_goals(rt)) == [f"g{i:02d}" for i in range(12)]
        assert not list(rt.glob(".*.tmp"))
        for db, reg in list(zip(stores, projects, strict=True))[:: len(stores) // 4]:
            assert registry_status(db, reg, rt) == "match"
    finally:
        for schema in schemas:
            _drop_pg_schema(schema)


def test_kill_in_the_middle_of_a_write_leaves_a_valid_registry(
    tmp_path: Path, new_store: NewStore
) -> None:
    rt = tmp_path / "rt"
    a, b = project(tmp_path, "a", ["ga"]), project(tmp_path, "b", ["gb"])
    db_a, db_b = new_store("a"), new_store("b")
    sync(db_b, b, rt)
    before = (rt / REGISTRY).read_bytes()

    proc = _spawn(db_a, a, rt, "sync-global", "--execute", fault="mid_global_registry_write")
    proc.communicate(timeout=120)

    assert proc.returncode == -signal.SIGKILL
    assert (rt / REGISTRY).read_bytes() == before  # the old file, whole
    assert len(list(rt.glob(f".{REGISTRY}.*.tmp"))) == 1  # the killed writer's temp file
    assert registry_files(db_a, a, rt) == []  # the sync is recorded, nothing published yet
    assert run(db_a, a, rt, "render")[0] == 0
    assert global_goals(rt) == ["gb", "ga"]
    assert not list(rt.glob(f".{REGISTRY}.*.tmp"))  # removed under the lock
    assert registry_status(db_a, a, rt) == registry_status(db_b, b, rt) == "match"


def test_a_lock_left_by_a_dead_process_does_not_block(tmp_path: Path, new_store: NewStore) -> None:
    """A lock file with a holder record (even of a process that was killed while holding the
    lock) is no lock at all: the kernel let go of it."""
    rt = tmp_path / "rt"
    rt.mkdir()
    lock = rt / f"{REGISTRY}.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD_LOCK, str(lock)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert lock.read_text()  # its holder record is still there
    started = time.monotonic()
    sync(new_store("a"), project(tmp_path, "a", ["ga"]), rt)
    assert time.monotonic() - started < 4.5  # never waited for the 5 s timeout
    assert global_goals(rt) == ["ga"]
    record = json.loads(lock.read_text())  # the sync did take the lock: its record replaced it
    assert record["schema_version"] == "file_lock_holder_v0" and record["pid"] == os.getpid()


def test_a_lock_held_too_long_fails_clearly_then_render_writes(
    tmp_path: Path, new_store: NewStore
) -> None:
    rt = tmp_path / "rt"
    rt.mkdir()
    a = project(tmp_path, "a", ["ga"])
    db = new_store("a")
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD_LOCK, str(rt / f"{REGISTRY}.lock")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        code, _payload, err = run(db, a, rt, "sync-global", "--execute")
    finally:
        holder.kill()
        holder.wait()
    assert code == 1
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert f"held by pid {holder.pid}" in err and "benchledger render" in err
    (incident,) = (rt / f"{REGISTRY}.lock.incidents.jsonl").read_text().splitlines()
    assert json.loads(incident)["holder"]["pid"] == holder.pid
    assert not (rt / REGISTRY).exists()
    assert run(db, a, rt, "render")[0] == 0
    assert global_goals(rt) == ["ga"] and registry_status(db, a, rt) == "match"


_HOLD_LOCK = """
import fcntl, json, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o666)
fcntl.flock(fd, fcntl.LOCK_EX)
os.ftruncate(fd, 0)
os.write(fd, json.dumps({"schema_version": "file_lock_holder_v0", "pid": os.getpid(),
                         "operation": "test holder"}).encode())
print("locked", flush=True)
time.sleep(120)
"""


def test_a_route_taken_over_elsewhere_is_not_taken_back_by_a_repair(
    tmp_path: Path, new_store: NewStore
) -> None:
    """``--replace-state`` from another project moves a goal's route there on purpose: the
    first project's render leaves it, and its verify then passes again."""
    rt = tmp_path / "rt"
    a, b = project(tmp_path, "a", ["g", "ga"]), project(tmp_path, "b", ["g"])
    db_a, db_b = new_store("a"), new_store("b")
    sync(db_a, a, rt)
    code, _payload, err = run(db_b, b, rt, "sync-global", "--execute")
    assert code == 1 and "global route collision for goal_id g" in err
    code, payload, err = run(db_b, b, rt, "sync-global", "--replace-state", "--execute")
    assert code == 0 and payload["actions"] == ["g:replaced-route"], err
    taken = {x["id"]: x for x in json.loads((rt / REGISTRY).read_text("utf-8"))["goals"]}
    assert taken["g"]["source_registry"] == str(b) and taken["g"]["repo"] == "b"
    assert len(list(rt.glob(f"{REGISTRY}.route-collision-backup-*.bak"))) == 1

    assert run(db_a, a, rt, "render")[0] == 0
    after = {x["id"]: x for x in json.loads((rt / REGISTRY).read_text("utf-8"))["goals"]}
    assert after == taken  # g stays B's; A's other goal is still there
    assert registry_status(db_a, a, rt) == "match"
    assert registry_status(db_b, b, rt) == "match"
