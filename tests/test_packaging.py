"""What the built wheel holds and what installing it gives, not what ``pyproject.toml`` says.

The repository's layer folders are linked under ``benchledger/`` (docs/architecture.md), so the
build has to follow the links and ship one top-level package with its data files; a fresh venv
must then hold ``benchledger`` alone from us, run its console script and migrate a new store
with the migrations it shipped. Building takes ~20 s (pip sets up the build backend in an
isolated environment), hence ``slow``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from benchledger import __version__

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("ledger", "commands", "services", "projections", "migrations")
# The package data pyproject.toml names, as files of the repository (the wheel's must match).
DATA = (
    "migrations/script.py.mako",
    "ledger/contracts/schemas/*.json",
    "projections/reports/html/templates/*.j2",
    "projections/reports/html/assets/*.css",
    "projections/reports/html/assets/*.js",
)
DIST_INFO = f"benchledger-{__version__}.dist-info"

pytestmark = pytest.mark.slow


def build_wheel(source: Path, out: Path) -> Path:
    """The wheel pip builds from a copy of ``source``'s tree (links kept as links), so the
    build's ``build/`` and ``*.egg-info`` never land in the working tree."""
    tree = out / "tree"
    tree.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(source / name, tree / name)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("benchledger", *LAYERS):
        shutil.copytree(source / name, tree / name, symlinks=True, ignore=skip)
    wheels = out / "wheels"
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet"]
    _run([*pip_wheel, tree, "-w", wheels], pip=True)
    (wheel,) = wheels.glob("benchledger-*.whl")
    return wheel


def expected_files(source: Path) -> set[str]:
    """Every module of the layers and every data file, where the wheel must put it."""
    found = {"benchledger/__init__.py", "benchledger/__main__.py", "benchledger/py.typed"}
    for layer in LAYERS:
        found |= {
            f"benchledger/{p.relative_to(source).as_posix()}"
            for p in (source / layer).rglob("*.py")
            if "__pycache__" not in p.parts
        }
    for pattern in DATA:
        found |= {f"benchledger/{p.relative_to(source).as_posix()}" for p in source.glob(pattern)}
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(ROOT, tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A plain venv with the wheel installed (without dependencies), and the names its
    site-packages gained. The dependencies are then borrowed from this interpreter through a
    ``.pth`` line, after the listing: installing them from an index takes minutes, and a
    ``.pth`` directory is appended to ``sys.path``, behind the venv's own package."""
    env_dir = tmp_path_factory.mktemp("venv") / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]))
    before = set(os.listdir(site))
    _run([python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", wheel], pip=True)
    gained = sorted(set(os.listdir(site)) - before)
    borrowed = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (site / "zz_test_dependencies.pth").write_text("\n".join(borrowed) + "\n", encoding="utf-8")
    return env_dir, gained


def _run(argv: list, cwd: Path | None = None, *, pip: bool = False) -> str:
    """Run outside the source tree's reach; pip (and the build backend it starts) without the
    suite's deprecations-are-errors rule, which is ours to keep, not theirs."""
    hidden = ("PYTHONPATH", "PYTHONHOME", "BENCHLEDGER_DATABASE_URL")
    env = {k: v for k, v in os.environ.items() if k not in hidden}
    if pip:
        env.pop("PYTHONWARNINGS", None)
    done = subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_wheel_holds_one_top_level_package(wheel: Path):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        top_level = archive.read(f"{DIST_INFO}/top_level.txt").decode().split()
        entry_points = archive.read(f"{DIST_INFO}/entry_points.txt").decode()
    assert {name.split("/")[0] for name in names} == {"benchledger", DIST_INFO}
    assert top_level == ["benchledger"]
    assert "benchledger = benchledger.commands.cli:main" in entry_points


def test_the_wheel_holds_every_module_and_data_file_through_the_links(wheel: Path):
    with zipfile.ZipFile(wheel) as archive:
        shipped = {n for n in archive.namelist() if n.startswith("benchledger/")}
    wanted = expected_files(ROOT)
    assert any(n.endswith("script.py.mako") for n in wanted)
    assert any(n.startswith("benchledger/ledger/contracts/schemas/") for n in wanted)
    assert any(n.endswith(".j2") for n in wanted) and any(n.endswith(".js") for n in wanted)
    assert sorted(wanted - shipped) == []
    assert sorted(shipped - wanted) == []


def test_a_fresh_venv_gains_exactly_one_package_from_us(installed):
    _, gained = installed
    assert gained == ["benchledger", DIST_INFO]


def test_the_installed_package_runs_from_the_venv(installed, tmp_path: Path):
    env_dir, _ = installed
    python, script = env_dir / "bin" / "python", env_dir / "bin" / "benchledger"
    where = _run([python, "-c", "import benchledger; print(benchledger.__file__)"], tmp_path)
    assert Path(where).is_relative_to(env_dir)
    assert _run([script, "--version"], tmp_path) == f"benchledger, version {__version__}"
    assert _run([python, "-m", "benchledger", "--help"], tmp_path).startswith(
        "Usage: benchledger [OPTIONS] COMMAND"
    )
    # the migrations shipped in the wheel create a new store, outside the source tree
    upgraded = json.loads(_run([script, "--format", "json", "db", "upgrade"], tmp_path))
    assert upgraded["to_revision"] == upgraded["head"]
    assert (tmp_path / ".benchledger" / "ledger.db").is_file()
