"""A newcomer's first hour, as a test (issue 34): clone the repository into an empty directory,
run the README's set-up (``bash scripts/demo``), the three commands the demo prints, and every
command of the README's Quickstart exactly as printed, with the demo's job standing in for
"your job". The commands are parsed out of README.md, so the test breaks when the README does.

The clone is of the committed tree (``git clone`` of this checkout). The demo runs with
``BENCHLEDGER`` set to the installed command instead of creating a venv and installing into it
(minutes of pip); everything else runs as a user would type it, in separate processes.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DEMO_JOB = "examples/harbor/2026-05-02__09-14-07"
README_JOB = "jobs/2026-05-02__09-14-07"


def bash_block(readme: str, heading: str) -> list[str]:
    """The commands of the first ```bash block under ``heading``: continuation lines joined,
    comments dropped, ``a && b`` split in two."""
    section = readme.split(heading, 1)[1]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    commands: list[str] = []
    for line in block.replace("\\\n", " ").splitlines():
        line = line.split("  #", 1)[0].strip()
        if line and not line.startswith("#"):
            commands.extend(" ".join(part.split()) for part in line.split("&&"))
    return commands


def test_bash_block_parsing() -> None:
    text = "## Q\n\n```bash\n# c\na --x \\\n    y && b z  # note\n```\n"
    assert bash_block(text, "## Q") == ["a --x y", "b z"]


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs git and a git checkout")
    target = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(target)], check=True)
    return target


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHLEDGER_")}
    bin_dir = Path(sys.executable).parent
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["BENCHLEDGER"] = str(bin_dir / "benchledger")
    env["HOME"] = str(tmp_path / "home")
    (tmp_path / "home").mkdir(exist_ok=True)
    return env


def _sh(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        shlex.split(command), cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr
    return done


def test_readme_set_up_demo_and_quickstart_work_as_printed(clone: Path, tmp_path: Path) -> None:
    readme = (clone / "README.md").read_text(encoding="utf-8")
    env = _env(tmp_path)

    # the set-up: the demo
    setup = [c for c in bash_block(readme, "## Two set-up commands") if "demo" in c]
    assert setup == ["bash scripts/demo"]
    demo = _sh(setup[0], clone, env).stdout
    assert (clone / "example-out" / "benchmark-run-ledger.json").is_file()
    assert (clone / "example-out" / "report" / "index.html").is_file()
    assert (clone / ".benchledger" / "goals" / "demo" / "runs" / "index.jsonl").is_file()

    # the three commands the demo prints, as printed
    printed = demo.split("next, after", 1)[1].splitlines()[1:]
    nexts = [line.strip() for line in printed if line.strip().startswith("benchledger ")]
    assert len(nexts) == 3
    outputs = {command: _sh(command, clone, env).stdout for command in nexts}
    compare_out = outputs["benchledger compare --benchmark-id terminal-bench@2.0"]
    assert "terminal-bench@2.0" in compare_out
    verified = outputs["benchledger verify --files"]
    assert "- chain: ok" in verified and "- files: ok" in verified and "Result: ok" in verified

    # the quickstart, the demo's job standing in for "your job"
    quickstart = bash_block(readme, "## Quickstart")
    assert quickstart[0].startswith("benchledger benchmark run terminal-bench")
    assert README_JOB in quickstart[0]
    ran = []
    for command in quickstart:
        if command.startswith("xdg-open "):
            opened = clone / command.split(" ", 1)[1]
            assert opened.is_file()  # what it would open is there
            continue
        ran.append(_sh(command.replace(README_JOB, DEMO_JOB), clone, env).stdout)
    assert len(ran) == 3
    assert "appended" in ran[0].lower()
    assert "terminal-bench@2.0" in ran[1]
    # one project, one ledger: the quickstart's ingest went to the ledger the demo made
    assert not (clone / "benchmark-run-ledger.json").exists()
    assert (clone / ".benchledger" / "goals" / "tb2" / "runs" / "index.jsonl").is_file()
    assert "\nResult: ok" in _sh("benchledger verify --files", clone, env).stdout
    assert not (tmp_path / "home" / ".benchledger").exists()  # (matplotlib keeps its caches)
