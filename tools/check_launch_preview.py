"""Check that planned-run previews only use flags Harbor 0.25.0's ``harbor run`` accepts.

The preview (docs/formats/cli.md §7.2) is only worth recording if a person can paste it. loopx
0.4.8's
preview used ``--agent-import-path``, which Harbor 0.25.0 does not have; this script catches
that class of mistake against the real package. It creates a scratch Python 3.12 virtualenv
(Harbor needs >= 3.12), installs ``harbor==0.25.0`` with pip, reads ``harbor run --help`` and
checks that every ``--flag`` of several preview argvs appears in it.

Not part of the unit suite (it needs a Python 3.12 interpreter and a package index). Run from
the repository root with the project's interpreter:

    .venv/bin/python tools/check_launch_preview.py [--keep] [--python /path/to/python3.12]

Exit codes: 0 every flag accepted, 1 some flag is unknown to Harbor, 2 the check could not run
(no Python 3.12, install failed, ...).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HARBOR_REQUIREMENT = "harbor==0.25.0"
#: Flags before ``harbor run`` belong to uvx, not Harbor.
RUNNER_PREFIX = ("uvx", "--from")
#: Invocations whose previews together use every flag the builder can emit.
SCENARIOS: dict[str, dict] = {
    "default": {},
    "all_multipliers": {
        "timeout_multiplier": 2.0,
        "agent_timeout_multiplier": 8.0,
        "verifier_timeout_multiplier": 0.5,
        "agent_setup_timeout_multiplier": 8.0,
        "environment_build_timeout_multiplier": 1.5,
    },
    "plain_agent_local_dataset": {
        "agent": "terminus-2",
        "dataset": "./tasks",
        "auth_env_name": ["ANTHROPIC_API_KEY"],
        "runner_ref": "",
    },
    "repair_profile": {"setup_timeout_repair_profile": True},
    "several_tasks_n_attempts": {"include_task_name": ["a", "b"], "n_attempts": 3},
}


def find_python312(explicit: str | None) -> str | None:
    """A working 3.12 interpreter: the flag, PATH, pyenv, then common install places."""
    candidates = [explicit] if explicit else []
    candidates += [shutil.which("python3.12") or ""]
    home = os.path.expanduser("~")
    candidates += sorted(glob.glob(f"{home}/.pyenv/versions/3.12*/bin/python3.12"), reverse=True)
    candidates += [
        "/usr/bin/python3.12",
        "/usr/local/bin/python3.12",
        "/opt/homebrew/bin/python3.12",
    ]
    for candidate in candidates:
        if candidate and _is_312(candidate):
            return candidate
    return None


def _is_312(python: str) -> bool:
    try:
        done = subprocess.run(
            [python, "-c", "import sys; print(sys.version_info[:2] == (3, 12))"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and done.stdout.strip() == "True"


def install_harbor(python: str, venv: Path) -> Path:
    """A fresh venv with Harbor; returns its ``harbor`` executable."""
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    pip = venv / "bin" / "pip"
    subprocess.run([str(pip), "install", "--quiet", HARBOR_REQUIREMENT], check=True)
    return venv / "bin" / "harbor"


def harbor_run_flags(harbor: Path) -> set[str]:
    """Every ``--long-option`` named in ``harbor run --help`` (wide terminal: no wrapping)."""
    env = {**os.environ, "COLUMNS": "400", "TERM": "dumb", "NO_COLOR": "1"}
    done = subprocess.run(
        [str(harbor), "run", "--help"], capture_output=True, text=True, env=env, check=True
    )
    return set(re.findall(r"--[a-z0-9][a-z0-9-]*", done.stdout))


def preview_argvs() -> dict[str, list[str]]:
    """The argv of each scenario's planned records, built by benchledger itself."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchledger.ledger.requests.benchmark_run import BenchmarkRunRequest
    from benchledger.ledger.sources.planned.records import build_planned_terminal_bench_records

    argvs = {}
    for name, extra in SCENARIOS.items():
        opts = BenchmarkRunRequest.from_options(
            {"benchmark_name": "terminal-bench", "goal_id": "check", **extra}
        )
        records = build_planned_terminal_bench_records(
            opts, env={}, which=lambda _name: None, path_exists=lambda _path: False
        )
        argvs[name] = records[0]["launch_preview"]["argv"]
    return argvs


def harbor_flags_of(argv: list[str]) -> list[str]:
    """The ``--flags`` after ``harbor run`` (uvx's own ``--from`` is not Harbor's)."""
    start = argv.index("run") + 1
    return [token for token in argv[start:] if token.startswith("--")]


def check(known: set[str], argvs: dict[str, list[str]]) -> dict:
    missing = {
        name: sorted({flag for flag in harbor_flags_of(argv) if flag not in known})
        for name, argv in argvs.items()
    }
    used = sorted({flag for argv in argvs.values() for flag in harbor_flags_of(argv)})
    return {
        "ok": not any(missing.values()),
        "harbor": HARBOR_REQUIREMENT,
        "flags_checked": used,
        "missing_by_scenario": {name: flags for name, flags in missing.items() if flags},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", help="a Python 3.12 interpreter to build the venv with")
    parser.add_argument("--keep", action="store_true", help="keep the scratch venv")
    args = parser.parse_args(argv)
    python = find_python312(args.python)
    if python is None:
        print("no Python 3.12 interpreter found (Harbor 0.25.0 needs >= 3.12); pass --python")
        return 2
    scratch = Path(tempfile.mkdtemp(prefix="harbor-preview-check-"))
    try:
        try:
            harbor = install_harbor(python, scratch / "venv")
            known = harbor_run_flags(harbor)
        except (OSError, subprocess.CalledProcessError) as exc:
            print(f"could not install or run {HARBOR_REQUIREMENT}: {exc}")
            return 2
        result = check(known, preview_argvs())
        print(json.dumps({**result, "python": python}, indent=2))
        return 0 if result["ok"] else 1
    finally:
        if args.keep:
            print(f"scratch venv kept at {scratch}", file=sys.stderr)
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
