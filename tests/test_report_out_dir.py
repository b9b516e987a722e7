"""``report --out``, on SQLite and PostgreSQL, against a hostile or careless output directory:
links planted at the staging names earlier versions used, at ``--out`` itself; a user's file in
a report directory; an edited report file; a forged marker; a staging directory a killed
report left behind. Nothing outside the report is written, nothing of the user's deleted."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support_report import (
    report,
)

MARKER = ".benchledger-report.json"


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A directory outside the report that planted links point at."""
    directory = tmp_path / "elsewhere"
    directory.mkdir()
    (directory / "keep.txt").write_text("not yours")
    return directory


def _tree(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _refused(call, *words: str) -> None:
    assert call.code != 0
    lines = call.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in call.stderr, call.stderr
    assert all(word in lines[0] for word in words), lines[0]


def test_a_link_at_the_old_staging_name_is_not_followed(
    project: Path, db_url: str, elsewhere: Path
):
    planted = project / f".site.{os.getpid()}.tmp"
    planted.symlink_to(elsewhere, target_is_directory=True)
    call = report(db_url, "--out", "site")
    assert call.code == 0, call.result.output
    assert _tree(elsewhere) == {"keep.txt": b"not yours"}
    site = project / "site"
    assert site.is_dir() and not site.is_symlink() and (site / "index.html").is_file()
    assert planted.is_symlink()  # not ours: left where it was
    assert sorted(p.name for p in project.iterdir() if p.name.startswith(".")) == [planted.name]


def test_a_link_at_the_old_retired_name_is_not_followed(
    project: Path, db_url: str, elsewhere: Path
):
    assert report(db_url, "--out", "site").code == 0
    planted = project / f".site.{os.getpid()}.old"
    planted.symlink_to(elsewhere, target_is_directory=True)
    call = report(db_url, "--out", "site")
    assert call.code == 0, call.result.output
    assert _tree(elsewhere) == {"keep.txt": b"not yours"}
    assert (project / "site" / "index.html").is_file() and planted.is_symlink()


def test_out_that_is_a_link_is_refused_and_nothing_is_written(
    project: Path, db_url: str, elsewhere: Path
):
    empty = elsewhere / "empty"
    empty.mkdir()
    (project / "site").symlink_to(empty, target_is_directory=True)
    _refused(report(db_url, "--out", "site"), "symbolic link")
    assert (project / "site").is_symlink() and list(empty.iterdir()) == []
    assert _tree(elsewhere) == {"keep.txt": b"not yours"}


def test_a_users_files_in_a_report_directory_survive_the_next_report(project: Path, db_url: str):
    assert report(db_url, "--out", "site").code == 0
    site = project / "site"
    (site / "notes.txt").write_text("my notes")
    (site / "drafts").mkdir()
    (site / "drafts" / "a.md").write_text("draft")
    (site / "assets" / "extra.css").write_text("/* mine */")
    (site / "assets" / "report.css").unlink()  # one of ours, deleted by the user: rewritten
    call = report(db_url, "--out", "site")
    assert call.code == 0, call.result.output
    files = _tree(site)
    assert files["notes.txt"] == b"my notes" and files["drafts/a.md"] == b"draft"
    assert files["assets/extra.css"] == b"/* mine */" and "assets/report.css" in files
    listed = json.loads(files[MARKER])["files"]
    assert "notes.txt" not in listed and "assets/extra.css" not in listed  # still not ours
    assert not [p for p in project.iterdir() if p.name.startswith(".site.")]


def test_an_edited_report_file_is_refused_and_kept(project: Path, db_url: str):
    assert report(db_url, "--out", "site").code == 0
    site = project / "site"
    (site / "index.html").write_text("<p>my annotated copy</p>")
    before = _tree(site)
    _refused(report(db_url, "--out", "site"), "index.html", "changed")
    assert _tree(site) == before


def test_a_forged_marker_claims_nothing_it_does_not_hash(project: Path, db_url: str):
    site = project / "site"
    site.mkdir()
    (site / "notes.txt").write_text("keep me")
    (site / "index.html").write_text(
        '<meta name="generator" content="benchledger report"><p>mine</p>'
    )
    forged = {"generator": "benchledger report",
              "files": {"notes.txt": "0" * 64, "index.html": "0" * 64}}  # fmt: skip
    (site / MARKER).write_text(json.dumps(forged))
    before = _tree(site)
    _refused(report(db_url, "--out", "site"), "index.html")
    assert _tree(site) == before


def test_a_directory_without_the_marker_is_refused_even_if_it_looks_like_a_report(
    project: Path, db_url: str
):
    site = project / "site"
    site.mkdir()
    (site / "index.html").write_text('<meta name="generator" content="benchledger report">')
    (site / "notes.txt").write_text("keep me")
    before = _tree(site)
    _refused(report(db_url, "--out", "site"), "not a benchledger report")
    assert _tree(site) == before


def test_a_killed_reports_staging_directory_is_swept_but_a_users_file_in_it_kept(
    project: Path, db_url: str
):
    assert report(db_url, "--out", "site").code == 0
    with subprocess.Popen(["true"]) as gone:
        gone.wait()
    leftover = project / f".site.{gone.pid}.k3x9_q2a.tmp"
    subprocess.run(["cp", "-a", str(project / "site"), str(leftover)], check=True)
    (leftover / "carried.txt").write_text("moved here before the kill")
    call = report(db_url, "--out", "site")
    assert call.code == 0, call.result.output
    assert _tree(leftover) == {"carried.txt": b"moved here before the kill"}


def test_a_swap_that_fails_puts_the_users_files_back_and_leaves_no_staging(
    project: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
):
    """The user's entries are moved into the new report just before the swap: when the swap
    fails they go back, the earlier report stays as it was, and no staging directory is left."""
    from benchledger.projections.reports.html import report_dir

    assert report(db_url, "--out", "site").code == 0
    site = project / "site"
    (site / "notes.txt").write_text("my notes")
    before = _tree(site)

    def refuse(staging: Path, target: Path, exists: bool) -> None:
        assert (staging / "notes.txt").is_file()  # carried over before the swap
        raise OSError(28, "No space left on device", str(target))

    monkeypatch.setattr(report_dir, "_swap", refuse)
    call = report(db_url, "--out", "site")
    assert call.code == 1 and "No space left on device" in call.stderr
    assert _tree(site) == before
    assert not [p for p in project.iterdir() if p.name.startswith(".site.")]
