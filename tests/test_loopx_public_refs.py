"""loopx 0.4.8's public-ref rule, ref by ref: ``loopx_public_ref`` against loopx's own function.

loopx applies the rule to each of the three refs it keeps when it loads a ledger
(docs/loopx-compat.md); the whole-ledger differential suite sees its effect on the Markdown and
the aggregates, this file sees every ref shape on its own, so a mutation of the rule is caught
with the shape that shows it.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from benchledger.ledger.rules.row.refs import check_relative_ref, loopx_public_ref
from tests.support_loopx_diff import loopx_python
from tests.support_loopx_ledgers import REAL_REFS, random_ref

# Run inside loopx's venv: its rule on each ref, in the working directory given.
_LOOPX_RULE = """
import json, sys
from loopx.benchmark_ledger import _public_ledger_artifact_ref
print(json.dumps([_public_ledger_artifact_ref(ref) for ref in json.load(sys.stdin)]))
"""


def _loopx_rule(refs: list[str], cwd: Path) -> list[str | None]:
    done = subprocess.run(
        [str(loopx_python()), "-c", _LOOPX_RULE],
        input=json.dumps(refs),
        capture_output=True,
        text=True,
        cwd=cwd,
        check=True,
    )
    return json.loads(done.stdout)


EXAMPLES = {
    # under a private marker: the basename
    ".local/private-benchmark-jobs/job-7/case-a/benchmark_run.compact.json": (
        "benchmark_run.compact.json"
    ),
    "runs/job-7/private/benchmark_run.compact.json": "benchmark_run.compact.json",
    "C:\\Users\\alice\\jobs\\benchmark_run.compact.json": "benchmark_run.compact.json",
    # a compact artifact elsewhere: its path
    "cloud-ecs/job-7/benchmark_run.compact.json": "cloud-ecs/job-7/benchmark_run.compact.json",
    "./runs//x.public.json": "runs/x.public.json",
    # not a compact artifact: a lineage result file or a name without a dot, nothing else
    "docs/research/skillsbench-baseline-notes.md": None,
    "docs/research/baselines": "docs/research/baselines",
    "cloud-ecs/job-7/result.json": "cloud-ecs/job-7/result.json",
    "runs/job-7/tmp/result.json": None,
    "runs/.hidden/result.json": None,
    "runs/../result.json": None,
    "D:/runs/result.json": None,
    "runs/logs/x.compact.json": None,
    "runs/x.local.json": None,
    "/Users/alice/jobs/result.json": None,
    "~/jobs/benchmark_run.compact.json": None,
}


@pytest.mark.parametrize(("ref", "expected"), sorted(EXAMPLES.items()))
def test_public_ref_rule_examples(ref: str, expected: str | None) -> None:
    assert loopx_public_ref(ref) == expected


def test_examples_are_loopx_answers(tmp_path: Path) -> None:
    refs = sorted(EXAMPLES)
    assert _loopx_rule(refs, tmp_path) == [EXAMPLES[ref] for ref in refs]


def test_every_drawn_ref_shape_reads_as_loopx_reads_it(tmp_path: Path) -> None:
    """2,000 refs drawn as the differential generator draws them (fixed seed), through both
    rules in one loopx process; the working directory is a fresh folder no drawn absolute ref
    lies under."""
    rng = random.Random(33)
    refs = sorted({*REAL_REFS, *(random_ref(rng) for _ in range(2000))})
    theirs = _loopx_rule(refs, tmp_path)
    differences = [
        (ref, mine, loopx)
        for ref, mine, loopx in zip(refs, map(loopx_public_ref, refs), theirs, strict=True)
        if mine != loopx
    ]
    assert differences == []
    kept = [ref for ref in theirs if ref]
    assert 100 < len(kept) < len(refs) - 100  # both sides of the rule drawn


def test_rows_benchledger_writes_take_the_same_rule() -> None:
    """Our own rows: the rule, plus nothing drive-shaped (loopx keeps ``C:/jobs/x.compact.json``
    whole; no absolute path reaches a public file here)."""
    assert check_relative_ref(".local/jobs/j/benchmark_run.compact.json") == (
        "benchmark_run.compact.json"
    )
    assert check_relative_ref("docs/research/notes.md") is None
    assert check_relative_ref("jobs/j/result.json") == "jobs/j/result.json"
    assert loopx_public_ref("C:/jobs/x.compact.json") == "C:/jobs/x.compact.json"
    assert check_relative_ref("C:/jobs/x.compact.json") is None
    assert loopx_public_ref("../x.compact.json") == "../x.compact.json"
    assert check_relative_ref("../x.compact.json") is None
