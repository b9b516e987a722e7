"""The ``benchledger benchmark`` group every benchmark subcommand attaches to."""

from __future__ import annotations

import click


@click.group("benchmark")
def benchmark() -> None:
    """Benchmark runs and the public run ledger (the loopx `benchmark` surface)."""
