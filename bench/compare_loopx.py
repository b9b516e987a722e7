#!/usr/bin/env python3
"""benchledger next to loopx 0.4.8, measured in one run on this machine: one table.

Workloads (each command is a new process, as in a user's shell; medians of ``--runs``):

* cold start: ``--help``;
* one ``run-ledger-upsert --execute`` into ledgers of 100 / 1,000 / 10,000 / 30,000 rows, with
  the JSON and Markdown re-rendered and (benchledger only) with ``--no-render``;
* Harbor ingest of generated 10 / 100 / 1,000 / 3,000-trial jobs (wall and peak memory);
* 200 sequential upserts of distinct runs into one growing ledger (total wall time, once);

and benchledger alone: ``rebuild`` of 1,000,000 events on SQLite and PostgreSQL, for both
workloads of bench/rebuild_throughput.py (realistic ingests, and the supersession-heavy one),
with the store size per event and ``rebuild --verify``; and append
throughput with 8 concurrent writers (bench/rebuild_throughput.py, bench/append_throughput.py,
whose own lines are printed below the table).

loopx is installed into ``bench/.venv-loopx`` when missing (never a dependency of the
product). Ratios are loopx time / benchledger time (higher is better for benchledger), from
numbers taken in this same run. Before measuring, the project's modules are byte-compiled, as
``pip install`` does for a wheel, so an environment with PYTHONDONTWRITEBYTECODE does not make
every benchledger process recompile its own sources.

Usage: python bench/compare_loopx.py [--runs 3] [--quick] [--skip-rebuild] [--write-readme]
  --quick         small sizes (100/1,000 rows, 10/100 trials, 20 upserts, 100k events)
  --write-readme  replace the table in bench/README.md with this run's
"""

from __future__ import annotations

import argparse
import compileall
import datetime as dt
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

import harbor_ingest  # noqa: E402
import ledger_scaling  # noqa: E402
from _loopx import Loopx, benchledger_exe, ensure_loopx, measure  # noqa: E402

README = BENCH / "README.md"
TABLE_START, TABLE_END = "<!-- compare_loopx:start -->", "<!-- compare_loopx:end -->"


@dataclass
class Row:
    """One line of the table: a workload, both tools' numbers, the target it is judged by."""

    workload: str
    ours: str
    theirs: str = ""
    ratio: float | None = None
    target: str = ""
    met: bool | None = None

    def cells(self) -> list[str]:
        ratio = "" if self.ratio is None else f"{self.ratio:.1f}x"
        verdict = {True: "met", False: "missed", None: ""}[self.met]
        return [self.workload, self.ours, self.theirs, ratio, self.target, verdict]


def seconds(value: float) -> str:
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def median_run(runs: int, once) -> dict:  # noqa: ANN001
    return medians([once() for _ in range(runs)])


def medians(samples: list) -> dict:
    """Median wall time and peak memory; any failed run stops the benchmark with its stderr."""
    for sample in samples:
        if sample.returncode != 0:
            raise SystemExit(f"command failed ({sample.returncode}): {sample.stderr[-600:]!r}")
    return {
        "seconds": statistics.median(s.seconds for s in samples),
        "mib": statistics.median(s.max_rss_mib for s in samples),
        "cpu": statistics.median(s.cpu_seconds for s in samples),
    }


# ------------------------------------------------------------------------------ workloads


def cold_start(bl: str, loopx: Loopx, runs: int, work: Path) -> list[Row]:
    ours = median_run(max(runs, 9), lambda: measure([bl, "--help"], cwd=work))
    theirs = median_run(max(runs, 9), lambda: measure(loopx.argv("--help"), cwd=work))
    ratio = theirs["seconds"] / ours["seconds"]
    return [
        Row(
            "cold start (`--help`)",
            seconds(ours["seconds"]),
            seconds(theirs["seconds"]),
            ratio,
            "<= 0.5x loopx's time",
            ratio >= 2,
        )
    ]


def upserts(bl: str, loopx: Loopx, sizes: list[int], runs: int, work: Path) -> list[Row]:
    data = work / "ledger-data"
    ledger_scaling.generate(data, sizes, str(loopx.python))
    rows: list[Row] = []
    small = None
    for n in sizes:
        base = ledger_scaling.prepare_base(work, data, n, bl)
        ours = ledger_scaling.ours(base, work, data, bl, runs)
        theirs = ledger_scaling.theirs(loopx, data, work, n, runs)
        shutil.rmtree(base)
        up, lx = ours["upsert"], theirs["upsert"]
        ratio = lx["seconds"] / up["seconds"]
        big = n == max(sizes)
        rows.append(Row(
            f"upsert into {n:,} rows, rendered",
            f"{seconds(up['seconds'])} (CPU {seconds(up['cpu'])}), {up['rss_mib']:.0f} MiB",
            f"{seconds(lx['seconds'])} (CPU {seconds(lx['cpu'])}), {lx['rss_mib']:.0f} MiB",
            ratio, ">= 20x, less memory" if big else "",
            (ratio >= 20 and up["rss_mib"] < lx["rss_mib"]) if big else None,
        ))  # fmt: skip
        plain = ours["upsert_no_render"]["seconds"]
        small = plain if small is None else small
        rows.append(Row(
            f"upsert into {n:,} rows, `--no-render`", seconds(plain), "", None,
            f"<= 1.5x the {min(sizes):,}-row one" if big else "",
            (plain <= 1.5 * small) if big else None,
        ))  # fmt: skip
        for key in ("aggregate", "check"):
            ratio = theirs[key]["seconds"] / ours[key]["seconds"]
            rows.append(Row(
                f"`run-ledger-{key}` at {n:,} rows", seconds(ours[key]["seconds"]),
                seconds(theirs[key]["seconds"]), ratio,
                ">= 10x" if big else "", (ratio >= 10) if big else None,
            ))  # fmt: skip
        print(f"  upserts at {n:,} rows measured", file=sys.stderr, flush=True)
    return rows


def ingests(bl: str, loopx: Loopx, sizes: list[int], runs: int, work: Path) -> list[Row]:
    """The two tools taking turns on each job, every run's directory kept until ``work`` is
    deleted (``harbor_ingest.taking_turns`` says why both matter on this machine).

    After the sizes, the largest size once more as attempts of a single task: loopx 0.4.8
    files a whole job as one case (docs/formats/harbor.md section 8), so on the usual jobs
    benchledger
    writes a record per task (89 here) where loopx writes one; on this job each writes one."""
    template = harbor_ingest.TEMPLATE_JOB
    rows: list[Row] = []
    for n in sizes:
        job = harbor_ingest.generate_job(template, work / f"jobs-{n}", n)
        big = n == max(sizes)
        label = f"Harbor ingest, {n:,} trials"
        rows.append(_ingest_row(bl, loopx, job, runs, work, label, ">= 4x" if big else ""))
        print(f"  ingest of {n:,} trials measured", file=sys.stderr, flush=True)
    n = max(sizes)
    job = harbor_ingest.generate_job(template, work / f"jobs-{n}-one-task", n, max_tasks=1)
    label = f"Harbor ingest, {n:,} attempts of one task (one record from each tool)"
    rows.append(_ingest_row(bl, loopx, job, runs, work, label, ""))
    print(f"  ingest of {n:,} attempts of one task measured", file=sys.stderr, flush=True)
    return rows


def _ingest_row(
    bl: str, loopx: Loopx, job: Path, runs: int, work: Path, label: str, target: str
) -> Row:
    """Medians of ``runs`` ingests of ``job`` by each tool, taking turns; ``target``: the
    speed-up asked for (none if empty)."""

    def ours(project: Path):  # noqa: ANN202
        subprocess.run([bl, "db", "upgrade"], cwd=project, check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        return measured_at_home(harbor_ingest.benchledger_argv(bl, job), project)

    def theirs(project: Path):  # noqa: ANN202
        return measured_at_home(harbor_ingest.loopx_argv(str(loopx.exe), job), project)

    mine, other = (medians(s) for s in harbor_ingest.taking_turns(runs, work, [ours, theirs]))
    ratio = other["seconds"] / mine["seconds"]
    return Row(
        label,
        f"{seconds(mine['seconds'])} (CPU {seconds(mine['cpu'])}), {mine['mib']:.0f} MiB",
        f"{seconds(other['seconds'])} (CPU {seconds(other['cpu'])}), {other['mib']:.0f} MiB",
        ratio, target, (ratio >= 4) if target else None,
    )  # fmt: skip


def measured_at_home(argv: list[str], project: Path):  # noqa: ANN201
    """One run in ``project`` with HOME there too, so neither tool touches the real one."""
    env_home = os.environ.get("HOME")
    os.environ["HOME"] = str(project)
    try:
        return measure(argv, cwd=project)
    finally:
        if env_home is not None:
            os.environ["HOME"] = env_home


def sequential(bl: str, loopx: Loopx, count: int, work: Path) -> list[Row]:
    """``count`` distinct runs upserted one command after another into one growing ledger."""
    data = work / "seq-data"
    ledger_scaling.generate(data, [100], str(loopx.python))
    inputs = sorted((data / "inputs" / "seq").glob("seq-*.compact.json"))[:count]
    if len(inputs) < count:
        raise SystemExit(f"the generator made {len(inputs)} sequential inputs, not {count}")
    ours_dir, theirs_dir = work / "seq-ours", work / "seq-loopx"
    (ours_dir / ".benchledger").mkdir(parents=True)
    theirs_dir.mkdir()
    ours = theirs = 0.0
    for path in inputs:
        argv = [bl, "benchmark", "run-ledger-upsert", "--benchmark-run-json", str(path),
                "--execute", "--format", "json"]  # fmt: skip
        ours += checked(measure(argv, cwd=ours_dir)).seconds
        theirs += checked(
            measure(
                loopx.argv(
                    "benchmark",
                    "run-ledger-upsert",
                    "--benchmark-run-json",
                    str(path),
                    "--run-ledger-path",
                    ledger_scaling.LEDGER,
                    "--execute",
                ),
                cwd=theirs_dir,
            )
        ).seconds
    ratio = theirs / ours
    return [
        Row(
            f"{count} sequential upserts, one growing ledger",
            seconds(ours),
            seconds(theirs),
            ratio,
            ">= 3x",
            ratio >= 3,
        )
    ]


def checked(sample):  # noqa: ANN001, ANN201
    if sample.returncode != 0:
        raise SystemExit(f"upsert failed: {sample.stderr[-600:]!r}")
    return sample


def alone(events: int) -> tuple[list[Row], list[str]]:
    """Rebuild and append throughput (benchledger only): their scripts' own lines, parsed."""
    rows: list[Row] = []
    lines: list[str] = []
    for workload in ("realistic", "supersession"):
        rebuild = run_script(
            "rebuild_throughput.py", "--events", str(events), "--backend", "both",
            "--workload", workload, "--verify-rebuild",
        )  # fmt: skip
        lines += rebuild
        rows += rebuild_rows(rebuild, events, workload)
    append = run_script("append_throughput.py", "--writers", "8", "--commands", "100")
    lines += append
    for line in append:
        match = re.match(r"\[(\w+)\] 8 writers x \d+ commands of (\d+) event\(s\): "
                         r"([\d,]+) commands/s, ([\d,]+) events/s", line)  # fmt: skip
        if match:
            backend, per, cps, eps = match.groups()
            rows.append(Row(f"append, 8 writers, {per}-event commands, {backend}",
                            f"{cps} commands/s, {eps} events/s"))  # fmt: skip
    return rows, lines


REBUILD_TARGETS = {"sqlite": (50_000, 500), "postgresql": (25_000, None)}


def rebuild_rows(lines: list[str], events: int, workload: str) -> list[Row]:
    """The rebuild rate (and, on SQLite, store size per event) of one workload's lines."""
    rows: list[Row] = []
    for backend, (target_rate, target_mb) in REBUILD_TARGETS.items():
        label = f"rebuild {events:,} events, {workload} workload, {backend}"
        prefix = f"[{backend}, {workload}]"
        found = next((ln for ln in lines if ln.startswith(f"{prefix} rebuild:")), None)
        match = found and re.search(r"= ([\d,]+) events/s,.*? peak RSS (\d+) MB", found)
        if not match:
            rows.append(Row(label, "no result (see below)"))
            continue
        rate, peak = int(match.group(1).replace(",", "")), int(match.group(2))
        cpu = re.search(r"CPU ([\d.]+) s", found)
        cpu_text = f", CPU {float(cpu.group(1)):.1f} s" if cpu else ""
        checks = next((ln for ln in lines if ln.startswith(f"{prefix} rebuild --verify:")), "")
        exact = "ok=True" in checks
        realistic = workload == "realistic"
        target = f">= {target_rate:,}/s" + (f", < {target_mb} MB" if target_mb else "")
        met = rate >= target_rate and (target_mb is None or peak < target_mb) and exact
        rows.append(Row(
            label,
            f"{rate:,} events/s{cpu_text}, {peak} MiB, --verify "
            + ("exact" if exact else "NOT exact"),
            "", None, target + ", --verify exact" if realistic else "",
            met if realistic else None,
        ))  # fmt: skip
        size = next((ln for ln in lines if ln.startswith(f"{prefix} store size")), None)
        per = size and re.search(r"= ([\d.]+) KB per event", size)
        if per and backend == "sqlite":
            kb = float(per.group(1))
            rows.append(Row(
                f"store size per event, {workload} workload, {backend}", f"{kb:.2f} KB", "",
                None, "<= 3 KB" if realistic else "", (kb <= 3.0) if realistic else None,
            ))  # fmt: skip
    return rows


def run_script(name: str, *args: str) -> list[str]:
    done = subprocess.run([sys.executable, str(BENCH / name), *args], capture_output=True,
                          text=True)  # fmt: skip
    lines = [ln for ln in done.stdout.splitlines() if ln.strip()]
    if done.returncode != 0:
        lines.append(f"{name} exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return lines


# ------------------------------------------------------------------------------ report


def markdown_table(rows: list[Row]) -> list[str]:
    head = ["workload", "benchledger", "loopx 0.4.8", "loopx / benchledger", "target", ""]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return out


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"{os.cpu_count()} cores ({cpu}), {mem_gib:.0f} GiB, Python "
            f"{platform.python_version()}, load average at start {load}")  # fmt: skip


def write_readme(block: list[str]) -> None:
    text = README.read_text(encoding="utf-8") if README.exists() else ""
    body = "\n".join([TABLE_START, *block, TABLE_END])
    if TABLE_START in text and TABLE_END in text:
        before, rest = text.split(TABLE_START, 1)
        after = rest.split(TABLE_END, 1)[1]
        text = before + body + after
    else:
        text = text.rstrip("\n") + "\n\n" + body + "\n"
    README.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--skip-rebuild", action="store_true", help="leave out the 1M replay")
    parser.add_argument("--write-readme", action="store_true")
    args = parser.parse_args()
    ledger_sizes = [100, 1000] if args.quick else [100, 1000, 10_000, 30_000]
    trial_sizes = [10, 100] if args.quick else [10, 100, 1000, 3000]
    sequential_count = 20 if args.quick else 200
    events = 100_000 if args.quick else 1_000_000

    for package in ("commands", "ledger", "projections", "migrations"):
        compileall.compile_dir(str(REPO / package), quiet=1)
    bl = benchledger_exe()
    loopx = ensure_loopx()
    header = machine()
    started = time.perf_counter()
    rows: list[Row] = []
    extra: list[str] = []
    with tempfile.TemporaryDirectory(prefix="compare-loopx-") as tmp:
        work = Path(tmp)
        rows += cold_start(bl, loopx, args.runs, work)
        rows += ingests(bl, loopx, trial_sizes, args.runs, work)
        rows += upserts(bl, loopx, ledger_sizes, args.runs, work)
        rows += sequential(bl, loopx, sequential_count, work)
        print("  sequential upserts measured", file=sys.stderr, flush=True)
    if not args.skip_rebuild:
        more, extra = alone(events)
        rows += more
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    block = [
        f"Measured {when} on {header}; medians of {args.runs} runs per cell; "
        f"whole run {time.perf_counter() - started:.0f} s. Command: "
        f"`python bench/compare_loopx.py{' --quick' if args.quick else ''}"
        f"{' --skip-rebuild' if args.skip_rebuild else ''} --runs {args.runs}`.",
        "",
        *markdown_table(rows),
    ]
    if extra:
        block += ["", "Lines printed by the throughput scripts:", "", "```", *extra, "```"]
    print("\n".join(block))
    if args.write_readme:
        write_readme(block)


if __name__ == "__main__":
    main()
