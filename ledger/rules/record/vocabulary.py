"""Closed vocabularies of the ``benchmark_run_v0`` record (docs/formats/benchmark_run_v0.md §4),
written once.

The contracts (``ledger.contracts``) type fields with the ``Literal``s, compaction and the row
rules test membership with the sets derived from them, and the CLI builds its flags from
``MULTIPLIER_KEYS``. Only ``typing`` is imported, so the CLI can read these without loading
the contracts' models.
"""

from __future__ import annotations

from typing import Literal, get_args

RunStatus = Literal[
    "planned",
    "fixture",
    "running",
    "completed",
    "cancelled",
    "incomplete",
    "corrupt",
    "not_started",
]
TrialStatus = Literal[
    "completed", "running", "pending", "cancelled", "result_missing", "result_corrupt"
]
ArmRole = Literal["baseline", "treatment", "other"]

RUN_STATUSES: frozenset[str] = frozenset(get_args(RunStatus))
TRIAL_STATUSES: frozenset[str] = frozenset(get_args(TrialStatus))
#: The arm roles in the order ``--arm-role`` lists them.
ARM_ROLE_CHOICES: tuple[str, ...] = get_args(ArmRole)
ARM_ROLES: frozenset[str] = frozenset(ARM_ROLE_CHOICES)

#: Failure scopes that point at the runner or its set-up rather than the agent: repair triages
#: them, a case decision blames the run, and aggregation counts them as a setup signal.
RUNNER_FAILURE_SCOPES: tuple[str, ...] = ("runner_or_setup", "score_missing")

# Timeout multipliers in the order Harbor documents them, which is also the order they are
# validated in (so the first bad flag is the one reported).
MULTIPLIER_KEYS: tuple[str, ...] = (
    "timeout_multiplier",
    "agent_timeout_multiplier",
    "verifier_timeout_multiplier",
    "agent_setup_timeout_multiplier",
    "environment_build_timeout_multiplier",
)
