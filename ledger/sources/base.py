"""What every source adapter returns.

Adapters are pure: they read files and return ``benchmark_run_v0`` records plus the provenance
needed to make ingest idempotent (a digest of every file read). They never touch the database.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any


@dataclass
class SourceIngest:
    """Records built from one source, with what was read to build them."""

    records: list[dict[str, Any]]
    provenance: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

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


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
