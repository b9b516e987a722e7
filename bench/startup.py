#!/usr/bin/env python3
"""Cold-start cost of the CLI: median wall time of `benchledger --help` and of
`benchledger events list` on an empty store (new process each run, like a user's shell), and
what importing the pydantic contracts (`ledger.contracts`) would add to every command that did.

Usage: python bench/startup.py [--runs N] [--loopx PATH-TO-loopx-EXECUTABLE]
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


def median_ms(argv: list[str], runs: int, cwd: str) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
        )
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--loopx", default=None, help="a loopx executable to compare --help with")
    args = parser.parse_args()
    exe = shutil.which("benchledger") or str(Path(sys.executable).with_name("benchledger"))
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([exe, "db", "upgrade"], cwd=tmp, check=True, stdout=subprocess.DEVNULL)
        help_ms = median_ms([exe, "--help"], args.runs, tmp)
        list_ms = median_ms([exe, "events", "list"], args.runs, tmp)
        print(f"benchledger --help               median {help_ms:7.1f} ms ({args.runs} runs)")
        print(f"benchledger events list (empty)  median {list_ms:7.1f} ms ({args.runs} runs)")
        base = [sys.executable, "-c", "import benchledger.commands.cli"]
        with_models = [
            sys.executable, "-c",
            "import benchledger.commands.cli, benchledger.ledger.contracts.catalog",
        ]  # fmt: skip
        base_ms = median_ms(base, args.runs, tmp)
        models_ms = median_ms(with_models, args.runs, tmp)
        print(
            f"pydantic contracts import        median {models_ms - base_ms:7.1f} ms extra "
            f"({models_ms:.1f} vs {base_ms:.1f} ms; budget for the hot paths: 10 ms)"
        )
        if args.loopx:
            loopx_ms = median_ms([args.loopx, "--help"], args.runs, tmp)
            print(
                f"loopx --help                     median {loopx_ms:7.1f} ms "
                f"(ratio benchledger/loopx {help_ms / loopx_ms:.2f})"
            )


if __name__ == "__main__":
    main()
