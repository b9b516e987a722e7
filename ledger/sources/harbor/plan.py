"""The planned trials of a Harbor job (lock.json, else config.json) and their matching to the
trial directories found: what was planned but never ran is still owed (docs/formats/harbor.md
§5.3)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from operator import attrgetter
from typing import Any, NamedTuple

from benchledger.ledger.sources.harbor.trials import _Attempt
from benchledger.ledger.sources.harbor.values import _MULTIPLIERS, _dict, _last_segment, _text


class _Slot(NamedTuple):
    """One planned trial: what an observed attempt must match to realise it.

    A slot becomes an ``_Attempt`` only when no trial directory realised it; a 3,000-trial
    plan is otherwise 3,000 full attempt objects made just to be matched and dropped.
    """

    task: str | None
    source: str | None
    match_agent: str | None
    model: str | None
    lock: dict[str, Any] | None = None

    def owed(self) -> _Attempt:
        return _Attempt(
            task=self.task,
            source=self.source,
            plan_task=self.task,
            agent=self.match_agent,
            match_agent=self.match_agent,
            model=self.model,
            lock=self.lock,
        )


# What later steps read of a TrialLock: its task (name, source, digest), its AgentConfig
# (identity, kwargs, timeout overrides) and its multipliers. Its environment, verifier,
# skills and bridge inputs (two thirds of its ~1.5 KB) are not.
_LOCK_TRIAL_KEYS = ("task", "agent", *_MULTIPLIERS)


def _slim_lock(lock: dict[str, Any]) -> dict[str, Any]:
    """Keep only the lock.json fields later steps read, right after parsing.

    lock.json holds about 1.5 KB per planned trial (4.5 MB at 3,000 trials), and the matched
    trial entries used to keep the whole parsed document alive to the end of the command
    (~6 MB of peak RSS, ~1,500 page faults). Slimmed at once, the memory it held is reused by
    the trial reading that follows. The task and agent blocks are kept whole, by reference:
    copying their few read fields was measured to cost more CPU (~17k instructions a trial)
    than the faults it saved. Every later read (``_planned_from_lock``, ``_Attempt.lock``,
    ``_Job.lock``) sees the same values, truth values included (docs/formats/harbor.md §5.3, §5.7).
    """
    slim: dict[str, Any] = {}
    harbor = lock.get("harbor")
    if isinstance(harbor, dict) and "version" in harbor:
        slim["harbor"] = {"version": harbor["version"]}
    if "trials" in lock:
        trials = lock["trials"]
        # Harbor writes a list; anything else is left as found for the planner to judge.
        slim["trials"] = [_slim_lock_trial(t) for t in trials] if type(trials) is list else trials
    return slim


def _slim_lock_trial(trial: Any) -> dict[str, Any]:
    """One TrialLock's read fields; a non-object reads as {} (``_planned_from_lock`` reads it
    so). A trial with none of them is kept whole: "is there a lock trial" decides which
    multipliers a record cites. A plain loop: measured cheaper than a comprehension (a call
    of its own) and than ``dict(zip(keys, map(trial.get, keys)))``."""
    if not isinstance(trial, dict):
        return {}
    slim = {}
    for key in _LOCK_TRIAL_KEYS:
        if key in trial:
            slim[key] = trial[key]
    return slim or trial


def _planned_from_lock(lock: dict[str, Any]) -> list[_Slot]:
    """One slot per TrialLock. This runs once per planned trial (3,000 in a large job), so
    ``_dict``/``_text`` are written out in line: the eight calls were a third of its cost."""
    planned = []
    for trial in lock.get("trials") or []:
        if not isinstance(trial, dict):
            trial = {}
        task, agent = trial.get("task"), trial.get("agent")
        if not isinstance(task, dict):
            task = {}
        if not isinstance(agent, dict):
            agent = {}
        name, source = task.get("name"), task.get("source")
        match_agent, model = agent.get("name"), agent.get("model_name")
        if not (isinstance(match_agent, str) and match_agent):
            match_agent = _text(agent.get("import_path"))
        planned.append(
            _Slot(
                name if isinstance(name, str) and name else None,
                source if isinstance(source, str) and source else None,
                match_agent,
                model if isinstance(model, str) and model else None,
                trial,
            )
        )
    return planned


def _planned_from_config(config: dict[str, Any]) -> list[_Slot]:
    """Without lock trials, the config's task list x agents x n_attempts is the plan (§5.3)."""
    tasks: list[tuple[str, str | None]] = []
    for ds in config.get("datasets") or []:
        ds = _dict(ds)
        for name in ds.get("task_names") or []:
            if _text(name):
                tasks.append((name, _text(ds.get("name"))))
    for task in config.get("tasks") or []:
        task = _dict(task)
        name = _text(task.get("name")) or _last_segment(task.get("path"))
        if name:
            tasks.append((name, _text(task.get("source"))))
    n_attempts = config.get("n_attempts")
    n_attempts = n_attempts if isinstance(n_attempts, int) and n_attempts > 0 else 1
    planned = []
    for agent in config.get("agents") or []:
        agent = _dict(agent)
        match_agent = _text(agent.get("name")) or _text(agent.get("import_path"))
        if match_agent is None:
            continue
        for _ in range(n_attempts):
            for task, source in tasks:
                planned.append(_Slot(task, source, match_agent, _text(agent.get("model_name"))))
    return planned


def _match_plan(observed: list[_Attempt], planned: list[_Slot]) -> list[_Attempt]:
    """Observed attempts consume planned slots in trial-name order; the rest are still owed.

    A trial matches under the name its lock plans it (``plan_task``), never under the result's
    ``task_name``: a task whose task.toml names it ``org/alpha`` in a directory ``alpha-dir`` is
    planned as ``alpha-dir`` and reported as ``org/alpha``. A second, looser pass ignores the
    source so a trial whose config lost its source does not leave a phantom pending attempt
    behind.
    """
    free = list(planned)
    keys: list[tuple[Callable[[Any], tuple], Callable[[Any], tuple]]] = [
        (
            attrgetter("task", "source", "match_agent", "model"),
            lambda a: (a.plan_task or a.task, a.source, a.match_agent, a.model),
        ),
        (
            attrgetter("task", "match_agent", "model"),
            lambda a: (a.plan_task or a.task, a.match_agent, a.model),
        ),
    ]
    unmatched = sorted((a for a in observed if a.task), key=lambda a: a.trial_name or "")
    for slot_key, attempt_key in keys:
        if not unmatched:
            break
        slots: dict[tuple, list[int]] = {}
        for i, slot in enumerate(free):
            slots.setdefault(slot_key(slot), []).append(i)
        taken: set[int] = set()
        still: list[_Attempt] = []
        for attempt in unmatched:
            queue = slots.get(attempt_key(attempt))
            if queue:
                i = queue.pop(0)
                taken.add(i)
                attempt.lock = free[i].lock
            else:
                still.append(attempt)
        free = [slot for i, slot in enumerate(free) if i not in taken]
        unmatched = still
    return [slot.owed() for slot in free]


def _planned_counts(planned: list[_Slot]) -> Counter:
    return Counter((a.task, a.source, a.match_agent, a.model) for a in planned)
