"""``benchledger report`` through the CLI, on SQLite and PostgreSQL: the files it writes, the
export it records, the numbers it shows, and how it refuses bad requests."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.support_harbor_ingest_cli import cli
from tests.support_report import (
    ARCHIVED_ARM,
    ARCHIVED_CASE,
    BENCHMARK,
    HOSTILE_ARM,
    HOSTILE_BENCHMARK,
    HOSTILE_CASE,
    build_hostile_ledger,
    compare_json,
    expected_numbers,
    overview_numbers,
    report,
    report_data,
    report_lists,
    run_facts,
)


def _files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _export_events(db: str) -> list[dict]:
    call = cli(
        ["events", "list", "--type", "export_written", "--payload", "--format", "json"], db=db
    )
    assert call.code == 0, call.result.output
    return call.payload["events"]


def test_report_writes_a_static_site_and_records_it(project: Path, db_url: str, tmp_path: Path):
    call = report(db_url, "--out", "site")
    assert call.code == 0, call.result.output
    out = project / "site"
    assert call.payload["report"].endswith("index.html")
    files = _files(out)
    assert {"index.html", "assets/report.css", "assets/report.js"} <= set(files)
    assert {"assets/b0-forest.svg", "assets/b0-cost.svg", "assets/b0-timeline.svg"} <= set(files)
    for name, data in files.items():  # no machine path of this test run reaches the page
        assert str(tmp_path).encode() not in data, name
        assert b"/tmp/" not in data and b"/home/" not in data, name
    marker = json.loads(files.pop(".benchledger-report.json"))  # lists every file it wrote
    digests = {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}
    assert marker == {"generator": "benchledger report", "files": digests}
    (exported,) = _export_events(db_url)[-1]["payload"]["files"]
    assert exported["kind"] == "report_html"
    assert (exported["path"], exported["sha256"]) == (
        str(out / "index.html"),
        digests.pop("index.html"),
    )
    assert report_data(out)["asset_sha256"] == digests  # the index pins every asset
    verified = cli(["verify", "--files", "--format", "json"], db=db_url)
    assert verified.code == 0 and verified.payload["ok"] is True
    assert not list(project.glob(".site.*")), "the staging directory was left behind"


def test_rendering_again_without_new_events_is_byte_identical_and_records_nothing(
    project: Path, db_url: str
):
    assert report(db_url, "--out", "site").code == 0
    first, events = _files(project / "site"), len(_export_events(db_url))
    assert report(db_url, "--out", "site").code == 0
    assert _files(project / "site") == first
    assert len(_export_events(db_url)) == events


def test_overview_numbers_equal_compare_json(project: Path, db_url: str):
    assert report(db_url, "--out", "site").code == 0
    shown = overview_numbers((project / "site" / "index.html").read_text(encoding="utf-8"))
    expected = expected_numbers(BENCHMARK, compare_json(db_url))
    assert len(expected) > 15
    assert {k: shown.get(k, "absent") for k in expected} == expected


def test_grid_has_one_cell_per_case_and_arm_and_points_at_the_selected_run(
    project: Path, db_url: str
):
    assert report(db_url, "--out", "site").code == 0
    data = report_data(project / "site")
    strings, (grid,) = data["strings"], data["grids"]
    cases = [strings[i] for i in grid["cases"]]
    arms = [strings[i] for i in grid["arms"]]
    assert len(grid["bucket"]) == len(grid["score"]) == len(cases) * len(arms)
    rows = cli(
        ["sql", "SELECT run_id, case_id, arm_id, archived, official_score FROM ledger_runs_v",
         "--format", "json"],
        db=db_url,
    ).payload["rows"]  # fmt: skip
    by_run = {r[0]: r for r in rows}
    buckets = [b["key"] for b in data["buckets"]]
    for cell, run in enumerate(run_facts(project / "site", data, grid)):
        case, arm = cases[cell // len(arms)], arms[cell % len(arms)]
        if run is None:
            assert buckets[grid["bucket"][cell]] == "missing"
            continue
        run_id, score = run["run_id"], run["score"]
        # a split arm's column is labelled with the setting after the arm ("codex 0.46.0")
        assert by_run[run_id][1] == case
        assert by_run[run_id][2] == arm or arm.startswith(f"{by_run[run_id][2]} ")
        assert not by_run[run_id][3], "an archived run was selected"
        stored = by_run[run_id][4]  # the view's column is text on PostgreSQL
        assert score == grid["score"][cell] == (None if stored is None else float(stored))
    archived_cell = cases.index(ARCHIVED_CASE) * len(arms) + arms.index(ARCHIVED_ARM)
    assert buckets[grid["bucket"][archived_cell]] == "missing"


def test_decisions_and_backlog_list_what_the_markdown_lists(project: Path, db_url: str):
    assert report(db_url, "--out", "site").code == 0
    markdown = (project / "ledger.md").read_text(encoding="utf-8")
    section = markdown.split("## Case Decisions", 1)[1].split("\n## ", 1)[0]
    md_cases = [line.split("|")[2].strip(" `") for line in section.splitlines()[4:] if line]
    lists = report_lists(project / "site")
    shown = [line[1] for line in lists["decisions"]]
    assert shown == md_cases and shown
    backlog = (
        markdown.split("## Repair Backlog", 1)[1].split("\n## ", 1)[0]
        if ("## Repair Backlog" in markdown)
        else ""
    )
    md_backlog = [line.split("|")[3].strip(" `") for line in backlog.splitlines()[4:] if line]
    assert [line[2] for line in lists["backlog"]] == md_backlog


def test_benchmark_filter_and_unknown_benchmark(project: Path, db_url: str):
    assert report(db_url, "--out", "one", "--benchmark-id", BENCHMARK).code == 0
    call = report(db_url, "--out", "none", "--benchmark-id", "swe-bench@9")
    assert call.code == 1
    assert call.stderr.strip().splitlines() == [
        f"error: no benchmark swe-bench@9 in ledger ledger.json (it has: {BENCHMARK})"
    ]
    assert not (project / "none").exists()


def test_out_dir_holding_other_files_is_refused_and_left_alone(project: Path, db_url: str):
    (project / "mine").mkdir()
    (project / "mine" / "notes.txt").write_text("keep me")
    call = report(db_url, "--out", "mine")
    assert call.code == 1
    assert "not a benchledger report" in call.stderr and "Traceback" not in call.stderr
    assert [p.name for p in (project / "mine").iterdir()] == ["notes.txt"]


def test_a_ledger_the_store_does_not_hold_is_refused(project: Path, db_url: str):
    call = cli(["report", "--run-ledger-path", "other.json"], db=db_url)
    assert call.code == 1
    assert call.stderr.strip() == "error: no ledger other.json in the store"


def test_markup_in_ledger_text_is_escaped_and_unsafe_text_is_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, db_url: str
):
    from benchledger.projections.reports.html.site import _environment

    monkeypatch.chdir(tmp_path)
    build_hostile_ledger(tmp_path, db_url)
    assert report(db_url, "--out", "site").code == 0
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    for raw in (HOSTILE_BENCHMARK, HOSTILE_CASE, HOSTILE_ARM):
        assert raw not in html
    assert "tb&lt;b&gt;x&lt;/b&gt;@2.0" in html
    page = _environment().from_string("{{ a }}|{{ b }}").render(a="/home/alice/key.pem", b="<i>")
    assert page == "[dropped: not public-safe]|&lt;i&gt;"


def test_a_benchmark_whose_runs_are_all_archived_still_reports(project: Path, db_url: str):
    archived = cli(
        ["benchmark", "run-ledger-archive", "--run-ledger-path", "ledger.json",
         "--benchmark-id", BENCHMARK, "--archive-all-matching-benchmark",
         "--reason", "protocol changed", "--execute", "--format", "json"],
        db=db_url,
    )  # fmt: skip
    assert archived.code == 0, archived.result.output
    call = report(db_url, "--out", "site")
    assert call.code == 0, call.result.output
    (grid,) = report_data(project / "site")["grids"]
    assert grid["arms"] == [] and grid["bucket"] == []
    html = (project / "site" / "index.html").read_text(encoding="utf-8")
    assert "compare refused:" in html  # no countable arm left to compare
    assert report_lists(project / "site")["decisions"] == []


def test_without_the_report_extra_one_line_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import sys

    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    call = cli(["report"], db=f"sqlite:///{tmp_path / 'store' / 'ledger.db'}")
    assert call.code == 1
    assert call.stderr.strip().splitlines() == [
        "error: benchledger report needs the report extra: pip install 'benchledger[report]'"
    ]
    assert not (tmp_path / "store").exists() and not (tmp_path / "benchledger-report").exists()


def test_timeline_marks_the_archive_event_at_its_position(project: Path, db_url: str):
    assert report(db_url, "--out", "site").code == 0
    html = (project / "site" / "index.html").read_text(encoding="utf-8")
    call = cli(["events", "list", "--type", "ledger_runs_archived", "--format", "json"], db=db_url)
    (event,) = call.payload["events"]
    row = f'<td>archived</td><td class="n">1</td><td class="n">{event["position"]}</td>'
    assert row in html


def test_the_badge_reflects_verify_files_as_well_as_the_chain(project: Path, db_url: str):
    """Issue 32: the badge said "chain verified" while ``verify --files`` failed."""
    assert report(db_url, "--out", "site").code == 0
    page = (project / "site" / "index.html").read_text("utf-8")
    assert 'class="badge ok" href="#audit">chain and files verified<' in page
    published = [p for p in project.rglob("*.json") if "site" not in p.parts and p.stat().st_size]
    assert published, "the ledger renders published files"
    published[0].write_text(published[0].read_text("utf-8") + " ", encoding="utf-8")
    assert cli(["--format", "json", "verify", "--files"], db=db_url).payload["ok"] is False
    assert report(db_url, "--out", "site").code == 0
    page = (project / "site" / "index.html").read_text("utf-8")
    assert 'class="badge bad" href="#audit">chain verified, files DIFFER<' in page
    assert "published files differ (1 changed): see `benchledger verify --files`" in page
    assert str(project) not in page  # counts and statuses only, never a local path


def test_case_decisions_name_every_arm_that_ran_a_case(project: Path, db_url: str):
    """Issue 32: cases two arms ran were listed as ``single_arm_recorded``. Each line now
    carries every arm's case value as compare counts it (the overview's values), and a case
    several arms ran without baseline/treatment roles is named for them and the best."""
    assert report(db_url, "--out", "site").code == 0
    document = compare_json(db_url)
    lines = report_lists(project / "site")["decisions"]
    several = [line for line in lines if line[3] and " · " in line[3]]
    assert several, "the two-arm ledger has cases both arms ran"
    for _bench, case, decision, arms, *_rest in several:
        assert decision != "single_arm_recorded", case
        shown = dict(item.rsplit(" ", 1) for item in arms.split(" · "))
        assert set(shown) <= {a["arm_id"] for a in document["arms"]}
        if decision.startswith(f"{len(shown)}_arms_recorded: best "):
            top = max(map(float, shown.values()))
            assert decision.endswith(f"({top:.2f})")


def test_the_overview_opens_with_compare_s_verdict_and_names_each_method(
    project: Path, db_url: str
):
    """Issue 32: nowhere did one line say what the user came to learn."""
    import html

    assert report(db_url, "--out", "site").code == 0
    page = html.unescape((project / "site" / "index.html").read_text("utf-8"))
    document = compare_json(db_url)
    article = page.split(f'data-benchmark="{BENCHMARK}">', 1)[1].split("</article>", 1)[0]
    verdict = '<p class="verdict" data-field="verdict"><strong>Verdict:</strong> '
    verdict += f"{document['verdict']}</p>"
    assert verdict in article
    assert article.index(verdict) < article.index('<table class="arms">')
    for block in document["arms"] + document["paired"]:
        method = block["interval_method"] or "–"  # an arm without a countable case has none
        assert f'<td data-field="interval_method">{method}</td>' in article


def test_the_timeline_shows_when_runs_ran_first_and_ingest_time_second(project: Path, db_url: str):
    assert report(db_url, "--out", "site").code == 0
    page = (project / "site" / "index.html").read_text("utf-8")
    section = page.split('<section id="timeline">', 1)[1].split("</section>", 1)[0]
    ran, recorded = 'src="assets/b0-timeline_ran.svg"', 'src="assets/b0-timeline.svg"'
    assert ran in section and recorded in section
    assert section.index(ran) < section.index(recorded)
    assert (project / "site" / "assets" / "b0-timeline_ran.svg").stat().st_size > 1000
