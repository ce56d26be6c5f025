"""The help of `perfcampaign` in plain text: the commands under their group's heading, as rich's panels showed them.

Typer lays its help out with rich, which took most of `perfcampaign --help` (0.22 s, issue 22); click's own
formatter writes the same groups in a few milliseconds. `TYPER_USE_RICH=1` asks for rich's panels again.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from typer.core import MarkupMode, TyperGroup

if TYPE_CHECKING:  # click as Typer carries it (typer >= 0.2x); annotations only
    from typer import _click

# rich's layout only when asked: Typer's own variable (TYPER_USE_RICH=0 keeps plain text either way)
MARKUP: MarkupMode = "rich" if os.environ.get("TYPER_USE_RICH") else None


class GroupedHelp(TyperGroup):
    """A command group whose help lists its commands under their `rich_help_panel`, in registration order."""

    def get_help_option(self, ctx: _click.Context) -> _click.Option | None:
        option = super().get_help_option(ctx)
        if option is not None:
            # False, not None, when not given: Typer checks a value that is not a bool with pydantic, whose
            # import cost `perfcampaign show --help` 0.06-0.08 s
            option.default = False
        return option

    def format_commands(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        groups: dict[str, list[tuple[str, _click.Command]]] = {}
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                groups.setdefault(getattr(command, "rich_help_panel", None) or "Commands", []).append((name, command))
        width = max((len(name) for commands in groups.values() for name, _ in commands), default=0)
        for group, commands in groups.items():
            with formatter.section(group):
                # each command's first sentence, wrapped (click cuts it at 80 columns); names padded to one column
                formatter.write_dl([(name.ljust(width), command.get_short_help_str(limit=400))
                                    for name, command in commands])
