"""What the Harbor reader reads of a ``benchmark run``: the job directory and the few values
that name or filter its records (docs/formats/harbor.md §5.6, docs/formats/cli.md §5.1).

Built once at the edge from the command's request, after its options were validated; the
reader takes this small frozen object and nothing else, so it never reaches back up to the
request, the handlers or the services. ``from_flags`` is the one place an ``--arm-map`` entry
is parsed (and refused when malformed).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from benchledger.ledger.core.errors import SourceError


@dataclass(frozen=True, slots=True)
class ArmMapping:
    """One ``--arm-map AGENT[:MODEL]=ARM`` entry; ``model`` None matches any model."""

    agent: str
    model: str | None
    arm: str


@dataclass(frozen=True, slots=True)
class HarborReadOptions:
    """The Harbor reader's whole input besides the files themselves."""

    job_dir: Path
    benchmark_id: str | None = None  # --dataset: overrides the id derived from the job
    arm_id: str | None = None
    arm_map: tuple[ArmMapping, ...] = ()
    arm_role: str | None = None
    run_group_id: str | None = None
    include_tasks: tuple[str, ...] = ()  # --include-task-name: keep only these cases
    jobs: int | None = None  # --jobs: cores the trials are read on (None: one); changes no record

    @classmethod
    def from_flags(
        cls,
        job_dir: str | Path,
        *,
        benchmark_id: str | None = None,
        arm_id: str | None = None,
        arm_map: Iterable[str] = (),
        arm_role: str | None = None,
        run_group_id: str | None = None,
        include_tasks: Iterable[str] = (),
        jobs: int | None = None,
    ) -> HarborReadOptions:
        """The options as the command's flags spell them; a malformed ``--arm-map`` entry is
        an error here, before any file is read."""
        return cls(
            Path(job_dir),
            benchmark_id,
            arm_id,
            parse_arm_map(arm_map),
            arm_role,
            run_group_id,
            tuple(include_tasks),
            jobs,
        )


def parse_arm_map(entries: Iterable[str]) -> tuple[ArmMapping, ...]:
    """``AGENT[:MODEL]=ARM`` entries, in the order given (the first match wins)."""
    parsed = []
    for entry in entries:
        left, sep, arm = entry.partition("=")
        agent, _, model = left.partition(":")
        if not sep or not agent.strip() or not arm.strip():
            raise SourceError(f"invalid --arm-map entry: {entry}")
        parsed.append(ArmMapping(agent.strip(), model.strip() or None, arm.strip()))
    return tuple(parsed)
