"""What every source adapter returns.

Adapters are pure: they read files and return ``benchmark_run_v0`` records plus the provenance
needed to make ingest idempotent (a digest of every file read). They never touch the database.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from benchledger.ledger.core.errors import InputError


@dataclass
class SourceIngest:
    """Records built from one source, with what was read to build them."""

    records: list[dict[str, Any]]
    provenance: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    # run_key -> the top-level directories (trial dirs) whose files fed that record, so each
    # run_built event names its own inputs instead of repeating every file of a 3,000-trial job
    record_dirs: dict[str, frozenset[str]] = field(default_factory=dict)
    # run_key -> that record's whole provenance (``record_view``), from a source that maps its
    # records to their files itself: an Inspect record's log (or a retried eval's logs) sits at
    # the top of the log directory or anywhere below it, beside other records' logs, so
    # grouping by directory cannot tell them apart (docs/formats/inspect.md §3)
    record_provenance: dict[str, dict[str, Any]] = field(default_factory=dict)
    # the directory the provenance's relative paths are relative to; the only absolute path an
    # adapter returns, kept out of records and provenance (the handler stores it in the local
    # ``run_built`` event only, for ``report --link-artifacts``: docs/report.md)
    root: Path | None = None

    @property
    def content_digest(self) -> str:
        """One digest over every file read, so unchanged input maps to the same idempotency key."""
        files = self.provenance.get("files") or {}
        h = hashlib.sha256()
        for rel in sorted(files):
            h.update(rel.encode("utf-8", "surrogateescape"))
            h.update(b"\0")
            h.update(str(files[rel]).encode())
            h.update(b"\n")
        return h.hexdigest()


def record_view(provenance: dict[str, Any], files: dict[str, str], **own: Any) -> dict[str, Any]:
    """One record's provenance: the source's facts about the whole ingest, the record's own
    entries (``own``, in place of the source's), only its own files, and how many files the
    source read in all (their digests make the idempotency key: ``content_digest``)."""
    return {
        **provenance,
        **own,
        "files": dict(sorted(files.items())),
        "source_file_count": len(provenance.get("files") or {}),
    }


class RecordProvenance:
    """Each record's provenance: the source-level files plus the files of its own directories,
    or the provenance the source made for the record itself (``record_provenance``).

    A 3,000-trial Harbor job reads 3,000 files; repeating all their digests in each of its 89
    ``run_built`` events made the events 30 MB (and 100 Inspect logs' entries in each of their
    10,000 records' events, 330 MB of a 600 MB store). Files are grouped by directory once, so
    slicing per record costs only that record's files. Records a source did not map to
    their files (BenchFlow, planned runs) keep the whole provenance.
    """

    def __init__(
        self,
        provenance: dict[str, Any],
        record_dirs: dict[str, frozenset[str]],
        record_provenance: dict[str, dict[str, Any]] | None = None,
    ):
        self.provenance = provenance
        self.record_dirs = record_dirs
        self.record_provenance = record_provenance or {}
        files = provenance.get("files") or {}
        self.by_dir: dict[str, dict[str, str]] = {}
        for rel, digest in files.items():
            top = rel.split("/", 1)[0] if "/" in rel else ""
            self.by_dir.setdefault(top, {})[rel] = digest

    def __call__(self, run_key: str | None) -> dict[str, Any]:
        made = self.record_provenance.get(run_key) if run_key else None
        if made is not None:
            return made
        dirs = self.record_dirs.get(run_key) if run_key else None
        if dirs is None:
            return self.provenance
        own = dict(self.by_dir.get("", {}))
        for name in dirs:
            own.update(self.by_dir.get(name, {}))
        return record_view(self.provenance, own)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def keep_tasks(ingest: SourceIngest, tasks: tuple[str, ...]) -> SourceIngest:
    """Only the records of the ``--include-task-name`` cases, when any are named."""
    if not tasks:
        return ingest
    wanted = set(tasks)
    kept = [r for r in ingest.records if r.get("case_id") in wanted]
    if not kept:
        raise InputError(f"no records for --include-task-name {', '.join(sorted(wanted))}")
    return replace(ingest, records=kept)
