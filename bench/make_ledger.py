#!/usr/bin/env python3
"""Generate the ledgers, compact runs and goal history the ledger benchmarks feed to both tools.

Rows are copies of real rows from the loopx 0.4.8 ledger in ``tests/fixtures/loopx-ledger/``
with their identity and outcome rewritten: a synthetic row of invented fields would be smaller
and simpler than what loopx really stores (about 2 KB of compact JSON), and timings would flatter
both tools. Only the standard library is used, so the loopx venv's Python can run this file too;
when loopx is importable (``--loopx auto``, the default) each ledger goes through loopx's own
load-time normaliser and is written the way loopx writes it, Markdown view included, so neither
tool spends its measured run repairing the file. Without loopx the counts are computed here and
``latest_decision`` is left out (both tools derive it on load).

Row ``i`` is the same for every size, so the 100-row ledger is a prefix of the 30,000-row one:

* case ``i // 5`` (five runs per case), benchmark ``BENCHMARKS[case % 3]``;
* arm ``ARMS[i % 4]`` with a ``mode`` that loopx's arm inference maps back to that arm;
* outcome drawn with the weights of the real ledger's rows (``OUTCOME_WEIGHTS``), partial
  scores 0.25 / 0.5 / 0.75; about one row in five archived;
* ``recorded_at`` seven minutes after row ``i - 1``, with a +08:00 offset as loopx writes;
* ``run_id`` the first 12 hex digits of a sha1 over the row's identity, as loopx derives it.

Written under ``--out``:

  ledger/ledger-<N>.json (+ .md)         one per size
  inputs/new-run.compact.json            a new run for the case of row 0 (the upsert benchmark)
  inputs/seq/seq-NNN.compact.json        distinct new runs (the sequential-upsert benchmark)
  history/registry.json                  a registry for ``run-ledger-check`` of goal ``g``
  history/runtime/goals/g/runs/          run records and index.jsonl: the first half describe
                                         ledger rows 0.. (the drift check matches them), the rest
                                         are sequential runs the ledger lacks
  manifest.json                          sizes, bytes, sha256, row and case counts

Usage: python bench/make_ledger.py --out DIR [--sizes 100,1000] [--seq 200] [--history 200]
                                   [--seed N] [--loopx auto|off]
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import random
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from _fixtures import LOOPX_LEDGER

LEDGER_SCHEMA = "benchmark_run_ledger_v0"
RUN_SCHEMA = "benchmark_run_v0"
GOAL = "g"

BENCHMARKS = {"terminal-bench@2.0": "tb2", "skillsbench@1.1": "sb11", "swe-marathon": "swem"}
ARMS = (  # (arm_id, mode): loopx 0.4.8 infers exactly this arm from this mode
    ("codex_goal_mode_baseline", "codex_goal_mode_baseline"),
    ("hardened_codex_baseline", "hardened_codex_baseline"),
    ("codex_loopx_treatment", "codex_loopx"),
    ("loopx_automation_loop_treatment", "skillsbench_loopx_automation_loop_treatment"),
)
TASKS = (
    "fix-git", "regex-log", "build-cython-ext", "csv-merge", "pdf-extract", "zip-pack",
    "sqlite-with-gcov", "kv-store-grpc", "json-fix", "openssl-selfsigned-cert",
    "log-summary", "chess-best-move", "db-wal-recovery", "zstd-decoder", "pypi-server",
)  # fmt: skip
# Share of each outcome among the real ledger's rows (per cent, rounded).
OUTCOME_WEIGHTS = {"case_fail": 37, "no_score": 27, "pass": 21, "setup_fail": 11, "partial": 4}
PARTIAL_SCORES = (0.25, 0.5, 0.75)
ARCHIVED_SHARE = 0.2
RUNS_PER_CASE = 5
SEQ_CASES = 40
START = datetime(2026, 6, 1, tzinfo=timezone(timedelta(hours=8)))
STEP = timedelta(minutes=7)
# Fields a copied row must not keep: they belong to the template's own identity (refs, routes,
# treatment claims), to its archive state, or are derived again when the ledger is loaded.
IDENTITY_FIELDS = {"artifact_refs", "case_ids", "route"}
CLAIM_FIELDS = {
    "benchmark_loop_contract", "loopx_treatment_claim_blocker", "loopx_treatment_evidence_tier",
    "strict_loopx_treatment_claim_allowed",
}  # fmt: skip
ARCHIVE_FIELDS = {"archive_state", "archive_reason", "archive_batch_id", "archived_at"}
DERIVED_FIELDS = {
    "repair_priority", "repair_class", "next_action", "repair_profile", "countable_score",
    "official_score_countable", "official_score_countability_reason",
}  # fmt: skip
DROPPED = IDENTITY_FIELDS | CLAIM_FIELDS | ARCHIVE_FIELDS | DERIVED_FIELDS


def stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")


def rng_for(seed: int, *parts: object) -> random.Random:
    """One generator per item, so an item never depends on how many came before it."""
    return random.Random(":".join(map(str, (seed, *parts))))


# ------------------------------------------------------------------------------ ledger rows


def outcome_of(row: dict[str, Any]) -> str | None:
    """The outcome a real row stands for, or None for rows unfit as templates."""
    if row.get("source_event_schema") == "terminal_bench_post_launch_materialization_v0":
        return None  # a launch placeholder, not a finished run
    status, score = row.get("score_status"), row.get("official_score")
    scope, failure = row.get("failure_scope"), row.get("failure_class")
    if score == 0 and failure in (None, "", "none"):
        return None  # an old row loopx 0.4.8 no longer writes: a zero score without a class
    if status == "passed" and score == 1:
        return "pass"
    if status == "failed" and score == 0:
        return {"case_or_solution": "case_fail", "runner_or_setup": "setup_fail"}.get(scope)
    if status == "failed" and isinstance(score, int | float) and 0 < score < 1:
        return "partial"
    if status == "missing" and score is None and scope == "score_missing":
        return "no_score"
    return None


def load_templates(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Real rows grouped by outcome, in run-id order so the choice is stable across runs."""
    document = json.loads(path.read_text(encoding="utf-8"))
    templates: dict[str, list[dict[str, Any]]] = {name: [] for name in OUTCOME_WEIGHTS}
    for row in document_rows(document):
        outcome = outcome_of(row)
        if outcome:
            templates[outcome].append(row)
    templates["partial"] = templates["partial"] or list(templates["case_fail"])
    for outcome, rows in templates.items():
        if not rows:
            raise SystemExit(f"{path}: no row to copy for outcome {outcome!r}")
        rows.sort(key=lambda row: str(row.get("run_id", "")))
    return templates


def document_rows(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for benchmark in document["benchmarks"].values():
        for case in benchmark["cases"].values():
            yield from case["runs"]


def case_of(index: int) -> tuple[str, str]:
    """(benchmark id, case id) of the ``index``-th case."""
    benchmark = list(BENCHMARKS)[index % len(BENCHMARKS)]
    return benchmark, f"{TASKS[index % len(TASKS)]}-{index:05d}"


def run_id(*identity: str) -> str:
    return hashlib.sha1("|".join(identity).encode("utf-8")).hexdigest()[:12]


def ledger_row(i: int, templates: dict[str, list[dict[str, Any]]], seed: int) -> dict[str, Any]:
    rng = rng_for(seed, "row", i)
    benchmark, case = case_of(i // RUNS_PER_CASE)
    slug = BENCHMARKS[benchmark]
    arm, mode = ARMS[i % len(ARMS)]
    outcome = rng.choices(list(OUTCOME_WEIGHTS), weights=list(OUTCOME_WEIGHTS.values()))[0]
    row = {k: copy.deepcopy(v) for k, v in rng.choice(templates[outcome]).items()}
    row = {k: v for k, v in row.items() if k not in DROPPED}
    job = f"{slug}_{case.replace('-', '_')}_{arm}_r{i:06d}"
    group = f"{slug}-{arm.replace('_', '-')}-batch-{i // 500:03d}"
    ref = f"benchmark-runs/{slug}/{job}/benchmark_run.compact.json"
    recorded = START + STEP * i
    row |= {
        "benchmark_id": benchmark,
        "case_id": case,
        "case_ids": [case],
        "arm_id": arm,
        "mode": mode,
        "job_name": job,
        "run_group_id": group,
        "recorded_at": stamp(recorded),
        "artifact_refs": {"compact_artifact_ref": ref},
        "status": "completed",
        "run_id": run_id(benchmark, case, arm, group, job, ref),
    }
    if outcome == "partial":
        row |= {"official_score": rng.choice(PARTIAL_SCORES), "official_passed": False}
    if rng.random() < ARCHIVED_SHARE:
        row |= {
            "archive_state": "archived",
            "archive_reason": "superseded by protocol v2 rerun batch",
            "archive_batch_id": f"perf-archive-{i // 1000:03d}",
            "archived_at": stamp(recorded + timedelta(days=30)),
        }
    return {k: v for k, v in row.items() if v not in (None, "", [])}


def ledger_document(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A ``benchmark_run_ledger_v0`` document with its per-case and per-benchmark counts."""
    benchmarks: dict[str, dict[str, Any]] = {}
    for row in rows:
        bench_id, case_id = row["benchmark_id"], row["case_id"]
        benchmark = benchmarks.setdefault(bench_id, {"benchmark_id": bench_id, "cases": {}})
        case = benchmark["cases"].setdefault(case_id, {"case_id": case_id, "runs": []})
        case["runs"].append(row)
    for benchmark in benchmarks.values():
        cases = benchmark["cases"].values()
        for case in cases:
            case["runs"].sort(key=lambda row: (row["recorded_at"], row["run_id"]))
            archived = sum(row.get("archive_state") == "archived" for row in case["runs"])
            case["active_run_count"] = len(case["runs"]) - archived
            case["archived_run_count"] = archived
        benchmark["case_count"] = len(benchmark["cases"])
        benchmark["run_count"] = sum(len(case["runs"]) for case in cases)
        benchmark["active_case_count"] = sum(1 for case in cases if case["active_run_count"])
        benchmark["active_run_count"] = sum(case["active_run_count"] for case in cases)
        benchmark["archived_run_count"] = sum(case["archived_run_count"] for case in cases)
    return {
        "schema_version": LEDGER_SCHEMA,
        "updated_at": stamp(START + STEP * len(rows)),
        "update_policy": {
            "source_of_truth": "benchmark_run_v0 compact run events",
            "raw_logs_recorded": False,
            "raw_task_text_recorded": False,
            "absolute_paths_recorded": False,
            "update_rule": "upsert one run entry when a benchmark case is ingested or closed",
        },
        "benchmarks": benchmarks,
    }


# ------------------------------------------------------------------------------ compact runs


def compact_run(benchmark: str, case: str, job: str, mode: str) -> dict[str, Any]:
    """A finished compact run with no score yet; callers add the outcome."""
    return {
        "schema_version": RUN_SCHEMA,
        "source_runner": "harbor",
        "benchmark_id": benchmark,
        "job_name": job,
        "mode": mode,
        "case_id": case,
        "official_score_status": "completed",
        "runner_return_status": "completed",
        "agent": {"name": "codex", "model": "gpt-5.5"},
        "progress": {"n_total_trials": 1, "n_completed_trials": 1, "n_running_trials": 0},
    }


def verifier_score(value: float, passed: bool) -> dict[str, Any]:
    return {"kind": "verifier_reward", "value": value, "passed": passed}


def run_describing(row: dict[str, Any]) -> dict[str, Any]:
    """The compact run a ledger row was made from: the drift check pairs the two."""
    run = compact_run(row["benchmark_id"], row["case_id"], row["job_name"], row["mode"])
    run["agent"]["model"] = row.get("agent_model") or "gpt-5.5"
    score = row.get("official_score")
    if isinstance(score, int | float):
        run["official_task_score"] = verifier_score(score, bool(row.get("official_passed")))
    if row.get("failure_class") not in (None, "", "none"):
        run["score_failure_attribution"] = row["failure_class"]
    return run


def new_run(first_row: dict[str, Any]) -> dict[str, Any]:
    """A run the ledgers lack, in the case of row 0 (which every size has)."""
    slug = BENCHMARKS[first_row["benchmark_id"]]
    job = f"{slug}_{first_row['case_id'].replace('-', '_')}_codex_loopx_treatment_perf_new_run"
    run = compact_run(first_row["benchmark_id"], first_row["case_id"], job, "codex_loopx")
    return run | {"official_task_score": verifier_score(1, True)}


def sequential_run(k: int, seed: int) -> dict[str, Any]:
    """The ``k``-th of the distinct new runs: 40 cases, the arm changing every 40 runs."""
    rng = rng_for(seed, "seq", k)
    benchmark, case = case_of(k % SEQ_CASES)
    case = f"seq-{case}"
    arm, mode = ARMS[(k // SEQ_CASES) % len(ARMS)]
    job = f"{BENCHMARKS[benchmark]}_{case.replace('-', '_')}_{arm}_seq{k:04d}"
    run = compact_run(benchmark, case, job, mode)
    draw = rng.random()
    if draw < 0.35:
        run["official_task_score"] = verifier_score(1, True)
    elif draw < 0.7:
        run["official_task_score"] = verifier_score(0, False)
        run["score_failure_attribution"] = "official_verifier_solution_failure"
    elif draw < 0.8:
        run["official_task_score"] = verifier_score(rng.choice(PARTIAL_SCORES), False)
    else:
        run |= {
            "runner_return_status": "failed_before_official_result",
            "official_score_status": "missing",
            "first_blocker": "agent_setup_timeout_before_worker_start",
            "trials": [{"task_id": case, "exception_type": "AgentSetupTimeoutError"}],
        }
    return run


# ------------------------------------------------------------------------------ writing


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def loopx_ledger_module(mode: str) -> Any | None:
    """loopx's ledger module when asked for and importable (run with the loopx venv's Python)."""
    if mode == "off":
        return None
    try:
        from loopx import benchmark_ledger  # type: ignore[import-not-found]
    except ImportError:
        return None
    return benchmark_ledger


def write_ledger(path: Path, rows: list[dict[str, Any]], loopx: Any | None) -> dict[str, Any]:
    """Write one ledger the way loopx writes it (sorted keys, non-ASCII kept, newline)."""
    document = ledger_document(copy.deepcopy(rows))
    if loopx is not None:
        document = loopx._normalize_benchmark_run_ledger(document)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(document, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    path.write_text(text, encoding="utf-8")
    if loopx is not None:
        markdown = loopx.render_benchmark_run_ledger_markdown(document)
        path.with_suffix(".md").write_text(markdown, encoding="utf-8")
    return document


def ledger_facts(path: Path, document: dict[str, Any]) -> dict[str, Any]:
    rows = list(document_rows(document))
    data = path.read_bytes()
    markdown = path.with_suffix(".md")
    return {
        "path": path.name,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "rows": len(rows),
        "cases": sum(len(b["cases"]) for b in document["benchmarks"].values()),
        "benchmarks": len(document["benchmarks"]),
        "arms": len({row["arm_id"] for row in rows}),
        "archived_rows": sum(row.get("archive_state") == "archived" for row in rows),
        "md_bytes": markdown.stat().st_size if markdown.exists() else None,
    }


def write_history(root: Path, runs: list[dict[str, Any]]) -> None:
    """Goal ``g``'s run records and index, one record per run, seven minutes apart."""
    write_json(root / "registry.json", {"common_runtime_root": "runtime", "goals": []})
    runs_dir = root / "runtime" / "goals" / GOAL / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    lines = []
    for k, run in enumerate(runs):
        generated = stamp(START + STEP * k + timedelta(seconds=30))
        stem = generated.replace(":", "-").replace("+", "-")
        record = {
            "generated_at": generated,
            "goal_id": GOAL,
            "classification": RUN_SCHEMA,
            "recommended_action": "record compact benchmark run",
            "health_check": "benchmark_run_v0 compact event public-safe",
            "benchmark_run": run,
        }
        json_path, md_path = runs_dir / f"{stem}.json", runs_dir / f"{stem}.md"
        write_json(json_path, record)
        md_path.write_text(f"# Run {generated}\n", encoding="utf-8")
        paths = {"json_path": str(json_path), "markdown_path": str(md_path)}
        lines.append(json.dumps(record | paths, ensure_ascii=False))
    (runs_dir / "index.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def generate(args: argparse.Namespace) -> dict[str, Any]:
    """Write every output under ``args.out``; returns the manifest."""
    out: Path = args.out
    loopx = loopx_ledger_module(args.loopx)
    templates = load_templates(args.real_ledger)
    rows = [ledger_row(i, templates, args.seed) for i in range(max([*args.sizes, args.history]))]
    manifest: dict[str, Any] = {"seed": args.seed, "loopx_normalized": loopx is not None}
    manifest["ledgers"] = {}
    for size in args.sizes:
        path = out / "ledger" / f"ledger-{size}.json"
        facts = ledger_facts(path, write_ledger(path, rows[:size], loopx))
        if facts["rows"] != size:
            raise SystemExit(f"ledger-{size}: {facts['rows']} rows after normalisation")
        manifest["ledgers"][str(size)] = facts
        print(f"ledger-{size}: {facts['rows']} rows, {facts['cases']} cases, "
              f"{facts['archived_rows']} archived, {facts['bytes']:,} bytes")  # fmt: skip
    write_json(out / "inputs" / "new-run.compact.json", new_run(rows[0]))
    sequential = [sequential_run(k, args.seed) for k in range(max(args.seq, args.history))]
    for k in range(args.seq):
        write_json(out / "inputs" / "seq" / f"seq-{k:03d}.compact.json", sequential[k])
    matched = args.history // 2
    history = [run_describing(row) for row in rows[:matched]]
    write_history(out / "history", history + sequential[: args.history - matched])
    manifest["history"] = {
        "records": args.history,
        "expected_matched": matched,
        "expected_missing": args.history - matched,
    }
    write_json(out / "manifest.json", manifest)
    return manifest


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--real-ledger", type=Path, default=LOOPX_LEDGER)
    parser.add_argument("--sizes", default="100,1000,10000,30000")
    parser.add_argument("--seq", type=int, default=200, help="sequential-upsert inputs")
    parser.add_argument("--history", type=int, default=200, help="goal history records")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--loopx", choices=("auto", "off"), default="auto")
    args = parser.parse_args(argv)
    args.sizes = sorted({int(size) for size in args.sizes.split(",") if size.strip()})
    return args


def main(argv: list[str] | None = None) -> int:
    generate(parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
