"""The ``benchledger benchmark`` group: the loopx ``benchmark`` surface, loaded per command."""

from __future__ import annotations

import click

from benchledger.commands.lazy_group import LazyGroup

_PREFIX = "benchledger.commands."


@click.group(
    "benchmark",
    cls=LazyGroup,
    lazy_subcommands={
        "run": (
            _PREFIX + "benchmark_commands:run",
            "Ingest a Harbor job or BenchFlow results, or plan a run.",
        ),
        "run-ledger-upsert": (
            _PREFIX + "ledger_commands:run_ledger_upsert",
            "Upsert compact runs into the run ledger.",
        ),
        "run-ledger-archive": (
            _PREFIX + "ledger_commands:run_ledger_archive",
            "Archive matching runs (kept, out of decisions).",
        ),
        "run-ledger-restore": (
            _PREFIX + "ledger_commands:run_ledger_restore",
            "Bring archived runs back.",
        ),
        "run-ledger-merge": (
            _PREFIX + "ledger_commands:run_ledger_merge",
            "Merge source ledger files into the store ledger.",
        ),
        "run-ledger-aggregate": (
            _PREFIX + "ledger_commands:run_ledger_aggregate",
            "One current result per canonical case.",
        ),
        "run-ledger-check": (
            _PREFIX + "ledger_commands:run_ledger_check",
            "Is every terminal history run in the ledger?",
        ),
        "parity-check": (
            _PREFIX + "analysis_commands:parity_check_command",
            "[loopx] May a run back a full product-path claim?",
        ),
        "case-analysis-candidates": (
            _PREFIX + "analysis_commands:case_analysis_candidates_command",
            "[loopx] Cases the case analysis does not cover yet.",
        ),
    },
)
def benchmark() -> None:
    """Benchmark runs and the public run ledger (the loopx `benchmark` surface)."""
