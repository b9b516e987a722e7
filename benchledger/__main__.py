"""The ``benchledger`` console script and ``python -m benchledger``.

A Harbor ingest given ``--jobs N`` starts reading its trials here, before the command line's
modules are imported (``ledger/sources/harbor/parallel.py``, ``start_early``). The command line
is only scanned for the two flags; click parses it as for any other command, and the reader
uses the early workers only if they read what the parsed command reads. Both imports sit in
the function so that every other command (``--help`` first) pays for neither.
"""

import sys


def main() -> None:
    """The console script."""
    args = sys.argv[1:]
    job_dir, jobs = _flag(args, "--harbor-job-dir"), _flag(args, "--jobs")
    if job_dir and jobs and jobs.isdigit() and int(jobs) > 1:
        from benchledger.ledger.sources.harbor.parallel import start_early

        start_early(job_dir, int(jobs))
    from benchledger.commands.cli import main as cli_main

    cli_main()


def _flag(args: list[str], name: str) -> str | None:
    """The value of ``name`` in ``args`` (``NAME VALUE`` or ``NAME=VALUE``), the last one given."""
    value = None
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith(name + "="):
            value = arg[len(name) + 1 :]
    return value


if __name__ == "__main__":
    main()
