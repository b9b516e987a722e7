"""What a ``run_built`` event carries as provenance (docs/verification.md), and what a dry run
derives for run ids (docs/formats/ledger_v0.md §5.15): the same bytes and ids as before, made
once for records that share them."""

from __future__ import annotations

import orjson
import pytest

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.handlers.benchmark_run import _ProvenanceTexts
from benchledger.ledger.handlers.built_source import BuiltSource
from benchledger.ledger.rules.row.build import build_row, row_run_id
from benchledger.ledger.sources.base import record_view
from benchledger.ledger.store.chain import canonical_json
from tests.support_ledger_rules import HARBOR_RECORD, NOW, bare_record


def _built(
    record_dirs: dict[str, frozenset[str]], record_provenance: dict | None = None
) -> BuiltSource:
    provenance = {
        "kind": "inspect_logs",
        "files": {"a.eval": "sha256:1", "b/x.json": "sha256:2", "c/y.json": "sha256:3"},
        "logs": [{"relative_path": "a.eval", "kept": True, "task_id": None}],
        "score": 1.0,
    }
    return BuiltSource(
        records=[], provenance=provenance, content_digest="d", classification="c",
        benchmark_cli={}, record_dirs=record_dirs, local_root="logs-root",
        record_provenance=record_provenance or {},
    )  # fmt: skip


def test_records_sharing_the_source_provenance_share_one_text_of_the_same_bytes() -> None:
    built = _built({})
    texts = _ProvenanceTexts(built)
    first, second = texts({"run_key": "k1"}), texts({"run_key": "k2"})
    assert first is second
    expected = canonical_json(built.provenance_for({"run_key": "k1"}))
    assert first.text.decode() == expected
    event = canonical_json({"provenance": first, "z": None})
    assert orjson.loads(event)["provenance"] == orjson.loads(expected)


def test_records_with_their_own_files_get_their_own_provenance() -> None:
    built = _built({"k1": frozenset({"b"}), "k2": frozenset({"c"})})
    texts = _ProvenanceTexts(built)
    first, second = texts({"run_key": "k1"}), texts({"run_key": "k2"})
    assert orjson.loads(first.text)["files"] == {"a.eval": "sha256:1", "b/x.json": "sha256:2"}
    assert orjson.loads(second.text)["files"] == {"a.eval": "sha256:1", "c/y.json": "sha256:3"}
    assert texts({"run_key": "k1"}).text == first.text


def test_a_provenance_the_source_made_for_its_records_is_theirs_and_shared_once() -> None:
    """Inspect maps each record to its own log(s) itself (``record_provenance``): the records
    of one log share one text; a record it did not map keeps the sliced or whole provenance."""
    source = _built({})
    one_log = record_view(source.provenance, {"a.eval": "sha256:1"}, logs=[{"kept": True}])
    built = _built({"k3": frozenset({"b"})}, {"k1": one_log, "k2": one_log})
    texts = _ProvenanceTexts(built)
    first, second = texts({"run_key": "k1"}), texts({"run_key": "k2"})
    third = texts({"run_key": "k3"})
    assert first is second
    made = orjson.loads(first.text)
    assert made["files"] == {"a.eval": "sha256:1"} and made["logs"] == [{"kept": True}]
    assert made["source_file_count"] == 3 and made["local_root"] == "logs-root"
    assert made["kind"] == "inspect_logs" and made["score"] == 1.0
    assert orjson.loads(third.text)["files"] == {"a.eval": "sha256:1", "b/x.json": "sha256:2"}
    assert orjson.loads(texts({"run_key": "k4"}).text)["files"] == source.provenance["files"]


@pytest.mark.parametrize(
    "options", [{}, {"run_group_id": "group one"}, {"arm_id": "arm_treatment"}]
)
@pytest.mark.parametrize(
    "record",
    [
        bare_record(),
        {**bare_record(), "run_key": "inspect:t1:s1", "job_name": "j"},
        HARBOR_RECORD,
        {**HARBOR_RECORD, "run_group_id": "g2", "arm_id": "x_baseline"},
    ],
)
def test_row_run_id_is_the_run_id_of_the_whole_row(record: dict, options: dict) -> None:
    assert row_run_id(record, **options) == build_row(record, now=NOW, **options)[0]["run_id"]


def test_row_run_id_refuses_what_build_row_refuses() -> None:
    unsafe = "sk-" + "a" * 40
    with pytest.raises(InputError, match="--run-group-id is not public-safe"):
        build_row(bare_record(), now=NOW, run_group_id=unsafe)
    with pytest.raises(InputError, match="--run-group-id is not public-safe"):
        row_run_id(bare_record(), run_group_id=unsafe)
