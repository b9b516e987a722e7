"""The ``benchmark_run_ledger_v0`` document, its per-case ``latest_decision`` and its renderings.

Pure functions: rows (dicts) in, a document dict / bytes / text out. The read model keeps every
row as decided, so this module never re-derives row fields (repair routes, countability, scope
belong to the row rules); it only groups, de-duplicates, orders, counts and decides (spec
``ledger_v0.md`` §2, §6.3-6.4, §7, §8).

Speed matters (30,000 rows must build, dump and render well under a second): rows are placed in
the document as the same dict objects (no copies), timestamps are parsed once per distinct string,
and the JSON is written by orjson whenever its bytes provably equal ``json.dumps``'s.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

import orjson

from migrations.frozen_0002.ledger_jsonfmt import json_like_stdlib

SCHEMA_VERSION = "benchmark_run_ledger_v0"
ARCHIVED = "archived"
UNKNOWN_BENCHMARK = "unknown-benchmark"
UNKNOWN_CASE = "unknown-case"

DEFAULT_UPDATE_POLICY: dict = {
    "source_of_truth": "benchmark_run_v0 compact run events",
    "raw_logs_recorded": False,
    "raw_task_text_recorded": False,
    "absolute_paths_recorded": False,
    "update_rule": "upsert one run entry when a benchmark case is ingested or closed",
}

# --------------------------------------------------------------------------------------------
# Document
# --------------------------------------------------------------------------------------------


def build_document(rows: Iterable[dict], *, updated_at: str, update_policy: dict | None) -> dict:
    """Assemble the whole ledger from its rows, the way every load and write must see it.

    Rows are re-bucketed by their own ``benchmark_id``/``case_id``, de-duplicated by ``run_id``
    across the whole ledger (the last one wins, as the read model's key is the run id; rows
    without an id are keyed by their JSON text), sorted per §6.3, and every count and
    ``latest_decision`` is recomputed. Row dicts are placed in the document unchanged.
    ``update_policy`` is written only when given: it is created once and then kept.
    """
    with _gc_paused():
        buckets = _bucket(_dedupe(rows))
        benchmarks = {bid: _benchmark_node(bid, buckets[bid]) for bid in sorted(buckets)}
    doc: dict = {"schema_version": SCHEMA_VERSION, "updated_at": updated_at}
    if update_policy is not None:
        doc["update_policy"] = update_policy
    doc["benchmarks"] = benchmarks
    return doc


def rows_from_document(doc: dict) -> Iterator[dict]:
    """Yield the rows of a loaded ledger so it can be rebuilt with ``build_document``.

    A row missing its benchmark or case id takes its node's key (§6.4), through a shallow copy
    so the caller's document is never mutated; every other row is yielded as the same object.
    """
    benchmarks = doc.get("benchmarks")
    if not isinstance(benchmarks, dict):
        return
    for bid, bnode in benchmarks.items():
        cases = bnode.get("cases") if isinstance(bnode, dict) else None
        if not isinstance(cases, dict):
            continue
        for cid, cnode in cases.items():
            runs = cnode.get("runs") if isinstance(cnode, dict) else None
            for row in runs if isinstance(runs, list) else ():
                if not isinstance(row, dict):
                    continue
                if row.get("benchmark_id") and row.get("case_id"):
                    yield row
                else:
                    yield {
                        **row,
                        "benchmark_id": row.get("benchmark_id") or bid,
                        "case_id": row.get("case_id") or cid,
                    }


def is_archived(row: dict) -> bool:
    """Archived means exactly ``archive_state == "archived"`` (other values are ignored)."""
    return row.get("archive_state") == ARCHIVED


def run_sort_key(row: dict) -> tuple:
    """§6.3 order: ``recorded_at`` as an instant, then ``run_id``; "latest" is the last."""
    rid = row.get("run_id")
    return (_instant(row.get("recorded_at")), rid if isinstance(rid, str) else str(rid or ""))


def _dedupe(rows: Iterable[dict]) -> Iterable[dict]:
    """Last row per run id wins, so a re-read of a hand-merged file cannot double-count.

    Rows without a (string) run id are keyed by their JSON text: exact duplicates collapse.
    """
    by_key: dict = {}
    for row in rows:
        rid = row.get("run_id")
        by_key[rid if isinstance(rid, str) and rid else ("json", _row_text(row))] = row
    return by_key.values()


def _row_text(row: dict) -> str:
    try:
        return orjson.dumps(row, option=orjson.OPT_SORT_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(row, sort_keys=True, ensure_ascii=False, default=str)


def bucket_of(row: dict) -> tuple[str, str]:
    """The benchmark and case node a row is placed under (§6.4 defaults for missing ids)."""
    return (
        str(row.get("benchmark_id") or UNKNOWN_BENCHMARK),
        str(row.get("case_id") or UNKNOWN_CASE),
    )


def _bucket(rows: Iterable[dict]) -> dict[str, dict[str, list[dict]]]:
    buckets: dict[str, dict[str, list[dict]]] = {}
    for row in rows:
        bid, cid = bucket_of(row)
        buckets.setdefault(bid, {}).setdefault(cid, []).append(row)
    return buckets


def _benchmark_node(bid: str, cases: dict[str, list[dict]]) -> dict:
    nodes = {cid: case_node(cid, cases[cid]) for cid in sorted(cases)}
    active_runs = sum(n["active_run_count"] for n in nodes.values())
    archived_runs = sum(n["archived_run_count"] for n in nodes.values())
    return {
        "benchmark_id": bid,
        "cases": nodes,
        "case_count": len(nodes),
        "run_count": active_runs + archived_runs,
        "active_case_count": sum(1 for n in nodes.values() if n["active_run_count"]),
        "active_run_count": active_runs,
        "archived_run_count": archived_runs,
    }


def case_node(cid: str, runs: list[dict]) -> dict:
    """A case's node: its runs sorted in place (§6.3), counts and ``latest_decision``."""
    runs.sort(key=run_sort_key)
    active = [r for r in runs if r.get("archive_state") != ARCHIVED]
    archived = len(runs) - len(active)
    return {
        "case_id": cid,
        "runs": runs,
        "active_run_count": len(active),
        "archived_run_count": archived,
        "latest_decision": latest_decision(active, archived_run_count=archived),
    }


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Bulk assembly allocates only acyclic containers; a full collection triggered midway
    would walk every row of the ledger (~0.1 s at 30,000 rows) and free nothing."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_INSTANTS: dict[str, float] = {}


def _instant(value: object) -> float:
    """Seconds since the epoch; naive values are read as UTC, unreadable ones sort first."""
    if not isinstance(value, str):
        return float("-inf")
    cached = _INSTANTS.get(value)
    if cached is not None:
        return cached
    try:
        parsed = datetime.fromisoformat(value)
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        result = parsed.timestamp()
    except ValueError:
        result = float("-inf")
    if len(_INSTANTS) > 200_000:
        _INSTANTS.clear()
    _INSTANTS[value] = result
    return result


# --------------------------------------------------------------------------------------------
# latest_decision (§7)
# --------------------------------------------------------------------------------------------

_SUFFIX_BY_REPAIR_CLASS = {
    "runner_setup_timeout": "setup_timeout_repair_required",
    "benchmark_environment_setup_contract": "environment_setup_repair_required",
    "runner_model_access": "model_access_repair_required",
    "runner_result_materialization": "result_materialization_repair_required",
    "runner_result_finalization": "result_finalization_repair_required",
    "skillsbench_codex_acp_runtime_preflight": "codex_acp_runtime_preflight_required",
    "skillsbench_codex_acp_post_success_finalization": (
        "codex_acp_post_success_finalization_required"
    ),
    "skillsbench_setup_preflight_selection": "setup_preflight_selection_required",
    "skillsbench_verifier_bootstrap_preflight_selection": (
        "verifier_bootstrap_preflight_selection_required"
    ),
    "skillsbench_task_source_preflight_selection": "task_source_preflight_selection_required",
    "skillsbench_task_source_excluded": "task_source_excluded_from_formal_scoring",
    "worker_verifier_alignment": "worker_verifier_alignment_required",
    "verifier_or_infra_repair": "verifier_or_infra_repair_required",
    "run_rerun_required": "rerun_required",
}
_DEFAULT_SUFFIX = "runner_or_setup_repair_required"
_RUNNER_SCOPES = ("runner_or_setup", "score_missing")
_REPAIR_FIELDS = ("repair_priority", "repair_class", "failure_class", "next_action")
_BRIDGE_LABEL = "worker_bridge_connected_official_score_failure"
_NEXT_ACTION_LIMIT = 220

# [loopx-specific] case routing: wording kept from loopx so routed cases read the same.
_ROUTING_NEXT_ACTION = {
    "case_exception_research": "inspect compact exception attribution and form a case-level "
    "intervention hypothesis before rerunning this case",
    "timeout_tier_policy_candidate": "decide the timeout tier and continuation cadence before "
    "rerunning; separate setup timeout from solver timeout evidence",
    "case_timeout_research": "inspect the compact timeout context and decide whether this case "
    "needs a longer timeout tier before rerunning it",
    "bridge_connected_no_uplift": "treat the bridge as connected and analyze case or solution "
    "quality; do not relaunch this case as a bridge repair",
}


def latest_decision(active_rows_sorted: list[dict], *, archived_run_count: int = 0) -> dict:
    """Decide what a case needs next from its active rows (already in §6.3 order).

    Only the latest baseline and the latest treatment drive a paired decision, so an old failure
    that was since repaired no longer asks for repair. ``archived_run_count`` only tells an
    archived-only case from an empty one.
    """
    if not active_rows_sorted:
        if archived_run_count > 0:
            return {"decision": "archived_only", "archived_run_count": archived_run_count}
        return {"decision": "no_runs_recorded"}
    baseline = treatment = None
    for row in active_rows_sorted:
        role = arm_role(row)
        if role == "baseline":
            baseline = row
        elif role == "treatment":
            treatment = row
    if baseline is not None and treatment is not None:
        decision = _paired_decision(baseline, treatment)
    elif baseline is not None:
        decision = _baseline_decision(baseline)
    else:
        decision = {
            "decision": "single_arm_recorded",
            "latest_run_id": active_rows_sorted[-1].get("run_id"),
        }
    routing = _case_routing(active_rows_sorted, decision)
    if routing is not None:
        decision["case_routing"] = routing
    return decision


def arm_role(row: dict) -> str:
    """The stored ``arm_role``, else §5.4 derived from the arm (rows written before roles)."""
    stored = row.get("arm_role")
    if stored in ("baseline", "treatment", "other"):
        return stored
    arm = _text(row.get("arm_id"))
    if "baseline" in arm:
        return "baseline"
    if "treatment" in arm:
        return "treatment"
    contract = row.get("benchmark_loop_contract")
    contract = contract if isinstance(contract, dict) else {}
    haystack = " ".join(
        _text(v)
        for v in (
            arm,
            row.get("mode"),
            row.get("route"),
            contract.get("route"),
            contract.get("protocol_id"),
        )
    )
    if "raw-codex-autonomous-max5" in haystack:
        return "baseline"
    if "loopx-product-mode" in haystack:
        return "treatment"
    return "other"


def _paired_decision(baseline: dict, treatment: dict) -> dict:
    """§7 pair rules, first match; the order encodes which blocker must be cleared first."""
    pair = _pair_fields(baseline, treatment)
    b_scope, t_scope = baseline.get("failure_scope"), treatment.get("failure_scope")
    delta = pair["official_score_delta"]
    product_pair = _product_mode_pair(baseline, treatment)
    if product_pair is not None and not product_pair["main_table_ready"]:
        return {
            "decision": "product_mode_pair_incomplete",
            "baseline_run_id": baseline.get("run_id"),
            "treatment_run_id": treatment.get("run_id"),
            "product_mode_main_table_pair": product_pair,
        }
    if product_pair is not None:
        pair["product_mode_main_table_pair"] = product_pair
    if "attribution_required" in (b_scope, t_scope):
        return {"decision": "paired_result_requires_attribution", **pair}
    if "verifier_or_infra" in (b_scope, t_scope):
        return {"decision": "paired_result_blocked_by_verifier_or_infra", **pair}
    if b_scope in _RUNNER_SCOPES:
        return {
            "decision": "paired_baseline_" + _suffix(baseline),
            **pair,
            **_repair_fields(baseline),
        }
    if t_scope in _RUNNER_SCOPES:
        return {
            "decision": "paired_treatment_" + _suffix(treatment),
            **pair,
            **_repair_fields(treatment),
        }
    if delta is None:
        return {"decision": "paired_result_needs_score_review", **pair}
    if delta > 0:
        return {"decision": "paired_treatment_improved", **pair}
    if delta < 0:
        return {"decision": "paired_treatment_regressed", **pair}
    return _no_uplift_decision(baseline, treatment, pair)


def _no_uplift_decision(baseline: dict, treatment: dict, pair: dict) -> dict:
    b_scope, t_scope = baseline.get("failure_scope"), treatment.get("failure_scope")
    if b_scope == "case_or_solution" and t_scope == "case_or_solution":
        research = next(
            (r for r in (treatment, baseline) if r.get("repair_priority") == "P1"), None
        )
        if research is not None:
            kind = {"case_timeout_research": "timeout", "case_exception_research": "exception"}.get(
                research.get("repair_class"), "case"
            )
            return {
                "decision": f"paired_no_score_uplift_{kind}_research_required",
                **pair,
                **_repair_fields(research),
            }
    if _passed(baseline) and _passed(treatment):
        return {"decision": "paired_baseline_solved_treatment_preserved", **pair}
    return {"decision": "paired_no_score_uplift", **pair}


def _baseline_decision(baseline: dict) -> dict:
    base = {"baseline_run_id": baseline.get("run_id")}
    scope = baseline.get("failure_scope")
    if scope:
        base["failure_scope"] = scope
    if _passed(baseline):
        return {"decision": "baseline_passed_not_current_treatment_priority", **base}
    if scope == "attribution_required":
        return {
            "decision": "baseline_failed_requires_attribution",
            **base,
            **_repair_fields(baseline),
        }
    if scope == "case_or_solution":
        routed = _repair_fields(baseline) if baseline.get("repair_class") else {}
        return {"decision": "baseline_failed_treatment_candidate", **base, **routed}
    return {"decision": "baseline_" + _suffix(baseline), **base, **_repair_fields(baseline)}


def _pair_fields(baseline: dict, treatment: dict) -> dict:
    b_score, t_score = _score(baseline), _score(treatment)
    pair = {
        "baseline_run_id": baseline.get("run_id"),
        "treatment_run_id": treatment.get("run_id"),
        "official_score_delta": None if b_score is None or t_score is None else t_score - b_score,
    }
    for key, row in (("baseline_failure_scope", baseline), ("treatment_failure_scope", treatment)):
        if row.get("failure_scope"):
            pair[key] = row["failure_scope"]
    return pair


def _product_mode_pair(baseline: dict, treatment: dict) -> dict | None:
    """[loopx-specific] main-table review of a product-mode treatment; None when not one.

    benchledger's reading of loopx's rule: a product-mode treatment may be claimed in the main
    table only when its lifecycle contract is satisfied and countable, no claim blocker is
    recorded on it, and both rows carry a countable numeric official score.
    """
    if not _is_product_mode(treatment):
        return None
    contract = _dict(treatment.get("product_mode_lifecycle_contract"))
    blocker = _text(treatment.get("loopx_treatment_claim_blocker"))
    if not blocker and contract.get("satisfied") is not True:
        blocker = "product_mode_lifecycle_unsatisfied"
    if not blocker and contract.get("countable_treatment") is False:
        blocker = "product_mode_treatment_not_countable"
    if not blocker and (_score(baseline) is None or _score(treatment) is None):
        blocker = "pair_score_missing"
    if not blocker and False in (
        baseline.get("official_score_countable"),
        treatment.get("official_score_countable"),
    ):
        blocker = "pair_score_not_countable"
    if blocker:
        return {"main_table_ready": False, "claim_blocker": blocker}
    return {"main_table_ready": True}


def _is_product_mode(row: dict) -> bool:
    contract = row.get("product_mode_lifecycle_contract")
    if isinstance(contract, dict) and contract.get("required") is True:
        return True
    loop = row.get("benchmark_loop_contract")
    if isinstance(loop, dict) and loop.get("product_mode") is True:
        return True
    for key in ("arm_id", "mode", "route"):
        value = row.get(key)
        if isinstance(value, str) and ("product_mode" in value or "product-mode" in value):
            return True
    return False


def _case_routing(active: list[dict], decision: dict) -> dict | None:
    """[loopx-specific] a case-level research route that outlives any single run."""
    exceptions = timeouts = 0
    for row in active:
        repair_class = row.get("repair_class")
        if repair_class == "case_exception_research":
            exceptions += 1
        elif repair_class == "case_timeout_research":
            timeouts += 1
    if exceptions:
        return _routing("case_exception_research", f"case_exception_research_count={exceptions}")
    if timeouts:
        kind = "timeout_tier_policy_candidate" if timeouts >= 2 else "case_timeout_research"
        return _routing(kind, f"case_timeout_research_count={timeouts}")
    delta = decision.get("official_score_delta")
    if delta is not None and delta == 0:
        bridged = sum(1 for r in active if _has_label(r, _BRIDGE_LABEL))
        if bridged:
            return _routing(
                "bridge_connected_no_uplift",
                f"{_BRIDGE_LABEL}_runs={bridged}; official_score_delta=0",
            )
    return None


def _routing(kind: str, evidence: str) -> dict:
    return {
        "class": kind,
        "priority": "P1",
        "evidence": evidence,
        "next_action": _ROUTING_NEXT_ACTION[kind],
    }


def _has_label(row: dict, label: str) -> bool:
    labels = row.get("failure_labels")
    return row.get("failure_class") == label or (isinstance(labels, list) and label in labels)


def _repair_fields(row: dict) -> dict:
    """Repair fields as the decision shows them; ``next_action`` is held to the row limit (220)
    because rows written by loopx 0.4.8 store it uncut."""
    fields = {k: row[k] for k in _REPAIR_FIELDS if row.get(k) not in (None, "", [], {})}
    if isinstance(fields.get("next_action"), str):
        fields["next_action"] = _cut(" ".join(fields["next_action"].split()), _NEXT_ACTION_LIMIT)
    return fields


def _suffix(row: dict) -> str:
    return _SUFFIX_BY_REPAIR_CLASS.get(row.get("repair_class") or "", _DEFAULT_SUFFIX)


def _passed(row: dict) -> bool:
    scope = row.get("failure_scope")
    return scope == "passed" or (not scope and row.get("official_passed") is True)


def _score(row: dict) -> float | int | None:
    value = row.get("official_score")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


# --------------------------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------------------------


def dump_json(doc: dict, *, from_json: bool = False) -> bytes:
    """loopx's bytes: ``json.dumps(indent=2, sort_keys=True, ensure_ascii=False) + "\\n"``.

    ``from_json``: the rows were parsed from stored JSON, so a faster equality check applies.
    """
    return json_like_stdlib(doc, sort_keys=True, from_json=from_json)


# --------------------------------------------------------------------------------------------
# Markdown (§8)
# --------------------------------------------------------------------------------------------

_INTRO = (
    "This file is generated from `benchmark_run_ledger_v0`. It records compact\n"
    "benchmark case outcomes and artifact references; it must not contain raw\n"
    "logs, task prompts, trajectories, credentials, uploads, or absolute paths.\n"
    "Archived runs remain in JSON for traceability but are excluded from the\n"
    "default case decisions, repair backlog, and active runs table."
)
_PRIORITY_RANK = {"P0": 0, "P1": 1, "P2": 2}
_NEXT_ACTION_CELL = 180
# Fixture-verified (loopx 0.4.8): `case_attempt` wins over the other flags and a launcher-only
# row renders empty, so the launcher flag is not shown.
_ATTEMPT_FLAGS = (
    ("case_attempt_countable", "case_attempt"),
    ("official_score_attempt_countable", "official_score_attempt"),
    ("verifier_attempt_countable", "verifier_attempt"),
    ("solver_attempt_countable", "solver_attempt"),
)


def render_markdown(doc: dict) -> str:
    """The Markdown view beside the JSON; byte-compatible with loopx 0.4.8's rendering.

    Counts are recomputed from the runs, never read from the stored counters, so a hand-edited
    document cannot show stale totals.
    """
    with _gc_paused():
        cases, archived = _scan(doc)
        decisions = [
            case_decision_line(bid, cid, _dict(cnode.get("latest_decision")), len(active), n)
            for bid, cid, cnode, active, n in cases
        ]
        backlog = [
            (rank, repair_class, bid, cid, arm, line)
            for bid, cid, _node, active, _archived in cases
            for rank, repair_class, arm, line in case_backlog_entries(bid, cid, active)
        ]
        runs = [run_line(bid, cid, row) for bid, cid, _node, active, _n in cases for row in active]
        return assemble_markdown(
            MarkdownParts(
                schema_version=doc.get("schema_version", SCHEMA_VERSION),
                updated_at=doc.get("updated_at", ""),
                active_case_count=len(cases),
                active_run_count=len(runs),
                archived=archived,
                decision_lines=decisions,
                backlog=backlog,
                run_lines=runs,
            )
        )


@dataclass
class MarkdownParts:
    """Everything the Markdown shows, already cut into lines: the full render derives it from
    a document, the incremental one (``ledger_stream``) from lines cached per case and run.

    ``backlog`` holds ``(rank, repair_class, benchmark, case, arm, line)`` in case order; it is
    sorted here, stably, so ties keep that order as the full render always did.
    """

    schema_version: object
    updated_at: object
    active_case_count: int
    active_run_count: int
    archived: list[tuple[str, int, int]]
    decision_lines: list[str]
    backlog: list[tuple[int, str, str, str, str, str]]
    run_lines: list[str]


def assemble_markdown(parts: MarkdownParts) -> str:
    """§8 layout: header bullets, case decisions, repair backlog, archived summary, runs."""
    lines = ["# Benchmark Run Ledger", "", _INTRO, ""]
    values = (
        ("schema_version", parts.schema_version),
        ("updated_at", parts.updated_at),
        ("active_case_count", parts.active_case_count),
        ("active_run_count", parts.active_run_count),
        ("archived_run_count", sum(a[2] for a in parts.archived)),
    )
    lines += [f"- {key}: `{_cell(value)}`" for key, value in values]
    lines += ["", "## Case Decisions", "", _DECISION_HEADER, _rule(6), *parts.decision_lines]
    if parts.backlog:
        entries = sorted(parts.backlog, key=lambda e: e[:5])
        lines += ["", "## Repair Backlog", "", _BACKLOG_HEADER, _rule(8)]
        lines += [e[5] for e in entries]
    if parts.archived:
        lines += ["", "## Archived Run Summary", ""] + _archived_table(parts.archived)
    lines += ["", "## Runs", "", _RUNS_HEADER, _rule(9), *parts.run_lines]
    return "\n".join(lines) + "\n"


def active_cases(doc: dict) -> list[tuple[str, str, dict, list[dict], int]]:
    """``(benchmark, case, case node, active runs, archived count)`` for every case with an
    active run, in the Markdown view's order (the HTML report lists the same cases)."""
    return _scan(doc)[0]


def _scan(doc: dict) -> tuple[list, list]:
    """One pass over every run: the active cases (sorted, with their active runs in stored
    order and archived count) and the per-benchmark archived summary."""
    cases: list[tuple[str, str, dict, list[dict], int]] = []
    archived_summary: list[tuple[str, int, int]] = []
    for bid, bnode in sorted(_dict(doc.get("benchmarks")).items()):
        archived_cases = archived_runs = 0
        for cid, cnode in sorted(_dict(_dict(bnode).get("cases")).items()):
            active, archived = [], 0
            for row in _list(_dict(cnode).get("runs")):
                if type(row) is not dict:
                    continue
                if row.get("archive_state") == ARCHIVED:
                    archived += 1
                else:
                    active.append(row)
            if active:
                cases.append((bid, cid, cnode, active, archived))
            archived_cases += 1 if archived else 0
            archived_runs += archived
        if archived_runs:
            archived_summary.append((bid, archived_cases, archived_runs))
    return cases, archived_summary


_DECISION_HEADER = "| Benchmark | Case | Decision | Product Pair | Case Routing | Runs |"


def case_decision_line(bid: str, cid: str, decision: dict, active: int, archived: int) -> str:
    """The case's line in the Case Decisions table (only cases with active runs have one)."""
    runs = f"{active} active / {archived} archived" if archived else str(active)
    return _row(
        _code(bid),
        _code(cid),
        _code(decision.get("decision")),
        _product_pair_cell(decision),
        _routing_cell(decision),
        _code(runs),
    )


def _product_pair_cell(decision: dict) -> str:
    status = product_pair_status(decision)
    return _code(status) if status else "-"


def product_pair_status(decision: dict) -> str | None:
    """``main_table_ready``, the claim blocker, or None when the decision has no product pair."""
    pair = decision.get("product_mode_main_table_pair")
    if not isinstance(pair, dict):
        return None
    if pair.get("main_table_ready") is True:
        return "main_table_ready"
    return _cell(pair.get("claim_blocker") or "pair_incomplete")


def _routing_cell(decision: dict) -> str:
    kind = routing_class(decision)
    return _code(kind) if kind else "-"


def routing_class(decision: dict) -> object:
    """The case routing class of a decision, if it has one."""
    routing = decision.get("case_routing")
    return routing.get("class") if isinstance(routing, dict) else None


_BACKLOG_HEADER = (
    "| Priority | Benchmark | Case | Arm | Repair Class | Failure | Repair Profile | Next Action |"
)


def case_backlog_entries(bid: str, cid: str, active: list[dict]) -> list[tuple[int, str, str, str]]:
    """The case's Repair Backlog entries as ``(rank, repair_class, arm, line)``, in row order."""
    entries = []
    for row in backlog_rows(active):
        line = _row(
            _code(row.get("repair_priority")),
            _code(bid),
            _code(cid),
            _code(row.get("arm_id")),
            _code(row.get("repair_class")),
            _code(row.get("failure_class")),
            profile_summary(row),
            _cut(_cell(row.get("next_action")), _NEXT_ACTION_CELL),
        )
        rank, repair_class, _bid, _cid, arm = backlog_sort_key(bid, cid, row)
        entries.append((rank, repair_class, arm, line))
    return entries


def backlog_rows(active: list[dict]) -> list[dict]:
    """The rows a case puts in the Repair Backlog, in row order: rows with a priority and a
    class, only the latest row of each arm (the HTML report lists the same rows)."""
    latest_by_arm = {r.get("arm_id"): r for r in active if r.get("arm_id")}
    return [
        row
        for row in active
        if row.get("repair_priority")
        and row.get("repair_class")
        and (not row.get("arm_id") or latest_by_arm.get(row.get("arm_id")) is row)
    ]


def backlog_sort_key(bid: str, cid: str, row: dict) -> tuple[int, str, str, str, str]:
    """Backlog order: priority, repair class, benchmark, case, arm (ties keep case order)."""
    rank = _PRIORITY_RANK.get(row.get("repair_priority"), 3)
    return (rank, _cell(row.get("repair_class")), bid, cid, _cell(row.get("arm_id")))


def profile_summary(row: dict) -> str:
    """One line a human can act on; empty when the row carries no profile."""
    profile = row.get("repair_profile")
    if not isinstance(profile, dict):
        return ""
    repair_class = _cell(profile.get("repair_class") or row.get("repair_class"))
    preflights = [_cell(p) for p in _list(profile.get("required_preflight"))]
    if repair_class == "runner_model_access":
        return (
            f"blocked_model={_cell(profile.get('blocked_model_route'))}; "
            f"rerun_model={_cell(profile.get('recommended_model_route'))}; "
            "preflight=codex_cli_minimal_model_probe"
        )
    if repair_class == "runner_setup_timeout":
        required = _dict(profile.get("required_launch_overrides"))
        disallowed = _dict(profile.get("disallowed_launch_overrides"))
        return (
            f"codex_install_strategy={_cell(required.get('codex_install_strategy'))}; "
            f"agent_setup_timeout_multiplier="
            f"{_cell(required.get('agent_setup_timeout_multiplier'))}; "
            f"agent_timeout_multiplier={_cell(required.get('agent_timeout_multiplier'))}; "
            f"disallow={_cell(disallowed.get('codex_install_strategy'))}"
        )
    if "preflight" in repair_class and preflights:
        return "required_preflight=" + ",".join(preflights[:3])
    return repair_class


def _archived_table(archived: list) -> list[str]:
    lines = [_row("Benchmark", "Archived Cases", "Archived Runs"), _rule(3)]
    for bid, case_count, run_count in archived:
        lines.append(_row(_code(bid), _code(case_count), _code(run_count)))
    return lines


_RUNS_HEADER = (
    "| Benchmark | Case | Arm | Attempt | Score | First Success Round | Round Rewards | Failure "
    "| Artifact |"
)


def run_line(bid: str, cid: str, row: dict) -> str:
    """An active run's line in the Runs table, the largest table: no per-cell helper calls."""
    get = row.get
    arm = get("arm_id")
    first = get("first_success_round")
    failure = get("failure_class") or "none"
    rewards = get("round_rewards")
    return (
        f"| {_code(bid)} | {_code(cid)} | `"
        f"{arm if type(arm) is str else _cell(arm)}` | `{_attempt(row)}` | "
        f"`{_score_text(row)}` | `{'' if first is None else _cell(first)}` | "
        f"`{_round_rewards(rewards) if rewards else ''}` | "
        f"`{failure if type(failure) is str else _cell(failure)}` | `{_artifact(row)}` |"
    )


def _attempt(row: dict) -> str:
    kind = row.get("ledger_attempt_kind")
    if kind:
        return _cell(kind)
    for key, name in _ATTEMPT_FLAGS:
        if row.get(key) is True:
            return name
    return ""


def _score_text(row: dict) -> str:
    score = _score(row)
    return "missing" if score is None else repr(score)


def _round_rewards(records: object) -> str:
    items = []
    for record in _list(records):
        if not isinstance(record, dict):
            continue
        round_no = record.get("agent_round", record.get("round"))
        reward = record.get("reward")
        if isinstance(reward, int | float) and not isinstance(reward, bool):
            text = format(reward, "g") + ("*" if record.get("passed") is True else "")
        else:
            text = "missing" if record.get("reward_present") is False else "unknown"
        items.append(f"{_cell(round_no)}:{text}")
    return ",".join(items)


def _artifact(row: dict) -> str:
    refs = row.get("artifact_refs")
    if not refs or not isinstance(refs, dict):
        return ""
    for key in ("compact_artifact_ref", "result_ref", "artifact_ref", "history_ref"):
        if refs.get(key):
            return _cell(refs[key])
    return ""


def _row(*cells: str) -> str:
    return "| " + " | ".join(cells) + " |"


def _rule(n: int) -> str:
    return "|" + " --- |" * n


def _code(value: object) -> str:
    return f"`{_cell(value)}`"


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list:
    return value if isinstance(value, list) else []
