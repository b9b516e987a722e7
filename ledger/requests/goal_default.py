"""The goal a ``benchmark run`` ingest records into when ``--goal-id`` is not given.

loopx made ``--goal-id`` required and never said what it was for, so a newcomer had to invent
a name before the first ingest (issue 34). An ingest reads one named thing, and its name is a
fair default: the Harbor job directory, the BenchFlow result root (or the directory holding one
``result.json``), the Inspect log directory, or the stem of the one Inspect log file
(docs/cli.md "The goal"). The name passes the same check as a given goal id, and a name that
fails it is refused with the reason, never silently changed. A planned run reads nothing, so it
still needs the flag.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.registry import validate_goal_id
from benchledger.ledger.requests.benchmark_run import BenchmarkRunRequest


def with_default_goal_id(request: BenchmarkRunRequest) -> BenchmarkRunRequest:
    """``request`` with ``goal_id`` set from what it ingests when the flag was not given."""
    if request.goal_id is not None:
        return request
    found = default_goal_source(request)
    if found is None:
        return request  # a planned run, or several logs: the parser rules ask for the flag
    what, name = found
    try:
        goal_id = validate_goal_id(name)
    except InputError as err:
        raise InputError(
            f"no --goal-id given, and the {what}'s name {name!r} cannot be one ({err}); "
            "pass --goal-id"
        ) from None
    return replace(request, goal_id=goal_id)


def default_goal_source(request: BenchmarkRunRequest) -> tuple[str, str] | None:
    """(what the name is of, the name) for the default goal id, or None when no one thing is
    ingested."""
    if request.harbor_job_dir:
        return "job directory", directory_name(request.harbor_job_dir)
    if request.skillsbench_result_root:
        return "result root", directory_name(request.skillsbench_result_root)
    if request.skillsbench_result_json:
        given = request.skillsbench_result_json
        # a directory is read as a result root (docs/formats/benchflow.md §6)
        folder = given if os.path.isdir(given) else os.path.dirname(os.path.abspath(given))
        return "result directory", directory_name(folder)
    if request.log_dir:
        return "log directory", directory_name(request.log_dir)
    if len(request.log) == 1:
        return "log file", Path(request.log[0]).stem
    return None


def directory_name(path: str) -> str:
    """The last segment of ``path`` as given from the working directory (``.`` names it)."""
    return os.path.basename(os.path.normpath(os.path.abspath(path)))
