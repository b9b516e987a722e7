"""``benchledger schema [NAME]``: the shipped JSON Schema of a contract, or the list of names."""

from __future__ import annotations

import click

from benchledger.commands.output import emit, format_option, printable, resolve_format
from benchledger.ledger.contracts.schema_files import schema_names, schema_text


@click.command("schema")
@click.argument("name", required=False)
@format_option
@click.pass_context
def schema(ctx: click.Context, name: str | None, output_format: str | None) -> None:
    """Print the JSON Schema of NAME (e.g. benchmark_run_v0); without NAME, list the names.

    Event payload schemas are named <event_type>.v<schema_version>. Validate your own
    benchmark_run_v0 files with any JSON Schema (2020-12) validator.
    """

    fmt = resolve_format(ctx, output_format)
    if name is not None:
        click.echo(printable(schema_text(name).rstrip("\n")))
        return
    names = schema_names()
    emit(
        {"ok": True, "schemas": names},
        fmt,
        "Schemas",
        markdown=lambda result: "\n".join(["# Schemas", ""] + [f"- {n}" for n in names]),
    )
