"""The contracts of ``benchledger.ledger.contracts`` against what the code really writes.

``verify --schemas`` passes on a store a real Harbor ingest filled and names the first payload
edited out of shape behind the triggers' back; the shipped JSON Schemas are what the models
generate and validate the records of the shipped example job and of the Harbor and BenchFlow
fixtures; the commands users run most never pay for importing pydantic.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import chdir
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from benchledger.commands.cli import cli
from benchledger.ledger.contracts.conformance import check_payload
from benchledger.ledger.contracts.generate import SCHEMA_DIR, render_schemas
from benchledger.ledger.rules.record.compaction import compact_run
from benchledger.ledger.sources.benchflow.options import BenchflowReadOptions
from benchledger.ledger.sources.benchflow.tree import read_benchflow_root
from benchledger.ledger.sources.harbor.job import read_harbor_job
from benchledger.ledger.sources.harbor.options import HarborReadOptions
from benchledger.ledger.store.events import LEDGER_UPSERTED, RUN_BUILT, NewEvent
from benchledger.services.store_session import open_store
from tests.support_cli import invoke_json

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_JOB = REPO / "examples" / "harbor" / "2026-05-02__09-14-07"


def run(db_url: str | None, cwd: Path, *args: str) -> tuple[int, Any, str]:
    """One command in-process from ``cwd``, JSON output parsed (None when stdout is not JSON)."""
    cwd.mkdir(parents=True, exist_ok=True)
    with chdir(cwd):
        return invoke_json(*args, db_url=db_url)


def demo_ingest(db_url: str, work: Path) -> None:
    """What ``scripts/demo`` runs: the shipped example job, ledger and run files."""
    code, payload, err = run(
        db_url, work, "--runtime-root", "runtime", "benchmark", "run", "terminal-bench",
        "--goal-id", "demo", "--harbor-job-dir", str(EXAMPLE_JOB),
        "--run-ledger-path", "out/benchmark-run-ledger.json",
        "--update-run-ledger", "--execute",
    )  # fmt: skip
    assert code == 0 and payload["ok"], err


def shipped(name: str) -> dict[str, Any]:
    return json.loads((SCHEMA_DIR / f"{name}.json").read_text(encoding="utf-8"))


def validator(name: str) -> jsonschema.Draft202012Validator:
    schema = shipped(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def errors_of(name: str, document: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator(name).iter_errors(document)
    ]


# --- verify --schemas ---------------------------------------------------------------------------


def test_verify_schemas_passes_on_a_store_filled_by_the_demo_ingest(db_url, tmp_path):
    demo_ingest(db_url, tmp_path)
    code, verdict, err = run(db_url, tmp_path, "verify", "--schemas")
    assert code == 0, verdict or err
    schemas = verdict["verify"]["schemas"]
    assert schemas["ok"] is True and schemas["first_nonconforming"] is None
    # every event the ingest appended was checked: 5 records built, appended and upserted,
    # the global registry synced and the exported files recorded
    assert schemas["checked"] == verdict["verify"]["head_position"] == 17


def _edit_payload(db_url: str, position: int, old: str, new: str) -> None:
    """Rewrite one stored payload the way someone with write access to the database could."""
    with open_store(db_url) as opened:
        with opened.store.database.begin() as conn:
            on = " ON events" if conn.dialect == "postgresql" else ""
            conn.execute(f"DROP TRIGGER events_no_update{on}")
            sql = "UPDATE events SET payload = REPLACE(payload, :old, :new) WHERE position = :p"
            assert conn.execute(sql, {"old": old, "new": new, "p": position}).rowcount == 1


@pytest.mark.synthetic_events  # edits payloads behind the triggers' back
@pytest.mark.parametrize(
    ("position", "old", "new", "event_type", "field", "message"),
    [
        (2, '"goal_id":"demo"', '"goal_id":7', "run_built", "goal_id", "valid string"),
        (
            12,
            '"merged_into":"appended"',
            '"merged_into":"teleported"',
            "ledger_upserted",
            "merged_into",
            "Input should be 'appended'",
        ),
        (
            8,
            '"official_score":1.0',
            '"official_score":"1.0"',
            "run_appended",
            "record.benchmark_run.official_score",
            "valid number",
        ),
    ],
)
def test_verify_schemas_names_the_first_payload_edited_out_of_shape(
    db_url, tmp_path, position, old, new, event_type, field, message
):
    demo_ingest(db_url, tmp_path)
    _edit_payload(db_url, position, old, new)
    code, verdict, err = run(db_url, tmp_path, "verify", "--schemas")
    assert code == 1 and verdict["ok"] is False
    schemas = verdict["verify"]["schemas"]
    bad = schemas["first_nonconforming"]
    assert schemas["ok"] is False and schemas["checked"] == position - 1
    assert (bad["position"], bad["event_type"], bad["schema_version"]) == (position, event_type, 1)
    assert bad["field"] == field and message in bad["message"]
    # one line on stderr says where and why
    line = err.strip()
    assert "\n" not in line
    assert line.startswith("error: ") and f"position {position}: {event_type} v1" in line
    assert field in line


def test_verify_without_schemas_does_not_check_payloads(db_url, tmp_path):
    demo_ingest(db_url, tmp_path)
    code, verdict, _ = run(db_url, tmp_path, "verify")
    assert code == 0 and "schemas" not in verdict["verify"]


def test_an_event_type_without_a_model_does_not_conform():
    problem = check_payload("run_teleported", 1, {})
    assert problem is not None and "no model" in problem.message
    problem = check_payload(RUN_BUILT, 2, {})
    assert problem is not None and "version 2" in problem.message


# --- the suite's own check of every appended event ---------------------------------------------


def test_the_suite_checks_every_event_a_test_appends(tmp_path, appended_events_conform):
    """The plugin registered in conftest sees an append through the store and names the
    payload; a conforming append adds nothing."""
    with open_store(f"sqlite:///{tmp_path / 'ledger.db'}") as opened:
        good = {"files": [{"path": "a.json", "kind": "ledger_json", "sha256": "0" * 64}]}
        opened.store.append([NewEvent("exports", "export_written", good)])
        assert appended_events_conform == []
        opened.store.append([NewEvent("ledger/L", LEDGER_UPSERTED, {"ledger_id": "L"})])
    assert len(appended_events_conform) == 1
    assert appended_events_conform[0].startswith("ledger_upserted v1 payload does not conform")
    appended_events_conform.clear()  # seen: this test appended it on purpose


# --- the shipped JSON Schemas -------------------------------------------------------------------


def test_shipped_schema_files_are_what_the_models_generate():
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in SCHEMA_DIR.glob("*.json")}
    assert on_disk == render_schemas(), "run `python -m benchledger.ledger.contracts.generate`"


def test_schema_lists_every_shipped_name_and_prints_each_file(tmp_path):
    code, listed, _ = run(None, tmp_path, "schema")
    assert code == 0
    assert listed["schemas"] == sorted(p.stem for p in SCHEMA_DIR.glob("*.json"))
    assert {"benchmark_run_v0", "run_built.v1", "ledger_upserted.v1"} <= set(listed["schemas"])
    with chdir(tmp_path):
        result = CliRunner().invoke(cli, ["schema", "benchmark_run_v0"])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == shipped("benchmark_run_v0")


def test_schema_refuses_an_unknown_name_in_one_line(tmp_path):
    with chdir(tmp_path):
        result = CliRunner().invoke(cli, ["schema", "benchmark_run_v9"])
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "benchmark_run_v9" in result.stderr
    assert "benchmark_run_v0" in result.stderr  # the names it does know


def test_benchmark_run_schema_validates_every_record_of_the_demo_output(tmp_path):
    work = tmp_path / "work"
    demo_ingest(f"sqlite:///{tmp_path / 'ledger.db'}", work)
    runs = work / "runtime" / "goals" / "demo" / "runs"
    files = sorted(runs.glob("*.json"))
    index = [json.loads(line) for line in (runs / "index.jsonl").read_text().splitlines()]
    assert len(files) == len(index) == 5
    for record in [json.loads(p.read_text()) for p in files] + index:
        assert errors_of("benchmark_run_v0", record["benchmark_run"]) == []
        assert errors_of("goal_run_record", record) == []
    ledger = json.loads((work / "out" / "benchmark-run-ledger.json").read_text())
    rows = [
        row
        for node in ledger["benchmarks"].values()
        for case in node["cases"].values()
        for row in case["runs"]
    ]
    assert len(rows) == 5
    assert all(errors_of("benchmark_run_ledger_row_v0", row) == [] for row in rows)
    rollout = work / "runtime" / "goals" / "demo" / "rollout-event-log.jsonl"
    events = [json.loads(line) for line in rollout.read_text().splitlines()]
    assert len(events) == 5
    assert all(errors_of("loopx_rollout_event_v0", event) == [] for event in events)


def test_benchmark_run_schema_validates_the_records_of_every_fixture(fixtures_dir):
    harbor = fixtures_dir / "harbor"
    manifest = json.loads((harbor / "manifest.json").read_text())
    records = []
    for job in manifest["jobs"]:
        if (harbor / job["job_dir"]).is_dir():  # one job is an empty dir git could not keep
            options = HarborReadOptions.from_flags(harbor / job["job_dir"])
            records += read_harbor_job(options).records
    cases = fixtures_dir / "benchflow" / "cases"
    records += read_benchflow_root(BenchflowReadOptions(cases)).records
    assert len(records) > 100
    for record in records:
        assert errors_of("benchmark_run_v0", compact_run(record)) == [], record.get("run_key")


def test_benchmark_run_schema_validates_the_records_of_the_recorded_command_output(fixtures_dir):
    """``benchmark run --format json`` output kept byte for byte in tests/fixtures/cli-output
    (its ``rollout_events`` are summaries, not rollout records)."""
    outputs = sorted((fixtures_dir / "cli-output").glob("*.json"))
    assert len(outputs) == 3
    runs = [
        run
        for path in outputs
        for run in json.loads(path.read_text(encoding="utf-8"))["benchmark_runs"]
    ]
    assert len(runs) > len(outputs)
    assert [e for run in runs for e in errors_of("benchmark_run_v0", run)] == []


def test_ledger_row_schema_validates_every_row_of_the_loopx_ledger(fixtures_dir):
    ledger = json.loads((fixtures_dir / "loopx-ledger" / "benchmark-run-ledger.json").read_text())
    rows = [
        row
        for node in ledger["benchmarks"].values()
        for case in node["cases"].values()
        for row in case["runs"]
    ]
    assert len(rows) > 300
    assert [e for row in rows for e in errors_of("benchmark_run_ledger_row_v0", row)] == []


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda r: r.update(official_score="1.0"), "official_score"),
        (lambda r: r.update(official_score=True), "official_score"),
        (lambda r: r["trials"][0].update(attempt_index=-1), "trials/0/attempt_index"),
        (lambda r: r.update(run_status="finished"), "run_status"),
        (lambda r: r.pop("schema_version"), ""),
        (lambda r: r.update(schema_version="benchmark_run_v1"), "schema_version"),
    ],
)
def test_benchmark_run_schema_rejects_a_wrong_type_or_a_missing_field(mutate, path):
    record = compact_run(read_harbor_job(HarborReadOptions.from_flags(EXAMPLE_JOB)).records[0])
    assert errors_of("benchmark_run_v0", record) == []
    mutate(record)
    found = errors_of("benchmark_run_v0", record)
    assert found and found[0].startswith(f"{path}: "), found


def test_benchmark_run_schema_keeps_the_format_open_to_unknown_fields():
    record = compact_run(read_harbor_job(HarborReadOptions.from_flags(EXAMPLE_JOB)).records[0])
    record["loopx_field_benchledger_drops"] = {"any": "thing"}
    assert errors_of("benchmark_run_v0", record) == []


# --- no command time spent on pydantic ----------------------------------------------------------


def test_the_hot_paths_never_import_pydantic(tmp_path):
    """Importing pydantic and building the models costs far more than the 10 ms budget
    (bench/startup.py), so ingest, upsert, --help and schema must not import it."""
    work = tmp_path / "work"
    work.mkdir()
    commands = [
        ["--help"],
        ["--runtime-root", "rt", "--format", "json", "benchmark", "run", "terminal-bench",
         "--goal-id", "g", "--harbor-job-dir", str(EXAMPLE_JOB), "--update-run-ledger",
         "--no-global-sync", "--execute"],
        ["--format", "json", "benchmark", "run-ledger-upsert", "--benchmark-run-json",
         str(tmp_path / "run.json"), "--execute"],
        ["schema", "benchmark_run_v0"],
        ["--format", "json", "verify", "--files"],
    ]  # fmt: skip
    record = compact_run(read_harbor_job(HarborReadOptions.from_flags(EXAMPLE_JOB)).records[0])
    record["job_name"] = "another-job"  # a run the ingest has not recorded yet
    record["run_key"] = "harbor:another-job:terminal-bench@2.0:fix-git:codex:openai-gpt-5"
    (tmp_path / "run.json").write_text(json.dumps(record))
    env = {k: v for k, v in os.environ.items() if k != "BENCHLEDGER_DATABASE_URL"}
    env["PYTHONPATH"] = str(REPO)
    for argv in commands:
        code = (
            "import sys\nfrom benchledger.commands.cli import cli\n"
            f"try:\n    cli({argv!r})\nexcept SystemExit as exit:\n    code = exit.code\n"
            "print(code, 'pydantic' in sys.modules, file=sys.stderr)"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             cwd=work, env=env)  # fmt: skip
        assert out.stderr.strip().splitlines()[-1] in ("0 False", "None False"), (argv, out)
    # the commands did their work: the upsert landed next to the ingest's rows
    code, verdict, err = run(None, work, "verify", "--schemas")
    assert code == 0 and verdict["verify"]["schemas"]["checked"] >= 13, err


@pytest.mark.synthetic_events  # appends a bad payload on purpose, in another process
def test_the_suite_checks_the_store_of_a_test_whose_commands_ran_in_a_subprocess(db_url):
    """Appends in a child process escape the in-process wrapper; the whole store is checked
    when the test ends instead (``stored_nonconformity``, which this marker turns off here)."""
    from tests.plugin_contracts import stored_nonconformity

    code = (
        "import sys\nfrom benchledger.services.store_session import open_store\n"
        "from benchledger.ledger.store.events import NewEvent\n"
        "bad = {'files': [{'path': 'a.json', 'sha256': 'not a digest'}]}\n"
        "with open_store(sys.argv[1]) as opened:\n"
        "    opened.store.append([NewEvent('exports', 'export_written', bad)])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", code, db_url], env=env, capture_output=True)
    assert done.returncode == 0, done.stderr
    problem = stored_nonconformity(db_url)
    assert problem is not None
    assert problem.startswith("position 1: export_written v1 payload does not conform at ")
    assert "files.0.sha256: String should match pattern" in problem
