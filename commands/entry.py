"""The ``benchledger`` console script: starts the Harbor trial reader, then the CLI.

It runs before click and the command modules are imported, which is the point: a forked
reader (``ledger.sources.harbor.prefetch``) reads a large job's trials on the second core
while this process loads them. For every other command line it only imports the CLI.
"""

from __future__ import annotations

import sys


def main() -> None:
    from benchledger.ledger.sources.harbor import prefetch as harbor_prefetch
    harbor_prefetch.start(sys.argv[1:])
    from benchledger.commands.cli import main as cli_main
    cli_main()
