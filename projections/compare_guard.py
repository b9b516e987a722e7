"""The comparability guard of ``compare``: are two arms' runs of a case measuring the same thing?

A paired difference only means something when both arms ran the same task content of the same
benchmark version and dataset under the same timeout policy. Each fact is compared per paired
case, and only where both sides recorded it (rows imported from loopx carry none of them); a
case whose own runs disagree inside one arm is reported too, because its case value then mixes
two tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from projections.compare import ArmCase, ArmResult

SHOWN_CHARS = 19  # "sha256:" and 12 hex digits: enough to tell digests apart on one line


def _benchmark_versions(row: Mapping[str, Any]) -> set[str]:
    benchmark = row.get("benchmark_id")
    if not isinstance(benchmark, str):
        return set()
    return {benchmark.partition("@")[2] or "unversioned"}


def _facts(key: str) -> Callable[[Mapping[str, Any]], set[str]]:
    def read(row: Mapping[str, Any]) -> set[str]:
        facts = row.get("comparability")
        values = facts.get(key) if isinstance(facts, Mapping) else None
        if isinstance(values, bool):
            return {"official" if values else "non_official"}
        return {v for v in values if isinstance(v, str)} if isinstance(values, list) else set()

    return read


FACTS: tuple[tuple[str, Callable[[Mapping[str, Any]], set[str]]], ...] = (
    ("benchmark_version", _benchmark_versions),
    ("dataset", _facts("dataset_sources")),
    ("task_digest", _facts("task_digests")),
    ("timeout_policy", _facts("timeout_official_comparable")),
)


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
        return f"{self.kind} differs {where} on {len(self.cases)} case(s): {shown}"


def _short(values: Sequence[str]) -> str:
    return "/".join(v if len(v) <= SHOWN_CHARS else v[:SHOWN_CHARS] + "…" for v in values)


def _case_facts(entry: ArmCase) -> tuple[frozenset[str], ...]:
    """The facts of a case's counted runs, one set per kind in ``FACTS`` order."""
    found: list[set[str]] = [set() for _ in FACTS]
    for row in entry.rows:
        for slot, (_kind, read) in zip(found, FACTS, strict=True):
            slot |= read(row)
    return tuple(frozenset(slot) for slot in found)


def find_mismatches(results: Sequence[ArmResult]) -> list[Mismatch]:
    """Every (arm, fact) that differs, the reference (``results[0]``) first; deterministic."""
    facts = {
        id(result): {case: _case_facts(entry) for case, entry in result.included().items()}
        for result in results
    }
    reference = facts[id(results[0])]
    found: list[Mismatch] = []
    for arm in results:
        mine = facts[id(arm)]
        for slot, (kind, _read) in enumerate(FACTS):
            inside = tuple(
                (case, tuple(sorted(sets[slot])), ())
                for case, sets in mine.items()
                if len(sets[slot]) > 1
            )
            if inside:
                found.append(Mismatch(kind, arm.arm_id, None, inside))
            if arm is results[0]:
                continue
            against = tuple(
                (case, tuple(sorted(a)), tuple(sorted(b)))
                for case, sets in mine.items()
                if case in reference
                and (a := sets[slot])
                and (b := reference[case][slot])
                and a != b
            )
            if against:
                found.append(Mismatch(kind, arm.arm_id, results[0].arm_id, against))
    return found
