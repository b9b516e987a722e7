"""The report as a person sees it: opened from disk in headless Chromium.

Checks what a reader relies on: the page loads without a console error, asks for nothing
outside its own directory, shows the numbers ``compare --format json`` prints, filters its grid,
and opens a run's facts from a cell. The overview's screenshot is left in ``tests/artifacts/``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import url2pathname

import pytest

from tests.support_browser import ARTIFACTS, chromium  # noqa: F401 - the browser fixture
from tests.support_harbor_ingest_cli import cli
from tests.support_report import (
    BENCHMARK,
    HOSTILE_ARM,
    HOSTILE_BENCHMARK,
    HOSTILE_CASE,
    build_hostile_ledger,
    build_two_arm_ledger,
    compare_json,
    expected_numbers,
    report,
)


@pytest.fixture(scope="module")
def site(
    tmp_path_factory: pytest.TempPathFactory, fixtures_dir: Path
) -> Iterator[tuple[Path, str]]:
    """A two-arm project and its report (SQLite; the CLI tests cover PostgreSQL)."""
    root = tmp_path_factory.mktemp("report")
    project = root / "project"
    project.mkdir()
    db = f"sqlite:///{root / 'store' / 'ledger.db'}"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(project)
        build_two_arm_ledger(fixtures_dir, root / "work", db)
        call = report(db, "--out", "site")
        assert call.code == 0, call.result.output
        yield project / "site", db


@pytest.fixture
def page(chromium, site: tuple[Path, str]) -> Iterator[object]:  # noqa: F811
    """A fresh page on the report that records console errors and every request it makes."""
    out, _db = site
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.errors, page.requests = [], []
    page.on("console", lambda m: m.type == "error" and page.errors.append(m.text))
    page.on("pageerror", lambda e: page.errors.append(str(e)))

    def route(r):  # every request is recorded; only the report's own files are served
        page.requests.append(r.request.url)
        if _inside(r.request.url, out):
            r.continue_()
        else:
            r.abort()

    context.route("**/*", route)
    page.goto((out / "index.html").as_uri())
    page.wait_for_selector("#grid-table tbody tr")
    yield page
    context.close()


def _inside(url: str, out: Path) -> bool:
    return url.startswith(out.as_uri() + "/")


def test_opens_without_console_errors_or_requests_outside_the_report(page, site):
    out, _db = site
    page.locator("#cost").scroll_into_view_if_needed()
    page.locator("#audit").scroll_into_view_if_needed()
    assert page.errors == []
    assert page.requests, "the route saw no request at all"
    assert [u for u in page.requests if not _inside(u, out)] == []
    images = page.locator("img")
    assert images.count() >= 3
    for i in range(images.count()):  # every chart loaded from the report directory
        assert images.nth(i).evaluate("img => img.complete && img.naturalWidth > 0")


def test_overview_numbers_equal_compare_json_and_a_screenshot_is_kept(page, site):
    _out, db = site
    expected = expected_numbers(BENCHMARK, compare_json(db))
    shown = {}
    for key in expected:
        benchmark, table, arm, field = key
        cell = page.locator(
            f'#overview article[data-benchmark="{benchmark}"] table.{table} '
            f'tr[data-arm="{arm}"] [data-field="{field}"]'
        )
        assert cell.count() == 1, key
        value = expected[key]
        shown[key] = cell.get_attribute("data-value")
        text = cell.inner_text()
        if isinstance(value, float):  # the rounded figure a reader sees matches the JSON too
            digits = {"cost_usd_per_case": 4, "tokens_per_case": 0}.get(field, 3)
            small = field.startswith("p_") and value < 10**-digits
            assert text == (f"< {10**-digits:.{digits}f}" if small else f"{value:.{digits}f}"), key
    assert {k: json.loads(v) for k, v in shown.items()} == expected
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#overview").screenshot(path=str(ARTIFACTS / "report-overview.png"))
    page.screenshot(path=str(ARTIFACTS / "report-full.png"), full_page=True)
    assert (ARTIFACTS / "report-overview.png").stat().st_size > 10_000


def test_grid_filters_by_bucket_arm_and_name(page):
    rows = page.locator("#grid-table tbody tr")
    total = rows.count()
    assert total > 5
    page.select_option("#grid-bucket", label="pass")
    assert 0 < rows.count() < total
    for i in range(rows.count()):
        assert rows.nth(i).locator('td[data-bucket="pass"]').count() >= 1
    page.select_option("#grid-arm", label="terminus-2__anthropic-claude-sonnet-4-5")
    for i in range(rows.count()):
        cell = rows.nth(i).locator('td[data-arm="terminus-2__anthropic-claude-sonnet-4-5"]')
        assert cell.get_attribute("data-bucket") == "pass"
    page.select_option("#grid-bucket", label="any bucket")
    page.fill("#grid-search", "fix")
    names = [rows.nth(i).get_attribute("data-case") for i in range(rows.count())]
    assert names and all("fix" in name for name in names)
    assert page.locator("#grid-count").inner_text().startswith(f"{len(names)} of ")


def test_a_cell_opens_its_run(page, site):
    _out, db = site
    runs = cli(
        ["sql", "SELECT case_id, arm_id, run_id, official_score FROM ledger_runs_v "
         "WHERE archived = 0",
         "--format", "json"],
        db=db,
    ).payload["rows"]  # fmt: skip
    cell = page.locator('#grid-table td[data-bucket="pass"]').first
    case = cell.locator("xpath=..").get_attribute("data-case")
    arm = cell.get_attribute("data-arm")
    cell.locator("button").click()
    dialog = page.locator("#run-dialog")
    assert dialog.is_visible()
    assert dialog.locator("h3").inner_text() == f"{case} × {arm}"
    run_id = dialog.locator('[data-fact="run_id"]').inner_text()
    # a split arm's cells are labelled with the setting after the arm ("codex 0.46.0")
    (score,) = [
        r[3]
        for r in runs
        if (r[0], r[2]) == (case, run_id) and (r[1] == arm or arm.startswith(f"{r[1]} "))
    ]
    assert float(dialog.locator('[data-fact="official score"]').inner_text()) == float(score) == 1
    assert dialog.locator('[data-fact="attempts"]').inner_text().endswith("scored)")
    page.keyboard.press("Escape")
    assert not dialog.is_visible()


def test_decisions_and_backlog_tables_page_and_filter(page):
    page.wait_for_selector("body[data-lists=ready]", state="attached")
    count = page.locator("#decisions-count").inner_text()
    shown, total = (int(x) for x in count.split(" of "))
    assert shown == total > 0
    rows = page.locator("#decisions-table tbody tr")
    case = rows.nth(total - 1).locator("td").nth(1).inner_text()
    page.fill("#decisions-search", case)
    assert rows.count() >= 1
    assert all(case in rows.nth(i).inner_text() for i in range(rows.count()))
    page.fill("#decisions-search", "regex-log")  # its only active run was archived
    assert rows.count() == 0
    assert page.locator("#decisions-count").inner_text() == f"0 of {total}"


@pytest.mark.skipif(not os.environ.get("CI"), reason="the CI run checks the browser exists")
def test_ci_has_the_browser(chromium):  # noqa: F811
    assert chromium.version


def test_markup_in_the_ledger_is_shown_as_text_and_never_runs(chromium, tmp_path, monkeypatch):  # noqa: F811
    db = f"sqlite:///{tmp_path / 'store' / 'ledger.db'}"
    monkeypatch.chdir(tmp_path)
    build_hostile_ledger(tmp_path, db)
    assert report(db, "--out", "site").code == 0
    out = tmp_path / "site"
    context = chromium.new_context()
    page = context.new_page()
    errors, dialogs, requests = [], [], []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    context.route("**/*", lambda r: (requests.append(r.request.url), r.continue_()))
    page.goto((out / "index.html").as_uri())
    page.wait_for_selector("#grid-table tbody tr")
    page.locator("#grid-table td button").first.click()
    assert dialogs == [] and errors == []
    assert [u for u in requests if not _inside(u, out)] == []
    assert page.locator("#grid-table img, #grid-table script, #overview b").count() == 0
    assert page.locator("#grid-table tbody th").first.inner_text() == HOSTILE_CASE
    assert page.locator("#run-dialog h3").inner_text() == f"{HOSTILE_CASE} × {HOSTILE_ARM}"
    assert page.locator("#overview h3").first.inner_text() == HOSTILE_BENCHMARK
    context.close()


def test_the_grid_shows_the_case_values_the_overview_means_are_means_of(page, site):
    """Issue 32: the grid showed best-of buckets (all green) beside an overview mean of 0.8.
    By default a cell holds compare's case value (the overview's policy, named on the grid);
    each arm's cells average to the overview's mean. The best-of view is one switch away."""
    _out, db = site
    document = compare_json(db)
    page.select_option("#grid-benchmark", label=BENCHMARK)
    rows = page.locator("#grid-table tbody tr")
    count = page.locator("#grid-count").inner_text()
    assert count.startswith(f"{rows.count()} of {rows.count()} cases")  # one page: every case
    assert "case value: mean of the case's attempts (as the overview)" in count
    assert page.locator("#grid-policy").inner_text() == document["per_case_policy"]
    for arm in document["arms"]:
        cells = page.locator(f'#grid-table td[data-arm="{arm["arm_id"]}"]')
        values = [cells.nth(i).get_attribute("data-value") for i in range(cells.count())]
        values = [v for v in values if v]
        assert len(values) == arm["n_cases"], (arm["arm_id"], cells.count())
        assert sum(map(float, values)) / len(values) == pytest.approx(arm["mean"], abs=1e-12)
    page.select_option("#grid-view", "best")
    assert "best-of run (as run-ledger-aggregate)" in page.locator("#grid-count").inner_text()


def test_with_link_artifacts_a_cell_links_its_trajectory(chromium, site, monkeypatch):  # noqa: F811
    """``--link-artifacts``: the cell's details hold a working link to the trial's
    trajectory; clicking it opens the runner's file (the only request outside the report)."""
    out, db = site
    monkeypatch.chdir(out.parent)
    assert report(db, "--out", "linked", "--link-artifacts").code == 0
    linked = out.parent / "linked"
    context = chromium.new_context()
    page = context.new_page()
    errors, requests = [], []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    context.route("**/*", lambda r: (requests.append(r.request.url), r.continue_()))
    page.goto((linked / "index.html").as_uri())
    page.wait_for_selector("#grid-table tbody tr")
    page.locator('#grid-table td[data-bucket="pass"] button').first.click()
    links = page.locator('#run-dialog [data-fact="artifacts"]')
    link = links.locator('a[data-artifact="agent/trajectory.json"]')
    link.first.wait_for()
    href = link.first.get_attribute("href")
    assert href.startswith("file:///") and link.first.is_visible() and link.first.is_enabled()
    with context.expect_page() as opened:
        link.first.click()
    trajectory = opened.value
    trajectory.wait_for_load_state()
    shown = trajectory.locator("body").inner_text()
    assert json.loads(shown) == json.loads(Path(url2pathname(urlsplit(href).path)).read_text())
    assert errors == [] and [u for u in requests if not _inside(u, linked)] == [href]
    context.close()
