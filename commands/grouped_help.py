"""A click command whose ``--help`` lists its options in named sections.

``benchmark run`` has some sixty options for three runners and for planned runs; one flat list
hides the few a user needs. Each option is placed by name in ``sections``; an option not named
falls into the last section, so a new option is never missing from the help.
"""

from __future__ import annotations

from typing import Any

import click


class GroupedHelpCommand(click.Command):
    """``--help`` with the options grouped: ``sections`` maps a title to option names."""

    def __init__(
        self, *args: Any, sections: tuple[tuple[str, tuple[str, ...]], ...] = (), **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.sections = sections

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        placed = {name: title for title, names in self.sections for name in names}
        rows: dict[str, list[tuple[str, str]]] = {title: [] for title, _ in self.sections}
        rest: list[tuple[str, str]] = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            title = placed.get(param.name or "")
            (rows[title] if title else rest).append(record)
        for title, records in [*rows.items(), ("Other options", rest)]:
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)
