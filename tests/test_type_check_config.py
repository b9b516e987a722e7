"""``mypy`` (as ``scripts/test`` runs it, with no arguments) checks every module we ship and
exempts none: asked through mypy's own option parsing, so a configuration that names a package
mypy does not find through the ``benchledger/`` links, an ``exclude`` pattern, or a module whose
errors are ignored fails here, not silently in CI (issue #15)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.test_import_graph import ROOT, our_modules


def _mypy_plan(config: Path | None = None) -> tuple[set[str], list[str]]:
    """The modules ``mypy`` would check from the repository root, and those whose errors it
    would ignore."""
    from mypy.main import process_options

    argv = ["--config-file", str(config)] if config else []
    here = Path.cwd()
    os.chdir(ROOT)  # the config's `packages` are found from the working directory
    try:
        sources, options = process_options(argv)
    finally:
        os.chdir(here)
    # data folders (schemas, templates) come back as namespace packages with no file to check
    modules = {source.module for source in sources if (source.path or "").endswith(".py")}
    ignored = sorted(m for m in modules if options.clone_for_module(m).ignore_errors)
    return modules, ignored


def test_mypy_checks_every_module_of_the_package():
    checked, _ = _mypy_plan()
    shipped = {*our_modules(), "benchledger", "benchledger.__main__"}
    assert sorted(shipped - checked) == []
    assert sorted(checked - shipped) == []


def test_no_module_is_exempt_from_the_type_checker():
    _, ignored = _mypy_plan()
    assert ignored == []


EXEMPT_SERVICES = (
    '[[tool.mypy.overrides]]\nmodule = ["benchledger.services.*"]\nignore_errors = true\n\n'
    "[[tool.mypy.overrides]]"
)


@pytest.mark.parametrize(
    ("original", "weakened", "left_out", "ignored"),
    [
        ('packages = ["benchledger"]', 'packages = ["benchledger.ledger"]',
         "benchledger.commands.cli", None),
        ("[[tool.mypy.overrides]]", EXEMPT_SERVICES, None, "benchledger.services.compare"),
    ],
    ids=["a-package-left-out", "a-module-exempt"],
)  # fmt: skip
def test_a_weakened_configuration_is_seen(tmp_path, original, weakened, left_out, ignored):
    """The same questions on a configuration weakened on purpose get the answers that fail
    the two tests above."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert original in text
    config = tmp_path / "pyproject.toml"
    config.write_text(text.replace(original, weakened, 1), encoding="utf-8")
    checked, exempt = _mypy_plan(config)
    if left_out is not None:
        assert left_out not in checked and "benchledger.ledger.store.events" in checked
    if ignored is not None:
        assert ignored in exempt and "benchledger.ledger.store.events" not in exempt
