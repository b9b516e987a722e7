"""Ledger rows as every ledger operation sees them: their order, whether they are archived,
and the rows of a loaded ledger document (docs/formats/ledger_v0.md §6.3, §6.4).

Shared by upsert, archive, merge, aggregate and the drift check, so each of those modules
reads a row the same way.
"""

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.safety import join_public, public_json
from benchledger.ledger.rules.row.build import normalize_row
from benchledger.ledger.sources.loopx import read_loopx_row

LEDGER_SCHEMA = "benchmark_run_ledger_v0"


def clean_values(values: Iterable[str] | None) -> list[str]:
    """Filter values as given on the command line, blank ones dropped."""
    return [str(value) for value in values or () if str(value).strip()]


# ---------------------------------------------------------------------------------------------
# Loading a document's rows (§6.4, the row part used by merge and aggregate sources)
# ---------------------------------------------------------------------------------------------


def document_rows(document: Any) -> list[dict]:
    """Rows of a loaded ledger document as they are read, de-duplicated by ``run_id`` (last
    wins): a row benchledger wrote (it carries ``rules_version``) is normalised by our rules,
    any other row is read as loopx 0.4.8 reads it (``ledger.sources.loopx``), exactly as an
    imported ledger's rows are."""
    if not isinstance(document, Mapping):
        raise InputError("benchmark run ledger must be a JSON object")
    if document.get("schema_version") != LEDGER_SCHEMA:
        raise InputError(f"benchmark run ledger must use schema_version={LEDGER_SCHEMA}")
    by_key: dict[str, dict] = {}
    for run, benchmark_key, case_key in document_rows_as_stored(document):
        row = _read_document_row(run, benchmark_key, case_key)
        key = row.get("run_id") or json.dumps(row, sort_keys=True, ensure_ascii=False)
        by_key.pop(key, None)
        by_key[key] = row
    return list(by_key.values())


def _read_document_row(run: Mapping[str, Any], benchmark_key: str, case_key: str) -> dict:
    if not run.get("rules_version"):
        return read_loopx_row(run, benchmark_key=benchmark_key, case_key=case_key)
    clean, _ = public_json(dict(run))  # another ledger's rows: filtered like ours
    return normalize_row(clean, benchmark_key=join_public("", benchmark_key))


def document_rows_as_stored(document: Mapping[str, Any]) -> Iterator[tuple[dict, str, str]]:
    """Every run of the document in document order, untouched, with its benchmark and case keys."""
    benchmarks = document.get("benchmarks")
    for benchmark_key, node in (benchmarks if isinstance(benchmarks, Mapping) else {}).items():
        cases = node.get("cases") if isinstance(node, Mapping) else None
        for case_key, case in (cases if isinstance(cases, Mapping) else {}).items():
            runs = case.get("runs") if isinstance(case, Mapping) else None
            for run in runs if isinstance(runs, list) else []:
                if isinstance(run, Mapping):
                    yield dict(run), str(benchmark_key), str(case_key)
