"""The ``benchledger`` command line: a thin click layer over the services in ``services/``.

Subcommands load lazily (``commands/lazy_group.py``): a command imports only its own module.
"""

from __future__ import annotations

import os
import sys

import click

from benchledger import __version__
from benchledger.commands.lazy_group import LazyGroup
from benchledger.commands.output import FORMATS, fail
from benchledger.commands.runtime import command_metadata
from benchledger.ledger.core.command_context import running_command
from benchledger.ledger.core.errors import BenchledgerError

_COMMANDS = "benchledger.commands."
SUBCOMMANDS = {
    "benchmark": (_COMMANDS + "benchmark_group:benchmark", "Record runs and keep the run ledger."),
    "compare": (_COMMANDS + "compare_commands:compare", "Compare the arms of one benchmark."),
    "db": (_COMMANDS + "store_commands:db_group", "Schema migrations."),
    "diff": (_COMMANDS + "diff_commands:diff", "What changed in a ledger between two moments."),
    "events": (_COMMANDS + "store_commands:events_group", "Read the event table (the audit log)."),
    "import": (_COMMANDS + "ledger_commands:import_group", "Bring existing records in as events."),
    "rebuild": (_COMMANDS + "store_commands:rebuild", "Replay every event into new read models."),
    "render": (_COMMANDS + "ledger_commands:render", "Re-render the ledger files from the store."),
    "report": (_COMMANDS + "report_commands:report", "Write a static HTML report of the ledger."),
    "schema": (_COMMANDS + "schema_commands:schema", "Print the JSON Schema of a contract."),
    "snapshot": (_COMMANDS + "snapshot_commands:snapshot_group", "Snapshots for fast --as-of."),
    "sql": (_COMMANDS + "store_commands:sql", "Run one read-only SQL query."),
    "sync-global": (
        _COMMANDS + "registry_commands:sync_global_command",
        "Sync goals to the global registry.",
    ),
    "verify": (_COMMANDS + "store_commands:verify", "Verify the event chain and published files."),
}


def debugging(ctx: click.Context) -> bool:
    """``--debug`` or ``BENCHLEDGER_DEBUG=1``: an internal error also shows its traceback."""
    flag = bool((ctx.find_root().obj or {}).get("debug"))
    return flag or os.environ.get("BENCHLEDGER_DEBUG", "") not in ("", "0")


class RootGroup(LazyGroup):
    """Turns every failure into one line and an exit code instead of a traceback."""

    def make_context(self, info_name, args, parent=None, **extra):  # noqa: ANN001, ANN201
        # The arguments as given, before parsing consumes them: the events' recorded argv.
        ctx = super().make_context(info_name, list(args), parent=parent, **extra)
        ctx.meta["benchledger.argv"] = list(args)
        return ctx

    def invoke(self, ctx: click.Context):  # noqa: ANN201
        try:
            argv = ctx.meta.get("benchledger.argv")
            with running_command(lambda: command_metadata(argv=argv)):
                return super().invoke(ctx)
        except BenchledgerError as err:
            fail(
                err.message,
                _format_of(ctx),
                code=err.code,
                exit_code=err.exit_code,
                payload=err.details.get("payload"),
            )
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except KeyboardInterrupt:
            fail(
                "interrupted; nothing was committed after the last completed command",
                _format_of(ctx),
                code="interrupted",
                exit_code=130,
            )
        except Exception as exc:  # noqa: BLE001 - the last line of defence against tracebacks
            if debugging(ctx):
                # The interpreter's own printer, as for an uncaught exception: the same text
                # as ``traceback.print_exc()`` without importing ``traceback`` (and
                # ``linecache``/``tokenize``) into every command for the rare error.
                sys.excepthook(type(exc), exc, exc.__traceback__)
            fail(
                f"internal error ({type(exc).__name__}): {exc}",
                _format_of(ctx),
                code="internal_error",
            )


def _print_version(ctx: click.Context, _param: click.Parameter, wanted: bool) -> None:
    """``--version``: the package's literal version, which the packaging metadata is built from."""
    if not wanted or ctx.resilient_parsing:
        return
    click.echo(f"benchledger, version {__version__}")
    ctx.exit()


def _format_of(ctx: click.Context) -> str:
    """The format the failing command asked for (subcommands record theirs on the root)."""
    return (ctx.obj or {}).get("format") or "markdown"


@click.group(
    cls=RootGroup,
    lazy_subcommands=SUBCOMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
@click.option(
    "--db",
    metavar="URL",
    envvar="BENCHLEDGER_DATABASE_URL",
    help="Store URL (sqlite:///path or postgresql://...). Default: the nearest "
    ".benchledger/ledger.db.",
)
@click.option(
    "--registry",
    metavar="PATH",
    envvar="BENCHLEDGER_REGISTRY",
    help="Project registry (default: the nearest .benchledger/registry.json).",
)
@click.option(
    "--runtime-root",
    metavar="DIR",
    help="Runtime root for goal run files (default: the registry's, else ~/.benchledger).",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    default="markdown",
    show_default=True,
    help="Output format for every command.",
)
@click.option(
    "--debug",
    is_flag=True,
    help="Show the traceback of an internal error (also BENCHLEDGER_DEBUG=1).",
)
@click.pass_context
def cli(
    ctx: click.Context,
    db: str | None,
    registry: str | None,
    runtime_root: str | None,
    output_format: str,
    debug: bool,
) -> None:
    """benchledger: an auditable, event-sourced ledger of AI-agent benchmark runs.

    Every command that changes anything appends immutable events (dry run unless --execute);
    the ledger JSON/Markdown, goal run history, registry and rollout records are projections
    you can rebuild with `benchledger rebuild`.
    """
    ctx.obj = {
        "db": db,
        "registry": registry,
        "runtime_root": runtime_root,
        "format": output_format,
        "debug": debug,
    }


def main() -> None:
    """The console script."""
    cli(prog_name="benchledger")


if __name__ == "__main__":
    main()
