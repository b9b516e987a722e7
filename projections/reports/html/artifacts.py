"""``report --link-artifacts``: links from a grid cell to the files a user opens next.

Opt-in, because a report may be shared and these links are local paths (docs/report.md). The
ledger rows and run records keep only public-safe relative names: a row's ``history_ref``
names its goal run, and each attempt of that run's record its trial (``trial_name``) or
rollout (``selection``). Where the runner's files were read is kept in one place only, the
``local_root`` of the ``run_built`` event that built the record, in the local store
(docs/verification.md, docs/report.md). Each file is looked up on disk when the report is
rendered: only a file that exists now gets a link; a trial directory that is gone says so.

A link is a ``file://`` URL made by ``Path.as_uri``, which percent-encodes every character
that could end an attribute or start a scheme, and the page sets it with ``setAttribute``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from benchledger.ledger.rules.history.goal_runs import record_paths_rel
from benchledger.ledger.store.events import RUN_APPENDED, RUN_BUILT

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
    from benchledger.ledger.store.event_store import EventStore
    from benchledger.ledger.store.events import StoredEvent

NOT_ON_DISK = "not on this disk"
NO_LOCATION = (
    "no ingest location recorded (not ingested from runner files by this store's benchmark run,"
    " or before it kept one)"
)
NEVER_STARTED = "no trial directory (the attempt never started)"
NOT_RECORDED = "its rollout directory is not named in the run record"
# What a trial (Harbor) or rollout (BenchFlow) keeps that a user reads next, in this order: the
# trajectory, the agent's logs, the verifier's output, the error (docs/formats/harbor.md §1,
# docs/formats/benchflow.md §1). A name ending in "/" stands for the regular files directly in
# that directory; a runner that lacks one of them simply has no such file.
ARTIFACTS = (
    "agent/trajectory.json",  # Harbor (ATIF)
    "trajectory/",  # BenchFlow: acp_trajectory.jsonl
    "trainer/atif.json",  # BenchFlow's trajectory in ATIF
    "agent/",
    "verifier/",  # reward.txt / reward.json, test-stdout.txt, test-stderr.txt
    "trainer/verifiers.jsonl",  # BenchFlow's verifier records
    "rewards.jsonl",
    "exception.txt",  # Harbor, when the trial recorded an exception
)
MAX_FILES_PER_DIR = 20  # a codex sessions/ tree can hold thousands: the directory link covers it

Link = list[str]  # [label, href]
Group = list[Any]  # [label, note or None, [Link, ...]]


@dataclass
class IngestedRun:
    """One goal run as its ``run_built`` event recorded it."""

    kind: str
    root: Path
    record: dict[str, Any]
    provenance: dict[str, Any]


@dataclass
class ArtifactLinks:
    """Resolves the rows of one report; ``counts`` go into the command's JSON output."""

    runs: dict[str, IngestedRun]  # by the history_ref of the run's ledger row
    counts: dict[str, int] = field(
        default_factory=lambda: {"files": 0, "not_on_disk": 0, "without_location": 0}
    )

    def for_row(self, row: dict[str, Any]) -> list[Group]:
        """The cell's link groups: one per attempt (per log for Inspect)."""
        run = self.runs.get(_history_ref(row) or "")
        if run is None:
            self.counts["without_location"] += 1
            return [["artifacts", NO_LOCATION, []]]
        groups = list(_groups(run))
        for _label, note, links in groups:
            self.counts["files"] += len(links)
            self.counts["not_on_disk"] += note == NOT_ON_DISK
        return groups


def artifact_links(store: EventStore, conn: Connection, rows: Iterable[dict]) -> ArtifactLinks:
    """Read the ingest events of the goals the rows' runs belong to."""
    wanted: dict[str, set[str]] = {}
    for row in rows:
        ref = _history_ref(row)
        goal = _goal_of(ref) if ref else None
        if goal is not None and ref is not None:
            wanted.setdefault(goal, set()).add(ref)
    runs: dict[str, IngestedRun] = {}
    for goal, refs in sorted(wanted.items()):
        for ref, run in _goal_runs(store, conn, goal):
            if ref in refs:
                runs[ref] = run
    return ArtifactLinks(runs)


def _history_ref(row: dict[str, Any]) -> str | None:
    refs = row.get("artifact_refs")
    ref = refs.get("history_ref") if isinstance(refs, dict) else None
    return ref if isinstance(ref, str) else None


def _goal_of(history_ref: str) -> str | None:
    """``goals/<goal>/runs/<stem>.json`` -> the goal, when it is spelled exactly so."""
    parts = history_ref.split("/")
    if len(parts) < 4 or parts[0] != "goals" or parts[-2] != "runs":
        return None
    goal, name = "/".join(parts[1:-2]), parts[-1]
    stem = name.removesuffix(".json")
    return goal if record_paths_rel(goal, stem)[0] == history_ref else None


def _goal_runs(store: EventStore, conn: Connection, goal: str) -> Iterator[tuple[str, IngestedRun]]:
    """Each run appended to the goal with the ``run_built`` event of its record: one command
    appends the ``run_built`` events of its new records, then their ``run_appended`` events in
    the same order (``ledger/handlers/benchmark_run.py``), under one correlation id."""
    built: dict[str, list[StoredEvent]] = {}
    appended: dict[str, list[StoredEvent]] = {}
    for event in store.read(
        stream=f"goal/{goal}", event_types=(RUN_BUILT, RUN_APPENDED), conn=conn
    ):
        into = built if event.event_type == RUN_BUILT else appended
        into.setdefault(event.correlation_id, []).append(event)
    for correlation, runs in appended.items():
        sources = built.get(correlation, [])
        if len(sources) != len(runs):
            continue  # not one command's plain ingest: no pairing to trust
        for source, run in zip(sources, runs, strict=True):
            found = _ingested(source.payload, run.payload)
            if found is not None:
                yield record_paths_rel(goal, str(run.payload.get("stem")))[0], found


def _ingested(built: dict[str, Any], appended: dict[str, Any]) -> IngestedRun | None:
    provenance = built.get("provenance")
    record = built.get("record")
    if not isinstance(provenance, dict) or not isinstance(record, dict):
        return None
    root = provenance.get("local_root")
    if built.get("run_key") != appended.get("run_key") or not isinstance(root, str):
        return None
    if not os.path.isabs(root):
        return None
    return IngestedRun(str(provenance.get("kind") or ""), Path(root), record, provenance)


# --------------------------------------------------------------------------- per runner


def _groups(run: IngestedRun) -> Iterator[Group]:
    if run.kind == "inspect_logs":
        yield from _inspect_groups(run)
        return
    rollouts = _rollout_dirs(run) if run.kind.startswith("benchflow") else {}
    trials = run.record.get("trials")
    for trial in trials if isinstance(trials, list) else []:
        if not isinstance(trial, dict):
            continue
        name = trial.get("trial_name")
        label = f"attempt {trial.get('attempt_index', '?')}" + (f" · {name}" if name else "")
        if not isinstance(name, str) or not name:
            yield [label, NEVER_STARTED, []]
            continue
        relative = rollouts.get(name) if run.kind.startswith("benchflow") else name
        if relative is None:
            yield [label, NOT_RECORDED, []]
            continue
        yield _trial_group(label, run.root, relative)


def _rollout_dirs(run: IngestedRun) -> dict[str, str]:
    """BenchFlow: each attempt's rollout directory, relative to the ingest root, by the
    attempt's ``trial_name`` (the rollout's name, else its directory's: docs/formats/benchflow.md
    §6.1), from the record's own ``selection`` (docs/formats/benchflow.md §5.3)."""
    selection = run.record.get("selection")
    selection = selection if isinstance(selection, dict) else {}
    candidates = selection.get("candidates") or []
    paths = [c.get("relative_path") for c in candidates if isinstance(c, dict)]
    paths.append(selection.get("selected_relative_path"))
    dirs = {}
    for path in paths:
        if isinstance(path, str) and path:
            parent = PurePosixPath(path).parent
            dirs[parent.name] = str(parent)
    trials = [t for t in run.record.get("trials") or [] if isinstance(t, dict)]
    selected = selection.get("selected_relative_path")
    if len(trials) == 1 and isinstance(selected, str):  # a rollout_name unlike its directory
        dirs.setdefault(str(trials[0].get("trial_name")), str(PurePosixPath(selected).parent))
    return dirs


def _trial_group(label: str, root: Path, relative: str) -> Group:
    """A trial or rollout directory's links, or why there are none."""
    directory = _inside(root, relative)
    if directory is None or directory.is_symlink() or not directory.is_dir():
        return [label, NOT_ON_DISK, []]
    links = [["trial directory", directory.as_uri()]]
    links += [[_shown(name), path.as_uri()] for name, path in _artifact_files(directory)]
    return [label, None, links]


def _artifact_files(directory: Path) -> Iterator[tuple[str, Path]]:
    """The files a user opens next (``ARTIFACTS``), labelled by their path in the trial
    directory, each once."""
    seen: set[str] = set()
    for entry in ARTIFACTS:
        if entry.endswith("/"):
            names = [entry + name for name in _regular_files(directory / entry)]
        else:
            names = [entry] if (directory / entry).is_file() else []
        for name in names:
            if name not in seen:
                seen.add(name)
                yield name, directory / name


def _shown(name: str) -> str:
    """A file name as text: one that is not UTF-8 on disk shows U+FFFD where its bytes are
    not (its link, percent-encoded from the bytes, still opens it)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _regular_files(directory: Path) -> list[str]:
    if directory.is_symlink() or not directory.is_dir():
        return []
    try:
        with os.scandir(directory) as entries:
            names = sorted(e.name for e in entries if e.is_file())
    except OSError:
        return []
    return names[:MAX_FILES_PER_DIR]


def _inspect_groups(run: IngestedRun) -> Iterator[Group]:
    """Inspect: the ``.eval``/``.json`` log the record was read from (the kept log of the
    record's task, ``run_key`` = ``inspect:<task id>:<sample>``: docs/formats/inspect.md §4)."""
    run_key = str(run.record.get("run_key") or "")
    logs = run.provenance.get("logs")
    for log in logs if isinstance(logs, list) else []:
        if not isinstance(log, dict) or not log.get("kept"):
            continue
        if not run_key.startswith(f"inspect:{log.get('task_id')}:"):
            continue
        path = _inside(run.root, log.get("relative_path"))
        if path is None or not path.is_file():
            yield ["eval log", NOT_ON_DISK, []]
        else:
            yield ["eval log", None, [[_shown(path.name), path.as_uri()]]]
        return
    yield ["eval log", NOT_ON_DISK, []]


def _inside(root: Path, relative: Any) -> Path | None:
    """``root/relative`` for a plain relative POSIX path (no ``..``, no absolute part)."""
    if not isinstance(relative, str) or not relative or "\\" in relative or "\0" in relative:
        return None
    parts: Sequence[str] = PurePosixPath(relative).parts
    if PurePosixPath(relative).is_absolute() or any(p in ("", ".", "..") for p in parts):
        return None
    return root.joinpath(*parts)
