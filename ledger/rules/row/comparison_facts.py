"""The per-attempt and per-run facts a ledger row keeps so arms can be compared from rows alone.

A ledger row summarises its run (one score, one verdict), which is enough for decisions but not
for honest uncertainty: ``benchledger compare`` needs every attempt's reward, the task content
the attempts ran against, the timeout policy and what the run cost. The compact record has all
of it (``trials``, ``timeout_policy``, ``metrics``); these helpers copy the few facts compare
reads into the row (docs/formats/ledger_v0.md §3, new fields), so a comparison is a pure function
of the rows
as they stood at any position of the log.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

USAGE_KEYS = ("input_tokens", "cache_tokens", "output_tokens", "cost_usd")
MAX_DIGESTS = 8
TextFilter = Callable[[Any, int], str | None]


def _number(value: Any) -> float | int | None:
    if type(value) is float:  # every reward: the float case first
        return value if math.isfinite(value) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if math.isfinite(value) else None


def attempt_outcomes(record: Mapping[str, Any], text: TextFilter) -> list[dict[str, Any]]:
    """One item per attempt, in attempt order: its primary reward and verdict, or why it has none.

    Unscored attempts stay in the list with their reason, so a reader can count them and never
    mistakes a missing reward for a zero.
    """
    trials = record.get("trials")
    if not isinstance(trials, list):
        return []
    out: list[dict[str, Any]] = []
    for position, trial in enumerate(t for t in trials if isinstance(t, Mapping)):
        index = trial.get("attempt_index")
        item: dict[str, Any] = {
            "attempt_index": index if _number(index) is not None else position + 1
        }
        reward = _number(trial.get("primary_reward"))
        if reward is not None:
            item["primary_reward"] = reward
            passed = trial.get("passed")
            item["passed"] = passed if isinstance(passed, bool) else reward >= 1
        else:
            item["unscored_reason"] = text(trial.get("unscored_reason"), 60) or "no_primary_reward"
        out.append(item)
    return out


def comparability(record: Mapping[str, Any], text: TextFilter) -> dict[str, Any]:
    """What decides whether two runs measured the same thing: task content, dataset, timeouts."""
    trials = [t for t in record.get("trials") or [] if isinstance(t, Mapping)]
    digests = sorted({d for t in trials if (d := text(t.get("task_digest"), 80))})
    sources = sorted({s for t in trials if (s := text(t.get("source"), 140))})
    out: dict[str, Any] = {}
    if digests:
        out["task_digests"] = digests[:MAX_DIGESTS]
    if sources:
        out["dataset_sources"] = sources[:MAX_DIGESTS]
    policy = record.get("timeout_policy")
    if isinstance(policy, Mapping) and isinstance(policy.get("official_comparable"), bool):
        out["timeout_official_comparable"] = policy["official_comparable"]
    # What splits one agent's runs into separate arms in compare (docs/compare.md): the agent's
    # recorded version and any timeout multiplier other than 1.
    agent = record.get("agent")
    if isinstance(agent, Mapping) and (version := text(agent.get("version"), 80)):
        out["agent_version"] = version
    if isinstance(policy, Mapping) and isinstance(
        effective := policy.get("effective_multipliers"), Mapping
    ):
        numbers = {key: _number(value) for key, value in effective.items() if isinstance(key, str)}
        scaled = {key: value for key, value in sorted(numbers.items()) if value not in (None, 1)}
        if scaled:
            out["timeout_multipliers"] = scaled
    return out


def usage(record: Mapping[str, Any]) -> dict[str, Any]:
    """Tokens and cost summed over the run's attempts, with how many attempts reported usage."""
    metrics = record.get("metrics")
    if not isinstance(metrics, Mapping):
        return {}
    out: dict[str, Any] = {
        key: value for key in USAGE_KEYS if (value := _number(metrics.get(key))) is not None
    }
    coverage = record.get("metrics_coverage")
    if out and isinstance(coverage, Mapping):
        for key in ("attempts_with_usage", "attempts_total"):
            if _number(coverage.get(key)) is not None:
                out[key] = coverage[key]
    return out


def comparison_fields(record: Mapping[str, Any], text: TextFilter) -> dict[str, Any]:
    """The row fields (empty ones omitted by the row builder)."""
    return {
        "attempt_outcomes": attempt_outcomes(record, text),
        "comparability": comparability(record, text) or None,
        "usage": usage(record) or None,
        "run_window": run_window(record, text) or None,
    }


def run_window(record: Mapping[str, Any], text: TextFilter) -> dict[str, Any]:
    """When the runner ran the job the run belongs to (its ``runner_job`` stamps): the report's
    timeline plots runs by when they ran, not by when they were ingested."""
    job = record.get("runner_job")
    if not isinstance(job, Mapping):
        return {}
    stamps = {key: text(job.get(key), 40) for key in ("started_at", "finished_at")}
    return {key: value for key, value in stamps.items() if value}
