"""Runs inside the loopx 0.4.8 venv: loopx's own reading of many ledgers in one process.

Started once per test session by ``tests/support_loopx_diff.py``: ``python driver.py jobs.json``
runs a batch of jobs, ``python driver.py --serve`` reads one job per stdin line and answers
``done`` on stdout after each. Each job names a ledger file and an output stem; the driver
writes what loopx would write:

* ``<stem>.json`` -- the ledger as loopx writes it back after loading it (its load-time
  normalisation applied; ``json.dumps(indent=2, sort_keys=True, ensure_ascii=False)`` + newline);
* ``<stem>.md`` -- loopx's Markdown view of that ledger;
* ``<stem>.aggregate-<n>.json`` -- one ``run-ledger-aggregate`` payload per requested option set;
* ``<stem>.check.json`` -- the ``run-ledger-check`` drift block for the job's history records;
* ``<stem>.archive.json`` / ``.archive.md`` -- ``run-ledger-archive --execute`` on a copy of the
  ledger: the ``archive`` block and the Markdown written;
* ``<stem>.merge.json`` / ``.merge.md`` / ``.merged.json`` -- then ``run-ledger-merge --execute``
  of the job's sources into that copy: the ``merge`` block, the Markdown and the ledger written;
* ``<stem>.error`` -- instead of the above, the exception loopx raised on this input.

Paying loopx's import once per batch, not once per case, is what keeps thousands of generated
cases affordable. This file imports loopx, so it is never imported by the test suite itself.
"""

from __future__ import annotations

import json
import shutil
import sys
import traceback
from pathlib import Path

from loopx.benchmark_ledger import (
    archive_benchmark_run_ledger_runs,
    build_benchmark_run_ledger_current_aggregate,
    check_benchmark_run_ledger_drift,
    load_benchmark_run_ledger,
    merge_benchmark_run_ledgers,
    render_benchmark_run_ledger_markdown,
    upsert_benchmark_run_ledger_entry,
)


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def _runs(ledger: dict) -> list[dict]:
    out = []
    for benchmark in (ledger.get("benchmarks") or {}).values():
        for case in (benchmark.get("cases") or {}).values():
            out.extend(run for run in case.get("runs") or [] if isinstance(run, dict))
    return out


def _aggregate(path: Path, options: dict) -> dict:
    """What ``loopx benchmark run-ledger-aggregate`` prints for one primary ledger."""
    benchmark_id = options["benchmark_id"]
    merged = load_benchmark_run_ledger(path)
    source_runs = considered = 0
    for run in _runs(load_benchmark_run_ledger(path)):
        source_runs += 1
        if run.get("benchmark_id") != benchmark_id:
            continue
        considered += 1
        merged = upsert_benchmark_run_ledger_entry(merged, dict(run))
    aggregate = build_benchmark_run_ledger_current_aggregate(
        merged,
        benchmark_id=benchmark_id,
        canonical_case_ids=options.get("canonical_case_ids") or None,
        active_case_ids=options.get("active_case_ids") or None,
        source_ledger_count=1,
        exclude_noncanonical_sanity_sources=not options.get("include_noncanonical"),
        target_lane_id=options.get("target_lane_id"),
        target_run_group_contains=list(options.get("target") or []),
        target_current_run_group_contains=list(options.get("current") or []),
        target_backfill_run_group_contains=list(options.get("backfill") or []),
    )
    return {
        "aggregate": aggregate,
        "merge_preview": {
            "schema_version": "benchmark_run_ledger_aggregate_source_merge_v0",
            "source_ledger_count": 1,
            "source_run_count": source_runs,
            "considered_run_count": considered,
            "source_paths_recorded": False,
            "unique_source_path_count": 1,
        },
    }


def _maintenance(path: Path, stem: Path, job: dict) -> dict[str, str]:
    """check, then archive and merge (``--execute``) on a copy of the ledger: file suffix ->
    text, as loopx's CLI would print or write them."""
    out: dict[str, str] = {}
    if "check" in job:
        drift = check_benchmark_run_ledger_drift(
            history_records=job["check"]["history"],
            ledger=load_benchmark_run_ledger(path),
            ledger_path=path.name,
            limit=job["check"].get("limit", 20),
            cwd=path.parent,
        )
        out[".check.json"] = _dump(drift)
    if "archive" not in job and "merge" not in job:
        return out
    work = Path(f"{stem}.work") / "benchmark-run-ledger.json"
    work.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, work)
    if "archive" in job:
        options = job["archive"]
        archived = archive_benchmark_run_ledger_runs(
            ledger_path=work,
            benchmark_id=options["benchmark_id"],
            reason=options["reason"],
            run_group_contains=options.get("run_group_contains"),
            keep_run_group_contains=options.get("keep_run_group_contains"),
            case_ids=options.get("case_ids"),
            arm_ids=options.get("arm_ids"),
            archive_all_matching_benchmark=bool(options.get("all")),
            archive_batch_id=options.get("archive_batch_id"),
        )
        out[".archive.json"] = _dump(archived["archive"])
        out[".archive.md"] = work.with_suffix(".md").read_text(encoding="utf-8")
    if "merge" in job:
        options = job["merge"]
        merged = merge_benchmark_run_ledgers(
            target_ledger_path=work,
            source_ledger_paths=[Path(source) for source in options["sources"]],
            benchmark_ids=options.get("benchmark_ids"),
            run_group_contains=options.get("run_group_contains"),
        )
        out[".merge.json"] = _dump(merged["merge"])
        out[".merge.md"] = work.with_suffix(".md").read_text(encoding="utf-8")
        out[".merged.json"] = work.read_text(encoding="utf-8")
    return out


def _failure(exc: Exception) -> str:
    last = traceback.extract_tb(exc.__traceback__)[-1]
    return f"{type(exc).__name__}: {exc} (at {Path(last.filename).name}:{last.lineno})\n"


def run_job(job: dict) -> None:
    path = Path(job["ledger"])
    stem = Path(job["stem"])
    try:
        ledger = load_benchmark_run_ledger(path)
        json_text = _dump(ledger)
        markdown = render_benchmark_run_ledger_markdown(ledger)
        aggregates = [_dump(_aggregate(path, options)) for options in job.get("aggregates", [])]
    except Exception as exc:  # noqa: BLE001 -- the point is to report how loopx fails
        stem.with_suffix(".error").write_text(_failure(exc), encoding="utf-8")
        return
    try:
        maintenance = _maintenance(path, stem, job)
    except Exception as exc:  # noqa: BLE001 -- as above, for check / archive / merge
        maintenance = {".maintenance.error": _failure(exc)}
    stem.with_suffix(".json").write_text(json_text, encoding="utf-8")
    stem.with_suffix(".md").write_text(markdown, encoding="utf-8")
    for index, text in enumerate(aggregates):
        Path(f"{stem}.aggregate-{index}.json").write_text(text, encoding="utf-8")
    for suffix, text in maintenance.items():
        Path(f"{stem}{suffix}").write_text(text, encoding="utf-8")


def main() -> None:
    if sys.argv[1] == "--serve":
        for line in sys.stdin:
            run_job(json.loads(line))
            sys.stdout.write("done\n")
            sys.stdout.flush()
        return
    jobs = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    for job in jobs:
        run_job(job)


if __name__ == "__main__":
    main()
