"""``python -m benchledger``: the same command line as the ``benchledger`` script."""

from benchledger.commands.cli import main

if __name__ == "__main__":
    main()
