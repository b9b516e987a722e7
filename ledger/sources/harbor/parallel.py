"""A Harbor job's trials read on several cores when the user asks for it (``--jobs N``), through
the readers' one parallel call (``ledger/sources/parallel.py``).

With a core to spare, a 3,000-trial job was recorded ~0.1 s sooner on two cores (0.76 -> 0.67 s
on a quiet 2-core machine); on a machine whose cores are busy two cores were ~10 % slower than
one, so it is not the default (bench/README.md). The workers start before this process reads the
job's own files (a 3,000-trial job's ``lock.json`` is ~4.5 MB), which it reads meanwhile.
"""

from __future__ import annotations

from functools import partial

from benchledger.ledger.sources.harbor.files import _Reader
from benchledger.ledger.sources.harbor.trials import (
    Progress,
    _Attempt,
    _list_trials,
    _read_trial,
    read_trials,
)
from benchledger.ledger.sources.parallel import ForkedRuns

MIN_TRIALS_PER_RUN = 200  # below this a worker costs more than it reads
_Found = tuple[list[_Attempt | None], dict[str, str]]  # a run's attempts, and its digests


class TrialReading:
    """The job's trials, read in name order on up to ``jobs`` cores (None: one). The workers
    start at once, so the caller reads the job's own files while they read theirs::

        with TrialReading(reader, progress, jobs) as trials:
            ...  # read the job files
            attempts = trials.attempts()

    ``progress(done, total)`` after each run of trials, or after each trial when they are read
    here alone."""

    def __init__(self, reader: _Reader, progress: Progress | None, jobs: int | None) -> None:
        self.reader = reader
        self.progress = progress
        self.names = _list_trials(reader)
        self.runs = ForkedRuns(
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
