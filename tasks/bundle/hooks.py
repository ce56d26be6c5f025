"""A stage hook's run as the bundle keeps it: which command ran where, around which iteration, how it ended.

Hooks (`before_step` / `after_step` in a campaign file) change the stage between load steps: scale a
service, restart it, clear a cache. What each one printed is a file of the bundle (`output`), its last
lines are kept here too so the manifest alone says why one failed (docs/bundle-format.md "hooks").
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from tasks.bundle.strict import StrictModel

OUTPUT_TAIL_CHARS = 2000


class HookRun(StrictModel):
    """One hook command on one host, run before or after the load of one iteration."""

    iteration: int = Field(ge=0, le=2**31 - 1)
    when: Literal["before", "after"]
    host: str
    command: str  # as run: its {{step.*}} and {{iteration}} placeholders filled
    exit_code: int | None  # None: it could not be run (the host unreachable, a timeout)
    started_at: datetime
    seconds: float = Field(ge=0)
    output: str  # the bundle file with what it printed (stdout, then stderr)
    output_tail: str = Field("", max_length=OUTPUT_TAIL_CHARS)
