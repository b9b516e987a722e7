"""Ledgers to feed both sides of the differential suite.

Every row is a real loopx row (from the shipped ledger) with the fields the reading rules look
at moved: mode, route, job name, arm, scores and score status, failure class, scope and labels,
attempt accounting, the product-mode lifecycle and loop contracts, archive state and
``recorded_at``, the artifact refs (``ref_strings``: the shapes real ledgers hold, private job
folders, docs paths, absolute, ``~`` and Windows paths, lineage result files, names without a
dot) and the failure class and attribution (every route of loopx's repair table).
``sized_ledger`` makes deterministic ledgers of a given size; ``case_rows``
is the hypothesis strategy for one benchmark case (several rows, several arms).
"""

from __future__ import annotations

import copy
import json
import random
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = ("skillsbench@1.1", "terminal-bench@2.0", "swe-marathon")
UPDATE_POLICY = {
    "source_of_truth": "benchmark_run_v0 compact run events",
    "raw_logs_recorded": False,
    "raw_task_text_recorded": False,
    "absolute_paths_recorded": False,
    "update_rule": "upsert one run entry when a benchmark case is ingested or closed",
}
DELETE = object()  # a mutation that removes the field


def real_ledger_path() -> Path:
    """The real loopx ledger shipped with the tests."""
    return REPO / "tests" / "fixtures" / "loopx-ledger" / "benchmark-run-ledger.json"


@cache
def real_rows() -> tuple[dict[str, Any], ...]:
    document = json.loads(real_ledger_path().read_text(encoding="utf-8"))
    return tuple(
        run
        for benchmark in document["benchmarks"].values()
        for case in benchmark["cases"].values()
        for run in case["runs"]
    )


def _observed(key: str) -> list[Any]:
    values = {json.dumps(row[key], sort_keys=True) for row in real_rows() if key in row}
    return [json.loads(value) for value in sorted(values)]


MODES = (
    "skillsbench_loopx_blind_loop_treatment",
    "skillsbench_loopx_prompt_polling_test",
    "loopx_prompt_polling_test",
    "skillsbench_loopx_product_mode_treatment",
    "skillsbench_raw_codex_autonomous_max5_baseline",
    "codex_goal_mode_baseline",
    "hardened-codex",
    "no_skills_baseline",
    "skillsbench_curated_skills_run",
    "skillsbench_loopx_automation_loop_treatment",
    "codex_loopx",
    "plain_mode",
    "",
)
ROUTES = (
    "loopx-product-mode",
    "raw-codex-autonomous-max5",
    "loopx-blind-loop-treatment",
    "loopx-prompt-polling-test",
    "codex-app-server-goal-baseline",
    "loopx-goal-start-product-mode",
)
ARMS = (
    "baseline",
    "treatment",
    "codex_loopx_treatment",
    "codex_goal_mode_baseline",
    "skillsbench_raw_codex_autonomous_max5_baseline",
    "loopx_product_mode_treatment",
    "other_arm",
    "",
)
# Arms that make pairs: mostly named baselines and treatments, some product-mode and others.
PAIRING_ARMS = (
    "codex_goal_mode_baseline",
    "hardened_codex_baseline",
    "baseline",
    "codex_loopx_treatment",
    "loopx_automation_loop_treatment",
    "treatment",
    "codex_goal_mode_baseline",
    "codex_loopx_treatment",
    "skillsbench_raw_codex_autonomous_max5_baseline",
    "loopx_product_mode_treatment",
    "other_arm",
)
JOB_NAMES = (
    "terminal_bench_04_hello_world_hardened_codex_baseline",
    "terminal_bench_12_fix_git_codex_loopx_treatment",
    "sb_case_codex_goal_mode_baseline_r2",
    "sb_case_treatment",
    "sb_case_baseline_retry",
    "plain-job",
)
FAILURE_CLASSES = (
    "none",
    "official_verifier_solution_failure",
    "score_missing",
    "score_failure_unattributed",
    "agent_setup_timeout_before_worker_start",
    "codex_cli_missing",
    "environment_setup_failed_before_worker",
    "codex_model_access_unsupported_for_account",
    "skillsbench_codex_acp_runtime_failure",
    "skillsbench_docker_compose_setup_failure",
    "skillsbench_verifier_bootstrap_risk_preflight_blocked",
    "skillsbench_task_source_excluded",
    "stale_active_job_without_trial_result",
    "worker_bridge_connected_official_score_failure",
    "verifier_dependency_install_failure",
    "agent_timeout_before_solution_completion",
    "agent_exception_before_solution_completion",
    "run_cancelled",
    "uncountable_runner_glitch",
    # the rest of loopx 0.4.8's repair-route table, one class per branch
    "worker_install_failed_npm",
    "agent_setup_failed_before_worker_start",
    "agent_setup_exception_before_solution_attempt",
    "codex_model_access_failure_before_solution_attempt",
    "skillsbench_codex_acp_launch_failure",
    "skillsbench_docker_apt_setup_risk_preflight_blocked",
    "skillsbench_dockerfile_package_bootstrap_risk_preflight_blocked",
    "skillsbench_task_source_preflight_blocked",
    "detached_worker_ended_active_without_trial_result",
    "detached_worker_ended_without_trial_result",
    "post_launch_compact_result_missing",
    "worker_self_validation_official_score_mismatch",
    "worker_validation_scope_ambiguous_official_score_failure",
    "skillsbench_compose_setup_blocked_before_agent_rounds",
    "skillsbench_runner_setup_blocked_before_agent_rounds",
)
# Attributions that route a pre-agent setup block to a preflight-selection repair.
PREFLIGHT_ATTRIBUTIONS = (
    "skillsbench_docker_apt_setup_risk_preflight_blocked",
    "skillsbench_dockerfile_package_bootstrap_risk_preflight_blocked",
    "skillsbench_verifier_bootstrap_risk_preflight_blocked",
    "skillsbench_task_source_preflight_blocked",
)
# Artifact refs as real ledgers hold them: where they start, the folders on the way, the file.
REF_STARTS = (
    "",
    "",
    "./",
    "/",
    "~/",
    # Windows refs as real ones are: under a user folder (a drive-rooted compact artifact
    # elsewhere is kept whole by loopx and dropped by our public-safety filter, a documented
    # difference pinned in tests/test_loopx_public_refs.py)
    "C:\\Users\\alice\\",
    "D:/Users/bob/",
    "/Users/alice/",
    "/Volumes/data/",
    "/var/folders/x1/",
    "/tmp/",
    "/home/ci/",
)
REF_FOLDERS = (
    "jobs",
    "cloud-ecs",
    "docs",
    "research",
    "runs",
    ".local",
    "private-benchmark-jobs",
    "private",
    "Private",
    "tmp",
    "users",
    "logs",
    "sessions",
    "raw",
    "agent",
    "screenshots",
    "folders",
    "..",
    ".",
    "",
    "job-2026",
    "case-a",
    "with space",
)
REF_FILES = (
    "benchmark_run.compact.json",
    "paired_comparison.compact.json",
    "baseline.benchmark-run.public.json",
    "launch_status.public.json",
    "loopx-active-user-observation.json",
    "result.json",
    "benchmark-run.json",
    "benchmark_run.json",
    "compact-run.json",
    "loopx-worker-benchmark-run.json",
    "skillsbench-compact-benchmark-run-v0.json",
    "Result.JSON",
    "notes.md",
    "summary.txt",
    "trajectory.json",
    "task.md",
    "instruction.md",
    "launch.local.json",
    "run.private.json",
    "origin_log",
    "screenshot-1.png",
    "README",
    "artifacts",
    "",
)
# The shapes the issue names, whole.
REAL_REFS = (
    ".local/private-benchmark-jobs/job-7/case-a/benchmark_run.compact.json",
    "docs/research/skillsbench-baseline-notes.md",
    "docs/research/baselines",
    "/Users/alice/src/loopx/.local/jobs/job-7/result.json",
    "~/benchmarks/jobs/job-7/benchmark_run.compact.json",
    "C:\\Users\\alice\\jobs\\job-7\\benchmark_run.compact.json",
    "cloud-ecs/parallel-benchmark-1/job-7/jobs/job-7/case-a/result.json",
    "runs/job-7/private/benchmark_run.compact.json",
    "runs/job-7/tmp/result.json",
)


def random_ref(rng: random.Random) -> str:
    """One artifact ref of a shape real ledgers hold (see ``REF_*``), Windows separators too."""
    if rng.randrange(5) == 0:
        return rng.choice(REAL_REFS)
    start = rng.choice(REF_STARTS)
    folders = [rng.choice(REF_FOLDERS) for _ in range(rng.randrange(5))]
    separator = "\\" if start.endswith("\\") else rng.choice(["/"] * 5 + ["\\"])
    return start + separator.join([*folders, rng.choice(REF_FILES)])


def ref_strings() -> st.SearchStrategy[str]:
    """``random_ref`` as a hypothesis strategy."""
    return st.builds(random_ref, st.randoms(use_true_random=False))


def artifact_refs_value() -> st.SearchStrategy:
    """A row's ``artifact_refs``: loopx's three refs and ``history_ref``, each maybe absent."""
    return st.fixed_dictionaries(
        {},
        optional={
            key: ref_strings()
            for key in ("artifact_ref", "result_ref", "compact_artifact_ref", "history_ref")
        },
    )


SCOPES = (
    "passed",
    "case_or_solution",
    "attribution_required",
    "verifier_or_infra",
    "runner_or_setup",
    "score_missing",
    "startup_surface",
)
LABELS = (
    "worker_bridge_connected_official_score_failure",
    "verifier_reward_missing",
    "docker_setup_risk",
    "uncountable_attempt",
    "transport_jsonrpc_error",
    "skillsbench_codex_acp_post_success_finalization",
)
PHASES = ("not_started", "runner_accepted_args", "verifier_scored", "agent_running")
STAMPS = tuple(f"2026-06-{day:02d}T{hour:02d}:00:00+08:00" for day in (1, 2, 3) for hour in (9, 17))


def _maybe(strategy: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(st.just(DELETE), strategy)


@cache
def _mutations() -> dict[str, st.SearchStrategy]:
    bools = _maybe(st.booleans())
    # Text scores ("1", "0.0") are refused by the import with a line naming the field (a
    # deliberate difference, docs/loopx-compat.md), so mutations keep scores numeric.
    score = st.sampled_from([0, 0.0, 1, 1.0, 0.5, 0.25])
    return {
        "mode": _maybe(st.sampled_from(MODES + tuple(_observed("mode")))),
        "route": _maybe(st.sampled_from(ROUTES)),
        "job_name": st.sampled_from(JOB_NAMES + tuple(_observed("job_name")[:20])),
        "arm_id": _maybe(st.sampled_from(ARMS + tuple(_observed("arm_id")))),
        "official_score": _maybe(score),
        "score_status": st.sampled_from(
            ["completed", "passed", "failed", "missing", "provisional"]
        ),
        "official_score_status": _maybe(st.sampled_from(["completed", "missing", "error"])),
        "official_passed": bools,
        "official_task_score": _maybe(
            st.fixed_dictionaries(
                {"passed": st.booleans()},
                optional={
                    "value": st.one_of(st.none(), score),
                    "kind": st.just("skillsbench_verifier_reward_missing"),
                },
            )
        ),
        "official_score_bool_fallback_used": bools,
        "status": st.sampled_from(["completed", "recorded", "blocked"]),
        "failure_class": st.sampled_from(FAILURE_CLASSES + tuple(_observed("failure_class"))),
        "failure_scope": st.sampled_from(SCOPES),
        "score_failure_attribution": _maybe(
            st.sampled_from(FAILURE_CLASSES + PREFLIGHT_ATTRIBUTIONS * 3)
        ),
        "artifact_refs": _maybe(artifact_refs_value()),
        "failure_labels": _maybe(st.lists(st.sampled_from(LABELS), max_size=3)),
        "setup_blockers": _maybe(st.lists(st.sampled_from(LABELS), max_size=2)),
        "attempt_lifecycle_phase": _maybe(st.sampled_from(PHASES)),
        "official_score_attempt_countable": bools,
        "attempt_accounting": _maybe(
            st.fixed_dictionaries(
                {},
                optional={
                    "lifecycle_phase": st.sampled_from(PHASES),
                    "failure_class": st.sampled_from(FAILURE_CLASSES),
                    "official_score_attempt_countable": st.booleans(),
                },
            )
        ),
        "product_mode_lifecycle_contract": _maybe(
            st.fixed_dictionaries(
                {"satisfied": st.booleans()},
                optional={"countable_treatment": st.booleans(), "required": st.booleans()},
            )
        ),
        "benchmark_loop_contract": _maybe(
            st.fixed_dictionaries(
                {},
                optional={
                    "route": st.sampled_from(ROUTES),
                    "protocol_id": st.sampled_from(["product_mode_max5_no_feedback", "x"]),
                    "max_rounds_budget": st.sampled_from([3, 5, 6]),
                    "official_feedback_blinded": st.booleans(),
                    "official_feedback_forwarded": st.booleans(),
                },
            )
        ),
        "official_feedback_blinded": bools,
        "reward_feedback_forwarded": bools,
        "loopx_inside_case": bools,
        "loopx_prompt_driven_lifecycle_observed": bools,
        "worker_loopx_cli_call_total": _maybe(st.sampled_from([0, 2])),
        "max_rounds_budget": _maybe(st.sampled_from([3, 5, 6])),
        "round_rewards": _maybe(
            st.just([{"agent_round": 1, "passed": False, "reward": 0.0, "reward_present": True}])
        ),
        "best_round_reward": _maybe(st.sampled_from([0.0, 1.0])),
        "first_success_round": _maybe(st.sampled_from([1, 2])),
        "codex_acp_runtime_preflight_passed": bools,
        "solution_quality_signals": _maybe(
            st.builds(
                lambda seen: {"worker_activity": {"task_facing_activity_observed": seen}},
                st.booleans(),
            )
        ),
        "repair_class": _maybe(st.sampled_from(_observed("repair_class"))),
        "archive_state": _maybe(st.sampled_from(["archived", "active"])),
        "archive_reason": _maybe(st.just("superseded   by a  rerun")),
        "recorded_at": st.sampled_from(STAMPS),
    }


@st.composite
def mutated_row(draw: st.DrawFn, run_id: str, benchmark_id: str, case_id: str) -> dict[str, Any]:
    row = copy.deepcopy(draw(st.sampled_from(real_rows())))
    fields = _mutations()
    # Every row gets an arm, a scope, a score and an archive state drawn here, so that cases
    # pair arms and reach every decision; then up to ten other fields move.
    row["arm_id"] = draw(st.sampled_from(PAIRING_ARMS))
    row["failure_scope"] = draw(st.sampled_from(SCOPES + ("passed", "case_or_solution") * 3))
    row["official_score"] = draw(st.sampled_from([0.0, 0.0, 1.0, 1.0, 0.5, None]))
    row.update(archive_state=draw(st.sampled_from([None, None, None, "archived"])))
    if draw(st.booleans()):
        row["artifact_refs"] = draw(artifact_refs_value())
    keys = draw(st.lists(st.sampled_from(sorted(fields)), min_size=2, max_size=10, unique=True))
    for key in keys:
        value = draw(fields[key])
        if value is DELETE:
            row.pop(key, None)
        else:
            row[key] = value
    row.update(run_id=run_id, benchmark_id=benchmark_id, case_id=case_id, case_ids=[case_id])
    return {key: value for key, value in row.items() if value is not None}


@st.composite
def case_rows(draw: st.DrawFn, index: int) -> tuple[str, str, list[dict[str, Any]]]:
    """(benchmark id, case id, rows) of one generated case: 1-5 rows over several arms."""
    benchmark_id = draw(st.sampled_from(BENCHMARKS))
    case_id = f"case-{index:04d}"
    count = draw(st.integers(min_value=1, max_value=5))
    rows = [draw(mutated_row(f"r{index:04d}x{n}", benchmark_id, case_id)) for n in range(count)]
    return benchmark_id, case_id, rows


def ledger_document(cases: list[tuple[str, str, list[dict[str, Any]]]]) -> dict[str, Any]:
    """A loopx-shaped ledger document holding the given cases (counts left for the reader)."""
    benchmarks: dict[str, Any] = {}
    for benchmark_id, case_id, rows in cases:
        node = benchmarks.setdefault(benchmark_id, {"benchmark_id": benchmark_id, "cases": {}})
        node["cases"][case_id] = {"case_id": case_id, "runs": rows}
    return {
        "schema_version": "benchmark_run_ledger_v0",
        "updated_at": "2026-06-04T00:00:00+08:00",
        "update_policy": UPDATE_POLICY,
        "benchmarks": benchmarks,
    }


def sized_ledger(row_count: int, seed: int = 14) -> dict[str, Any]:
    """A deterministic ledger of ``row_count`` real rows (5 per case, rotating arms and
    outcomes): the same document every time for a given size and seed."""
    rng = random.Random(seed)
    templates = real_rows()
    cases: list[tuple[str, str, list[dict[str, Any]]]] = []
    for start in range(0, row_count, 5):
        index = start // 5
        benchmark_id = BENCHMARKS[index % len(BENCHMARKS)]
        case_id = f"sized-{index:05d}"
        rows = []
        for n in range(start, min(start + 5, row_count)):
            row = copy.deepcopy(templates[rng.randrange(len(templates))])
            row.update(run_id=f"s{n:06d}", benchmark_id=benchmark_id, case_id=case_id)
            row["case_ids"] = [case_id]
            row["recorded_at"] = STAMPS[n % len(STAMPS)]
            if n % 3 == 0:  # refs of the shapes real ledgers hold, one in three rows
                row["artifact_refs"] = {
                    "compact_artifact_ref": REAL_REFS[n % len(REAL_REFS)],
                    "result_ref": REAL_REFS[(n + 1) % len(REAL_REFS)],
                }
            rows.append(row)
        cases.append((benchmark_id, case_id, rows))
    return ledger_document(cases)


def document_runs(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        run
        for benchmark in document["benchmarks"].values()
        for case in benchmark["cases"].values()
        for run in case["runs"]
    ]


def _compact_run_of(row: dict[str, Any], flip: bool) -> dict[str, Any]:
    """The compact ``benchmark_run_v0`` a row could have been made from (``flip``: the same
    run with the other outcome, which no ledger row describes)."""
    score = row.get("official_score")
    run: dict[str, Any] = {
        "schema_version": "benchmark_run_v0",
        "source_runner": "harbor",
        "benchmark_id": row.get("benchmark_id"),
        "case_id": row.get("case_id"),
        "job_name": row.get("job_name") or "job",
        "mode": row.get("mode") or "",
        "official_score_status": "completed",
        "runner_return_status": "completed",
        "agent": {"name": "codex", "model": "gpt-5.5"},
        "progress": {"n_total_trials": 1, "n_completed_trials": 1, "n_running_trials": 0},
    }
    if isinstance(score, int | float) and not isinstance(score, bool):
        value = (1.0 - float(score)) if flip else score
        run["official_task_score"] = {
            "kind": "verifier_reward",
            "value": value,
            "passed": value >= 1,
        }
    elif flip:
        run["official_task_score"] = {"kind": "verifier_reward", "value": 1.0, "passed": True}
    if row.get("failure_class") not in (None, "", "none"):
        run["score_failure_attribution"] = row["failure_class"]
    return run


def history_for(document: dict[str, Any], limit: int = 60) -> list[dict[str, Any]]:
    """A goal history (oldest first) for ``run-ledger-check``: compact runs of some of the
    ledger's rows, every third one changed so that no row describes it."""
    records = []
    for index, row in enumerate(document_runs(document)[:limit]):
        records.append(
            {
                "generated_at": f"2026-06-05T{index // 60:02d}:{index % 60:02d}:00+08:00",
                "goal_id": "differential",
                "classification": "benchmark_run_v0",
                "benchmark_run": _compact_run_of(row, flip=index % 3 == 2),
            }
        )
    return records


def merge_source(target: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """``other`` as a merge source for ``target``: a row whose run id the target has in the
    same case keeps the target's ``recorded_at`` and archive fields (benchledger keeps the
    earlier stamp and an archived target row archived: deliberate differences), so the rest is
    compared."""
    stored = {run.get("run_id"): run for run in document_runs(target)}
    source = copy.deepcopy(other)
    for run in document_runs(source):
        mine = stored.get(run.get("run_id"))
        if mine is None:
            continue
        if (mine.get("benchmark_id"), mine.get("case_id")) != (
            run.get("benchmark_id"),
            run.get("case_id"),
        ):
            # One run id names one run in benchledger's ledger, not one run per case as in
            # loopx's (docs/loopx-compat.md #6): a run id of another case is a new run here.
            run["run_id"] = f"{run['run_id']}-elsewhere"
            continue
        for key in (
            "recorded_at",
            "archive_state",
            "archive_reason",
            "archive_batch_id",
            "archived_at",
        ):
            if key in mine:
                run[key] = mine[key]
            else:
                run.pop(key, None)
    return source


def maintenance_options(document: dict[str, Any], source: Path) -> dict[str, Any]:
    """check against a derived history, archive two cases of the first benchmark, then merge
    ``source`` in: the same requests for both sides."""
    benchmark_id, node = sorted(document["benchmarks"].items())[0]
    cases = sorted(node["cases"])
    return {
        "check": {"history": history_for(document), "limit": 20},
        "archive": {
            "benchmark_id": benchmark_id,
            "reason": "superseded by a rerun",
            "case_ids": cases[:2],
            "keep_run_group_contains": ["keep-me"],
            "archive_batch_id": "differential-batch",
        },
        "merge": {"sources": [str(source)]},
    }
