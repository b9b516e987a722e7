"""The forked reader (commands/background.py): same answer as inline, same errors, no hangs."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from commands.background import start
from ledger.errors import InputError, SourceError

TIME_DEPENDENT = {"run_id", "recorded_at", "updated_at", "artifact_refs", "generated_at"}
pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def test_child_result_equals_inline_result(shared_dir: Path) -> None:
    from ledger.handlers.run_sources import build_harbor

    job = shared_dir / "fixtures/harbor/tb2-pilot-20260502/jobs/2026-05-03__08-00-41"
    opts = {"harbor_job_dir": str(job), "benchmark_name": "terminal-bench"}
    inline = start(lambda: build_harbor(opts), parallel=False).result()
    forked = start(lambda: build_harbor(opts), parallel=True).result()
    assert forked.records == inline.records
    assert forked.provenance == inline.provenance
    assert forked.content_digest == inline.content_digest
    assert forked.record_dirs == inline.record_dirs
    assert [forked.provenance_for(r) for r in forked.records] == [
        inline.provenance_for(r) for r in inline.records
    ]


def test_child_error_is_raised_with_its_class_message_and_details() -> None:
    def fail() -> None:
        raise SourceError("job dir is not a Harbor job", details={"payload": {"ok": False}})

    with pytest.raises(SourceError) as caught:
        start(fail, parallel=True).result()
    assert caught.value.message == "job dir is not a Harbor job"
    assert caught.value.details == {"payload": {"ok": False}}


def test_unpicklable_child_error_still_arrives_as_text() -> None:
    class Local(Exception):  # a local class cannot be pickled by reference
        pass

    def fail() -> None:
        raise Local("odd failure")

    with pytest.raises(RuntimeError, match="Local: odd failure"):
        start(fail, parallel=True).result()


def test_child_that_dies_is_one_clear_error() -> None:
    def die() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    with pytest.raises(InputError, match="killed by signal 9"):
        start(die, parallel=True).result()


def test_cancel_stops_the_child() -> None:
    import time

    pending = start(lambda: time.sleep(30), parallel=True)
    began = time.monotonic()
    pending.cancel()
    assert time.monotonic() - began < 5


def test_cli_ingest_through_the_forked_reader_matches_the_inline_one(
    shared_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same job ingested with and without the forked reader: same records, same ledger."""
    import json

    import commands.benchmark_commands as benchmark_commands
    from tests.support_harbor_ingest_cli import copy_job, ingest, ledger_rows, load_manifest

    manifest = load_manifest(shared_dir)
    job = next(j for j in manifest["jobs"] if j["key"] == "06_multi_attempt")
    job_dir = copy_job(shared_dir, manifest, job, tmp_path)
    results = {}
    for threshold in (1, 10**9):  # 1: every job counts as large; 10**9: none does
        monkeypatch.setattr(benchmark_commands, "PARALLEL_READ_MIN_ENTRIES", threshold)
        project = tmp_path / f"project-{threshold}"
        project.mkdir()
        monkeypatch.chdir(project)
        call = ingest(job_dir, db=f"sqlite:///{project / 'store.db'}", runtime_root=project / "rt")
        assert call.code == 0, call.result.output
        rows = ledger_rows(project / "benchmark-run-ledger.json")
        # run ids and timestamps depend on the second the command ran; the facts must not
        facts = sorted(
            json.dumps({k: v for k, v in row.items() if k not in TIME_DEPENDENT}, sort_keys=True)
             for row in rows.values()
        )  # fmt: skip
        results[threshold] = (call.payload["benchmark_runs"], facts)
    assert results[1][0] == results[10**9][0]
    assert results[1][1] == results[10**9][1] and len(results[1][1]) == 4
