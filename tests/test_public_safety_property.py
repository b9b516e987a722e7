"""Every known secret and local-path shape, at every position, in every input field: none
reaches a public file (issue #13, point 1).

``test_safety.py`` checks the filter on fixed examples and ``test_public_safety_cli.py`` plants
a few shapes through whole CLI runs. This suite is the systematic one:

* the filter itself, exhaustively: each shape at the start, glued after ``_``, ``__``, ``-``,
  ``.``, a letter or a space, and followed by each suffix, through ``is_public_safe`` and the
  record and ledger text compactors;
* the pipelines, sampled by hypothesis: a shape planted at a chosen position of a chosen field
  of a compact ``benchmark_run_v0``, a Harbor job, a BenchFlow tree or a loopx ledger row, run
  through the same library functions the commands use (adapter, compaction, ledger row, ledger
  document, Markdown, goal run record, index line), must leave no trace in any of their output;
* a handful of whole CLI runs on SQLite and PostgreSQL with the free-text options
  (``--run-ledger-note``, ``--goal-id``, ``--arm-id``, ``--run-group-id``).

Each planted value carries a marker; a leak is the marker in any case and with any punctuation
removed, so a value laundered by slugging (``/Users/bob`` -> ``users-bob``) counts too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.safety import ctext, is_public_safe, ledger_text
from benchledger.ledger.handlers.import_loopx import load_ledger_document
from benchledger.ledger.rules.history.goal_runs import build_run_record
from benchledger.ledger.rules.record.compaction import compact_run
from benchledger.ledger.rules.row.build import build_row
from benchledger.ledger.rules.row.rows import document_rows_as_stored
from benchledger.ledger.sources.benchflow.options import BenchflowReadOptions
from benchledger.ledger.sources.benchflow.tree import read_benchflow_root
from benchledger.ledger.sources.harbor.job import read_harbor_job
from benchledger.ledger.sources.harbor.options import HarborReadOptions
from benchledger.projections.publishing.goal_runs import (
    index_row,
    render_index_line,
    render_record_json,
    render_record_markdown,
)
from benchledger.projections.publishing.ledger_v0 import build_document, dump_json, render_markdown
from tests.conftest import FIXTURES_DIR
from tests.support_bad_input import (
    BENCHFLOW_CASE,
    HARBOR_JOB,
    benchflow_empty_dirs,
    harbor_empty_dirs,
    make_writable_copy,
)

MARK = "Qz7plant"
UPPER = MARK.upper()
_MARK_RE = re.compile(MARK.lower())


def _shape(text: str, *, letter_glue: bool = True) -> tuple[str, bool]:
    return text, letter_glue


# (shape, caught even when glued to a preceding letter). Glued to a letter, a generic root is
# a relative path's inner segment (``jobs/tmp/run``: public by the spec) and the short keyword
# forms (``sk-…``, ``Bearer …``) are ordinary words (``task-…``); every other shape is caught
# anywhere.
SHAPES: list[tuple[str, bool]] = [
    # local paths
    _shape(f"/home/alice/{MARK}"),
    _shape(f"/Users/bob/{MARK}/run.json"),
    _shape(f"/Volumes/data/{MARK}"),
    _shape(f"/var/folders/ab/T/{MARK}"),
    _shape(f"/private/tmp/{MARK}"),
    _shape(f"/root/{MARK}", letter_glue=False),
    _shape(f"/tmp/{MARK}", letter_glue=False),
    _shape(f"/srv/bench/{MARK}", letter_glue=False),
    _shape(f"/mnt/data/{MARK}", letter_glue=False),
    _shape(f"C:\\Users\\carol\\{MARK}"),
    _shape(f"D:/jobs/{MARK}", letter_glue=False),
    _shape(f"~/{MARK}"),
    _shape(f"~alice/{MARK}", letter_glue=False),
    _shape(f"file:///tmp/{MARK}"),
    # keys and tokens with a known prefix
    _shape(f"sk-{MARK.lower()}abcdefghij", letter_glue=False),
    _shape(f"sk-proj-{MARK}AAAABBBBCCCC"),
    _shape(f"sk-ant-api03-{MARK}abcdef123"),
    _shape(f"sk-{MARK}AbCdEfGhIjKlMnOp0123456789"),
    _shape(f"ghp_{MARK}abcdefghijklmnopqrstuvwx"),
    _shape(f"gho_{MARK}abcdefghijklmnopqrstuvwx"),
    _shape(f"ghs_{MARK}abcdefghijklmnopqrstuvwx"),
    _shape(f"github_pat_11{MARK}_abcdefghijklmnop"),
    _shape(f"AKIA{UPPER}ABCD1234"),
    _shape(f"ASIA{UPPER}WXYZ5678"),
    _shape(f"xoxb-1234567890-{MARK}abcd"),
    _shape(f"xoxp-{MARK}-1234567890"),
    _shape(f"AIzaSyA{MARK}abcdefghijklmnopqrstuvwx"),
    _shape(f"hf_{MARK}abcdefghijklmnopqrstuvwxyz"),
    _shape(f"eyJhbGciOiJIUzI1NiJ9.eyJ{MARK}In0.c2lnbmF0dXJl"),
    _shape(f"-----BEGIN RSA PRIVATE KEY----- MIIE{MARK}"),
    _shape(f"wJalrXUtnFEMI/K7MDENG/{MARK}EXAMPLEKEY", letter_glue=False),  # AWS secret key
    # keyword forms and credentials in URLs
    _shape(f"Bearer {MARK}abcdefghijklmnop", letter_glue=False),
    _shape(f"password={MARK}"),
    _shape(f"DB_PASSWORD: {MARK}"),
    _shape(f"api_key={MARK}"),
    _shape(f"token={MARK}1234567890"),
    _shape(f"secret_key: {MARK}"),
    _shape(f"Authorization: Basic {MARK}"),
    _shape(f"https://alice:{MARK}pass@example.com/x"),
    _shape(f"postgresql://admin:S3cret{MARK}@db/prod"),
    _shape(f"redis://:{MARK}@cache:6379/0"),
]
PREFIXES = ["", "run ", "run_", "run__", "run-", "run.", "run"]  # "run": glued to a letter
SUFFIXES = ["", " end", "_end", "-end", ".end"]


def _positions(shape: str, letter_glue: bool) -> list[str]:
    """The shape at the start, glued after each separator or a letter, and at the end."""
    prefixes = PREFIXES if letter_glue else PREFIXES[:-1]
    return [prefix + shape + suffix for prefix in prefixes for suffix in SUFFIXES]


PLANTED = [text for shape, glue in SHAPES for text in _positions(shape, glue)]


def _leaks(texts: Mapping[str, str]) -> list[str]:
    """Names of the outputs that hold the marker in any case or punctuation."""
    return [
        name
        for name, text in texts.items()
        if _MARK_RE.search(re.sub(r"[^a-z0-9]", "", text.lower()))
    ]


# --------------------------------------------------------------------------- the filter itself


def test_every_shape_at_every_position_fails_the_filter() -> None:
    passed = [text for text in PLANTED if is_public_safe(text)]
    assert passed == []
    assert len(PLANTED) > 1000  # the whole product, not a sample


def test_the_compactors_never_keep_a_planted_value() -> None:
    for text in PLANTED:
        for limit in (8, 40, 120, 400):
            assert ctext(text, limit) is None, (text, limit)
            assert ledger_text(text, limit) is None, (text, limit)
            assert ctext(f"ok {text} " + "z" * 300, limit) is None, (text, limit)


@pytest.mark.parametrize(
    "text",
    [
        "fix-git",
        "openai/gpt-5",
        "anthropic/claude-sonnet-4",
        "terminal-bench@2.0",
        "skillsbench@1.1",
        "jobs/tmp/run",
        "./tmp/x",
        "<tmp>/x",
        "/app",
        "/logs/verifier/reward.txt",
        "codex__openai-gpt-5-codex",
        "harbor:2026-05-03__08-00-41:terminal-bench@2.0:fix-git:codex:openai-gpt-5",
        "AgentTimeoutError",
        "official_verifier_solution_failure",
        "https://github.com/laude-institute/terminal-bench-2.git",
        "cfec10fbd9f614fd134b4ecd7077994e98c3a598",
        "--agent-env OPENAI_API_KEY=${OPENAI_API_KEY}",
    ],
)
def test_public_values_keep_passing(text: str) -> None:
    assert is_public_safe(text)
    assert ctext(text, 200) == text


# --------------------------------------------------------------------------- pipelines

PIPELINE = settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
planted = st.sampled_from(PLANTED)


def _published(records: Iterable[Mapping[str, Any]], *, notes: str | None = None) -> dict:
    """Every public text the commands derive from raw records, built by the same functions:
    the compact record, its ledger row, the ledger JSON and Markdown, the goal run record,
    its Markdown and its index line."""
    texts: dict[str, str] = {}
    rows = []
    for n, raw in enumerate(records):
        run = compact_run(raw)
        texts[f"run{n}"] = json.dumps(run, ensure_ascii=False)
        record = build_run_record(run, goal_id="g", generated_at="2026-05-02T09:14:07Z")
        texts[f"record{n}.json"] = render_record_json(record)
        texts[f"record{n}.md"] = render_record_markdown(record, goal_id="g", stem=f"s{n}")
        texts[f"index{n}"] = render_index_line(index_row(record, goal_id="g", stem=f"s{n}"))
        try:
            row, warnings = build_row(run, notes=notes, now="2026-05-02T09:14:07Z")
        except InputError:
            continue  # refused before any write: nothing published
        texts[f"warnings{n}"] = json.dumps(warnings)
        rows.append(row)
    document = build_document(rows, updated_at="2026-05-02T09:14:07Z", update_policy=None)
    texts["ledger.json"] = dump_json(document).decode("utf-8")
    texts["ledger.md"] = render_markdown(document)
    return texts


def _string_paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    if isinstance(value, str):
        return [prefix]
    found: list[tuple] = []
    if isinstance(value, dict):
        for key, child in value.items():
            found += _string_paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value[:3]):
            found += _string_paths(child, (*prefix, index))
    return found


def _plant(document: Any, path: tuple, text: str) -> None:
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = text


def _compact_run_input() -> dict:
    return {
        "schema_version": "benchmark_run_v0",
        "source_runner": "harbor",
        "benchmark_id": "terminal-bench@2.0",
        "job_name": "tb-job",
        "mode": "codex_loopx",
        "case_id": "fix-git",
        "case_ids": ["fix-git"],
        "run_key": "harbor:tb-job:terminal-bench@2.0:fix-git:codex:gpt-5",
        "arm_id": "codex__gpt-5",
        "run_group_id": "grp",
        "notes": "ok",
        "failure_class": "none",
        "official_score_status": "completed",
        "runner_return_status": "completed",
        "score_failure_attribution": "none",
        "agent": {"name": "codex", "model": "openai/gpt-5", "version": "0.46.0"},
        "official_task_score": {"kind": "verifier_reward", "value": 1, "passed": True},
        "trials": [
            {
                "trial_name": "fix-git__abc",
                "task_id": "fix-git",
                "exception_type": "AgentTimeoutError",
                "exception_message": "timed out",
            }
        ],
    }


_COMPACT_PATHS = [p for p in _string_paths(_compact_run_input()) if p != ("schema_version",)]


@PIPELINE
@given(st.sampled_from(_COMPACT_PATHS), planted, planted)
def test_compact_run_fields(path: tuple, text: str, note: str) -> None:
    raw = _compact_run_input()
    _plant(raw, path, text)
    assert _leaks(_published([raw], notes=note)) == []


@pytest.fixture(scope="module")
def harbor_job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_writable_copy(
        FIXTURES_DIR / "harbor" / HARBOR_JOB,
        tmp_path_factory.mktemp("harbor") / "job",
        harbor_empty_dirs(HARBOR_JOB),
    )


# (file, path inside it) of the Harbor strings the issue names: job name, task names,
# sources, agent and model names, exception messages.
_TRIAL = "regex-chess__2SQ9vaA/result.json"
HARBOR_FIELDS = [
    ("config.json", ("job_name",)),
    (_TRIAL, ("task_name",)),
    (_TRIAL, ("source",)),
    (_TRIAL, ("trial_name",)),
    (_TRIAL, ("agent_info", "name")),
    (_TRIAL, ("agent_info", "model_info", "name")),
    (_TRIAL, ("agent_info", "model_info", "provider")),
    (_TRIAL, ("config", "agent", "model_name")),
    (_TRIAL, ("config", "agent", "name")),
    (_TRIAL, ("exception_info",)),
]


@PIPELINE
@given(st.sampled_from(HARBOR_FIELDS), planted)
def test_harbor_fields(harbor_job: Path, field: tuple, text: str) -> None:
    rel, path = field
    original = (harbor_job / rel).read_bytes()
    document = json.loads(original)
    if path == ("exception_info",):
        text = {
            "exception_type": f"AgentTimeoutError {text}",
            "exception_message": text,
            "exception_traceback": f'File "{text}", line 1',
        }
    _plant(document, path, text)
    (harbor_job / rel).write_text(json.dumps(document), encoding="utf-8")
    try:
        ingest = read_harbor_job(HarborReadOptions.from_flags(harbor_job))
    finally:
        (harbor_job / rel).write_bytes(original)
    assert _leaks(_published(ingest.records)) == []


@pytest.fixture(scope="module")
def benchflow_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_writable_copy(
        FIXTURES_DIR / "benchflow" / BENCHFLOW_CASE,
        tmp_path_factory.mktemp("benchflow") / "root",
        benchflow_empty_dirs(BENCHFLOW_CASE),
    )


_BF_RESULT = "jobs/2026-03-02__23-11-00/citation-check__25604556/result.json"


@pytest.fixture(scope="module")
def benchflow_fields(benchflow_root: Path) -> list[tuple[str, tuple]]:
    """Every string field of one BenchFlow result (task, agent, model, errors, ids...)."""
    document = json.loads((benchflow_root / _BF_RESULT).read_text("utf-8"))
    return [(_BF_RESULT, path) for path in _string_paths(document)]


@PIPELINE
@given(data=st.data())
def test_benchflow_fields(
    benchflow_root: Path, benchflow_fields: list, data: st.DataObject
) -> None:
    rel, path = data.draw(st.sampled_from(benchflow_fields), label="field")
    text = data.draw(planted, label="plant")
    original = (benchflow_root / rel).read_bytes()
    document = json.loads(original)
    _plant(document, path, text)
    (benchflow_root / rel).write_text(json.dumps(document), encoding="utf-8")
    try:
        ingest = read_benchflow_root(BenchflowReadOptions(benchflow_root))
    finally:
        (benchflow_root / rel).write_bytes(original)
    assert _leaks(_published(ingest.records)) == []


_LOOPX_LEDGER = FIXTURES_DIR / "loopx-ledger" / "benchmark-run-ledger.json"


@pytest.fixture(scope="module")
def loopx_document() -> dict:
    return json.loads(_LOOPX_LEDGER.read_text("utf-8"))


@PIPELINE
@given(data=st.data())
def test_loopx_import_rows(loopx_document: dict, data: st.DataObject) -> None:
    """A planted string anywhere in an imported ledger (row values, bucket keys)."""
    document = json.loads(json.dumps(loopx_document))
    paths = _string_paths(document)
    for _ in range(data.draw(st.integers(1, 3), label="plants")):
        _plant(document, data.draw(st.sampled_from(paths), label="field"), data.draw(planted))
    if data.draw(st.booleans(), label="plant a bucket key"):
        bench = data.draw(st.sampled_from(sorted(document["benchmarks"])), label="benchmark")
        document["benchmarks"][data.draw(planted)] = document["benchmarks"].pop(bench)
    data_bytes = json.dumps(document).encode("utf-8")
    from benchledger.ledger.sources.loopx import read_loopx_row

    stored = document_rows_as_stored(load_ledger_document(data_bytes, "ledger.json"))
    # The event keeps the rows verbatim; what reaches public files is the read model's row.
    rows = [read_loopx_row(r, benchmark_key=b, case_key=c) for r, b, c in stored]
    rebuilt = build_document(rows, updated_at="2026-05-02T09:14:07Z", update_policy=None)
    texts = {
        "rows": json.dumps(rows, ensure_ascii=False),
        "ledger.json": dump_json(rebuilt).decode("utf-8"),
        "ledger.md": render_markdown(rebuilt),
    }
    assert _leaks(texts) == []


# --------------------------------------------------------------------------- whole commands


def _cli(db_url: str, project: Path, *args: str):  # noqa: ANN202
    from benchledger.commands.cli import cli

    argv = ["--db", db_url, "--runtime-root", str(project / "rt"), *args]
    return CliRunner().invoke(cli, argv, catch_exceptions=True)


def _public_files(project: Path) -> dict[str, str]:
    files = [p for p in project.rglob("*") if p.is_file() and ".store" not in p.parts]
    return {
        str(p.relative_to(project)): p.read_text("utf-8", "replace")
        for p in files
        if not p.name.endswith((".lock", ".db", ".db-wal", ".db-shm"))
    }


CLI_PLANTS = [
    f"run__/home/alice/{MARK}",
    f"jobs-/Users/bob/{MARK}",
    f"foo_sk-proj-{MARK}AAAABBBB",
    f"db postgresql://admin:S3cret{MARK}@db/prod",
    f"hf_{MARK}abcdefghijklmnopqrstuvwxyz",
    f"wJalrXUtnFEMI/K7MDENG/{MARK}EXAMPLEKEY",
]


@pytest.mark.parametrize("plant", CLI_PLANTS, ids=lambda p: p[:14])
def test_cli_options_never_reach_public_files(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plant: str
) -> None:
    """The free-text options of an ingest: a failing note is dropped, a failing goal id, arm id
    or run group id is refused with one line; either way nothing leaks."""
    project = tmp_path / "project"
    job = make_writable_copy(
        FIXTURES_DIR / "harbor" / HARBOR_JOB,
        project / "harbor" / "job",
        harbor_empty_dirs(HARBOR_JOB),
    )
    monkeypatch.chdir(project)
    base = ["benchmark", "run", "terminal-bench", "--harbor-job-dir", str(job)]
    base += ["--update-run-ledger", "--execute", "--format", "json"]
    noted = _cli(db_url, project, *base, "--goal-id", "g", "--run-ledger-note", plant)
    assert noted.exit_code == 0, noted.output
    for option in ("--goal-id", "--arm-id", "--run-group-id"):
        goal = plant if option == "--goal-id" else "g"
        extra = [] if option == "--goal-id" else [option, plant]
        refused = _cli(db_url, project, *base, "--goal-id", goal, *extra)
        assert refused.exit_code in (1, 2), (option, refused.output)
        assert refused.exception is None or isinstance(refused.exception, SystemExit)
        assert "Traceback" not in refused.output
        assert _leaks({"stdout": refused.stdout, "stderr": refused.stderr}) == [], option
    published = _public_files(project)
    assert "benchmark-run-ledger.json" in published and "benchmark-run-ledger.md" in published
    assert any(name.endswith("index.jsonl") for name in published), sorted(published)
    assert _leaks({**published, "stdout": noted.stdout}) == []


def test_cli_imported_loopx_ledger_is_filtered(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loopx ledger carrying planted values in a task name, a note and a bucket key."""
    document = json.loads(_LOOPX_LEDGER.read_text("utf-8"))
    bench = sorted(document["benchmarks"])[0]
    case_id = sorted(document["benchmarks"][bench]["cases"])[0]
    run = document["benchmarks"][bench]["cases"][case_id]["runs"][0]
    run["notes"] = f"see /home/alice/{MARK}"
    run["job_name"] = f"job_sk-proj-{MARK}AAAABBBB"
    run["case_id"] = f"{case_id} token={MARK}1234567890"
    document["benchmarks"][f"tb@2.0__/Users/bob/{MARK}"] = document["benchmarks"].pop(bench)
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    monkeypatch.chdir(project)
    source = project / "docs" / "benchmark-run-ledger.json"
    source.write_text(json.dumps(document), encoding="utf-8")
    result = _cli(db_url, project, "import", "loopx-ledger", str(source), "--execute")
    assert result.exit_code == 0, result.output
    source.unlink()  # the planted input itself is not a file we publish
    rendered = _cli(db_url, project, "render", "--all")
    assert rendered.exit_code == 0, rendered.output
    published = _public_files(project)
    assert "docs/benchmark-run-ledger.json" in published, sorted(published)
    assert _leaks({**published, "stdout": result.stdout + rendered.stdout}) == []
    summary = _cli(db_url, project, "--format", "json", "sql", "SELECT row FROM ledger_runs_v")
    assert summary.exit_code == 0, summary.output
    assert _leaks({"sql": summary.stdout}) == []


def test_harbor_job_dir_copy_is_independent(harbor_job: Path) -> None:
    """The pipeline tests restore every file they plant into (a guard for the suite itself)."""
    source = FIXTURES_DIR / "harbor" / HARBOR_JOB
    for rel, _path in HARBOR_FIELDS:
        assert (harbor_job / rel).read_bytes() == (source / rel).read_bytes()
