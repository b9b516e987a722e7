"""A Harbor job's trials read on several cores when the user asks for it (``--jobs N``), through
the readers' one parallel call (``ledger/sources/parallel.py``).

Two moments to start the workers, both only with ``--jobs N``:

* ``start_early``: when the command line names a Harbor job directory and ``--jobs N``, the
  ``benchledger`` entry point (``benchledger/__main__.py``) calls it before it imports the
  command modules (click, the store, the projections: ~80 ms of a 3,000-trial ingest's
  ~0.3 s): the job's trials are listed and ``N`` workers start on them at once, while this
  process goes on importing. The command line is only a hint there: click still parses it,
  and ``TrialReading`` adopts the early workers only when the job directory it resolves and
  the trials it lists are exactly those the workers read, with the same ``--jobs``. Anything
  else (another command, a bad flag, a job that changed) stops them unused, so what is recorded
  never depends on that scan.
* Otherwise ``TrialReading`` starts ``N - 1`` workers when the job is opened and reads the first
  run itself, after the job's own files (a 3,000-trial job's ``lock.json`` is ~4.5 MB).

Measured gains and costs are in bench/README.md: a worker costs CPU, so with busy cores more
workers can be slower than one core, which is why none of this is the default.
"""

from __future__ import annotations

import atexit
import os
from functools import partial

from benchledger.ledger.core.errors import BenchledgerError
from benchledger.ledger.sources.harbor.files import _Reader
from benchledger.ledger.sources.harbor.trials import (
    Progress,
    _Attempt,
    _list_trials,
    _read_trial,
    _trial_candidates,
    read_trials,
)
from benchledger.ledger.sources.parallel import ForkedRuns

MIN_TRIALS_PER_RUN = 200  # below this a worker costs more than it reads
_Found = tuple[list[_Attempt | None], dict[str, str]]  # a run's attempts, and its digests
_Runs = ForkedRuns[str, _Found]


# Workers started by ``start_early`` and what they read: (job root, trial names, jobs, runs),
# waiting for the command to adopt them.
_early: tuple[str, list[str], int, _Runs] | None = None


def start_early(job_dir: str, jobs: int) -> None:
    """Start reading the trials of the Harbor job at ``job_dir`` on ``jobs`` workers, before the
    command's modules are imported; the command adopts them or stops them (``_adopt``)."""
    global _early
    if jobs < 2 or _early is not None:
        return
    root = os.path.realpath(job_dir)
    try:
        names = _trial_candidates(root)[0]
    except (OSError, BenchledgerError):
        return  # the command itself reports what is wrong with the directory
    runs: _Runs = ForkedRuns(
        names, partial(_read_run, root), jobs, min_per_run=MIN_TRIALS_PER_RUN, workers_only=True
    )
    if runs.forked:
        _early = (root, names, jobs, runs)
        atexit.register(_discard_early)


def _adopt(root: str, names: list[str], jobs: int | None) -> _Runs | None:
    """The early workers, when they read exactly this job's trials with these ``--jobs``;
    otherwise they are stopped."""
    global _early
    early, _early = _early, None
    if early is None:
        return None
    if early[:3] == (root, names, jobs):
        return early[3]
    early[3].__exit__()
    return None


def _discard_early() -> None:
    """At exit, the early workers of a command that never adopted them."""
    _adopt("", [], None)


class TrialReading:
    """The job's trials, read in name order on up to ``jobs`` cores (None: one). Workers start
    at once (or were started early), so the caller reads the job's own files meanwhile::

        with TrialReading(reader, progress, jobs) as trials:
            ...  # read the job files
            attempts = trials.attempts()

    ``progress(done, total)`` after each run of trials, or after each trial when they are read
    here alone."""

    def __init__(self, reader: _Reader, progress: Progress | None, jobs: int | None) -> None:
        self.reader = reader
        self.progress = progress
        self.names = _list_trials(reader)
        self.adopted = _adopt(reader.root, self.names, jobs)
        self.runs = self.adopted or ForkedRuns(
            self.names, partial(_read_run, reader.root), jobs, min_per_run=MIN_TRIALS_PER_RUN
        )

    def __enter__(self) -> TrialReading:
        return self

    def __exit__(self, *exc: object) -> None:
        self.runs.__exit__(*exc)

    def attempts(self) -> list[_Attempt]:
        """Every trial's attempt, the runs joined in trial order; their digests go to the
        reader as if it had read every file itself."""
        if not self.runs.forked:
            return read_trials(self.reader, self.progress, self.names)
        total = len(self.names)
        if self.progress:
            self.progress(0, total)
        attempts: list[_Attempt] = []
        done = 0
        for run, (found, files) in self.runs.results():
            self.reader.files.update(files)
            attempts.extend(a for a in found if a is not None)
            done += len(run)
            if self.progress:
                self.progress(done, total)
        return attempts


def _read_run(root: str, names: list[str]) -> _Found:
    """One run of trials with a handle of its own on the job directory (a worker has no other)."""
    with _Reader(root) as reader:
        return [_read_trial(reader, name) for name in names], reader.files
