"""The project stands on its own: no tracked file reaches for data beside or above the checkout.

A user's clone has nothing next to it, so a test, benchmark or script that reads a sibling
directory (the ``shared`` folder the project was first developed beside) or climbs above the
repository root passes here and fails for everyone else.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Written so that this file does not match itself.
OUTSIDE_NAMES = re.compile(
    r"\.\.[/\\]shared"  # a relative path to the sibling folder
    r"|shared[/\\](?:fixtures|tools|spec|seed|hooks)\b"  # anything inside it
    r"|BENCHLEDGER_SHARE[D]"  # the variable that pointed at it
    r"|/\s*[\"']shared[\"']"  # a pathlib join onto the folder's name
)
S = "sha" + "red"  # the folder's name and ``__file__``, spelled so that the examples below
F = "__fi" + "le__"  # do not match the checks run over this very file
PARENTS_INDEX = re.compile(r"\bparents\[(\d+)\]")
PARENT_CHAIN = re.compile(r"__file__\)?(?:\.resolve\(\))?((?:\.parent)+)\b")


def tracked_files() -> list[Path]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed, so the tracked files cannot be listed")
    done = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip("not a git checkout, so there are no tracked files to check")
    return [ROOT / name for name in done.stdout.decode("utf-8").split("\0") if name]


def text_of(path: Path) -> str | None:
    """The file's text, or None for binary files, symbolic links (the package's links to the
    layer folders, whose files are checked where they live) and files deleted but not yet
    staged."""
    if path.is_symlink():
        return None
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    if b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace")


def climbs_above_root(path: Path, text: str) -> list[str]:
    """``Path(__file__)`` parents that lie above the repository root, as ``line: code``."""
    depth = len(path.relative_to(ROOT).parts) - 1  # parents[depth] is the root itself
    hits = []
    for number, line in enumerate(text.splitlines(), 1):
        if "__file__" not in line:
            continue
        levels = [int(n) for n in PARENTS_INDEX.findall(line)]
        levels += [chain.count(".parent") - 1 for chain in PARENT_CHAIN.findall(line)]
        if any(level > depth for level in levels):
            hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return hits


def test_no_tracked_file_names_the_folder_beside_the_repository() -> None:
    hits = []
    for path in tracked_files():
        text = text_of(path)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE_NAMES.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert not hits, "tracked files reach outside the repository:\n" + "\n".join(hits[:20])


def test_no_python_file_climbs_above_the_repository_root() -> None:
    hits = []
    for path in tracked_files():
        text = text_of(path) if path.suffix == ".py" else None
        if text:
            hits += climbs_above_root(path, text)
    assert not hits, "code resolves paths above the repository root:\n" + "\n".join(hits)


@pytest.mark.parametrize(
    "line, rel, expected",
    [
        (f"ROOT = Path({F}).resolve().parents[1]", "tests/x.py", False),
        (f"ROOT = Path({F}).resolve().parents[2]", "tests/x.py", True),
        (f"ROOT = Path({F}).resolve().parent.parent", "tests/x.py", False),
        (f"ROOT = Path({F}).parent.parent.parent", "tests/x.py", True),
        (f"ROOT = Path({F}).resolve().parents[2]", "ledger/handlers/x.py", False),
    ],
)
def test_the_climb_check_counts_levels_from_the_file(line: str, rel: str, expected: bool) -> None:
    assert bool(climbs_above_root(ROOT / rel, line)) is expected


@pytest.mark.parametrize(
    "line, expected",
    [
        (f"src = Path('..') / '{S}' / 'fixtures'", True),
        (f'DATA = ROOT.parent / "{S}"', True),
        (f"os.environ.get('BENCHLEDGER_{S.upper()}')", True),
        (f"see ../{S}/tools/make_ledger.py", True),
        (f"copy {S}/fixtures/harbor into the repo", True),
        (f'"environment_mode": "{S}"', False),
        (f'upsert_event("{S}", "w-1")', False),
    ],
)
def test_the_name_check_tells_paths_from_values(line: str, expected: bool) -> None:
    assert bool(OUTSIDE_NAMES.search(line)) is expected
