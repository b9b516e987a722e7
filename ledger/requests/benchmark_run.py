"""The typed request of ``benchledger benchmark run`` (docs/formats/cli.md §5.1).

Field names are the click parameter names: the planned-run builders hash the options given
(``option_items``) into provenance and idempotency, so the names are part of stored payloads and
must not drift from what the command layer parsed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from benchledger.ledger.sources.planned.timeout_policy import MULTIPLIER_KEYS


# Plain (not frozen, no slots, no ``__eq__``): building this 60-field class is paid on every
# ``benchmark run`` start, and frozen+slots+eq cost ~1.7 ms more there. Nothing assigns to,
# hashes or compares a request; ``with_benchmark`` copies with ``replace`` as before.
@dataclass(eq=False)
class BenchmarkRunRequest:
    """Every flag of ``benchmark run``; ``None``/``False``/``()`` mean "not given"."""

    benchmark_name: str | None = None
    goal_id: str | None = None
    mode: str | None = None
    dataset: str | None = None
    include_task_name: tuple[str, ...] = ()
    runner: str | None = None
    agent: str | None = None
    model: str | None = None
    skillsbench_route: str | None = None
    skillsbench_result_json: str | None = None
    skillsbench_result_root: str | None = None
    selection_policy: str | None = None
    keep_corrupt: bool = False
    harbor_job_dir: str | None = None
    log_dir: str | None = None
    log: tuple[str, ...] = ()
    scorer: str | None = None
    arm_map: tuple[str, ...] = ()
    arm_role: str | None = None
    loopx_worker_artifacts: bool = False
    timeout_multiplier: float | None = None
    agent_timeout_multiplier: float | None = None
    verifier_timeout_multiplier: float | None = None
    agent_setup_timeout_multiplier: float | None = None
    environment_build_timeout_multiplier: float | None = None
    timeout_preset: str | None = None
    codex_install_strategy: str | None = None
    codex_preflight_timeout_sec: int | None = None
    worker_codex_materialization_strategy: str | None = None
    worker_materialization_probe_only: bool = False
    setup_timeout_repair_profile: bool = False
    fake_worker: bool = False
    cli_bridge_contract: bool = False
    worker_cli_bridge_fixture: bool = False
    active_cli_bridge: bool = False
    active_user_assisted_treatment: bool = False
    active_user_observation_fixture: bool = False
    preflight_guard: bool = False
    require_task_material_ready: bool = False
    auth_env_name: tuple[str, ...] = ()
    job_name: str | None = None
    n_attempts: int | None = None
    n_concurrent: int | None = None
    runner_ref: str | None = None
    classification: str | None = None
    recommended_action: str | None = None
    update_run_ledger: bool = False
    run_ledger_path: str | None = None
    ledger_id: str | None = None
    run_group_id: str | None = None
    arm_id: str | None = None
    run_ledger_note: str | None = None
    delivery_batch_scale: str | None = None
    delivery_outcome: str | None = None
    agent_kwarg: tuple[str, ...] = ()
    dry_run: bool = False
    execute: bool = False
    no_global_sync: bool = False
    no_render: bool = False
    jobs: int | None = None  # cores a Harbor ingest reads trials on; how, never what, is read

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> BenchmarkRunRequest:
        """Build from parsed options; an unknown name is a programming error, caught here."""
        unknown = sorted(set(options) - OPTION_NAMES)
        if unknown:
            raise TypeError(f"unknown benchmark run option(s): {', '.join(unknown)}")
        values: dict[str, Any] = {
            name: _as_tuple(value) if name in _REPEATABLE else value
            for name, value in options.items()
        }
        return cls(**values)

    def with_benchmark(self, benchmark_name: str) -> BenchmarkRunRequest:
        return replace(self, benchmark_name=benchmark_name)

    def option_items(self) -> Iterator[tuple[str, Any]]:
        """(name, value) of every option in declaration order, as the click layer named them."""
        for item in fields(self):
            yield item.name, getattr(self, item.name)

    def given(self, *names: str) -> bool:
        """True when any named option is given (a true flag, a value, a non-empty list)."""
        for name in names:
            value = getattr(self, name)
            if value is None or value is False:
                continue
            if isinstance(value, list | tuple | str) and not value:
                continue
            return True
        return False

    def multipliers(self) -> dict[str, float | None]:
        """The five timeout multipliers by key, ``None`` where not given."""
        return {key: getattr(self, key) for key in MULTIPLIER_KEYS}

    @property
    def ingests_skillsbench_result(self) -> bool:
        return bool(self.skillsbench_result_json or self.skillsbench_result_root)


OPTION_NAMES: frozenset[str] = frozenset(f.name for f in fields(BenchmarkRunRequest))
_REPEATABLE: frozenset[str] = frozenset(
    {"include_task_name", "arm_map", "auth_env_name", "agent_kwarg", "log"}
)


def _as_tuple(value: Any) -> tuple[str, ...]:
    """A repeatable option: click gives a tuple; one bare string is one value."""
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def require_option_names(names: Sequence[str]) -> tuple[str, ...]:
    """Check at import time that a table of option names names real options."""
    unknown = [name for name in names if name not in OPTION_NAMES]
    if unknown:
        raise TypeError(f"not benchmark run options: {unknown}")
    return tuple(names)


require_option_names(MULTIPLIER_KEYS)
