"""The likely fix when ``--harbor-job-dir`` names the wrong level of a Harbor tree.

Harbor writes ``jobs/<job>/<trial>/``: a job directory holds ``config.json``, ``result.json``
and one directory per trial, and each trial holds its own ``config.json`` and ``result.json``
beside ``agent/`` and ``verifier/``. Pointed at a trial, or at ``jobs/``, the reader finds no
trials and said only "nothing to ingest" (issue 34); this names the directory to use instead.
"""

from __future__ import annotations

from pathlib import Path

LISTED = 5  # job directories a hint names before "…"


def _is_job_dir(path: Path) -> bool:
    return (path / "config.json").is_file() and any(
        (child / "result.json").is_file() or (child / "agent").is_dir() for child in _subdirs(path)
    )


def _is_trial_dir(path: Path) -> bool:
    return (path / "result.json").is_file() and (
        (path / "agent").is_dir() or (path / "verifier").is_dir()
    )


def _subdirs(path: Path) -> list[Path]:
    try:
        return sorted(p for p in path.iterdir() if p.is_dir())
    except OSError:
        return []


def job_dir_hint(given: str, path: Path) -> str | None:
    """The sentence to add to the error, or None when the layout does not suggest a fix.
    A relative path is echoed as the flag to pass; an absolute one only by directory names."""
    relative = not Path(given).is_absolute()
    base = given.rstrip("/") or "."
    try:
        if _is_trial_dir(path) and _is_job_dir(path.parent):
            above = ".." if Path(base).name in ("", ".", "..") else str(Path(base).parent)
            fix = f"--harbor-job-dir {above}" if relative else path.parent.name
            return f"it looks like a trial directory; pass the job directory above it ({fix})"
        jobs = [d for d in _subdirs(path) if _is_job_dir(d)]
    except OSError:
        return None
    if not jobs:
        return None
    names = ", ".join(d.name for d in jobs[:LISTED]) + (", …" if len(jobs) > LISTED else "")
    example = f"; e.g. --harbor-job-dir {base}/{jobs[-1].name}" if relative else ""
    count = f"{len(jobs)} Harbor job director{'y' if len(jobs) == 1 else 'ies'}"
    return f"it holds {count} ({names}); pass one of them{example}"
