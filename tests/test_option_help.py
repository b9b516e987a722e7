"""Every option a user can see in ``--help`` says what it does (issue 34: about sixty options of
``benchmark run`` alone, many with no description).

The walk starts at the root group and loads every lazy subcommand, so a new command or option
without a help string fails here. Hidden options (loopx's fixture switches, docs/cli.md) and
positional arguments (click shows no help for them) are left out.
"""

from __future__ import annotations

from collections.abc import Iterator

import click

from benchledger.commands.cli import cli


def walk(command: click.Command, path: tuple[str, ...]) -> Iterator[tuple[str, click.Command]]:
    """(``benchledger sub sub``, command) for the root and every command below it."""
    yield " ".join(path), command
    if isinstance(command, click.Group):
        ctx = click.Context(command, info_name=path[-1])
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, f"{' '.join(path)} {name} does not load"
            yield from walk(sub, (*path, name))


def test_the_walk_reaches_every_command_family() -> None:
    names = {name for name, _command in walk(cli, ("benchledger",))}
    for expected in ("benchledger benchmark run", "benchledger benchmark run-ledger-aggregate",
                     "benchledger events list", "benchledger snapshot create",
                     "benchledger import loopx-ledger", "benchledger db upgrade"):  # fmt: skip
        assert expected in names


def test_every_visible_option_has_help() -> None:
    missing = [
        f"{name} {'/'.join(param.opts)}"
        for name, command in walk(cli, ("benchledger",))
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden and not (param.help or "").strip()
    ]
    assert missing == [], "options without help:\n" + "\n".join(missing)
