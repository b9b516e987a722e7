"""The version benchledger reports: the installed distribution's, so it is written once (in
``pyproject.toml``) and every event's metadata, ``--version`` and the report agree with it.

It is read from the name of the distribution's ``.dist-info`` directory, which the packaging
standards spell ``{name}-{version}.dist-info``, searched along ``sys.path`` in the order Python
finds packages. ``importlib.metadata`` reads the same directory, but importing it (email,
zipfile, ...) cost 30-40 ms of CPU time, some 12% of a small write command, which needs the
version for its events; ``tests/test_version.py`` checks that both give the same answer.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterable
from pathlib import Path

DISTRIBUTION = "benchledger"
UNKNOWN = "0+unknown"
_PREFIX = f"{DISTRIBUTION}-"
_SUFFIX = ".dist-info"


@functools.cache
def tool_version() -> str:
    """The installed version; a source checkout run without installing reads ``pyproject.toml``."""
    found = installed_version(sys.path)
    if found is not None:
        return found
    return _checkout_version(Path(__file__).resolve().parent.parent / "pyproject.toml")


def installed_version(search_path: Iterable[str]) -> str | None:
    """The version in the name of the first ``benchledger-*.dist-info`` on ``search_path``."""
    for entry in search_path:
        try:
            with os.scandir(entry or ".") as found:
                for item in found:
                    if item.name.startswith(_PREFIX) and item.name.endswith(_SUFFIX):
                        return item.name[len(_PREFIX) : -len(_SUFFIX)]
        except OSError:  # a zip file, a missing or unreadable directory: not ours
            continue
    return None


def _checkout_version(pyproject: Path) -> str:
    """The ``[project] version`` of a checkout's ``pyproject.toml``, or ``UNKNOWN`` without one."""
    import tomllib

    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return UNKNOWN
    found = project.get("version") if isinstance(project, dict) else None
    return found if isinstance(found, str) and found else UNKNOWN
