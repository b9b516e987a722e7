"""Errors the CLI turns into one clear line and an exit code.

Every failure a user can cause (bad input, bad flags, an out-of-date database) is raised as a
``BenchledgerError`` so the command layer can print one line and exit non-zero without a
traceback; anything else is a bug and is still reported on one line.
"""

from __future__ import annotations


class BenchledgerError(Exception):
    """A failure the user can act on; ``exit_code`` is 1 unless it is a usage error (2)."""

    exit_code = 1
    code = "error"

    def __init__(self, message: str, *, details: dict | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}


class UsageError(BenchledgerError):
    """Flags that do not fit together; exit 2 like click's own usage errors."""

    exit_code = 2
    code = "usage_error"


class InputError(BenchledgerError):
    """A file or value given by the user cannot be used (missing, unreadable, malformed)."""

    code = "input_error"


class SourceError(InputError):
    """A runner output directory or result file cannot be read as the source it claims to be."""

    code = "source_error"


class ConcurrencyError(BenchledgerError):
    """An append expected a stream version that another writer has already moved past."""

    code = "concurrency_conflict"


class SchemaOutOfDateError(BenchledgerError):
    """The database schema is older than this version of benchledger."""

    code = "schema_out_of_date"
