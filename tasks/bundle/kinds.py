"""The one registry of source kinds: for each `kind` of a bundle source, what it holds and who reads it.

Adding a source kind starts here (see docs/architecture.md). Readers are named by module so that the
bundle contract imports nothing of the warehouse that reads it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceKind:
    """What one kind of raw file is: requests of a side (or none), the role of its host, its reader."""

    requests_side: str | None  # "server", "client", or None for files that hold no requests
    default_role: str  # "loadgen" for load-tool output, "sut" for the service's own logs
    reader: str  # module of tasks.warehouse.sources with `read_<kind>(ctx)` or `read(ctx)`


KINDS: dict[str, SourceKind] = {
    "access_log": SourceKind("server", "sut", "access_log"),
    "jtl": SourceKind("client", "loadgen", "jtl"),
    "k6_json": SourceKind("client", "loadgen", "k6"),
    "k6_csv": SourceKind("client", "loadgen", "k6"),
    "jmeter_log": SourceKind(None, "loadgen", "jmeter_log"),
    "k6_summary": SourceKind(None, "loadgen", "k6"),
    "vmstat": SourceKind(None, "sut", "vmstat"),
    "jstat": SourceKind(None, "sut", "jstat"),
    "docker_stats": SourceKind(None, "sut", "docker_stats"),
}
