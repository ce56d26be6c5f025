"""The one registry of load tools: for each `load.tool` name, its class, how its version is read on a
generator (the check before the stage is touched) and the source kinds its result files are.

Adding a load tool starts here (docs/architecture.md, "a load tool"); `load.tool` is validated against it.
"""

from __future__ import annotations

from dataclasses import dataclass

from tasks.loadtools.base import LoadTool
from tasks.loadtools.jmeter import JMeterTool
from tasks.loadtools.k6 import K6Tool


@dataclass(frozen=True)
class ToolKind:
    """One load tool: its lifecycle class and the arguments after its binary that print its version."""

    tool_class: type[LoadTool]
    version_args: tuple[str, ...]

    @property
    def writes(self) -> tuple[str, ...]:
        """The source kinds of its result files (tasks/bundle/kinds.py)."""
        return tuple(kind for _, _, kind in self.tool_class.result_files if kind)


TOOLS: dict[str, ToolKind] = {
    "k6": ToolKind(K6Tool, ("version",)),
    # the launcher names the Java to install when there is none; -j: its log not into the working folder
    "jmeter": ToolKind(JMeterTool, ("--version", "-j", "/dev/null")),
}


def tool_kind(name: str) -> ToolKind:
    """The registry's entry for `load.tool`, or a ValueError naming the tools there are."""
    if name not in TOOLS:
        raise ValueError(f"load.tool: {name!r} is not a load tool perfcampaign runs (one of: {', '.join(TOOLS)})")
    return TOOLS[name]
