"""Packaging metadata in the form current setuptools accepts without deprecation warnings.

Building the wheel is too slow for the suite (scripts/demo and CI install the project anyway);
these checks pin the two things setuptools >= 77 warns about when they are written the old way.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_license_is_an_spdx_expression_with_its_file_shipped() -> None:
    project = PYPROJECT["project"]
    assert project["license"] == "MIT"  # a string; the old {text = ...} table is deprecated
    assert project["license-files"] and all((ROOT / f).is_file() for f in project["license-files"])
    assert not any("License ::" in c for c in project.get("classifiers", []))  # also deprecated


def test_the_build_backend_understands_spdx_licences() -> None:
    requires = PYPROJECT["build-system"]["requires"]
    setuptools = next(r for r in requires if r.startswith("setuptools"))
    minimum = re.fullmatch(r"setuptools>=(\d+)(?:\.\d+)*", setuptools)
    assert minimum and int(minimum.group(1)) >= 77, setuptools
