"""Helpers for the report tests: a small two-arm ledger built through the CLI, and readers
for what the report wrote (its files, its data script, the numbers in its overview)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from tests.support_harbor_ingest_cli import cli, copy_job, ingest, load_manifest

BENCHMARK = "terminal-bench@2.0"
LEDGER = "ledger.json"
# Two arms on overlapping tasks (one job, two agents), a second job of the second arm with
# fractional rewards, and a multi-attempt job of the first arm: pairs, costs, partial scores.
JOBS = (
    "tb2-arm-compare-20260505/jobs/2026-05-05__14-10-10",
    "tb2-pilot-20260502/jobs/tb2-partial-credit-sonnet",
    "tb2-pilot-20260502/jobs/2026-05-03__08-00-41",
)
ARCHIVED_CASE = "regex-log"
ARCHIVED_ARM = "terminus-2__anthropic-claude-sonnet-4-5"
TEXT_FIELDS = {"run_id", "recorded_at", "status", "failure_class", "repair_priority",
               "repair_class", "next_action", "job_name"}  # fmt: skip


def build_two_arm_ledger(fixtures_dir: Path, work: Path, db: str) -> None:
    """Ingest ``JOBS`` into ``ledger.json`` of the project in the cwd, then archive one run."""
    manifest = load_manifest(fixtures_dir)
    by_dir = {job["job_dir"]: job for job in manifest["jobs"]}
    for job_dir in JOBS:
        copied = copy_job(fixtures_dir, manifest, by_dir[job_dir], work)
        call = ingest(
            copied, db=db, runtime_root=work / "runtime",
            extra=("--run-ledger-path", LEDGER, "--no-global-sync"),
        )  # fmt: skip
        assert call.code == 0, call.result.output
    archived = cli(
        ["benchmark", "run-ledger-archive", "--run-ledger-path", LEDGER,
         "--benchmark-id", BENCHMARK, "--case-id", ARCHIVED_CASE, "--arm-id", ARCHIVED_ARM,
         "--reason", "rerun planned", "--execute", "--format", "json"],
        db=db,
    )  # fmt: skip
    assert archived.code == 0, archived.result.output


@pytest.fixture
def project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixtures_dir: Path, db_url: str
) -> Path:
    """A working directory beside a store holding the two-arm ledger the report tests read."""
    cwd = tmp_path / "project"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    build_two_arm_ledger(fixtures_dir, tmp_path / "work", db_url)
    return cwd


def report(db: str, *args: str) -> Any:
    return cli(["report", "--run-ledger-path", LEDGER, "--format", "json", *args], db=db)


def compare_json(db: str, benchmark_id: str = BENCHMARK) -> dict[str, Any]:
    call = cli(
        ["compare", "--benchmark-id", benchmark_id, "--run-ledger-path", LEDGER,
         "--format", "json"],
        db=db,
    )  # fmt: skip
    assert call.code == 0, call.result.output
    return call.payload["compare"]


def report_data(out: Path) -> dict[str, Any]:
    """The page's data block, parsed back into the object the page reads."""
    html = (out / "index.html").read_text(encoding="utf-8")
    start = html.index('<script id="report-data" type="application/json">')
    block = html[html.index(">", start) + 1 : html.index("</script>", start)]
    assert "<" not in block, "the data block must not contain a raw '<'"
    return json.loads(block)


def report_lists(out: Path) -> dict[str, list[list[str | None]]]:
    """The case decisions and repair backlog the page loads, with their text resolved."""
    text = (out / "assets" / "lists.js").read_text(encoding="utf-8")
    prefix, suffix = "window.BENCHLEDGER_LISTS(", ");\n"
    assert text.startswith(prefix) and text.endswith(suffix)
    lists = json.loads(text[len(prefix) : -len(suffix)])
    strings = lists["strings"]
    return {
        name: [[None if i is None else strings[i] for i in line] for line in lists[name]]
        for name in ("decisions", "backlog")
    }


def run_facts(out: Path, data: dict[str, Any], grid: dict[str, Any]) -> list[Any]:
    """Every cell's run facts as ``{column: value}`` (None: no run), read back from the grid's
    chunk files with their text resolved."""
    columns = data["run_columns"]
    facts: list[Any] = []
    for k in range(-(-len(grid["cases"]) // data["chunk_cases"]) or 1):
        text = (out / "assets" / f"runs-{grid['slug']}-{k}.js").read_text(encoding="utf-8")
        prefix, suffix = "window.BENCHLEDGER_RUNS(", ");\n"
        assert text.startswith(prefix) and text.endswith(suffix)
        slug, index, strings, packed = json.loads("[" + text[len(prefix) : -len(suffix)] + "]")
        assert (slug, index) == (grid["slug"], k)
        for run in packed:
            if run is None:
                facts.append(None)
                continue
            item = dict(zip(columns, run, strict=True))
            for name, value in item.items():
                if isinstance(value, int) and name in TEXT_FIELDS:
                    item[name] = strings[value]
            item["artifact_refs"] = {strings[a]: strings[b] for a, b in item["artifact_refs"]}
            facts.append(item)
    assert len(facts) == len(grid["bucket"])
    return facts


class _OverviewNumbers(HTMLParser):
    """Collects ``data-value`` of every ``data-field`` span, keyed by (table, arm, field)."""

    def __init__(self) -> None:
        super().__init__()
        self.table: str | None = None
        self.arm: str | None = None
        self.benchmark: str | None = None
        self.found: dict[tuple[str, str, str, str], Any] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "article" and a.get("data-benchmark"):
            self.benchmark = a["data-benchmark"]
        if tag == "table":
            self.table = a.get("class")
        if tag == "tr":
            self.arm = a.get("data-arm")
        if tag == "span" and a.get("data-field") and self.arm and self.table:
            key = (self.benchmark or "", self.table, self.arm, a["data-field"])
            self.found[key] = json.loads(a["data-value"] or "null")


def overview_numbers(html: str) -> dict[tuple[str, str, str, str], Any]:
    parser = _OverviewNumbers()
    parser.feed(html)
    return parser.found


def expected_numbers(benchmark_id: str, document: dict) -> dict[tuple[str, str, str, str], Any]:
    """What compare's JSON says the overview must show, in the parser's keys."""
    out: dict[tuple[str, str, str, str], Any] = {}
    for arm in document["arms"]:
        for field in ("mean", "ci_low", "ci_high", "se", "n_cases", "n_attempts"):
            out[(benchmark_id, "arms", arm["arm_id"], field)] = arm[field]
        coverage = arm["coverage"]
        out[(benchmark_id, "arms", arm["arm_id"], "cases_included")] = coverage["cases_included"]
        out[(benchmark_id, "arms", arm["arm_id"], "cases_total")] = coverage["cases_total"]
        for basis in ("cost_usd_per_case", "tokens_per_case"):
            if arm["cost"][basis] is not None:
                out[(benchmark_id, "arms", arm["arm_id"], basis)] = arm["cost"][basis]
                break
    for pair in document["paired"]:
        for field in ("n_pairs", "mean_diff", "ci_low", "ci_high", "p_value", "p_holm"):
            out[(benchmark_id, "paired", pair["arm_id"], field)] = pair[field]
    return out


HOSTILE_BENCHMARK = "tb<b>x</b>@2.0"
HOSTILE_CASE = "<img src=x onerror=alert(1)>"
HOSTILE_ARM = "<script>alert(2)</script>"


def build_hostile_ledger(work: Path, db: str) -> None:
    """One run whose benchmark, case and arm are markup (all public-safe text, so they are
    kept in the ledger as they are): the page must show them as text, never run them."""
    record = {
        "schema_version": "benchmark_run_v0", "source_runner": "harbor",
        "benchmark_id": HOSTILE_BENCHMARK, "case_id": HOSTILE_CASE,
        "run_status": "completed", "runner_return_status": "completed",
        "official_score": 1.0, "official_score_status": "completed",
        "official_task_score": {"kind": "harbor_verifier_reward", "value": 1.0, "passed": True},
    }  # fmt: skip
    path = work / "hostile.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    call = cli(
        ["benchmark", "run-ledger-upsert", "--benchmark-run-json", str(path),
         "--run-ledger-path", LEDGER, "--arm-id", HOSTILE_ARM, "--execute", "--format", "json"],
        db=db,
    )  # fmt: skip
    assert call.code == 0, call.result.output
