"""Planted local paths and credentials never reach a public file, whatever field carries them.

``test_safety.py`` checks the filter itself; this suite checks that every way in is filtered:
strings in Harbor and BenchFlow files (task, trial, job, agent and model names, exception
messages, config fields copied into records), compact-run fields, and the free-text flags
(``--run-ledger-note``, ``--run-group-id``, ``--arm-id``, ``--arm-map``). Each plant carries a
marker; the marker must not appear, in any spelling, in the ledger JSON/Markdown, the run
records or the rollout log. Case-insensitive and punctuation-blind matching also catches a
secret laundered into an id by slugging (``token=abc`` -> ``token-abc``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import FIXTURES_DIR
from tests.support_bad_input import (
    BENCHFLOW_CASE,
    BOUNDED,
    HARBOR_JOB,
    Workspace,
    assert_honest,
    benchflow_empty_dirs,
    harbor_empty_dirs,
    make_writable_copy,
    workspace,
)
from tests.test_ledger_cli import compact_run

MARK = "Qz7plant"
PLANTS = [
    f"/Users/alice/{MARK}/run.json",
    f"/home/bob/{MARK}",
    f"C:\\Users\\carol\\{MARK}",
    f"file:///tmp/{MARK}",
    f"sk-proj-{MARK}abcdefghij",
    f"ghp_{MARK}abcdefghijklmnopqrstuvwx",
    f"AKIA{MARK.upper()}ABCDEFGH",
    f"Bearer {MARK}abcdefghijklmnop",
    f"token={MARK}1234567890",
    f"OPENAI_API_KEY={MARK}",
]
_MARK_RE = re.compile(r"[^a-z0-9]*".join(MARK.lower()))


def _leaks(ws: Workspace) -> list[str]:
    """Published files whose text holds the marker in any case or punctuation."""
    return [
        name
        for name, data in ws.published().items()
        if _MARK_RE.search(re.sub(r"[^a-z0-9]", "", data.decode("utf-8", "replace").lower()))
    ]


def _string_paths(value: object, prefix: tuple = ()) -> list[tuple]:
    found: list[tuple] = []
    if isinstance(value, str):
        return [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _string_paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value[:3]):
            found += _string_paths(child, (*prefix, index))
    return found


def _plant_at(document: dict, path: tuple, plant: str, replace: bool) -> None:
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = plant if replace else f"{target[path[-1]]} {plant}"


def _plant_files(data: st.DataObject, root: Path, rels: list[str]) -> None:
    """Plant into a few string fields of a few files, chosen by hypothesis."""
    for rel in data.draw(st.lists(st.sampled_from(rels), min_size=1, max_size=3), label="files"):
        document = json.loads((root / rel).read_text("utf-8"))
        paths = _string_paths(document)
        for path in data.draw(st.lists(st.sampled_from(paths), min_size=1, max_size=4)):
            _plant_at(document, path, data.draw(st.sampled_from(PLANTS)), data.draw(st.booleans()))
        (root / rel).write_text(json.dumps(document), encoding="utf-8")


def _plant_flags(data: st.DataObject, *, arm_map: bool = False) -> list[str]:
    flags: list[str] = []
    for flag in ("--run-ledger-note", "--run-group-id", "--arm-id"):
        if data.draw(st.booleans(), label=flag):
            flags += [flag, data.draw(st.sampled_from(PLANTS))]
    if arm_map and "--arm-id" not in flags and data.draw(st.booleans(), label="--arm-map"):
        flags += ["--arm-map", f"codex={data.draw(st.sampled_from(PLANTS))}"]
    return flags


def _check(ws: Workspace, result) -> None:  # noqa: ANN001
    assert_honest(ws, result, (0, {}))
    assert _leaks(ws) == []


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("safety-cli")


HARBOR_FILES = [
    "config.json",
    "regex-chess__2SQ9vaA/result.json",
    "regex-chess__2SQ9vaA/config.json",
    "schemelike-metacircular-eval__MUzJBKP/result.json",
]


# Fewer examples than the other suites: each one ingests a whole tree twice over (run + checks).
FEW = settings(BOUNDED, max_examples=min(BOUNDED.max_examples, 12))


@FEW
@given(data=st.data())
def test_harbor_plants_never_reach_public_files(base: Path, data: st.DataObject) -> None:
    with workspace(base) as ws:
        job = make_writable_copy(
            FIXTURES_DIR / "harbor" / HARBOR_JOB,
            ws.project / "harbor" / HARBOR_JOB,
            harbor_empty_dirs(HARBOR_JOB),
        )
        _plant_files(data, job, HARBOR_FILES)
        result = ws.invoke(
            "benchmark", "run", "terminal-bench", "--goal-id", "g", "--harbor-job-dir", str(job),
            "--update-run-ledger", "--execute", "--format", "json",
            *_plant_flags(data, arm_map=True),
        )  # fmt: skip
        _check(ws, result)


BENCHFLOW_FILES = [
    "jobs/2026-03-02__23-11-00/citation-check__25604556/result.json",
    "jobs/2026-03-02__23-11-00/citation-check__25604556/config.json",
    "jobs/2026-03-02__23-11-00/3d-scan-volume__2949ac3e/result.json",
    "jobs/2026-03-02__23-11-00/summary.json",
]


@FEW
@given(data=st.data())
def test_benchflow_plants_never_reach_public_files(base: Path, data: st.DataObject) -> None:
    with workspace(base) as ws:
        root = make_writable_copy(
            FIXTURES_DIR / "benchflow" / BENCHFLOW_CASE,
            ws.project / "bf",
            benchflow_empty_dirs(BENCHFLOW_CASE),
        )
        _plant_files(data, root, BENCHFLOW_FILES)
        result = ws.invoke(
            "benchmark", "run", "skillsbench", "--goal-id", "g", "--skillsbench-result-root",
            str(root), "--update-run-ledger", "--execute", "--format", "json",
            *_plant_flags(data),
        )  # fmt: skip
        _check(ws, result)


@BOUNDED
@given(data=st.data())
def test_compact_run_plants_never_reach_public_files(base: Path, data: st.DataObject) -> None:
    with workspace(base) as ws:
        run = compact_run("fix-git", score=1, job="tb_fix_git_plant")
        run.update(notes="ok", run_group_id="grp", arm_id="arm", failure_class="none")
        run["trials"] = [{"trial_name": "t1", "exception_type": "none", "task_id": "fix-git"}]
        paths = _string_paths(run)
        for path in data.draw(st.lists(st.sampled_from(paths), min_size=1, max_size=5)):
            _plant_at(run, path, data.draw(st.sampled_from(PLANTS)), data.draw(st.booleans()))
        (ws.project / "run.json").write_text(json.dumps(run), encoding="utf-8")
        result = ws.invoke(
            "benchmark", "run-ledger-upsert", "--benchmark-run-json", "run.json", "--execute",
            "--format", "json", *_plant_flags(data),
        )  # fmt: skip
        _check(ws, result)


@pytest.mark.parametrize("plant", PLANTS, ids=lambda p: p[:12])
def test_unsafe_model_and_agent_names_are_not_laundered_into_ids(base: Path, plant: str) -> None:
    """Regression: ``arm_id``/``run_key`` slugged the raw agent and model, so a model named
    ``gpt-5 token=…`` became ``codex__gpt-5-token-…``, which passes the filter. Exception
    messages, trial names and the job name carry the plant too."""
    with workspace(base) as ws:
        job = make_writable_copy(
            FIXTURES_DIR / "harbor" / HARBOR_JOB,
            ws.project / "harbor" / HARBOR_JOB,
            harbor_empty_dirs(HARBOR_JOB),
        )
        for rel in HARBOR_FILES[1:]:
            document = json.loads((job / rel).read_text("utf-8"))
            agent = document.get("config", document).get("agent")
            agent["model_name"] = f"openai/gpt-5 {plant}"
            document.setdefault("agent_info", {})["name"] = f"codex {plant}"
            if "trial_uri" in document:  # a result: an exception with a message and traceback
                document["trial_name"] = f"{document['trial_name']} {plant}"
                document["exception_info"] = {
                    "exception_type": f"AgentTimeoutError {plant}",
                    "exception_message": f"timed out writing {plant}",
                    "exception_traceback": f'File "{plant}", line 1',
                }
            (job / rel).write_text(json.dumps(document), encoding="utf-8")
        config = json.loads((job / "config.json").read_text("utf-8"))
        config["job_name"] = f"{config.get('job_name', 'job')} {plant}"
        (job / "config.json").write_text(json.dumps(config), encoding="utf-8")
        result = ws.invoke(
            "benchmark", "run", "terminal-bench", "--goal-id", "g", "--harbor-job-dir", str(job),
            "--update-run-ledger", "--execute", "--format", "json",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        _check(ws, result)
        rows = json.loads((ws.project / "benchmark-run-ledger.json").read_text("utf-8"))
        arms = {
            run.get("arm_id")
            for bench in rows["benchmarks"].values()
            for case in bench["cases"].values()
            for run in case["runs"]
        }
        # The planted trials form their own arm; the job's plan still owes the original one.
        assert "unsafe__unsafe" in arms, arms


@pytest.mark.parametrize("plant", PLANTS, ids=lambda p: p[:12])
def test_planned_run_flags_never_reach_public_files(base: Path, plant: str) -> None:
    """Free text of a planned run (job name, model, agent, task) and the ledger flags."""
    with workspace(base) as ws:
        result = ws.invoke(
            "benchmark", "run", "terminal-bench", "--goal-id", "g", "--execute",
            "--include-task-name", f"fix-git {plant}", "--model", f"gpt {plant}",
            "--agent", f"codex {plant}", "--job-name", f"job {plant}",
            "--run-ledger-note", plant, "--format", "json",
        )  # fmt: skip
        _check(ws, result)
