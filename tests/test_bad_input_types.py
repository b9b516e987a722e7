"""Wrong types, unparsable JSON and out-of-range scores: said out loud, never coerced or lost.

``case_id: 123`` used to become ``"123"``, ``benchmark_id: {}`` ``unknown-benchmark``, a
``"1.0"`` score a missing one, and an import dropped a benchmark whose ``cases`` was not an
object and then rewrote the source file without it. Every refusal here is one ``error:`` line
naming the field, exit 1, the event count unchanged, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.json_input import parse_json
from benchledger.ledger.core.registry import parse_registry_text
from tests.test_bad_input_files import Env
from tests.test_ledger_cli import compact_run


@pytest.fixture
def env(db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    monkeypatch.chdir(tmp_path)
    made = Env(db_url, tmp_path)
    made.events()
    return made


def _upsert(env: Env, record: dict | bytes) -> str:
    raw = record if isinstance(record, bytes) else json.dumps(record).encode()
    (env.root / "run.json").write_bytes(raw)
    return env.refused(
        "benchmark", "run-ledger-upsert", "--benchmark-run-json", "run.json", "--execute"
    )


# --------------------------------------------------------------------------- unparsable JSON

PARSE_FAILURES = [
    (b"", "the file is empty"),
    (b"  \n", "the file is empty"),
    (b'{"schema_version": "benchmark_run_v0", "case_id": "a"', "truncated JSON"),
    (b'{"schema_version": "benchmark_run_v0", "official_score": NaN}', "NaN is not allowed"),
    (b'{"official_score": -Infinity}', "-Infinity is not allowed"),
    (b'{"case_id": "caf\xe9"}', "not UTF-8 at byte offset 16"),
    (b"[" * 2000 + b"]" * 2000, "nested deeper than 1024 levels"),
    ('\ufeff{"a": 1}'.encode(), "byte order mark"),
    (b'{"a": 1e999}', "number is infinity"),
    (b'{"a": 1} x', "unexpected content after document (at line 1, column 10)"),
]


@pytest.mark.parametrize(("raw", "reason"), PARSE_FAILURES, ids=lambda v: repr(v)[:30])
def test_parse_failures_say_what_is_wrong(raw: bytes, reason: str) -> None:
    with pytest.raises(InputError) as info:
        parse_json(raw, what="x.json")
    assert info.value.message.startswith("x.json: ")
    assert reason in info.value.message, info.value.message


@pytest.mark.parametrize(("raw", "reason"), PARSE_FAILURES[:6], ids=lambda v: repr(v)[:30])
def test_upsert_names_the_parse_failure(env: Env, raw: bytes, reason: str) -> None:
    line = _upsert(env, raw)
    assert line.startswith("error: ledger input JSON must contain an object; run.json: ")
    assert reason in line


def test_a_key_given_twice_is_refused_not_silently_resolved(env: Env) -> None:
    raw = b'{"schema_version": "benchmark_run_v0", "case_id": "a", "case_id": "b"}'
    line = _upsert(env, raw)
    assert 'key "case_id" appears twice in one object' in line
    nested = (
        b'{"schema_version": "benchmark_run_v0", "case_id": "a", '
        b'"agent": {"name": "x", "name": "y"}}'
    )
    assert 'key "name" appears twice' in _upsert(env, nested)
    assert parse_json(b'{"a": 1, "a": 2}', what="x") == {"a": 2}  # only when asked


def test_truncated_json_says_where(env: Env) -> None:
    line = _upsert(env, b'{\n  "schema_version": "benchmark_run_v0",\n  "case_id": "a"')
    assert "truncated JSON" in line and "line 3" in line


def test_deeply_nested_registry_is_a_clear_error() -> None:
    with pytest.raises(InputError) as info:
        parse_registry_text("[" * 100_000 + "]" * 100_000)
    assert "nested too deeply" in info.value.message


# --------------------------------------------------------------------------- wrong types

WRONG_TYPES = [
    ({"case_id": 123}, "case_id must be a string, got an integer"),
    ({"case_id": ["x"]}, "case_id must be a string, got a list"),
    ({"benchmark_id": {}}, "benchmark_id must be a string, got an object"),
    ({"job_name": True}, "job_name must be a string, got a boolean"),
    ({"official_score": "1.0"}, "official_score must be a number, got a string"),
    ({"official_score": True}, "official_score must be a number, got a boolean"),
    (
        {"official_task_score": {"kind": "k", "value": "1.0"}},
        "official_task_score.value must be a number, got a string",
    ),
    (
        {"official_task_score": {"kind": "k", "value": 1, "passed": "yes"}},
        "official_task_score.passed must be true or false, got a string",
    ),
    ({"official_task_score": [1]}, "official_task_score must be an object, got a list"),
    ({"agent": "codex"}, "agent must be an object, got a string"),
    ({"agent": {"name": 5}}, "agent.name must be a string, got an integer"),
    ({"trials": {"a": 1}}, "trials must be a list of objects, got an object"),
    ({"trials": [1]}, "trials[0] must be an object, got an integer"),
    ({"trials": [{"primary_reward": "1"}]}, "trials[0].primary_reward must be a number"),
    ({"trial_count": 2.5}, "trial_count must be an integer, got a number"),
    ({"case_ids": [1]}, "case_ids[0] must be a string, got an integer"),
    ({"run_status": 5}, "run_status must be a string, got an integer"),
    ({"official_score": 18446744073709551615}, "official_score is beyond the 64-bit"),
]


@pytest.mark.parametrize(("change", "message"), WRONG_TYPES, ids=lambda v: str(v)[:40])
def test_a_wrong_type_is_named_never_coerced(env: Env, change: dict, message: str) -> None:
    record = {**compact_run("fix-git", score=1, job="tb_fix_git"), **change}
    line = _upsert(env, record)
    assert message in line, line
    assert not (env.root / "benchmark-run-ledger.json").exists()


def test_a_batch_names_the_item(env: Env) -> None:
    good = compact_run("fix-git", score=1, job="tb_fix_git")
    bad = {**compact_run("regex", score=0, job="tb_regex"), "case_id": 7}
    line = _upsert(env, {"schema_version": "benchmark_run_batch_v0", "benchmark_runs": [good, bad]})
    assert "benchmark_runs[1]: case_id must be a string, got an integer" in line


# --------------------------------------------------------------------------- out-of-range scores


@pytest.mark.parametrize("score", [-5, 1e308, 1.5])
def test_out_of_range_scores_are_kept_and_flagged(env: Env, score: float) -> None:
    record = compact_run("fix-git", score=None, job="tb_fix_git")
    record["official_score"] = score
    (env.root / "run.json").write_text(json.dumps(record))
    out = env.run(
        "benchmark", "run-ledger-upsert", "--benchmark-run-json", "run.json", "--execute",
        "--format", "json",
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    block = json.loads(out.stdout)["benchmark_run_ledger"]
    assert block["entry"]["official_score"] == score  # kept as given, never clamped
    assert block["entry"]["score_flags"] == ["out_of_range"]
    assert "official_score_out_of_range" in block["warnings"]
    ledger = json.loads((env.root / "benchmark-run-ledger.json").read_text("utf-8"))
    (run,) = [r for n in ledger["benchmarks"].values() for c in n["cases"].values()
              for r in c["runs"]]  # fmt: skip
    assert run["score_flags"] == ["out_of_range"]


def test_in_range_scores_carry_no_flag(env: Env) -> None:
    (env.root / "run.json").write_text(json.dumps(compact_run("a", score=0.5, job="j")))
    block = json.loads(
        env.run(
            "benchmark",
            "run-ledger-upsert",
            "--benchmark-run-json",
            "run.json",
            "--execute",
            "--format",
            "json",
        ).stdout  # fmt: skip
    )["benchmark_run_ledger"]
    assert "score_flags" not in block["entry"] and "warnings" not in block


# --------------------------------------------------------------------------- loopx import


def _ledger_doc(fixtures_dir: Path) -> dict:
    path = fixtures_dir / "loopx-ledger" / "benchmark-run-ledger.json"
    return json.loads(path.read_text("utf-8"))


def _first(document: dict) -> tuple[str, str]:
    bench = next(iter(document["benchmarks"]))
    return bench, next(iter(document["benchmarks"][bench]["cases"]))


def _break_cases(doc: dict) -> str:
    bench, _ = _first(doc)
    doc["benchmarks"][bench]["cases"] = "nope"
    return f'benchmarks["{bench}"].cases must be an object, got a string'


def _break_runs(doc: dict) -> str:
    bench, case = _first(doc)
    doc["benchmarks"][bench]["cases"][case]["runs"] = {"a": 1}
    return f'benchmarks["{bench}"].cases["{case}"].runs must be a list, got an object'


def _break_run(doc: dict) -> str:
    bench, case = _first(doc)
    doc["benchmarks"][bench]["cases"][case]["runs"][0] = "run"
    return f'benchmarks["{bench}"].cases["{case}"].runs[0] must be an object, got a string'


def _break_case_id(doc: dict) -> str:
    bench, case = _first(doc)
    doc["benchmarks"][bench]["cases"][case]["runs"][0]["case_id"] = ["x"]
    return ".runs[0].case_id must be a string, got a list"


def _break_score(doc: dict) -> str:
    bench, case = _first(doc)
    doc["benchmarks"][bench]["cases"][case]["runs"][0]["official_score"] = "1.0"
    return ".runs[0].official_score must be a number within 64 bits, got a string"


def _break_huge_int(doc: dict) -> str:
    bench, case = _first(doc)
    doc["benchmarks"][bench]["cases"][case]["runs"][0]["official_score"] = 2**64 - 1
    return ".runs[0].official_score must be a number within 64 bits, got an integer"


def _break_node(doc: dict) -> str:
    bench, _ = _first(doc)
    doc["benchmarks"][bench] = []
    return f'benchmarks["{bench}"] must be an object, got a list'


BREAKS = [
    _break_cases,
    _break_runs,
    _break_run,
    _break_case_id,
    _break_score,
    _break_huge_int,
    _break_node,
]


@pytest.mark.parametrize("damage", BREAKS, ids=lambda f: f.__name__)
def test_import_refuses_what_it_would_drop(env: Env, fixtures_dir: Path, damage) -> None:  # noqa: ANN001
    document = _ledger_doc(fixtures_dir)
    message = damage(document)
    source = env.root / "L.json"
    source.write_text(json.dumps(document, indent=2))
    before = source.read_bytes()
    for extra in ([], ["--in-place"]):
        line = env.refused("import", "loopx-ledger", "L.json", "--execute", *extra)
        assert line.startswith("error: L.json: ") and message in line, line
        assert source.read_bytes() == before  # never rewritten, not even with --in-place
        assert not (env.root / "L.md").exists()


def test_import_leaves_the_source_alone_unless_told(env: Env, fixtures_dir: Path) -> None:
    src = fixtures_dir / "loopx-ledger" / "benchmark-run-ledger.json"
    document = json.loads(src.read_text("utf-8"))
    # reformatted, so a rewrite could not happen to give back the same bytes
    (env.root / "L.json").write_text(json.dumps(document, indent=4))
    before = (env.root / "L.json").read_bytes()
    out = json.loads(
        env.run("import", "loopx-ledger", "L.json", "--execute", "--format", "json").stdout
    )
    assert out["imported"] and out["rendered"] is False and out["source_rewritten"] is False
    assert (env.root / "L.json").read_bytes() == before
    assert not (env.root / "L.md").exists()
    elsewhere = json.loads(
        env.run(
            "import",
            "loopx-ledger",
            "L.json",
            "--run-ledger-path",
            "out/R.json",
            "--execute",
            "--format",
            "json",
        ).stdout
    )
    assert elsewhere["rendered"] and not elsewhere["source_rewritten"]
    assert (env.root / "out" / "R.json").exists()
    assert (env.root / "L.json").read_bytes() == before
    (env.root / "M.json").write_bytes(before)
    in_place = json.loads(
        env.run(
            "import", "loopx-ledger", "M.json", "--in-place", "--execute", "--format", "json"
        ).stdout
    )
    assert in_place["rendered"] and in_place["source_rewritten"]
    assert (env.root / "M.md").exists()
