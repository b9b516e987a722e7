"""The comparability guard of ``compare``: are two arms' runs of a case measuring the same thing?

A paired difference only means something when both arms ran the same task content of the same
benchmark version and dataset under the same timeout policy. Each fact is compared per paired
case, and only where both sides recorded it (rows imported from loopx carry none of them); a
case whose own runs disagree inside one arm is reported too, because its case value then mixes
two tasks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from benchledger.ledger.core.readable import plural

if TYPE_CHECKING:
    from benchledger.projections.reports.compare.document import ArmCase, ArmResult

SHOWN_CHARS = 19  # "sha256:" and 12 hex digits: enough to tell digests apart on one line


KINDS = ("benchmark_version", "dataset", "task_digest", "timeout_policy")
Facts = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]
OFFICIAL = {True: ("official",), False: ("non_official",)}


def row_facts(row: Mapping[str, Any]) -> Facts:
    """One run's facts in ``KINDS`` order, each a sorted tuple; empty when not recorded
    (kept with the run's other facts, ``projections.reports.compare.facts.RunFacts.guard``)."""
    benchmark = row.get("benchmark_id")
    version = (benchmark.partition("@")[2] or "unversioned",) if type(benchmark) is str else ()
    recorded = row.get("comparability")
    if type(recorded) is not dict:
        return (version, (), (), ())
    return (
        version,
        _texts(recorded.get("dataset_sources")),
        _texts(recorded.get("task_digests")),
        OFFICIAL.get(recorded.get("timeout_official_comparable"), ()),  # type: ignore[arg-type]
    )


def _texts(values: Any) -> tuple[str, ...]:
    if type(values) is not list:
        return ()
    return tuple(sorted({v for v in values if type(v) is str}))


@dataclass(frozen=True)
class Mismatch:
    """One fact that differs for one arm, against the reference (or inside the arm itself)."""

    kind: str
    arm_id: str
    reference: str | None
    cases: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "arm_id": self.arm_id,
            "reference": self.reference,
            "cases": [
                {"case_id": case, "arm_values": list(mine), "reference_values": list(theirs)}
                for case, mine, theirs in self.cases
            ],
        }

    def describe(self) -> str:
        where = f"{self.arm_id} vs {self.reference}" if self.reference else f"within {self.arm_id}"
        shown = ", ".join(
            f"{case} ({_short(mine)} vs {_short(theirs)})"
            if self.reference
            else f"{case} ({_short(mine)})"
            for case, mine, theirs in self.cases
        )
        return f"{self.kind} differs {where} on {plural(len(self.cases), 'case')}: {shown}"


def _short(values: Sequence[str]) -> str:
    return "/".join(v if len(v) <= SHOWN_CHARS else v[:SHOWN_CHARS] + "…" for v in values)


def case_facts(entry: ArmCase) -> Facts:
    """The union of the facts of a case's counted runs."""
    runs = entry.rows
    if len(runs) == 1:
        return runs[0].guard
    every = [run.guard for run in runs]
    return tuple(  # type: ignore[return-value]
        tuple(sorted({v for f in every for v in f[slot]})) for slot in range(len(KINDS))
    )


def find_mismatches(results: Sequence[ArmResult]) -> list[Mismatch]:
    """Every (arm, fact) that differs, the reference (``results[0]``) first; deterministic.

    Most cases agree on every fact at once, so whole fact tuples are compared first and the
    kinds are looked at one by one only for cases that differ.
    """
    facts = {
        id(result): {case: case_facts(entry) for case, entry in result.included().items()}
        for result in results
    }
    reference = facts[id(results[0])]
    found: list[Mismatch] = []
    for arm in results:
        mine = facts[id(arm)]
        mixed = [case for case, sets in mine.items() if max(map(len, sets)) > 1]
        differing = (
            []
            if arm is results[0]
            else [c for c, sets in mine.items() if c in reference and sets != reference[c]]
        )
        for slot, kind in enumerate(KINDS):
            inside = tuple(
                (case, mine[case][slot], ()) for case in mixed if len(mine[case][slot]) > 1
            )
            if inside:
                found.append(Mismatch(kind, arm.arm_id, None, inside))
            against = tuple(
                (case, a, b)
                for case in differing
                if (a := mine[case][slot]) and (b := reference[case][slot]) and a != b
            )
            if against:
                found.append(Mismatch(kind, arm.arm_id, results[0].arm_id, against))
    return found
