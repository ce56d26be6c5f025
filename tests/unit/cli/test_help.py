"""`perfcampaign --help` as a person reads it: every command under its group, in plain text, started without the
heavy modules (issue 22: under 0.15 s)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tasks.cli.main import COMMANDS

HEAVY = ("duckdb", "rich", "pydantic", "pandas", "numpy", "prefect")
# runs the command, then prints on stderr the heavy modules it had loaded
PROBE = ("import sys\nfrom tasks.cli.main import main\ntry:\n    main()\nfinally:\n"
         f"    print('loaded:', [m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr)")


def _help(*args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-c", PROBE, *args, "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done


def test_the_commands_are_listed_under_their_groups_in_plain_text():
    done = _help()
    sections = dict(re.findall(r"^(\w+):\n((?:  .*\n|\s*\n)+?)(?=^\w|\Z)", done.stdout + "\n", re.M))
    for group, commands in COMMANDS.items():
        listed = re.findall(r"^  (\w+) ", sections[group], re.M)
        assert listed == list(commands) + (["warehouse"] if group == "warehouse" else []), (group, listed)
    assert "╭" not in done.stdout and "\x1b" not in done.stdout  # no panels, no colours


@pytest.mark.parametrize("args", [(), ("show",), ("warehouse",), ("warehouse", "copy")])
def test_help_loads_no_heavy_module(args):
    assert "loaded: []" in _help(*args).stderr
