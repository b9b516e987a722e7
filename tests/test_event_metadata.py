"""Every event a command appends carries the command's metadata (who, where, which version and
argv) and one correlation id, the ``export_written`` event of the files it renders after its
commit included: an export traces back to the command whose events it published."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

import benchledger
from benchledger.ledger.core.command_context import current_command, running_command
from benchledger.ledger.store.events import EXPORT_WRITTEN, NewEvent
from tests.support_harbor_ingest_cli import cli, copy_job, ingest, load_manifest
from tests.support_store import opened
from tests.test_ledger_cli import compact_run, write_json

ROOT = Path(__file__).resolve().parents[1]
DECLARED = benchledger.__version__
COMMAND_FIELDS = ("actor", "host", "tool", "tool_version", "argv")


def _events(db: str) -> list[dict]:
    query = "SELECT position, event_type, correlation_id, metadata FROM events_v ORDER BY position"
    call = cli(["sql", query, "--format", "json"], db=db)
    assert call.code == 0, call.result.output
    return [
        {"position": p, "type": t, "correlation_id": c, "metadata": json.loads(m)}
        for p, t, c, m in call.payload["rows"]
    ]


def test_every_event_of_every_command_carries_its_metadata_and_correlation_id(
    db_url, fixtures_dir, tmp_path, monkeypatch
):
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    shutil.copyfile(fixtures_dir / "loopx-ledger" / "benchmark-run-ledger.json", "L.json")
    imported = cli(["import", "loopx-ledger", "L.json", "--execute", "--in-place"], db=db_url)
    assert imported.code == 0, imported.result.output
    manifest = load_manifest(fixtures_dir)
    job = next(j for j in manifest["jobs"] if j["key"] == "16_two_agents_one_job")
    job_dir = copy_job(fixtures_dir, manifest, job, tmp_path)
    ran = ingest(job_dir, db=db_url, runtime_root=tmp_path / "rt")
    assert ran.code == 0, ran.result.output
    run = write_json(project / "run.json", compact_run("fix-git", score=1, job="tb_fix_git_a"))
    upsert = ["benchmark", "run-ledger-upsert", "--benchmark-run-json", run, "--execute"]
    assert cli(upsert, db=db_url).code == 0

    events = _events(db_url)
    by_command: dict[str, list[dict]] = defaultdict(list)
    for event in events:
        meta = event["metadata"]
        assert meta["correlation_id"] == event["correlation_id"], event["position"]
        assert meta["tool"] == "benchledger" and meta["tool_version"] == DECLARED
        assert all(meta.get(field) for field in COMMAND_FIELDS), (event["type"], meta)
        by_command[event["correlation_id"]].append(event)

    # Three commands, three correlation ids; each appended its events, then its export event.
    assert len(by_command) == 3
    for group in by_command.values():
        kinds = [e["type"] for e in group]
        assert kinds[-1] == EXPORT_WRITTEN and EXPORT_WRITTEN not in kinds[:-1], kinds
        assert len({json.dumps(e["metadata"]["argv"]) for e in group}) == 1
    first_types = [group[0]["type"] for group in by_command.values()]
    assert first_types[0] == "ledger_imported" and first_types[2] == "ledger_upserted"


def test_a_rerun_is_answered_from_the_commands_events_never_its_export(
    db_url, fixtures_dir, tmp_path, monkeypatch
):
    """The export event shares the command's correlation id, but an idempotent rerun is
    answered with the events recorded under its key only."""
    monkeypatch.chdir(tmp_path)
    manifest = load_manifest(fixtures_dir)
    job = next(j for j in manifest["jobs"] if j["key"] == "16_two_agents_one_job")
    job_dir = copy_job(fixtures_dir, manifest, job, tmp_path)
    first = ingest(job_dir, db=db_url, runtime_root=tmp_path / "rt")
    assert first.code == 0, first.result.output
    before = _events(db_url)
    assert before[-1]["type"] == EXPORT_WRITTEN
    assert before[-1]["correlation_id"] == before[0]["correlation_id"]
    again = ingest(job_dir, db=db_url, runtime_root=tmp_path / "rt")
    assert again.code == 0, again.result.output
    assert again.payload["already_recorded"] is True
    recorded = f"positions {before[0]['position']}-{before[-2]['position']}"
    assert again.payload["message"].endswith(f"already recorded at {recorded}")
    assert _events(db_url) == before


@pytest.mark.synthetic_events  # a hand-made payload on purpose
def test_outside_a_command_each_transaction_has_its_own_id_inside_one_they_share_it(db_url):
    assert current_command() == {}
    with opened(db_url) as s:
        with running_command(lambda: {"actor": "a", "tool": "t"}):
            first = s.store.append([NewEvent("s/1", "probe", {})])
            second = s.store.append([NewEvent("s/1", "probe", {})], metadata={"reason": "x"})
            made = current_command()
        alone = s.store.append([NewEvent("s/1", "probe", {})])
    (a,), (b,), (c,) = first.events, second.events, alone.events
    assert a.correlation_id == b.correlation_id == made["correlation_id"]
    assert b.metadata == {**made, "reason": "x"}
    assert a.metadata["actor"] == "a" and c.correlation_id != a.correlation_id
    assert "actor" not in c.metadata and current_command() == {}
