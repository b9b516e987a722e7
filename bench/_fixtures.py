"""Where the benchmarks find their input data: the test fixtures shipped in the repository."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
HARBOR = FIXTURES / "harbor"
HARBOR_MANIFEST = HARBOR / "manifest.json"
LOOPX_LEDGER = FIXTURES / "loopx-ledger" / "benchmark-run-ledger.json"
