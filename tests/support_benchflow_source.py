"""Helpers for the BenchFlow adapter tests: a faithful, writable copy of the fixture tree.

Git keeps neither empty directories nor mtimes, and BenchFlow's selection depends on both, so the
copy recreates `empty_dirs` and stamps every result.json with the mtime the manifest recorded.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from tests.conftest import FIXTURES_DIR

MANIFEST_REL = Path("benchflow/manifest.json")


def load_manifest(fixtures_dir: Path = FIXTURES_DIR) -> dict[str, Any]:
    return json.loads((fixtures_dir / MANIFEST_REL).read_text(encoding="utf-8"))


def materialize(fixtures_dir: Path, target: Path) -> Path:
    """Copy `fixtures/benchflow` to `target`, restore empty dirs and mtimes; return the copy."""
    source = fixtures_dir / "benchflow"
    shutil.copytree(source, target)
    manifest = load_manifest(fixtures_dir)
    for rel in manifest["empty_dirs"]:
        (target / rel).mkdir(parents=True, exist_ok=True)
    for case in manifest["cases"]:
        for rel, info in case["result_files"].items():
            os.utime(target / rel, (info["mtime"], info["mtime"]))
    return target


def result_params() -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """(case id, result path, result info, case) for every result.json in the manifest."""
    rows = []
    for case in load_manifest()["cases"]:
        for rel, info in case["result_files"].items():
            rows.append((case["case_id"], rel, info, case))
    return rows


def result_id(case_id: str, rel: str, info: dict[str, Any], case: dict[str, Any]) -> str:
    """Readable test id: case, first shape, and the rollout directory."""
    rollout = Path(rel).parent.name
    return f"{case_id}-{case['shapes'][0]}-{rollout}"
