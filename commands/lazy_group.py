"""A click group whose subcommands are imported when they run (click's documented "lazily
loading subcommands" pattern), so a command pays only for its own imports.

Each subcommand is registered as ``name: (module:attribute, short help)``. The short help lives
here, once, so ``--help`` lists the commands without importing any of them.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from benchledger.commands.global_options import attach_global_options


class LazyGroup(click.Group):
    """Subcommands imported on first use; listed in ``--help`` from their registered help."""

    def __init__(
        self, *args: Any, lazy_subcommands: dict[str, tuple[str, str]] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_subcommands = dict(lazy_subcommands or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.lazy_subcommands])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The subcommand, with the root's options accepted after its name too."""
        if cmd_name not in self.lazy_subcommands:
            found = super().get_command(ctx, cmd_name)
            return attach_global_options(found) if found is not None else None
        target, short_help = self.lazy_subcommands[cmd_name]
        module_name, attribute = target.split(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target} is not a click command")
        command.short_help = short_help
        return attach_global_options(command)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``--help``, without importing the lazy subcommands."""
        names = [name for name in self.list_commands(ctx) if name not in self.lazy_subcommands]
        rows = [(name, self.lazy_subcommands[name][1]) for name in self.lazy_subcommands]
        for name in names:
            command = super().get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str()))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(sorted(rows))
