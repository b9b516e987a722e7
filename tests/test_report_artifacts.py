"""``benchledger report --link-artifacts`` on SQLite and PostgreSQL: a cell's attempts link to
the trajectory, agent logs and verifier output of the runner files that were ingested, only
where they are on this disk now; without the flag the report holds no local path at all."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import unquote_to_bytes, urlsplit
from urllib.request import url2pathname, urlopen

from tests.conftest import FIXTURES_DIR
from tests.support_harbor_ingest_cli import cli, make_writable
from tests.support_inspect import copy_logs
from tests.support_report import (
    LEDGER,
    build_hostile_ledger,
    report,
    report_data,
    run_facts,
)

BENCHFLOW_ROOT = FIXTURES_DIR / "runners" / "benchflow" / "01_oracle_finished"
NOT_ON_DISK = "not on this disk"


def _cells(out: Path) -> list[dict[str, Any]]:
    """Every grid cell's run facts (cells without a run left out), all benchmarks."""
    data = report_data(out)
    return [f for grid in data["grids"] for f in run_facts(out, data, grid) if f is not None]


def _groups(out: Path) -> list[tuple[dict[str, Any], list[Any]]]:
    return [(cell, group) for cell in _cells(out) for group in cell["artifact_links"]]


def _path(href: str) -> Path:
    parts = urlsplit(href)
    assert parts.scheme == "file" and parts.netloc == "", href
    return Path(url2pathname(parts.path))


def _fixture_twin(path: Path, copied_root: Path, fixture_root: Path) -> Path:
    """The fixture file a copied runner file was copied from."""
    return fixture_root / path.relative_to(copied_root)


def test_cells_link_each_attempt_to_its_trajectory_and_verifier_output(
    project: Path, db_url: str, tmp_path: Path
):
    call = report(db_url, "--out", "site", "--link-artifacts")
    assert call.code == 0, call.result.output
    assert call.payload["artifacts_linked"] is True
    counts = call.payload["artifact_links"]
    assert counts["files"] > 0 and counts["not_on_disk"] == 0 and counts["without_location"] == 0
    copied, fixtures = tmp_path / "work" / "harbor", FIXTURES_DIR / "harbor"
    labels: set[str] = set()
    for _cell, (label, note, links) in _groups(project / "site"):
        assert note is None, (label, note)
        trial = label.split(" · ", 1)[1]
        by_name = dict(links)
        directory = _path(by_name.pop("trial directory"))
        assert directory.name == trial and directory.is_dir()
        for name, href in by_name.items():
            path = _path(href)
            assert path == directory / name and path.is_file(), href
            with urlopen(href) as linked:  # the link itself opens the runner's file
                assert linked.read() == _fixture_twin(path, copied, fixtures).read_bytes()
            labels.add(name)
        trajectory = directory / "agent" / "trajectory.json"
        assert ("agent/trajectory.json" in by_name) == trajectory.is_file()
        verifier = directory / "verifier"
        for file in verifier.iterdir() if verifier.is_dir() else ():
            assert f"verifier/{file.name}" in by_name
    assert {"agent/trajectory.json", "verifier/reward.txt", "verifier/test-stdout.txt"} <= labels
    assert all(len(c["artifact_links"]) == c["attempts"] for c in _cells(project / "site"))
    page = (project / "site" / "index.html").read_text(encoding="utf-8")
    assert 'data-field="artifacts-linked"' in page and "--link-artifacts" in page


def test_the_ingest_keeps_where_it_read_only_in_the_local_run_built_event(
    project: Path, db_url: str, tmp_path: Path
):
    call = cli(
        ["events", "list", "--type", "run_built", "--payload", "--format", "json"], db=db_url
    )
    assert call.code == 0, call.result.output
    roots = {e["payload"]["provenance"]["local_root"] for e in call.payload["events"]}
    copied = (tmp_path / "work" / "harbor").resolve()
    assert roots and all(Path(root).parent.parent.parent == copied for root in roots)
    for published in [project / LEDGER, *(tmp_path / "work" / "runtime").rglob("*.json*")]:
        assert str(tmp_path) not in published.read_text(encoding="utf-8"), published


def test_a_deleted_trial_directory_gets_no_link_and_says_so(project: Path, db_url: str):
    assert report(db_url, "--out", "site", "--link-artifacts").code == 0
    (_cell, (label, _note, links)) = _groups(project / "site")[0]
    gone = _path(dict(links)["trial directory"])
    shutil.rmtree(gone)
    call = report(db_url, "--out", "site", "--link-artifacts")
    assert call.code == 0, call.result.output
    assert call.payload["artifact_links"]["not_on_disk"] == 1
    groups = {g[0]: g for _cell, g in _groups(project / "site")}
    assert groups[label][1:] == [NOT_ON_DISK, []]
    every_href = [href for g in groups.values() for _name, href in g[2]]
    assert every_href and not any(gone.as_uri() in href for href in every_href)


def test_without_the_flag_the_report_holds_no_local_path_and_no_link(
    project: Path, db_url: str, tmp_path: Path
):
    assert report(db_url, "--out", "linked", "--link-artifacts").code == 0
    linked = b"".join(p.read_bytes() for p in (project / "linked").rglob("*") if p.is_file())
    local = (str(tmp_path).encode(), tmp_path.as_uri().encode())
    assert all(text in linked for text in local)  # so the check below can fail
    call = report(db_url, "--out", "site")
    assert call.code == 0, call.result.output
    assert call.payload["artifacts_linked"] is False and "artifact_links" not in call.payload
    for path in (project / "site").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not any(text in data for text in local), path
    assert all(cell["artifact_links"] is None for cell in _cells(project / "site"))
    assert report_data(project / "site")["artifacts_linked"] is False


def test_a_run_recorded_without_an_ingest_says_so(project: Path, db_url: str, tmp_path: Path):
    build_hostile_ledger(tmp_path / "work", db_url)  # a run upserted from a compact JSON
    call = report(db_url, "--out", "site", "--link-artifacts")
    assert call.code == 0, call.result.output
    assert call.payload["artifact_links"]["without_location"] == 1
    notes = [g[1] for _cell, g in _groups(project / "site")]
    assert sum(1 for n in notes if n and n.startswith("no ingest location recorded")) == 1


def test_a_hostile_file_name_cannot_leave_the_link(project: Path, db_url: str):
    assert report(db_url, "--out", "site", "--link-artifacts").code == 0
    (_cell, (label, _note, links)) = _groups(project / "site")[0]
    directory = _path(dict(links)["trial directory"])
    name = "x\" onmouseover='alert(1)' <script>alert(2)<\\script> &amp; %41 é.txt"
    (directory / "agent").mkdir(exist_ok=True)
    (directory / "agent" / name).write_text("log", encoding="utf-8")
    assert report(db_url, "--out", "site", "--link-artifacts").code == 0
    groups = {g[0]: dict(g[2]) for _cell, g in _groups(project / "site")}
    href = groups[label][f"agent/{name}"]
    assert href.startswith("file:///") and not set("\"'<> ") & set(href)
    assert _path(href) == directory / "agent" / name


def test_a_file_name_that_is_not_utf8_is_shown_and_linked(project: Path, db_url: str):
    assert report(db_url, "--out", "site", "--link-artifacts").code == 0
    (_cell, (label, _note, links)) = _groups(project / "site")[0]
    directory = _path(dict(links)["trial directory"])
    (directory / "verifier").mkdir(exist_ok=True)
    (directory / "verifier" / os.fsdecode(b"out\xff.txt")).write_bytes(b"bytes")
    call = report(db_url, "--out", "site", "--link-artifacts")
    assert call.code == 0, call.result.output
    groups = {g[0]: dict(g[2]) for _cell, g in _groups(project / "site")}
    href = groups[label]["verifier/out\ufffd.txt"]
    assert href.endswith("/verifier/out%FF.txt")  # the bytes on disk, as a browser reads them
    path = Path(os.fsdecode(unquote_to_bytes(urlsplit(href).path)))
    assert path.read_bytes() == b"bytes"


def test_benchflow_rollouts_link_their_trajectory_and_verifier_records(
    project: Path, db_url: str, tmp_path: Path
):
    root = tmp_path / "work" / "benchflow"
    shutil.copytree(BENCHFLOW_ROOT, root)
    make_writable(root)
    call = cli(
        ["benchmark", "run", "skillsbench", "--goal-id", "sb", "--skillsbench-result-root",
         str(root), "--selection-policy", "all_attempts", "--update-run-ledger",
         "--run-ledger-path", LEDGER, "--no-global-sync", "--execute", "--format", "json"],
        db=db_url, runtime_root=tmp_path / "work" / "runtime",
    )  # fmt: skip
    assert call.code == 0, call.result.output
    call = report(db_url, "--out", "site", "--link-artifacts", "--benchmark-id", "benchflow-adhoc")
    assert call.code == 0, call.result.output
    seen = set()
    for _cell, (label, note, links) in _groups(project / "site"):
        assert note is None, (label, note)
        for name, href in links[1:]:
            path = _path(href)
            with urlopen(href) as linked:
                assert linked.read() == _fixture_twin(path, root, BENCHFLOW_ROOT).read_bytes()
            seen.add(name)
    assert {"trajectory/acp_trajectory.jsonl", "trainer/verifiers.jsonl"} <= seen


def test_an_inspect_run_links_its_log_file(project: Path, db_url: str, tmp_path: Path):
    logs = copy_logs(tmp_path / "work", "main")
    call = cli(
        ["benchmark", "run", "inspect", "--goal-id", "ev", "--log-dir", str(logs),
         "--update-run-ledger", "--run-ledger-path", LEDGER, "--no-global-sync", "--execute",
         "--format", "json"],
        db=db_url, runtime_root=tmp_path / "work" / "runtime",
    )  # fmt: skip
    assert call.code == 0, call.result.output
    benchmarks = {r["benchmark_id"] for r in call.payload["benchmark_runs"]}
    args = [a for b in sorted(benchmarks) for a in ("--benchmark-id", b)]
    call = report(db_url, "--out", "site", "--link-artifacts", *args)
    assert call.code == 0, call.result.output
    groups = [g for _cell, g in _groups(project / "site")]
    assert groups and all(g[0] == "eval log" and g[1] is None for g in groups)
    for _label, _note, [[name, href]] in groups:
        path = _path(href)
        assert path.parent.parent == logs.resolve() and path.name == name
        with urlopen(href) as linked:
            assert linked.read() == (FIXTURES_DIR / "inspect_logs" / "main" / name).read_bytes()


def test_a_past_report_links_the_files_of_the_runs_it_shows(project: Path, db_url: str):
    live = report(db_url, "--out", "site", "--link-artifacts")
    assert live.code == 0, live.result.output
    head = cli(["verify", "--format", "json"], db=db_url).payload["verify"]["head_position"]
    past = report(db_url, "--out", "past", "--link-artifacts", "--as-of", str(head))
    assert past.code == 0, past.result.output
    assert past.payload["artifact_links"] == live.payload["artifact_links"]
    assert [g for _c, g in _groups(project / "past")] == [g for _c, g in _groups(project / "site")]
