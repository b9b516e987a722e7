"""A deprecated call fails the suite, in the test process and in the CLI processes tests start.

SQLAlchemy 2.1 deprecated ``Result.tuples()`` while the suite was green: warnings that only
print are read by nobody, so the pytest configuration turns them into errors.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest


def test_a_deprecation_warning_is_an_error_in_the_test_process() -> None:
    with pytest.raises(DeprecationWarning):
        warnings.warn("old call", DeprecationWarning, stacklevel=1)


def test_a_deprecation_warning_is_an_error_in_a_child_process() -> None:
    code = "import warnings; warnings.warn('old call', DeprecationWarning, stacklevel=1)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode != 0 and "DeprecationWarning: old call" in done.stderr


def test_the_cli_imports_cleanly_with_deprecations_as_errors() -> None:
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-m", "commands.cli", "--help"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
