"""Inspect AI eval logs, reading: which files are logs, the checks made before Inspect opens
one, and the compact facts taken from each (docs/formats/inspect.md).

Logs are read with Inspect's own reader (``inspect_ai.log``), which knows both formats and
every log version. It is imported here only, inside ``_inspect_log_api``: the package is the
optional ``inspect`` extra and the import costs about a second, which no other command pays.
Per log, the header (``header_only``) and then the sample summaries
(``read_eval_log_sample_summaries``): an ``.eval`` log keeps them in ``summaries.json`` (or, while
it runs, in its journal), so no sample's messages, events or store is parsed, which is what made
full samples cost ~1 s per 300-sample log. A summary holds every field the mapping reads (id,
epoch, scores, model usage, times, error); only an ``.eval`` log holding samples without their
summaries (written before Inspect kept them) is read sample by sample, trajectories excluded.
Nothing free-form (input, target, metadata, error text) is recorded.

Before Inspect opens a file it is checked here: a link out of the log directory, a truncated
or oversized ``.eval`` zip (a zip bomb declares far more than it holds) and an oversized
``.json`` log are each refused with one line, before anything is ledgered.
"""

from __future__ import annotations

import hashlib
import os
import re
import zipfile
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from benchledger.ledger.core.errors import InputError, SourceError
from benchledger.ledger.core.input_files import MIB, relative_to, shown_path
from benchledger.ledger.core.safety import is_public_safe
from benchledger.ledger.sources.inspect.harbor_names import harbor_task_args
from benchledger.ledger.sources.parallel import ForkedRuns

ADAPTER_VERSION = "inspect-ai-0.3-adapter/1"
SOURCE_RUNNER = "inspect"
LOG_SUFFIXES = (".eval", ".json")
#: Inspect's own index files beside the logs of a directory (not eval logs).
NOT_LOGS = frozenset({"logs.json", "eval-set.json"})
INSTALL_HINT = "benchmark run inspect needs Inspect AI: pip install 'benchledger[inspect]'"

#: One sample entry of an ``.eval`` zip, uncompressed (a 1 GB sample is refused, not read).
SAMPLE_ENTRY_LIMIT = 256 * MIB
#: Everything one ``.eval`` zip declares, uncompressed, and one ``.json`` log.
LOG_TOTAL_LIMIT = 1024 * MIB
#: A zip entry may expand at most this many times (Inspect's JSON compresses ~10-30x).
MAX_EXPANSION = 200
#: Where summaries are missing and whole samples are read instead: the fields left unread, so
#: trajectories and free-form data stay in the log (Inspect's sample model requires ``input``
#: and ``target``, so those are parsed, and never recorded).
EXCLUDED_SAMPLE_FIELDS = frozenset(
    {
        "messages",
        "events",
        "attachments",
        "metadata",
        "store",
        "choices",
        "timelines",
        "output",
        "sandbox",
        "files",
        "setup",
    }
)
#: The zip entries of an ``.eval`` log that hold one sample each.
SAMPLE_ENTRY = re.compile(r"^samples/[^/]+\.json$")
_EXCEPTION_NAME = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]{0,80})\s*[(:]")


def _inspect_log_api() -> Any:
    """``inspect_ai.log``, or one line saying what to install."""
    try:
        import inspect_ai.log as api
    except ImportError:
        raise InputError(INSTALL_HINT) from None
    return api


@dataclass
class Attempt:
    """One epoch of one sample: its scores as floats, its usage and timing, its error."""

    epoch: int
    scores: dict[str, float]
    unconvertible: list[str]
    error_type: str | None
    usage: dict[str, float]
    timing: dict[str, float]


@dataclass
class Log:
    """One eval log: the header facts a record needs and its samples' attempts."""

    relative_path: str
    sha256: str
    status: str
    task: str
    task_version: str
    task_args: dict[str, str]
    dataset: str | None
    task_id: str
    run_id: str
    eval_id: str
    created: str
    model: str
    solver: str | None
    agent: str | None
    agent_version: str | None
    scorers: list[str]
    inspect_version: str | None
    results: dict[str, dict[str, float]]
    total_samples: int | None
    completed_samples: int | None
    samples: dict[str, list[Attempt]] = field(default_factory=dict)


def find_logs(log_dir: Path | None, log_files: tuple[str, ...]) -> tuple[Path, list[Path]]:
    """The logs to read and the root their names are relative to; links out are refused."""
    if log_dir is not None:
        root = log_dir
        if not root.is_dir():
            raise InputError(f"--log-dir is not a directory: {shown_path(root)}")
        real_root = root.resolve()
        found: list[Path] = []
        for here, dirs, files in os.walk(root):
            base = Path(here)
            for name in sorted([*dirs, *files]):
                path = base / name
                if path.is_symlink():
                    target = path.resolve()
                    if target != real_root and real_root not in target.parents:
                        raise SourceError(
                            f"{relative_to(path, root)}: a link out of the log directory"
                        )
                    if name in dirs:
                        continue  # os.walk does not follow it; its logs are read where they are
            found.extend(
                base / name
                for name in files
                if name.endswith(LOG_SUFFIXES) and name not in NOT_LOGS
            )
        found = sorted(set(found))
        if not found:
            raise InputError(f"no Inspect logs (.eval, .json) under {shown_path(root)}")
        return root, found
    paths = [Path(p) for p in log_files]
    common = Path(os.path.commonpath([p.absolute().parent for p in paths]))
    return common, paths


def read_log(path: Path, root: Path, scorer: str | None) -> Log:
    """One log's header and attempts; any failure is one line naming the file."""
    shown = relative_to(path, root) if path.is_relative_to(root) else path.name
    digest, sample_entries = _checked_digest(path, shown)
    api = _inspect_log_api()
    try:
        header = api.read_eval_log(str(path), header_only=True)
        log = _header(header, shown, digest)
        if scorer is not None and scorer not in log.scorers and log.scorers:
            raise SourceError(f"{shown}: no scorer named {scorer!r} (has {', '.join(log.scorers)})")
        for summary in _summaries(api, path, sample_entries):
            log.samples.setdefault(str(summary.id), []).append(_attempt(summary))
    except InputError:
        raise
    except Exception as exc:  # Inspect's reader: pydantic, zip, JSON and OS errors alike
        raise SourceError(f"{shown}: not a readable Inspect log ({type(exc).__name__})") from None
    for attempts in log.samples.values():
        attempts.sort(key=lambda a: a.epoch)
    return log


def _summaries(api: Any, path: Path, sample_entries: int) -> list[Any]:
    """Inspect's summary of each (sample, epoch): from ``summaries.json`` or the journal of an
    ``.eval`` log, from the parsed file of a ``.json`` one. An ``.eval`` log holding more
    samples than summaries (written before Inspect kept summaries) is read sample by sample,
    each summarised by Inspect's own ``EvalSample.summary``."""
    summaries = list(api.read_eval_log_sample_summaries(str(path)))
    if len(summaries) >= sample_entries:
        return summaries
    samples = api.read_eval_log_samples(
        str(path), all_samples_required=False, exclude_fields=set(EXCLUDED_SAMPLE_FIELDS)
    )
    return [sample.summary() for sample in samples]


def _checked_digest(path: Path, shown: str) -> tuple[str, int]:
    """The file's digest and, for an ``.eval`` zip, how many sample entries it holds: after the
    checks that keep Inspect from reading a hostile file."""
    try:
        size = path.stat().st_size
    except OSError:
        raise InputError(f"cannot read Inspect log {shown}") from None
    if not path.is_file():
        raise InputError(f"not a regular file: {shown}")
    if size > LOG_TOTAL_LIMIT:
        raise SourceError(f"{shown}: larger than {LOG_TOTAL_LIMIT // MIB} MiB")
    sample_entries = _check_zip(path, shown) if path.suffix == ".eval" else 0
    h = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest(), sample_entries


def _check_zip(path: Path, shown: str) -> int:
    """Refuse a truncated zip and one that declares more than a log can hold; the number of
    distinct sample entries it holds."""
    try:
        with zipfile.ZipFile(path) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        raise SourceError(
            f"{shown}: not a complete .eval log (a broken or truncated zip)"
        ) from None
    total = 0
    for entry in entries:
        if entry.file_size > SAMPLE_ENTRY_LIMIT:
            raise SourceError(
                f"{shown}: an entry of {entry.file_size // MIB} MiB "
                f"(over {SAMPLE_ENTRY_LIMIT // MIB} MiB) is not read"
            )
        if entry.file_size > MIB and entry.file_size > MAX_EXPANSION * max(entry.compress_size, 1):
            raise SourceError(f"{shown}: an entry expands {MAX_EXPANSION}x or more (a zip bomb)")
        total += entry.file_size
    if total > LOG_TOTAL_LIMIT:
        raise SourceError(f"{shown}: declares over {LOG_TOTAL_LIMIT // MIB} MiB uncompressed")
    return len({entry.filename for entry in entries if SAMPLE_ENTRY.match(entry.filename)})


def _header(header: Any, shown: str, digest: str) -> Log:
    spec = header.eval
    agent, agent_version = _agent(spec)
    return Log(
        relative_path=shown,
        sha256=digest,
        status=str(header.status),
        task=str(spec.task_registry_name or spec.task),
        task_version=str(spec.task_version),
        task_args=harbor_task_args(spec.task_args),
        dataset=_text(spec.dataset.name if spec.dataset else None),
        task_id=str(spec.task_id),
        run_id=str(spec.run_id),
        eval_id=str(spec.eval_id),
        created=str(spec.created),
        model=str(spec.model),
        solver=_solver(header),
        agent=agent,
        agent_version=agent_version,
        scorers=[str(s.name) for s in (spec.scorers or [])],
        inspect_version=_text((spec.packages or {}).get("inspect_ai")),
        results=_results(header),
        total_samples=header.results.total_samples if header.results else None,
        completed_samples=header.results.completed_samples if header.results else None,
    )


def _solver(header: Any) -> str | None:
    """The solver the eval was given, else the plan's steps joined (``system_message+plain``)."""
    if header.eval.solver:
        return str(header.eval.solver)
    steps = [str(step.solver) for step in (header.plan.steps if header.plan else [])]
    return "+".join(steps) or None


def _agent(spec: Any) -> tuple[str | None, str | None]:
    """The agent and its version where the log records them (``eval.metadata``: ``agent``,
    ``agent_version``, as ``inspect-harbor`` and agent bridges write them)."""
    meta = spec.metadata or {}
    return _text(meta.get("agent")), _text(meta.get("agent_version"))


def _results(header: Any) -> dict[str, dict[str, float]]:
    """Inspect's own headline metrics per scorer, kept as the runner's figures."""
    out: dict[str, dict[str, float]] = {}
    for score in header.results.scores if header.results else []:
        metrics = {
            str(name): float(metric.value)
            for name, metric in score.metrics.items()
            if isinstance(metric.value, int | float) and not isinstance(metric.value, bool)
        }
        out[str(score.name)] = metrics
    return out


def _attempt(summary: Any) -> Attempt:
    """One epoch from Inspect's ``EvalSampleSummary`` (whose ``error`` is the error's message)."""
    scores: dict[str, float] = {}
    unconvertible: list[str] = []
    for name, score in (summary.scores or {}).items():
        value = score_to_float(score.value)
        if value is None:
            unconvertible.append(str(name))
        else:
            scores[str(name)] = value
    return Attempt(
        epoch=int(summary.epoch),
        scores=scores,
        unconvertible=unconvertible,
        error_type=_exception_name(summary.error) if summary.error is not None else None,
        usage=_usage(summary.model_usage or {}),
        timing=_timing(summary),
    )


def score_to_float(value: Any) -> float | None:
    """Inspect's ``value_to_float`` with its defaults (C 1, P 0.5, I and N 0, yes/true 1,
    no/false 0, numbers and numeric strings as themselves), except that what it cannot read
    (lists, dicts, other text), which Inspect counts as 0 with a warning, is missing here:
    no missing score is ever a zero."""
    if value == "C":
        return 1.0
    if value == "P":
        return 0.5
    if value in ("I", "N"):
        return 0.0
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        number = float(value)
        return number if number == number and abs(number) != float("inf") else None
    if isinstance(value, str):
        lowered = value.lower()
        if lowered in ("yes", "true"):
            return 1.0
        if lowered in ("no", "false"):
            return 0.0
        try:
            number = float(lowered)
        except ValueError:
            return None
        return number if number == number and abs(number) != float("inf") else None
    return None


def _exception_name(message: str | None) -> str:
    """The exception's class name only: its message may hold paths or secrets."""
    match = _EXCEPTION_NAME.match(message or "")
    name = match.group(1) if match else "error"
    return name if is_public_safe(name) else "error"


def _usage(model_usage: dict[str, Any]) -> dict[str, float]:
    """Tokens summed over the models a sample called (an agent may call several)."""
    totals: dict[str, float] = {}
    for usage in model_usage.values():
        for key, value in (
            ("input_tokens", usage.input_tokens),
            ("output_tokens", usage.output_tokens),
            ("cache_tokens", usage.input_tokens_cache_read),
            ("cost_usd", usage.total_cost),
        ):
            if isinstance(value, int | float) and not isinstance(value, bool):
                totals[key] = totals.get(key, 0) + value
    return totals


def _timing(summary: Any) -> dict[str, float]:
    timing: dict[str, float] = {}
    for key, value in (("total", summary.total_time), ("working", summary.working_time)):
        if isinstance(value, int | float) and value >= 0:
            timing[key] = float(value)
    return timing


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


#: Below this many logs a run, a worker of ``--jobs`` costs more than it reads (a 300-sample
#: ``.eval`` log takes Inspect ~25-35 ms).
MIN_LOGS_PER_RUN = 4


def read_logs(root: Path, paths: list[Path], scorer: str | None, jobs: int | None) -> list[Log]:
    """Every log in ``paths`` order, on up to ``jobs`` cores (``ledger/sources/parallel.py``);
    Inspect is imported before the workers fork, once for all of them."""
    read = partial(_read_run, root, scorer)
    prepare = _inspect_log_api
    with ForkedRuns(paths, read, jobs, min_per_run=MIN_LOGS_PER_RUN, prepare=prepare) as runs:
        return [log for _, logs in runs.results() for log in logs]


def _read_run(root: Path, scorer: str | None, paths: list[Path]) -> list[Log]:
    return [read_log(path, root, scorer) for path in paths]
