"""Fixture agents and environment for tools/make_runner_fixtures.py.

Not imported from here: the generator copies this file next to each job as
``fixture_agents.py``, because Harbor loads import-path classes by module name (and the child
process that runs a job must find them too). Needs harbor==0.25.0 (Python >= 3.12).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import tempfile
from pathlib import Path

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment, ExecResult

CONTAINER_ROOTS = re.compile(r"(?<![\w./-])/(?=(?:app|logs|tests|solution|installed-agent)\b)")


class LocalDirEnvironment(BaseEnvironment):
    """Harbor environment without Docker: commands run with bash in a host temp directory."""

    @staticmethod
    def type() -> str:
        return "local-dir"

    def _validate_definition(self):
        return None

    def _map(self, path):
        text = str(path)
        if text.startswith(str(self._root)):
            return Path(text)
        return self._root / text.lstrip("/")

    async def start(self, force_build: bool) -> None:
        self._root = Path(tempfile.mkdtemp(prefix="fixture-env-"))
        for sub in ("app", "logs/agent", "logs/verifier", "logs/artifacts"):
            (self._root / sub).mkdir(parents=True, exist_ok=True)

    async def stop(self, delete: bool):
        shutil.rmtree(getattr(self, "_root", "/nonexistent"), ignore_errors=True)

    def _map_scripts(self, path):
        """Scripts inside the "container" name container paths; point them below the root."""
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
        for file in files:
            if file.suffix in (".sh", ".py", ".md", ""):
                try:
                    text = file.read_text()
                except UnicodeDecodeError:
                    continue
                file.write_text(CONTAINER_ROOTS.sub(str(self._root) + "/", text))

    async def upload_file(self, source_path, target_path):
        target = self._map(target_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source_path, target)
        self._map_scripts(target)

    async def upload_dir(self, source_dir, target_dir):
        shutil.copytree(source_dir, self._map(target_dir), dirs_exist_ok=True)
        self._map_scripts(self._map(target_dir))

    async def download_file(self, source_path, target_path):
        Path(target_path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(self._map(source_path), target_path)

    async def download_dir(self, source_dir, target_dir):
        source = self._map(source_dir)
        if source.is_dir():
            shutil.copytree(source, target_dir, dirs_exist_ok=True)

    async def exec(self, command, cwd=None, env=None, timeout_sec=None, user=None):
        mapped = CONTAINER_ROOTS.sub(str(self._root) + "/", command)
        workdir = self._map(cwd) if cwd else self._root / "app"
        workdir.mkdir(parents=True, exist_ok=True)
        proc = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            mapped,
            cwd=workdir,
            env={**os.environ, **(env or {})},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout_sec)
        except TimeoutError:
            proc.kill()
            raise
        return ExecResult(stdout=out.decode(), stderr=err.decode(), return_code=proc.returncode)


def _mode(instruction: str) -> str:
    found = re.search(r"MODE=(\w+)", instruction)
    return found.group(1) if found else "pass"


class ScriptedAgent(BaseAgent):
    """An agent given by import path. Its behaviour per task comes from `MODE=` in the
    instruction: pass, fail, hang (waits for the barrier file),
    flaky (fails on the first attempt of its task). It reports token usage and cost."""

    @staticmethod
    def name() -> str:
        return "scripted-agent"

    def version(self):
        return "1.0.0"

    async def setup(self, environment):
        return None

    async def run(self, instruction, environment, context):
        mode = _mode(instruction)
        state = Path(os.environ["H9_STATE_DIR"])
        task = re.search(r"TASK=([\w-]+)", instruction).group(1)
        (state / f"{task}.started").touch()
        context.n_input_tokens = 1000
        context.n_cache_tokens = 200
        context.n_output_tokens = 50
        context.cost_usd = 0.01
        if mode == "hang":
            while not (state / "release").exists():
                await asyncio.sleep(0.1)
        if mode == "flaky":
            marker = state / f"{task}.flaked"
            if not marker.exists():
                marker.touch()
                raise RuntimeError("transient failure on the first attempt")
        answer = "wrong" if mode == "fail" else "42"
        await environment.exec(f"echo {answer} > /app/answer.txt")
        (state / f"{task}.done").touch()
