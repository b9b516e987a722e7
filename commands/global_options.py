"""The root's options (``--db``, ``--registry``, ``--runtime-root``, ``--debug``) accepted after
the subcommand too: ``benchledger compare --db X`` means ``benchledger --db X compare``.

Users type options where they think of them; click only knows the root's options before the
subcommand name and answered ``compare --db`` with "Did you mean '--seed'?". Every subcommand
gets the same options, not passed to the function (``expose_value=False``): a callback copies a
given value into the root context's ``obj``, where every command already reads it. The root
callback has run by then, so a value given after the subcommand wins.
"""

from __future__ import annotations

from typing import Any

import click

# (declaration, key in the root's obj, is_flag, metavar, help)
_GLOBAL_OPTIONS: tuple[tuple[str, str, bool, str | None, str], ...] = (
    ("--db", "db", False, "URL", "Store URL (same as the global --db)."),
    ("--registry", "registry", False, "PATH", "Project registry (same as the global --registry)."),
    ("--runtime-root", "runtime_root", False, "DIR", "Runtime root (same as the global option)."),
    ("--debug", "debug", True, None, "Show the traceback of an internal error."),
)
_MARK = "benchledger_global_options"


def _store(key: str) -> Any:
    def callback(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
        if value is None or value is False:
            return
        root = ctx.find_root()
        if root.obj is None:
            root.obj = {}
        root.obj[key] = value

    return callback


def attach_global_options(command: click.Command) -> click.Command:
    """Add the root's options to ``command`` and, for a group, to its loaded subcommands.

    Idempotent; an option the command already declares itself is left alone. Lazily loaded
    subcommands of a nested lazy group get theirs when that group loads them.
    """
    if not getattr(command, _MARK, False):
        setattr(command, _MARK, True)
        taken = {opt for param in command.params for opt in param.opts}
        for declaration, key, is_flag, metavar, help_text in _GLOBAL_OPTIONS:
            if declaration in taken:
                continue
            command.params.append(
                click.Option(
                    [declaration, "_global_" + key],
                    is_flag=is_flag,
                    default=False if is_flag else None,
                    metavar=metavar,
                    expose_value=False,
                    callback=_store(key),
                    help=help_text,
                    hidden=True,
                )
            )
    if isinstance(command, click.Group):
        for child in command.commands.values():
            attach_global_options(child)
    return command
