#!/usr/bin/env python3
"""Can loopx 0.4.8 read the ledger JSON benchledger writes? (format compatibility check)

Writes a ledger with benchledger in a scratch project: the real loopx ledger fixture imported
(``import loopx-ledger``), then a Harbor job ingested with ``benchmark run --update-run-ledger``
(new rows decided by benchledger's rules). Then loopx's own ``run-ledger-aggregate`` runs on
that JSON for every benchmark in it and must exit 0 with ``ok: true``; benchledger's aggregate
of the same ledger is printed beside it (the two need not agree: benchledger excludes
archived-only cases and fixes documented loopx gotchas).

loopx lives in ``bench/.venv-loopx`` (created with ``pip install loopx==0.4.8`` when missing).

Usage: python bench/loopx_reads_our_json.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _fixtures import HARBOR, HARBOR_MANIFEST, LOOPX_LEDGER  # noqa: E402
from _loopx import benchledger_exe, ensure_loopx  # noqa: E402

PILOT_GROUP = "tb2-pilot-20260502"
PILOT_JOB = "2026-05-02__09-14-07"
LEDGER = "benchmark-run-ledger.json"


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True)


def write_our_ledger(project: Path, bl: str) -> list[str]:
    """Import the fixture, ingest one Harbor job into the same ledger; returns benchmark ids."""
    (project / ".benchledger").mkdir(parents=True)
    shutil.copyfile(LOOPX_LEDGER, project / LEDGER)
    imported = run([bl, "import", "loopx-ledger", LEDGER, "--execute"], project)
    assert imported.returncode == 0, imported.stderr
    group = project / "harbor" / PILOT_GROUP
    shutil.copytree(HARBOR / PILOT_GROUP, group)
    manifest = json.loads(HARBOR_MANIFEST.read_text())
    for rel in manifest["empty_dirs"]:
        if rel.startswith(PILOT_GROUP + "/"):
            (project / "harbor" / rel).mkdir(parents=True, exist_ok=True)
    ingest = run(
        [bl, "--runtime-root", "rt", "--format", "json", "benchmark", "run", "terminal-bench",
         "--goal-id", "compat", "--harbor-job-dir", str(group / "jobs" / PILOT_JOB),
         "--update-run-ledger", "--no-global-sync", "--execute"],
        project,
    )  # fmt: skip
    assert ingest.returncode == 0, ingest.stderr
    document = json.loads((project / LEDGER).read_text())
    rows = sum(len(c["runs"]) for b in document["benchmarks"].values() for c in b["cases"].values())
    print(f"benchledger ledger: {rows} rows (303 imported + Harbor ingest), "
          f"{len(document['benchmarks'])} benchmarks")  # fmt: skip
    return sorted(document["benchmarks"])


def aggregate_both(project: Path, bl: str, loopx, benchmark_id: str) -> bool:
    theirs = run(loopx.argv("--format", "json", "benchmark", "run-ledger-aggregate",
                            "--run-ledger-path", LEDGER, "--benchmark-id", benchmark_id),
                 project)  # fmt: skip
    ours = run([bl, "--format", "json", "benchmark", "run-ledger-aggregate", "--benchmark-id",
                benchmark_id], project)  # fmt: skip
    ok = theirs.returncode == 0 and json.loads(theirs.stdout or "{}").get("ok") is True
    lx = _summary(theirs.stdout) if ok else theirs.stderr.strip()[-300:]
    print(f"  {benchmark_id:42s} loopx exit {theirs.returncode} {lx} | "
          f"benchledger {_summary(ours.stdout)}")  # fmt: skip
    return ok


def _summary(stdout: str) -> str:
    try:
        agg = json.loads(stdout)["aggregate"]
    except (ValueError, KeyError, TypeError):
        return "unreadable output"
    return f"covered {agg.get('canonical_covered')}/{agg.get('canonical_total')}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, default=None, help="scratch project to keep")
    args = parser.parse_args()
    bl = benchledger_exe()
    loopx = ensure_loopx()
    project = args.keep or Path(tempfile.mkdtemp(prefix="loopx-reads-")) / "project"
    try:
        benchmarks = write_our_ledger(project, bl)
        print("loopx benchmark run-ledger-aggregate on benchledger's JSON:")
        results = [aggregate_both(project, bl, loopx, b) for b in benchmarks]
    finally:
        if args.keep is None:
            shutil.rmtree(project.parent, ignore_errors=True)
    assert all(results), "loopx could not aggregate benchledger's ledger JSON"
    print(f"OK: loopx 0.4.8 read benchledger's ledger for all {len(results)} benchmarks")


if __name__ == "__main__":
    main()
