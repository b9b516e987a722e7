"""The ``attempt_accounting`` block both runner adapters write (docs/formats/benchmark_run_v0.md
§6.3).

The lifecycle is cumulative: a phase counts only when every earlier one does, and which of the
five attempt layers count follows from the phases counted. Only what each runner's files show
(the facts, and what a layer *attempted*) differs between Harbor and BenchFlow, so that stays
with each adapter and the rest is written here once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

LIFECYCLE: tuple[str, ...] = (
    "process_started",
    "runner_accepted_args",
    "job_root_materialized",
    "trial_started",
    "worker_started",
    "result_written",
    "verifier_scored",
)


def lifecycle_reached(facts: Mapping[str, bool]) -> tuple[str, dict[str, bool]]:
    """The last phase whose facts and every earlier phase's hold (``not_started`` when none),
    and for each phase whether it counts."""
    reached = "not_started"
    for phase in LIFECYCLE:
        if not facts[phase]:
            break
        reached = phase
    hit = LIFECYCLE.index(reached) + 1 if reached != "not_started" else 0
    return reached, {phase: i < hit for i, phase in enumerate(LIFECYCLE)}


def countable_layers(counted: Mapping[str, bool], run_status: str) -> dict[str, bool]:
    """Which attempt layers count, from the phases counted; the official score only on a
    completed run."""
    return {
        "launcher": counted["process_started"],
        "case": counted["trial_started"],
        "solver": counted["worker_started"],
        "verifier": counted["verifier_scored"],
        "official_score": counted["verifier_scored"] and run_status == "completed",
    }


def failure_label(score: float | None, attribution: str) -> str:
    """The attribution when there is one, else what the score says."""
    if attribution != "none":
        return attribution
    if score is None:
        return "official_score_missing"
    return "official_score_zero" if score == 0 else "none"


def failure_class(worker_started: bool, score: float | None, verifier_failed: bool) -> str:
    """Which layer failed: set-up before the worker, the verifier or the official score when
    nothing was scored (``verifier_failed``: the most common unscored reason was the
    verifier's), else the solver on a zero score."""
    if not worker_started:
        return "job_materialization_failed"
    if score is None:
        return "verifier_failed" if verifier_failed else "official_score_failed"
    return "solver_failed" if score == 0 else "none"


def accounting_block(
    phase: str,
    label: str,
    failure_class: str,
    countable: Mapping[str, bool],
    attempted: Mapping[str, bool],
) -> dict[str, Any]:
    """The block as the record carries it."""
    return {
        "schema_version": "benchmark_attempt_accounting_v0",
        "lifecycle_phase": phase,
        "failure_label": label,
        "failure_class": failure_class,
        **{f"{name}_attempt_countable": value for name, value in countable.items()},
        "attempts": {
            name: {"attempted": attempted[name], "countable": countable[name]} for name in countable
        },
    }
