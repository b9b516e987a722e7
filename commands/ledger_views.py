"""The human view of the ledger commands: ``run-ledger-upsert|archive|restore|merge|aggregate|
check``, ``render``, ``import loopx-ledger`` and ``sync-global`` (docs/formats/ledger_v0.md).

Each says whether anything was written (a dry run names the flag that writes), what changed,
counted in words, and what to run next; ``--format json`` prints the payload itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchledger.ledger.core.readable import (
    inline_list,
    label,
    more_line,
    outline_lines,
    plural,
    score,
    shown_path,
    table,
    word,
)

SHOWN_ROWS = 20


def written_line(payload: Mapping[str, Any], done: str) -> str:
    """Whether the command wrote: a dry run names ``--execute``; otherwise ``done``."""
    if payload.get("dry_run"):
        return "- dry run: nothing was recorded (add `--execute` to record it)"
    return f"- {done}"


def _ledger_files(block: Mapping[str, Any]) -> str:
    return f"{word(block.get('ledger_path'))} and {word(block.get('markdown_path'))}"


# --------------------------------------------------------------------------- upsert


def render_upsert(payload: Mapping[str, Any]) -> str:
    block = payload.get("benchmark_run_ledger") or {}
    lines = ["# Benchmark Run Ledger Upsert", ""]
    if "entries" in block:
        lines += _batch_lines(payload, block)
    else:
        lines += _single_lines(payload, block)
    lines += [f"- warning: {word(w)}" for w in block.get("warnings") or []]
    return "\n".join(lines)


_ENTRY_KEYS = ("run_id", "benchmark_id", "case_id", "arm_id", "status", "score_status",
               "failure_class")  # fmt: skip


def _single_lines(payload: Mapping[str, Any], block: Mapping[str, Any]) -> list[str]:
    entry = block.get("entry") or {}
    if block.get("unchanged"):
        state = "- unchanged: the ledger already holds this run as it is"
    else:
        state = written_line(payload, f"recorded in {_ledger_files(block)}")
    shown = {key: word(entry.get(key)) for key in _ENTRY_KEYS}
    lines = [
        state,
        f"- run {shown['run_id']}: {shown['benchmark_id']} / {shown['case_id']}, "
        f"arm {shown['arm_id']}",
        f"- result: {shown['status']}, score {score(entry.get('official_score'))} "
        f"({shown['score_status']}), failure class {shown['failure_class']}",
    ]
    if block.get("skipped"):
        lines.append(f"- skipped: {word(block.get('skip_reason'))}")
    if block.get("merged_into"):
        lines.append(f"- in the ledger: {label(block['merged_into'])}")
    decision = (block.get("case_decision") or {}).get("decision")
    if decision:
        lines.append(f"- case decision: {label(decision)}")
    return lines


def _batch_lines(payload: Mapping[str, Any], block: Mapping[str, Any]) -> list[str]:
    counts = (
        f"{plural(block['input_entry_count'], 'run')} given: {block['accepted_entry_count']} "
        f"accepted, {block['skipped_entry_count']} skipped, {block['unchanged_count']} unchanged"
    )
    entries = block["entries"]
    rows = [(e["run_id"], label(e["merged_into"] or "none"), e["skipped"]) for e in entries]
    return [
        written_line(payload, f"recorded in {_ledger_files(block)}: "
                     f"{plural(block['upserted_count'], 'run')} upserted"),
        f"- {counts}", "",
        *table(("run", "in the ledger", "skipped"), rows[:SHOWN_ROWS]),
        *more_line(len(rows), SHOWN_ROWS, "run"),
    ]  # fmt: skip


# --------------------------------------------------------------------------- archive, restore


def render_archive(payload: Mapping[str, Any]) -> str:
    block = payload.get("archive") or {}
    restore = bool(block.get("restore"))
    verb = "restored" if restore else "archived"
    lines = [f"# Benchmark Run Ledger {'Restore' if restore else 'Archive'}", ""]
    lines.append(written_line(payload, f"{verb} in {_ledger_files(payload)}"))
    lines.append(
        f"- benchmark: {word(block.get('benchmark_id'))}; reason: {word(block.get('reason'))}"
    )
    matched = plural(block.get("matched_run_count") or 0, "run")
    if restore:
        counts = (f"{block.get('restored_run_count', 0)} to restore, "
                  f"{block.get('already_active_run_count', 0)} already active")  # fmt: skip
    else:
        counts = (f"{block.get('newly_archived_run_count', 0)} newly archived, "
                  f"{block.get('already_archived_run_count', 0)} already archived")  # fmt: skip
    lines.append(f"- matched: {matched} ({counts}, {block.get('kept_run_count', 0)} kept)")
    if block.get("archive_batch_id"):
        lines.append(f"- batch: {block['archive_batch_id']}")
    samples = block.get("archived_samples") or []
    if samples:
        keys = ("run_id", "case_id", "arm_id", "run_group_id")
        rows = [(*(s.get(k) for k in keys), score(s.get("official_score")),
                 s.get("failure_class")) for s in samples]  # fmt: skip
        lines += ["", *table(("run", "case", "arm", "run group", "score", "failure class"), rows)]
        if block.get("truncated"):
            lines.append("… more runs matched than are shown here")
    return "\n".join(lines)


# --------------------------------------------------------------------------- merge


def render_merge(payload: Mapping[str, Any]) -> str:
    block = payload.get("merge") or {}
    sources = plural(block.get("source_ledger_count") or 0, "source ledger")
    lines = ["# Benchmark Run Ledger Merge", "",
             written_line(payload, f"merged into {_ledger_files(payload)}"),
             f"- read: {sources} ({block.get('missing_source_count', 0)} missing), "
             f"{plural(block.get('source_run_count') or 0, 'run')}",
             f"- merged: {plural(block.get('merged_run_count') or 0, 'run')}, "
             f"{block.get('new_run_id_count', 0)} new, "
             f"{block.get('changed_run_count', 0)} changed, "
             f"{block.get('skipped_run_count', 0)} skipped",
             f"- the ledger then holds {plural(block.get('target_run_count') or 0, 'run')}",
             ]  # fmt: skip
    skipped = block.get("skipped_by_reason") or {}
    lines += [f"- skipped because {label(reason)}: {count}" for reason, count in skipped.items()]
    return "\n".join(lines)


# --------------------------------------------------------------------------- aggregate


def render_aggregate(payload: Mapping[str, Any]) -> str:
    """One current result per canonical case: the bucket table, totals and what is missing;
    a read says nothing about dry runs (it never writes, except ``--output-json``)."""
    block = payload.get("aggregate") or {}
    summary = block.get("countable_score_summary") or {}
    policy = block.get("selection_policy") or {}
    chosen = policy.get("selection") or payload.get("selection_policy")
    lines = [
        f"# Benchmark Run Ledger Aggregate: {word(block.get('benchmark_id'))}", "",
        f"- cases covered: {block.get('canonical_covered') or 0} of "
        f"{plural(block.get('canonical_total') or 0, 'canonical case')}",
        f"- runs considered: {block.get('deduped_run_count') or 0} (after removing duplicates) "
        f"from {plural(block.get('source_ledger_files') or 0, 'ledger file')}",
        f"- countable: {plural(summary.get('countable_case_count') or 0, 'case')}, mean score "
        f"{score(summary.get('countable_score_mean'))}, sum "
        f"{word(summary.get('countable_score_sum'))}",
        f"- selection policy: {word(chosen)} ({word(policy.get('description'))})",
        "", *_bucket_table(block.get("cases_by_bucket") or {}),
    ]  # fmt: skip
    for key in ("missing_case_ids", "active_case_ids", "runnable_case_ids"):
        if block.get(key):
            lines.append(f"- {label(key.removesuffix('_case_ids'))} cases: "
                         f"{inline_list(block[key])}")  # fmt: skip
    if payload.get("output_json"):
        where = shown_path(payload["output_json"])
        lines.append(written_line(payload, f"written to {where}") if payload.get("updated")
                     else "- dry run: not written (add `--execute` to write it)")  # fmt: skip
    return "\n".join(lines)


def _bucket_table(cases_by_bucket: Mapping[str, Sequence[str]]) -> list[str]:
    rows = [
        (label(bucket), len(cases), inline_list(list(cases), shown=5))
        for bucket, cases in cases_by_bucket.items()
        if cases
    ]
    if not rows:
        return ["- no case has a result yet"]
    return table(("bucket", "cases", "which"), rows)


# --------------------------------------------------------------------------- check


def render_check(payload: Mapping[str, Any]) -> str:
    drift = payload.get("benchmark_run_ledger_drift") or {}
    missing = drift.get("missing_ledger_run_count") or 0
    lines = [
        f"# Benchmark Run Ledger Check: goal {word(payload.get('goal_id'))}", "",
        f"- history: {plural(drift.get('checked_history_run_count') or 0, 'run')} checked "
        f"(the newest {payload.get('history_limit')}), "
        f"{drift.get('terminal_history_run_count', 0)} finished, "
        f"{drift.get('non_terminal_skipped_count', 0)} still running",
        f"- ledger: {plural(drift.get('ledger_run_count') or 0, 'run')}; "
        f"{drift.get('matched_history_run_count', 0)} of the finished runs found",
    ]  # fmt: skip
    if not missing:
        lines += ["", "Result: ok, every finished history run is in the ledger"]
        return "\n".join(lines)
    runs = drift.get("missing_runs") or []
    rows = [(r.get("run_id"), r.get("case_id"), r.get("arm_id"), r.get("score_status"))
            for r in runs]  # fmt: skip
    lines += ["", *table(("missing run", "case", "arm", "score status"), rows),
              *more_line(missing, len(runs), "run", "`--limit` shows more")]  # fmt: skip
    if runs:
        lines += ["", "- repair: upsert each run's compact record, e.g.",
                  f"  `{runs[0].get('catch_up_command_template')}`"]  # fmt: skip
    lines += ["", f"Result: {plural(missing, 'finished history run')} missing from the ledger"]
    return "\n".join(lines)


# --------------------------------------------------------------------------- render, import


def render_render(payload: Mapping[str, Any]) -> str:
    """``render``, and ``render --as-of --output-json`` (the ledger as it stood then)."""
    files = payload.get("rendered") or []
    moment = payload.get("as_of") or {}
    then = f" as it stood at position {moment['position']}" if moment.get("position") else ""
    lines = ["# Render", "", f"- wrote {plural(len(files), 'file')} from the store{then}"]
    if files:
        rows = [(shown_path(f.get("path")), f.get("kind")) for f in files[:SHOWN_ROWS]]
        lines += ["", *table(("file", "kind"), rows), *more_line(len(files), SHOWN_ROWS, "file")]
    return "\n".join(lines)


def render_import(payload: Mapping[str, Any]) -> str:
    if payload.get("already_recorded"):
        state = "- already recorded: this ledger was imported before; nothing new"
    else:
        state = written_line(payload, f"imported as ledger {word(payload.get('ledger_id'))}")
    rows = plural(payload.get("row_count") or 0, "run")
    lines = [
        "# Import loopx Ledger", "", state,
        f"- source: {word(payload.get('source'))}: {rows} "
        f"({payload.get('archived_row_count', 0)} archived) in "
        f"{plural(payload.get('benchmark_count') or 0, 'benchmark')}",
        f"- ledger: {_ledger_files(payload)}",
    ]  # fmt: skip
    dropped = payload.get("public_safety_dropped_field_count") or 0
    if dropped:
        lines.append(f"- public-safety filter: {plural(dropped, 'field')} dropped")
    if payload.get("rendered"):
        lines.append("- rendered: yes" + (" (over the source)" if payload.get("source_rewritten")
                                          else ""))  # fmt: skip
    elif not payload.get("dry_run"):
        lines.append("- rendered: not yet; `benchledger render` writes the files")
    return "\n".join(lines)


# --------------------------------------------------------------------------- sync-global


def render_sync(payload: Mapping[str, Any]) -> str:
    lines = ["# Global Registry Sync", ""]
    if payload.get("skipped"):
        return "\n".join([*lines, f"- skipped: {word(payload.get('reason') or 'nothing to sync')}"])
    where = shown_path(payload.get("global_registry") or "")
    lines.append(written_line(payload, f"wrote {where}") if payload.get("wrote") or
                 payload.get("dry_run") else f"- {where} already up to date")  # fmt: skip
    actions = ", ".join(word(a).replace(":", ": ") for a in payload.get("actions") or [])
    lines += [
        f"- goals: {plural(payload.get('source_goal_count') or 0, 'goal')} in this project "
        f"({actions or 'no change'}); the global registry holds "
        f"{plural(payload.get('global_goal_count') or 0, 'goal')}",
    ]
    for collision in payload.get("route_collisions") or []:
        fields = inline_list(list(collision.get("changed_fields") or []))
        goal = word(collision.get("goal_id"))
        lines.append(f"- route of goal {goal} replaced ({fields} changed; `--replace-state`)")
    if payload.get("backup_path"):
        lines.append(f"- backup: {shown_path(payload['backup_path'])}")
    extra = {k: v for k, v in payload.items() if k == "global_registry_writability" and v}
    lines += outline_lines(extra)
    return "\n".join(lines)
