"""The short summary that is ``benchmark run``'s Markdown output.

A person first wants to know how much came in, how each (agent, model) scored, what will not
count, what was recorded and where the files went; then a glance at the runs. One section per
run, as loopx printed, is a long scroll for a real job (1,089 lines for 3,000 trials, issue 34),
so by default the runs are a table of the first few (a planned run's section, which holds its
launch command, for the first two) and a line saying how many more ``--verbose`` lists; with
``--verbose`` the summary opens the full per-run sections. Only the terminal output carries it:
``--format json`` is the machine contract, and the ``<stem>.md`` run files keep the format loopx
wrote.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchledger.ledger.core.markdown import code_span, one_line, table_text
from benchledger.ledger.core.readable import more_line, plural, shown_path, word
from benchledger.projections.publishing.goal_runs import (
    MARKDOWN_TITLE,
    payload_runs,
    run_section_lines,
)

MAX_JOBS_NAMED = 3
MAX_ARMS = 8  # (agent, model) rows of the score table without --verbose
MAX_RUNS = 10  # rows of the runs table without --verbose
MAX_PLANNED = 2  # planned runs' sections (each holds a launch command) without --verbose
VERBOSE_HINT = "`--verbose` to list all"


def with_summary(
    details: str, payload: Mapping[str, Any], *, cwd: Path, goal_default: str | None = None
) -> str:
    """``details`` (a ``# Title`` then the per-run Markdown) with the whole summary after its
    title: the ``--verbose`` output."""
    title, _, rest = details.partition("\n")
    summary = summary_lines(payload, cwd=cwd, max_arms=None, goal_default=goal_default)
    return "\n".join([title, "", *summary, "", rest.lstrip("\n")])


def short_markdown(
    payload: Mapping[str, Any], *, cwd: Path, goal_default: str | None = None
) -> str:
    """The default output: the summary, the next step, then the first runs and how many more.

    A screenful whatever the size of the input: every list in it is cut, with a line that says
    how many were left out and that ``--verbose`` lists them."""
    runs = payload_runs(payload)
    lines = [MARKDOWN_TITLE, ""]
    lines += summary_lines(payload, cwd=cwd, max_arms=MAX_ARMS, goal_default=goal_default)
    action = payload.get("recommended_action")
    if isinstance(action, str) and action:
        lines.append(f"- next: {one_line(action)}")
    if runs and all(run.get("run_status") == "planned" for run in runs):
        for run in runs[:MAX_PLANNED]:
            lines += run_section_lines(run, word)
        lines += more_lines(len(runs), MAX_PLANNED, "planned run")
    elif runs:
        lines += ["", "## Runs", "", *runs_table(runs[:MAX_RUNS])]
        lines += more_lines(len(runs), MAX_RUNS, "run")
    if payload.get("error"):
        lines += ["", f"- error: {one_line(str(payload['error']))}"]
    return "\n".join(lines)


def summary_lines(
    payload: Mapping[str, Any],
    *,
    cwd: Path,
    max_arms: int | None = None,
    goal_default: str | None = None,
) -> list[str]:
    """Intake, scores per (agent, model) (the first ``max_arms``), what will not count, what
    was recorded (``goal_default``: what the goal was named after, when ``--goal-id`` was not
    given) and where the files are."""
    runs = payload_runs(payload)
    lines = [intake_line(runs), "", *score_table(runs, max_arms), *not_counted_lines(runs), ""]
    lines.append(recorded_line(payload, len(runs)))
    if goal_default:
        goal = code(payload.get("goal_id"))
        lines.append(f"- goal: {goal} is the {goal_default}'s name (`--goal-id` names another)")
    if not payload.get("already_recorded"):  # that payload names no files: none were written
        lines += file_lines(payload, cwd)
    return lines


def runs_table(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """One row per run: its case, arm, status, official score and attempts."""
    lines = [
        "| case | arm | status | score | attempts |",
        "| --- | --- | --- | ---: | ---: |",
    ]
    for run in runs:
        score = official_score(run)
        cells = [
            cell(text(run.get("case_id"))),
            cell(text(run.get("arm_id"))),
            cell(text(run.get("run_status"))),
            "-" if score is None else f"{score:.2f}",
            str(attempt_count(run)),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def more_lines(total: int, shown: int, noun: str, many: str | None = None) -> list[str]:
    """A blank line and the note under a cut list, or nothing when the list is whole."""
    more = more_line(total, shown, noun, VERBOSE_HINT, many)
    return ["", *more] if more else []


def intake_line(runs: Sequence[Mapping[str, Any]]) -> str:
    """``**3 cases, 6 attempts** in 6 runs from harbor job `J` (terminal-bench@2.0)``.

    The run count is named only when it differs from the case count (several agents or models).
    """
    cases = {(run.get("benchmark_id"), run.get("case_id")) for run in runs}
    attempts = sum(attempt_count(run) for run in runs)
    line = f"**{plural(len(cases), 'case')}, {plural(attempts, 'attempt')}**"
    if len(runs) != len(cases):
        line += f" in {plural(len(runs), 'run')}"
    if runs and all(run.get("run_status") == "planned" for run in runs):
        line += " (planned, not run yet)"
    sources = sorted({(str(run.get("source_runner") or "?"), job_of(run)) for run in runs})
    runners = sorted({runner for runner, _ in sources})
    jobs = [job for _, job in sources if job]
    if len(jobs) == 1:
        line += f" from {'/'.join(runners)} job {code(jobs[0])}"
    elif jobs:
        named = ", ".join(code(job) for job in jobs[:MAX_JOBS_NAMED])
        more = f" and {len(jobs) - MAX_JOBS_NAMED} more" if len(jobs) > MAX_JOBS_NAMED else ""
        line += f" from {'/'.join(runners)} jobs {named}{more}"
    benchmarks = sorted({str(run.get("benchmark_id")) for run in runs if run.get("benchmark_id")})
    return line + (f" ({', '.join(benchmarks)})" if benchmarks else "")


def attempt_count(run: Mapping[str, Any]) -> int:
    """Trials behind the run: the runner's planned attempts, else its trial count."""
    planned = mapping(run.get("score_aggregation")).get("attempt_count")
    for value in (planned, mapping(run.get("progress")).get("n_total_trials")):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return 0


def job_of(run: Mapping[str, Any]) -> str:
    job = run.get("job_name")
    return job if isinstance(job, str) else ""


def score_table(runs: Sequence[Mapping[str, Any]], max_rows: int | None = None) -> list[str]:
    """One row per (agent, model): cases, passed, mean official score, runs without a score;
    the first ``max_rows`` of them, then how many more."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for run in runs:
        agent = mapping(run.get("agent"))
        key = (text(agent.get("name")), text(agent.get("model")))
        groups.setdefault(key, []).append(run)
    lines = [
        "| agent | model | cases | passed | mean score | no score |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    shown = sorted(groups.items())[:max_rows]
    for (agent_name, model), group in shown:
        scores = [score for run in group if (score := official_score(run)) is not None]
        passed = sum(mapping(run.get("official_task_score")).get("passed") is True for run in group)
        mean = f"{sum(scores) / len(scores):.2f}" if scores else "-"
        cases = len({run.get("case_id") for run in group})
        unscored = len(group) - len(scores)
        cells = [cell(agent_name), cell(model), str(cases), str(passed), mean, str(unscored)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines + more_lines(len(groups), len(shown), "agent and model", "agents and models")


MAX_REASONS = 3


def not_counted_lines(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """The runs the table's numbers cannot stand for, and why, right under it (issue 31 item 7).

    ``- will not count: 3 of 40 cases (1 unfinished: running; 1 cancelled; 1 unscored:
    verifier_failed)``. A run counts only when it is ``completed`` and has an official score;
    nothing is said when every run counts, or when all of them are plans not run yet.
    """
    if not runs or all(run.get("run_status") == "planned" for run in runs):
        return []
    unfinished: Counter[str] = Counter()
    unscored: Counter[str] = Counter()
    cancelled = 0
    for run in runs:
        status = text(run.get("run_status"))
        if status == "cancelled":
            cancelled += 1
        elif status != "completed":
            unfinished[status] += 1
        elif official_score(run) is None:
            unscored[unscored_reason(run)] += 1
    missing = sum(unfinished.values()) + cancelled + sum(unscored.values())
    if not missing:
        return []
    cases = {(run.get("benchmark_id"), run.get("case_id")) for run in runs}
    noun = "case" if len(cases) == len(runs) else "run"
    parts = []
    if unfinished:
        parts.append(f"{sum(unfinished.values())} unfinished: {reasons(unfinished)}")
    if cancelled:
        parts.append(f"{cancelled} cancelled")
    if unscored:
        parts.append(f"{sum(unscored.values())} unscored: {reasons(unscored)}")
    return ["", f"- will not count: {missing} of {plural(len(runs), noun)} ({'; '.join(parts)})"]


def unscored_reason(run: Mapping[str, Any]) -> str:
    """The most frequent reason the run's attempts went unscored."""
    found = mapping(mapping(run.get("score_aggregation")).get("unscored_reasons"))
    counts = {k: v for k, v in found.items() if isinstance(v, int) and not isinstance(v, bool)}
    if not counts:
        return "no score"
    return min(counts, key=lambda k: (-counts[k], k))


def reasons(counts: Counter[str]) -> str:
    """``running`` alone, or ``2 running, 1 incomplete`` (most frequent first, at most three,
    then how many more)."""
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if len(ranked) == 1:
        return cell(ranked[0][0])
    shown = ", ".join(f"{n} {cell(name)}" for name, n in ranked[:MAX_REASONS])
    rest = sum(n for _, n in ranked[MAX_REASONS:])
    return shown + (f", {rest} other" if rest else "")


def official_score(run: Mapping[str, Any]) -> float | None:
    score = run.get("official_score")
    if isinstance(score, int | float) and not isinstance(score, bool):
        return float(score)
    return None


def recorded_line(payload: Mapping[str, Any], run_count: int) -> str:
    """What this invocation wrote, would write, or found already written."""
    goal = code(payload.get("goal_id"))
    if payload.get("already_recorded"):
        return already_recorded_line(payload)
    ledger = mapping(payload.get("benchmark_run_ledger"))
    if payload.get("dry_run"):
        line = f"- dry run: nothing written; `--execute` would append {plural(run_count, 'run')}"
        line += f" to goal {goal}"
        rows = len(ledger.get("entries") or [])
        return line + (f" and {plural(rows, 'ledger row')}" if ledger else "")
    appended = payload.get("appended_count", run_count)
    line = f"- recorded: {plural(appended, 'run')} appended to goal {goal}"
    if ledger:
        line += (
            f"; ledger: {plural(ledger.get('upserted_count', 0), 'row')} written, "
            f"{ledger.get('unchanged_count', 0)} unchanged, "
            f"{ledger.get('skipped_entry_count', 0)} skipped"
        )
    return line


ALREADY_PREFIX = "nothing to append: "


def already_recorded_line(payload: Mapping[str, Any]) -> str:
    """``- already recorded: nothing appended (this input was already recorded at ...)``."""
    message = payload.get("message")
    if not isinstance(message, str) or not message:
        return "- already recorded: nothing appended"
    reason = message.removeprefix(ALREADY_PREFIX)
    return f"- already recorded: nothing appended ({one_line(reason)})"


def file_lines(payload: Mapping[str, Any], cwd: Path) -> list[str]:
    """Where the ledger and the run files are (or would be), relative to the working directory."""
    would = "would write " if payload.get("dry_run") else ""
    ledger = mapping(payload.get("benchmark_run_ledger"))
    lines = []
    if ledger.get("ledger_path"):
        paths = [ledger.get(key) for key in ("ledger_path", "markdown_path") if ledger.get(key)]
        shown = " and ".join(code(shown_path(path, cwd)) for path in paths)
        lines.append(f"- ledger: {would}{shown}")
    else:
        lines.append("- ledger: not updated (add `--update-run-ledger`)")
    index = payload.get("index_path")
    if isinstance(index, str) and index:
        runs_dir = shown_path(os.path.dirname(index), cwd).rstrip("/") + "/"
        lines.append(f"- run files: {would}{code(runs_dir)} (a JSON and a Markdown file per run)")
    return lines


def mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def text(value: Any) -> str:
    return value if isinstance(value, str) and value else "-"


def cell(value: str) -> str:
    """A table cell: pipes and line breaks would end the cell or the row (ledger.core.markdown)."""
    return table_text(value)


def code(value: Any) -> str:
    """Inline code that a backtick or line break in the value cannot break
    (ledger.core.markdown)."""
    return code_span(str(value))
