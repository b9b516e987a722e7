"""Write the Inspect AI eval logs the ``benchmark run inspect`` tests read (issue 35).

Every log is made by Inspect itself: real ``inspect_ai.eval`` / ``eval_retry`` runs against the
built-in ``mockllm/model`` provider (no network). The scores are fixed per (sample, epoch), so
the logs cover C/I/P/N and numeric values, several epochs, two scorers, a sample that raises,
two models and two solvers (one pair written as ``.json`` logs), a cancelled eval, one still
running (``status: started``, copied while the eval runs) and a failed eval retried with
``eval_retry``. Sample inputs, metadata and one error message carry fake secrets.

Inspect writes tracebacks (and, for a cancelled sample, a coroutine's repr) naming the files of
the machine that ran it: every log written is scrubbed (``scrub_log``), each path of this
Python's libraries and of this repository replaced by a placeholder (``<site-packages>``,
``<stdlib>``, ``<repo>``), every zip entry kept under its name and compression method, so
Inspect reads the logs as before and no committed fixture names a local path.

    python tools/make_inspect_logs.py OUT_DIR
"""

from __future__ import annotations

import os
import shutil
import site
import sys
import sysconfig
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

if sys.version_info < (3, 14):
    import zipfile_zstd  # noqa: F401  (Inspect's own dependency: zstd entries in zipfile)

REPO = Path(__file__).resolve().parent.parent


def _local_paths() -> list[tuple[bytes, bytes]]:
    """This machine's directories a traceback names -> placeholders, most specific first:
    this Python's libraries, this checkout, the venv and Python's prefix, the home."""
    named = [
        *((path, "<site-packages>") for path in site.getsitepackages()),
        (sysconfig.get_paths()["purelib"], "<site-packages>"),
        (sysconfig.get_paths()["stdlib"], "<stdlib>"),
        (str(REPO), "<repo>"),
        (sys.prefix, "<venv>"),
        (sys.base_prefix, "<python>"),
        (str(Path.home()), "<home>"),
    ]
    pairs = {os.path.realpath(path).encode(): label.encode() for path, label in named}
    pairs.update({path.encode(): label.encode() for path, label in named})
    return sorted(pairs.items(), key=lambda pair: -len(pair[0]))


def scrub_paths(data: bytes) -> bytes:
    """The log text with every local directory replaced by its placeholder (placeholders hold
    no quote or backslash, so JSON stays JSON). Plain text replacement, not a pattern: Inspect's
    rich tracebacks put a colour code right before a path."""
    for path, placeholder in _local_paths():
        data = data.replace(path + b"/", placeholder + b"/")
    return data


def rewrite_log(path: Path, edit: Callable[[str, bytes], bytes | None]) -> None:
    """Apply ``edit(entry name, data)`` to a ``.json`` log (name ``""``) or to every entry of an
    ``.eval`` zip, where ``None`` drops the entry; each entry kept keeps its name, order and
    compression method (zstd or deflate), so Inspect reads the log as before."""
    if path.suffix == ".json":
        path.write_bytes(edit("", path.read_bytes()) or b"")
        return
    rewritten = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(rewritten, "w") as out:
        for item in source.infolist():
            data = edit(item.filename, source.read(item))
            if data is None:
                continue
            entry = zipfile.ZipInfo(item.filename, date_time=item.date_time)
            entry.compress_type = item.compress_type
            entry.external_attr = item.external_attr
            out.writestr(entry, data)
    rewritten.replace(path)


def scrub_logs(out: Path) -> None:
    """Every log under ``out`` without a local path (``scrub_paths``)."""
    for path in sorted([*out.rglob("*.eval"), *out.rglob("*.json")]):
        rewrite_log(path, lambda _name, data: scrub_paths(data))


#: (sample id, epoch) -> (verdict scorer value, points scorer value)
VERDICTS: dict[str, list[str]] = {
    "s1": ["C", "C", "I"],
    "s2": ["P", "I", "N"],
    "s3": ["I", "I", "I"],
    "s4": ["C", "P", "C"],
}
POINTS: dict[str, list[float]] = {
    "s1": [1.0, 0.75, 0.0],
    "s2": [0.5, 0.25, 0.0],
    "s3": [0.0, 0.0, 0.125],
    "s4": [2.0, 1.5, 1.0],
}
#: sample s4's epoch 2 raises in the solver: an attempt with an error, and no score
ERROR_AT = ("s4", 2)
_FLAG = "BENCHLEDGER_FIXTURE_FLAKY_FIXED"


def _offline_token_counts() -> None:
    """mockllm counts prompt tokens with tiktoken, whose tables come from the network; count
    words instead so the runs are offline (the counts still land in the log's usage)."""
    from inspect_ai.model._providers.mockllm import MockLLM

    async def words(self: Any, text: str) -> int:
        return len(text.split())

    MockLLM.count_text_tokens = words  # type: ignore[method-assign]


def _mock_model(name: str) -> str:
    return f"mockllm/{name}"


def _scorers() -> list[Any]:
    from inspect_ai.scorer import Score, Target, accuracy, mean, scorer
    from inspect_ai.solver import TaskState

    def _index(state: TaskState) -> tuple[str, int]:
        return str(state.sample_id), state.epoch - 1

    @scorer(metrics=[accuracy()], name="verdict")
    def verdict() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            sid, i = _index(state)
            return Score(value=VERDICTS[sid][i], answer=state.output.completion)

        return score

    @scorer(metrics=[mean()], name="points")
    def points() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            sid, i = _index(state)
            return Score(value=POINTS[sid][i])

        return score

    return [verdict(), points()]


def _solvers() -> dict[str, Any]:
    from inspect_ai.solver import Generate, TaskState, chain, generate, solver, system_message

    @solver(name="plain")
    def plain() -> Any:
        async def solve(state: TaskState, generate_: Generate) -> TaskState:
            if (str(state.sample_id), state.epoch) == ERROR_AT:
                raise RuntimeError("tool crashed; api_key=sk-live-abcdefghijklmnopqrstuvwx")
            return await generate_(state)

        return solve

    @solver(name="careful")
    def careful() -> Any:
        return chain(system_message("Think step by step."), plain())

    del generate
    return {"plain": plain(), "careful": careful()}


def _task(name: str = "arith", **extra: Any) -> Any:
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample

    samples = [
        Sample(
            id=sid,
            input=f"What is case {sid}? (password=hunter2-fixture-secret)",
            target="42",
            metadata={"note": "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789"},
        )
        for sid in VERDICTS
    ]
    return Task(
        name=name,
        version=extra.pop("version", 2),
        dataset=MemoryDataset(samples, name="arith-cases"),
        scorer=_scorers(),
        epochs=3,
        **extra,
    )


def _registered() -> tuple[Any, Any]:
    """The retried task and its solver, registered so ``eval_retry`` can rebuild them."""
    from inspect_ai import task
    from inspect_ai.solver import Generate, TaskState, solver

    @solver(name="flaky_solver")
    def flaky_solver() -> Any:
        async def solve(state: TaskState, generate_: Generate) -> TaskState:
            if state.sample_id == "s2" and not os.environ.get(_FLAG):
                raise RuntimeError("transient failure")
            return await generate_(state)

        return solve

    @task(name="flaky")
    def flaky() -> Any:
        return _task("flaky", solver=flaky_solver())

    return flaky, flaky_solver


def _cancelled_eval(log_dir: Path) -> None:
    """One sample scored, the others hanging, then the run cancelled: status ``cancelled``."""
    import anyio
    from inspect_ai import eval_async
    from inspect_ai.solver import Generate, TaskState, solver

    hanging = anyio.Event()

    @solver(name="hang")
    def hang() -> Any:
        async def solve(state: TaskState, generate_: Generate) -> TaskState:
            if (state.sample_id, state.epoch) == ("s1", 1):
                return await generate_(state)
            hanging.set()
            await anyio.sleep(3600)
            return state

        return solve

    async def main() -> None:
        async with anyio.create_task_group() as group:

            async def run() -> None:
                await eval_async(
                    _task(),
                    model=_mock_model("model"),
                    solver=hang(),
                    log_dir=str(log_dir),
                    log_level="error",
                    fail_on_error=False,
                )

            group.start_soon(run)
            await hanging.wait()
            await anyio.sleep(0.5)
            group.cancel_scope.cancel()

    anyio.run(main)


#: Terminal-Bench 2.0 tasks the Harbor fixture job ``tb2-pilot-20260502/jobs/2026-05-02__09-14-07``
#: ran, with the reward of each of two epochs.
TERMINAL_BENCH_TASKS = {
    "fix-git": [1.0, 1.0],
    "log-summary-date-ranges": [0.0, 1.0],
    "openssl-selfsigned-cert": [1.0, 0.0],
    "regex-log": [0.0, 0.0],
    "sqlite-with-gcov": [1.0, 1.0],
}


def _terminal_bench(log_dir: Path) -> None:
    """A Terminal-Bench 2.0 eval named the way ``inspect-harbor`` 0.4 names one
    (github.com/meridianlabs-ai/inspect_harbor, ``src/inspect_harbor/_tasks.py`` and
    ``_harbor/task.py`` at v0.4.18): the task ``inspect_harbor/terminal_bench_2_0``, a wrapper
    of ``harbor(dataset_name_version="terminal-bench@2.0")``, built without a name, version or
    dataset name; each Harbor task a sample whose id is the task's name; the verifier's reward
    the score of ``harbor_scorer`` (accuracy, stderr). Harbor's containers and the agent are
    not run here: ``generate`` stands in for the agent, named in the eval's metadata as a user
    names it (``inspect eval ... --metadata agent=codex --metadata agent_version=0.46.0``)."""
    from inspect_ai import Task, task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import Score, Target, accuracy, scorer, stderr
    from inspect_ai.solver import TaskState, generate

    @scorer(metrics=[accuracy(), stderr()], name="harbor_scorer")
    def harbor_scorer() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=TERMINAL_BENCH_TASKS[str(state.sample_id)][state.epoch - 1])

        return score

    @task(name="inspect_harbor/terminal_bench_2_0")
    def terminal_bench_2_0(
        dataset_task_names: list[str] | None = None, n_tasks: int | None = None
    ) -> Task:
        samples = [
            Sample(id=name, input=f"Solve {name}.", metadata={"task_name": name})
            for name in TERMINAL_BENCH_TASKS
        ]
        return Task(dataset=samples, solver=generate(), scorer=harbor_scorer())

    inspect_eval(
        terminal_bench_2_0(),
        model=_mock_model("model"),
        epochs=2,
        metadata={"agent": "codex", "agent_version": "0.46.0"},
        log_dir=str(log_dir),
        display="none",
        log_level="error",
    )


def make_logs(out: Path) -> None:
    """Every fixture log under ``out`` (main/, cancelled/, started/, retry/)."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai import eval_retry
    from inspect_ai.solver import Generate, TaskState, solver

    out.mkdir(parents=True, exist_ok=True)
    os.environ["INSPECT_DISPLAY"] = "none"
    _offline_token_counts()
    common: dict[str, Any] = {"display": "none", "log_level": "error", "fail_on_error": False}
    solvers = _solvers()
    # two models x two solvers, 4 samples x 3 epochs, two scorers, one sample raising
    for solver_name in ("plain", "careful"):
        inspect_eval(
            _task(),
            model=[_mock_model("model"), _mock_model("other")],
            solver=solvers[solver_name],
            log_dir=str(out / "main"),
            log_format="eval" if solver_name == "plain" else "json",
            **common,
        )

    # cancelled: the eval's task group is cancelled from outside, as Ctrl-C does
    _cancelled_eval(out / "cancelled")

    # started: the log copied while the eval still runs
    started = out / "started"
    started.mkdir(exist_ok=True)
    running = out / "_running"

    @solver(name="snapshot")
    def snapshot() -> Any:
        async def solve(state: TaskState, generate_: Generate) -> TaskState:
            for log in running.glob("*.eval"):
                target = started / log.name
                if not target.exists():
                    shutil.copyfile(log, target)
            return await generate_(state)

        return solve

    inspect_eval(
        _task(), model=_mock_model("model"), solver=snapshot(), log_dir=str(running), **common
    )
    shutil.rmtree(running)

    _terminal_bench(out / "terminal-bench")

    # retried: the first run fails (an error ends it), eval_retry completes it
    flaky, _ = _registered()
    first = inspect_eval(
        flaky(),
        model=_mock_model("model"),
        log_dir=str(out / "retry"),
        display="none",
        log_level="error",
        fail_on_error=True,
    )
    os.environ[_FLAG] = "1"
    try:
        eval_retry(
            first,
            log_dir=str(out / "retry"),
            display="none",
            log_level="error",
            fail_on_error=False,
        )
    finally:
        del os.environ[_FLAG]
    scrub_logs(out)


if __name__ == "__main__":
    make_logs(Path(sys.argv[1]))
