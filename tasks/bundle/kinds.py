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
    options: tuple[str, ...] = ()  # the reader's options a source of this kind may set (docs/bundle-format.md)
    # a host-sample kind (its reader appends to host_sample_facts, a campaign monitor samples it): the shell
    # command that shows its sampler is installed on a host (checked before the stage is touched)
    sampler_check: str | None = None
    # How finely its clock stamps a row, in microseconds: a stamp t stands for [t, t + resolution_us) when
    # rows are placed in iterations (docs/warehouse.md). A reader whose file says otherwise (an access log
    # stamping epoch milliseconds) passes its own to set_load_context. 0: an instant (host samples).
    resolution_us: int = 0

    @property
    def valid_options(self) -> tuple[str, ...]:
        """Its options, and for request logs `declared_rate_per_s` (a background load's own results) and
        `background_labels` (the labels of background calls, on every side of the run)."""
        return self.options + (("declared_rate_per_s", "background_labels") if self.requests_side else ())


_TIMED_SAMPLES = ("started_at", "interval_s", "timezone")

KINDS: dict[str, SourceKind] = {
    "access_log": SourceKind("server", "sut", "access_log",
                             ("format", "preset", "duration_unit", "time_is_end", "regex", "time_format"),
                             resolution_us=1_000_000),  # %t, $time_local: whole seconds
    "jtl": SourceKind("client", "loadgen", "jtl", ("encoding", "delimiter", "columns", "timestamp_format"),
                      resolution_us=1_000),  # timeStamp: epoch ms
    "k6_json": SourceKind("client", "loadgen", "k6", resolution_us=1),  # RFC 3339 times, µs kept
    "k6_csv": SourceKind("client", "loadgen", "k6", resolution_us=1_000_000),  # timeFormat unix: seconds
    "jmeter_log": SourceKind(None, "loadgen", "jmeter_log", resolution_us=1_000),  # log4j time, ms
    "k6_summary": SourceKind(None, "loadgen", "k6", ("tolerance",)),
    "vmstat": SourceKind(None, "sut", "vmstat", _TIMED_SAMPLES + ("unit",), "vmstat -V"),
    "jstat": SourceKind(None, "sut", "jstat", _TIMED_SAMPLES + ("first_sample_at", "jvm_started_at"),
                        "command -v jstat"),
    "docker_stats": SourceKind(None, "sut", "docker_stats", ("timezone",),
                               "docker version --format '{{.Client.Version}}'"),
    # network, disks and processes (sysstat; apt-get install sysstat)
    "sar": SourceKind(None, "sut", "sar", ("timezone",), "sar -V"),
    "pidstat": SourceKind(None, "sut", "pidstat", ("timezone",), "pidstat -V"),
    # the same figures from /proc counters (tasks/stage/procfs_sampler.py)
    "procfs": SourceKind(None, "sut", "procfs", (), "test -r /proc/net/dev && test -r /proc/diskstats"),
}

# the host-sample kinds, in the registry's order: what a campaign monitor samples besides the files it collects
HOST_SAMPLE_KINDS = tuple(kind for kind, entry in KINDS.items() if entry.sampler_check)
