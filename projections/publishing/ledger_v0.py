"""The ``benchmark_run_ledger_v0`` document, its per-case ``latest_decision`` and its renderings.

Pure functions: rows (dicts) in, a document dict / bytes / text out. The read model keeps every
row as decided, so this module never re-derives row fields (repair routes, countability, scope
belong to the row rules); it only groups, de-duplicates, orders, counts and decides (spec
``docs/formats/ledger_v0.md`` §2, §6.3-6.4, §7, §8).

Speed matters (30,000 rows must build, dump and render well under a second): rows are placed in
the document as the same dict objects (no copies), timestamps are parsed once per distinct string,
and the JSON is written by orjson whenever its bytes provably equal ``json.dumps``'s.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import orjson

from benchledger.ledger.core.jsonfmt import json_like_stdlib
from benchledger.ledger.core.markdown import code_span, has_markdown_syntax, table_code, table_text
from benchledger.ledger.rules.row.archive_state import is_archived
from benchledger.ledger.rules.row.case_decision import arm_role, latest_decision
from benchledger.ledger.rules.row.ordering import row_sort_key
from benchledger.ledger.rules.row.rows import LEDGER_SCHEMA
from benchledger.ledger.rules.row.values import compact_text

SCHEMA_VERSION = LEDGER_SCHEMA
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
    runs.sort(key=row_sort_key)
    active = [r for r in runs if not is_archived(r)]
    archived = len(runs) - len(active)
    return {
        "case_id": cid,
        "runs": runs,
        "active_run_count": len(active),
        "archived_run_count": archived,
        "latest_decision": latest_decision(active, archived_run_count=archived),
    }


# --------------------------------------------------------------------------------------------
# latest_decision (§7)
# --------------------------------------------------------------------------------------------

# The decision itself lives in ledger/rules/row/case_decision.py (the write side decides with it
# too);
# re-exported for its readers.
__all__ = ["arm_role", "latest_decision"]


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


# --------------------------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------------------------


def dump_json(doc: dict) -> bytes:
    """loopx's bytes: ``json.dumps(indent=2, sort_keys=True, ensure_ascii=False) + "\\n"``."""
    return json_like_stdlib(doc, sort_keys=True)


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
# The first true flag of ``attempt_accounting`` names the attempt (then the row's own case flag).
_ATTEMPT_FLAGS = (
    ("official_score_attempt_countable", "official_score_attempt"),
    ("verifier_attempt_countable", "verifier_attempt"),
    ("solver_attempt_countable", "solver_attempt"),
    ("case_attempt_countable", "case_attempt"),
    ("launcher_attempt_countable", "launcher_attempt"),
)


def render_markdown(doc: dict) -> str:
    """The Markdown view beside the JSON; byte-compatible with loopx 0.4.8's rendering.

    Counts are recomputed from the runs, never read from the stored counters, so a hand-edited
    document cannot show stale totals.
    """
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
    return "\n".join([markdown_head(parts), *parts.run_lines, ""])


def markdown_head(parts: MarkdownParts) -> str:
    """Everything before the first Runs line (through the Runs table's rule), no newline."""
    lines = ["# Benchmark Run Ledger", "", _INTRO, ""]
    values = (
        ("schema_version", parts.schema_version),
        ("updated_at", parts.updated_at),
        ("active_case_count", parts.active_case_count),
        ("active_run_count", parts.active_run_count),
        ("archived_run_count", sum(a[2] for a in parts.archived)),
    )
    lines += [f"- {key}: {code_span(_cell(value))}" for key, value in values]
    lines += ["", "## Case Decisions", "", _DECISION_HEADER, _rule(6), *parts.decision_lines]
    if parts.backlog:
        entries = sorted(parts.backlog, key=lambda e: e[:5])
        lines += ["", "## Repair Backlog", "", _BACKLOG_HEADER, _rule(8)]
        lines += [e[5] for e in entries]
    if parts.archived:
        lines += ["", "## Archived Run Summary", ""] + _archived_table(parts.archived)
    lines += ["", "## Runs", "", _RUNS_HEADER, _rule(9)]
    return "\n".join(lines)


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
                if is_archived(row):
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
    if not isinstance(pair, dict) or not pair:
        return None
    if pair.get("main_table_claim_allowed") is True:
        return "main_table_ready"
    return compact_text(pair.get("claim_blocker"), 120) or "pair_incomplete"


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
        priority = compact_text(row.get("repair_priority"), 20)
        rank, repair_class, _bid, _cid, arm = backlog_sort_key(bid, cid, row)
        line = _row(
            _code(priority),
            _code(bid),
            _code(cid),
            _code(arm),
            _code(repair_class),
            _code(compact_text(row.get("failure_class"), 120)),
            table_text(profile_summary(row)),
            table_text(compact_text(row.get("next_action"), _NEXT_ACTION_CELL)),
        )
        entries.append((rank, repair_class, arm, line))
    return entries


def backlog_rows(active: list[dict]) -> list[dict]:
    """The rows a case puts in the Repair Backlog, in row order: rows with a priority and a
    class, only the latest row of each arm (the HTML report lists the same rows)."""
    latest_by_arm = {}
    for row in active:
        arm = compact_text(row.get("arm_id"), 80)
        if arm:
            latest_by_arm[arm] = row
    kept = []
    for row in active:
        arm = compact_text(row.get("arm_id"), 80)
        if not compact_text(row.get("repair_priority"), 20):
            continue
        if not compact_text(row.get("repair_class"), 80):
            continue
        if arm and latest_by_arm[arm] is not row:
            continue
        kept.append(row)
    return kept


def backlog_sort_key(bid: str, cid: str, row: dict) -> tuple[int, str, str, str, str]:
    """Backlog order: priority, repair class, benchmark, case, arm (ties keep case order)."""
    rank = _PRIORITY_RANK.get(compact_text(row.get("repair_priority"), 20), 3)
    repair_class = compact_text(row.get("repair_class"), 80)
    return (rank, repair_class, bid, cid, compact_text(row.get("arm_id"), 80))


# Repair classes whose profile is summarised by its first three required preflights.
_PREFLIGHT_SUMMARY_CLASSES = frozenset(
    {
        "skillsbench_codex_acp_runtime_preflight",
        "skillsbench_codex_acp_post_success_finalization",
        "runner_result_finalization",
    }
)


def profile_summary(row: dict) -> str:
    """One line a human can act on, as loopx 0.4.8 summarises a profile; empty without one."""
    profile = row.get("repair_profile")
    if not isinstance(profile, dict):
        return ""
    repair_class = compact_text(profile.get("repair_class"), 80)
    if repair_class == "runner_model_access":
        blocked = compact_text(profile.get("blocked_model_route"), 80) or "unknown"
        rerun = compact_text(profile.get("recommended_model_route"), 80) or "probe_required"
        return (
            f"blocked_model={blocked}; rerun_model={rerun}; preflight=codex_cli_minimal_model_probe"
        )
    if repair_class == "runner_setup_timeout":
        return _setup_timeout_summary(profile)
    if repair_class in _PREFLIGHT_SUMMARY_CLASSES:
        preflights = [compact_text(item) for item in _list(profile.get("required_preflight"))]
        preflights = [item for item in preflights if item][:3]
        return "required_preflight=" + ",".join(preflights) if preflights else repair_class
    return repair_class


def _setup_timeout_summary(profile: dict) -> str:
    required = profile.get("required_launch_overrides")
    if not isinstance(required, dict):
        return "required_launch_overrides=missing"
    strategy = compact_text(required.get("codex_install_strategy"), 80)
    parts = [f"codex_install_strategy={strategy}"] if strategy else []
    parts.append(f"agent_setup_timeout_multiplier={required.get('agent_setup_timeout_multiplier')}")
    parts.append(f"agent_timeout_multiplier={required.get('agent_timeout_multiplier')}")
    disallowed = compact_text(
        _dict(profile.get("disallowed_launch_overrides")).get("codex_install_strategy"), 80
    )
    if disallowed:
        parts.append(f"disallow={disallowed}")
    return "; ".join(parts)


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
    """An active run's line in the Runs table, the largest table: cells are escaped only when
    one of them holds table syntax, which ordinary values never do."""
    get = row.get
    first = get("first_success_round")
    cells = (
        _cell(bid),
        _cell(cid),
        str(get("arm_id", "")),
        _attempt(row),
        _score_text(row),
        str(first) if type(first) is int else "",
        _round_rewards(get("round_rewards")),
        str(get("failure_class", "none")),
        _artifact(row),
    )
    if has_markdown_syntax("".join(cells)):
        return _row(*(table_code(cell) for cell in cells))
    return "| `" + "` | `".join(cells) + "` |"


def _attempt(row: dict) -> str:
    kind = compact_text(row.get("ledger_attempt_kind"), 80)
    if kind:
        return kind
    accounting = _dict(row.get("attempt_accounting"))
    for key, name in _ATTEMPT_FLAGS:
        if accounting.get(key) is True:
            return name
    return "case_attempt" if row.get("case_attempt_countable") is True else ""


def _score_text(row: dict) -> str:
    score = row.get("official_score")
    return "missing" if score is None else str(score)


def _round_rewards(records: object) -> str:
    """``round:reward`` items (``*`` = passed); records without an integer round are skipped."""
    items = []
    for record in _list(records):
        if not isinstance(record, dict):
            continue
        round_no = record.get("agent_round")
        if not isinstance(round_no, int) or isinstance(round_no, bool):
            continue
        reward = record.get("reward")
        if isinstance(reward, int | float) and not isinstance(reward, bool):
            text = format(float(reward), "g")
        else:
            text = "missing" if record.get("reward_present") is False else "unknown"
        if record.get("passed") is True:
            text += "*"
        items.append(f"{round_no}:{text}")
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
    return table_code(_cell(value))


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list:
    return value if isinstance(value, list) else []
