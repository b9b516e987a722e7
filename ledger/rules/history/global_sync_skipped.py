"""The payload of a global registry sync that was not run (``--no-global-sync``).

Apart from ``ledger.rules.history.global_registry`` (the merge itself) so that a ``benchmark run``
that
skips the sync does not import the merge and its dependencies (~2-3 ms of every such command's
start, bench/README.md issue 18); the merge module re-exports both names.
"""

from __future__ import annotations

from typing import Any

SKIPPED_DISABLED = "disabled by --no-global-sync"


def skipped_disabled_payload(dry_run: bool) -> dict[str, Any]:
    return {"ok": True, "dry_run": dry_run, "skipped": True, "reason": SKIPPED_DISABLED}
