"""``benchmark parity-check``: can this run back a "full loopx product path" claim?"""

from __future__ import annotations

from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.rules.operations.parity import parity_check_payload
from benchledger.ledger.rules.record.compact_input import resolve_compact_input
from benchledger.services.analysis_inputs import read_input_bytes


def parity_payload(given: str) -> dict[str, Any]:
    """Resolve and compact the input (docs/formats/benchmark_run_v0.md §2), then check the one
    record."""
    records, _kind = resolve_compact_input(read_input_bytes(given, stdin_ok=True), context="parity")
    if len(records) != 1:
        raise InputError(
            f"--benchmark-run-json holds {len(records)} benchmark runs; parity-check reads one"
        )
    return parity_check_payload(records[0])
