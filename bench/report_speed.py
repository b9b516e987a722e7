#!/usr/bin/env python3
"""How heavy the HTML report is and how fast it opens in Chromium (targets: < 5 MB, < 2 s).

Two ledgers, each in a fresh project store (setup not timed):

* the shipped example: ``examples/harbor/2026-05-02__09-14-07`` ingested as ``scripts/demo``
  does (5 cases, one arm);
* a generated ledger of ``--rows`` rows (default 30,000) over ``--arms`` arms (default 5), built
  by ``bench/compare_speed.py``'s generator (one ``run-ledger-upsert`` batch per arm, runs with
  attempts, task digests and usage, so compare has everything an ingest gives it).

For each: ``benchledger report --out DIR`` is run and timed once (printed for information), the
directory's size is summed, and the page is opened from disk in headless Chromium (Debian's
``/usr/bin/chromium`` through Playwright) ``--opens`` times in a fresh browser context: the time
from navigation until the load event has fired and the grid's first rows are drawn, median.

Usage: python bench/report_speed.py [--rows 30000] [--arms 5] [--opens 5] [--work DIR]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _loopx import benchledger_exe, measure  # noqa: E402
from compare_speed import build_store  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "harbor" / "2026-05-02__09-14-07"
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
SIZE_TARGET_MB = 5.0
OPEN_TARGET_S = 2.0


def example_project(project: Path, bl: str) -> list[str]:
    """The demo's ingest; returns the report arguments that address its ledger."""
    argv = [bl, "--runtime-root", "runtime", "benchmark", "run", "terminal-bench",
            "--goal-id", "demo", "--harbor-job-dir", str(EXAMPLE),
            "--run-ledger-path", "benchmark-run-ledger.json", "--update-run-ledger",
            "--no-global-sync", "--execute"]  # fmt: skip
    done = subprocess.run(argv, cwd=project, capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"example ingest failed: {done.stderr.decode()[-800:]}")
    return ["--run-ledger-path", "benchmark-run-ledger.json"]


def directory_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def open_seconds(index: Path, opens: int) -> list[float]:
    """Navigation to load event plus the grid's first rows, per fresh context."""
    from playwright.sync_api import sync_playwright

    samples = []
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            for _ in range(opens):
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                page = context.new_page()
                start = time.perf_counter()
                page.goto(index.as_uri(), wait_until="load")
                page.wait_for_selector("#grid-table tbody tr")
                samples.append(time.perf_counter() - start)
                context.close()
        finally:
            browser.close()
    return samples


def measure_report(name: str, project: Path, report_args: list[str], bl: str, opens: int) -> dict:
    out = project / "report"
    made = measure([bl, "report", *report_args, "--out", str(out)], cwd=project)
    if made.returncode != 0:
        raise SystemExit(f"report failed: {made.stderr.decode()[-800:]}")
    samples = open_seconds(out / "index.html", opens)
    return {
        "name": name,
        "render_s": made.seconds,
        "mb": directory_mb(out),
        "open_s": statistics.median(samples),
        "open_max_s": max(samples),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=30000)
    parser.add_argument("--arms", type=int, default=5)
    parser.add_argument("--opens", type=int, default=5)
    parser.add_argument("--work", type=Path, default=None, help="keep the projects here")
    args = parser.parse_args()
    bl = benchledger_exe()
    work = args.work or Path(tempfile.mkdtemp(prefix="report-speed-"))
    results = []
    for name, setup in (
        ("shipped example", lambda p: example_project(p, bl)),
        (f"{args.rows} rows, {args.arms} arms", lambda p: build_store(p, args.rows, args.arms, bl)),
    ):
        project = work / name.replace(" ", "-").replace(",", "")
        shutil.rmtree(project, ignore_errors=True)
        (project / ".benchledger").mkdir(parents=True)
        report_args = setup(project) or []
        results.append(measure_report(name, project, report_args, bl, args.opens))
    print(f"{'ledger':<24}{'render s':>10}{'size MB':>10}{'open s':>9}{'open max s':>12}")
    for r in results:
        print(f"{r['name']:<24}{r['render_s']:>10.2f}{r['mb']:>10.2f}"
              f"{r['open_s']:>9.3f}{r['open_max_s']:>12.3f}")  # fmt: skip
    size_ok = all(r["mb"] < SIZE_TARGET_MB for r in results)
    open_ok = all(r["open_s"] < OPEN_TARGET_S for r in results)
    print(f"targets: size < {SIZE_TARGET_MB:g} MB {'met' if size_ok else 'NOT met'}; "
          f"open < {OPEN_TARGET_S:g} s {'met' if open_ok else 'NOT met'}")  # fmt: skip
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
