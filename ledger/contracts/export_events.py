"""Payload of ``export_written`` (stream ``exports``): the files rendered after a commit, each
with the sha256 ``verify --files`` compares against.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from benchledger.ledger.contracts.base import Closed, optional


class ExportedFile(Closed):
    path: str
    kind: str = optional()
    sha256: Annotated[str, Field(pattern="^[0-9a-f]{64}$")]


class ExportWrittenV1(Closed):
    files: list[ExportedFile]
