"""Differential suite: an imported loopx ledger reads exactly as loopx 0.4.8 reads it.

Each input goes through loopx 0.4.8 (``support_loopx_diff.Oracle``) and through
``benchledger import loopx-ledger``; the Markdown must be byte-identical and the rendered JSON,
every ``run-ledger-aggregate`` payload and the ``run-ledger-check``, ``-archive`` and ``-merge``
outputs equal key for key, except for the additions and deliberate differences listed in
docs/loopx-compat.md. Inputs: the shipped real ledger, generated ledgers of several sizes, and
hypothesis mutations of real rows.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support_loopx_diff import (
    Oracle,
    Reading,
    aggregate_difference,
    benchledger_read,
    first_key_difference,
    first_line_difference,
    loopx_python,
    maintenance_difference,
)
from tests.support_loopx_ledgers import (
    case_rows,
    ledger_document,
    maintenance_options,
    merge_source,
    real_ledger_path,
    sized_ledger,
)

CASES_PER_LEDGER = 20
GENERATED_LEDGERS = 100  # x CASES_PER_LEDGER = 2,000 generated cases
MERGE_SOURCE_CASES = 5  # a mutated merge source reuses the first cases' run ids
SIZES = (10, 100, 1000)
# BENCHLEDGER_DIFFERENTIAL_HUNT=1: draw new mutated rows at each run instead of the fixed ones.
HUNT = bool(os.environ.get("BENCHLEDGER_DIFFERENTIAL_HUNT"))


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory):
    python = loopx_python()
    served = Oracle(python, tmp_path_factory.mktemp("oracle"))
    yield served
    served.close()


def assert_same_reading(ours: Reading, loopx: Reading, what: str) -> None:
    """Markdown byte for byte, JSON key for key, no column ignored (every next action is
    loopx's sentence); a loopx crash must be a clear error here."""
    if loopx.error is not None:
        assert ours.error is not None, f"{what}: loopx crashed ({loopx.error}); benchledger did not"
        assert "\n" not in ours.error and "Traceback" not in ours.error, ours.error
        return
    assert ours.error is None, f"{what}: benchledger failed: {ours.error}"
    assert ours.markdown is not None and loopx.markdown is not None
    assert ours.json_text is not None and loopx.json_text is not None
    difference = first_line_difference(ours.markdown, loopx.markdown)
    assert difference is None, f"{what}: Markdown differs at {difference}"
    difference = first_key_difference(json.loads(ours.json_text), json.loads(loopx.json_text))
    assert difference is None, f"{what}: JSON differs at {difference}"
    assert len(ours.aggregates) == len(loopx.aggregates)
    for index, (mine, theirs) in enumerate(zip(ours.aggregates, loopx.aggregates, strict=True)):
        difference = aggregate_difference(mine, theirs)
        assert difference is None, f"{what}: aggregate {index} differs at {difference}"
    difference = maintenance_difference(ours, loopx)
    assert difference is None, f"{what}: check/archive/merge differ at {difference}"


def aggregate_options(ledger: Path) -> list[dict]:
    """Every selection mode over each benchmark of the ledger: best-of-N over its cases (named
    explicitly: loopx also counts archived-only cases, a deliberate difference), the same with
    one case marked active, and a target lane with current and backfill patterns."""
    document = json.loads(ledger.read_text(encoding="utf-8"))
    options = []
    for benchmark_id, node in sorted(document["benchmarks"].items()):
        cases = sorted(node["cases"])
        options.append({"benchmark_id": benchmark_id, "canonical_case_ids": cases})
        options.append(
            {
                "benchmark_id": benchmark_id,
                "canonical_case_ids": cases,
                "active_case_ids": cases[:1],
            }
        )
        options.append(
            {
                "benchmark_id": benchmark_id,
                "canonical_case_ids": cases,
                "target_lane_id": "lane-a",
                "target": ["x0", "s0"],
                "current": ["x1"],
                "backfill": ["x2", "sized-0000"],
            }
        )
    return options


def _both(
    oracle: Oracle, ledger: Path, workdir: Path, merge_from: dict | None = None
) -> tuple[Reading, Reading]:
    """Both readings of ``ledger``: its aggregates, then check, archive and (with
    ``merge_from``, a ledger document) merge, the same requests on each side."""
    options = aggregate_options(ledger)
    maintenance = None
    document = json.loads(ledger.read_text(encoding="utf-8"))
    if merge_from is not None:
        source = ledger.with_name(f"{ledger.stem}.merge-source.json")
        source.write_text(json.dumps(merge_source(document, merge_from), indent=2), "utf-8")
        maintenance = maintenance_options(document, source)
    return (
        benchledger_read(ledger, workdir, options, maintenance),
        oracle.read(ledger, options, maintenance),
    )


def test_shipped_ledger_reads_as_loopx_normalised_it(tmp_path: Path) -> None:
    """Against loopx's own output shipped beside the ledger: runs without the oracle."""
    source = real_ledger_path()
    ours = benchledger_read(source, tmp_path)
    loopx = Reading(
        json_text=source.with_name("benchmark-run-ledger.loopx-normalized.json").read_text(
            encoding="utf-8"
        ),
        markdown=source.with_suffix(".md").read_text(encoding="utf-8"),
    )
    assert_same_reading(ours, loopx, "shipped ledger")


def test_shipped_ledger_matches_the_oracle(oracle: Oracle, tmp_path: Path) -> None:
    ledger = tmp_path / "benchmark-run-ledger.json"
    ledger.write_bytes(real_ledger_path().read_bytes())
    ours, loopx = _both(oracle, ledger, tmp_path / "ours", sized_ledger(10, seed=3))
    assert_same_reading(ours, loopx, "shipped ledger")


@pytest.mark.parametrize("size", SIZES)
def test_generated_ledger_of_each_size(oracle: Oracle, tmp_path: Path, size: int) -> None:
    ledger = tmp_path / f"ledger-{size}.json"
    ledger.write_text(json.dumps(sized_ledger(size), indent=2), encoding="utf-8")
    ours, loopx = _both(oracle, ledger, tmp_path / "ours", sized_ledger(size, seed=5))
    assert_same_reading(ours, loopx, f"{size}-row ledger")


@pytest.mark.slow  # minutes: every generated ledger runs through loopx and benchledger
@settings(
    max_examples=GENERATED_LEDGERS,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    # The same examples on every run, so CI never turns red on a new draw; a random hunt is
    # opt-in (it found merge's signature count: tests/test_merge.py).
    derandomize=not HUNT,
    database=None if not HUNT else settings.default.database,
)
@given(
    cases=st.tuples(*(case_rows(index) for index in range(CASES_PER_LEDGER))),
    source=st.tuples(*(case_rows(index) for index in range(MERGE_SOURCE_CASES))),
)
def test_mutated_real_rows(
    oracle: Oracle, tmp_path_factory: pytest.TempPathFactory, cases, source
) -> None:
    workdir = tmp_path_factory.mktemp("mutated")
    ledger = workdir / "ledger.json"
    ledger.write_text(json.dumps(ledger_document(list(cases)), indent=2), encoding="utf-8")
    ours, loopx = _both(oracle, ledger, workdir / "ours", ledger_document(list(source)))
    assert_same_reading(ours, loopx, "mutated ledger")


def test_where_loopx_refuses_benchledger_answers_one_line(oracle: Oracle, tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.json"
    ledger.write_text(json.dumps({"schema_version": "other", "benchmarks": {}}), encoding="utf-8")
    ours, loopx = benchledger_read(ledger, tmp_path / "ours"), oracle.read(ledger)
    assert loopx.error is not None and "schema_version" in loopx.error
    assert_same_reading(ours, loopx, "foreign schema")
    assert (
        ours.error == "error: benchmark run ledger must use schema_version=benchmark_run_ledger_v0"
    )


@pytest.mark.parametrize(
    "size",
    (100, 1000, pytest.param(10000, marks=pytest.mark.slow)),  # 10,000 rows: minutes
)
def test_project_generator_ledger_of_each_size(oracle: Oracle, tmp_path: Path, size: int) -> None:
    """Ledgers of the project's own generator (bench/make_ledger.py), as written before loopx
    has normalised them."""
    from bench import make_ledger

    templates = make_ledger.load_templates(real_ledger_path())
    rows = [make_ledger.ledger_row(i, templates, 0) for i in range(size)]
    ledger = tmp_path / f"generated-{size}.json"
    ledger.write_text(json.dumps(make_ledger.ledger_document(rows), indent=2), encoding="utf-8")
    other = make_ledger.ledger_document(
        [make_ledger.ledger_row(i, templates, 1) for i in range(size)]
    )
    ours, loopx = _both(oracle, ledger, tmp_path / "ours", merge_from=other)
    assert_same_reading(ours, loopx, f"generated {size}-row ledger")


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("archive", "provide a run/case/arm filter, or pass --archive-all-matching-benchmark"),
        ("merge", "schema_version=benchmark_run_ledger_v0"),
    ],
)
def test_where_loopx_crashes_on_a_command_benchledger_answers_one_line(
    oracle: Oracle, tmp_path: Path, command: str, message: str
) -> None:
    """An archive without a filter, a merge of a foreign-schema source: loopx raises (its CLI
    prints the exception); benchledger exits non-zero with one line saying the same."""
    ledger = tmp_path / "ledger.json"
    ledger.write_text(json.dumps(sized_ledger(10), indent=2), encoding="utf-8")
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps({"schema_version": "other", "benchmarks": {}}), "utf-8")
    request = {
        "archive": {"archive": {"benchmark_id": "skillsbench@1.1", "reason": "r"}},
        "merge": {"merge": {"sources": [str(foreign)]}},
    }[command]
    ours = benchledger_read(ledger, tmp_path / "ours", [], request)
    loopx = oracle.read(ledger, [], request)
    loopx_error = loopx.maintenance.get(".maintenance.error")
    assert loopx_error is not None and message in loopx_error, loopx.maintenance
    our_error = ours.maintenance.get(".maintenance.error")
    assert our_error is not None and message in our_error, ours.maintenance
    assert maintenance_difference(ours, loopx) is None
