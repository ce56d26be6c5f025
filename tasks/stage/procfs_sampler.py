"""The `procfs` monitor: network, disk and process counters read from /proc by a POSIX shell loop.

For hosts without sysstat (and without python): only `sh`, `cat`, `grep`, `date`, `getconf` and `sleep`.
The file opens with `## procfs clk_tck=100 page_size=4096 cpus=2 mem_total_kb=...` (what turns ticks and
pages into seconds and kB); then every interval writes `## at <UTC time>`, `## net/dev` and /proc/net/dev,
`## diskstats` and /proc/diskstats, and for each watched process `## pid N`, /proc/N/stat and the
Threads/VmRSS/VmSize lines of /proc/N/status. It writes counters, not rates: the warehouse turns them into
rates between consecutive samples (sql/staging/stg_procfs__samples.sql). /proc never starts a line with `##`.
"""

from __future__ import annotations

import math

from tasks.stage.shell import quote

STAMP = "date -u +%Y-%m-%dT%H:%M:%S.%3NZ"
HEADER = ("printf '## procfs clk_tck=%s page_size=%s cpus=%s mem_total_kb=%s\\n' \"$(getconf CLK_TCK)\" "
          "\"$(getconf PAGESIZE)\" \"$(getconf _NPROCESSORS_ONLN)\" "
          "\"$(grep '^MemTotal:' /proc/meminfo | tr -dc 0-9)\"")
PROCESS = ("s=$(cat /proc/$p/stat 2>/dev/null) || continue; printf '## pid %s\\n%s\\n' \"$p\" \"$s\"; "
           "grep -E '^(Threads|VmRSS|VmSize):' /proc/$p/status 2>/dev/null")


def watched_pids(processes: list[str], pid_file: str | None, pid: str | None) -> str:
    """Shell that sets `$pids` each interval: the processes named (exact command name, as /proc/N/comm and
    pidstat -C show it), the pid in `pid_file` read again (a restarted service has a new pid), else `pid`."""
    if processes:
        names = "|".join(quote(name) for name in processes)
        return ("pids=; for d in /proc/[0-9]*; do read -r c 2>/dev/null < \"$d/comm\" || continue; "
                f"case \"$c\" in {names}) pids=\"$pids ${{d#/proc/}}\";; esac; done")
    if pid_file:
        return f"pids=$(cat {quote(pid_file)} 2>/dev/null | head -n 1 | tr -dc 0-9)"
    return f"pids={quote(pid or '')}"


def procfs_command(interval_s: float, processes: list[str], pid_file: str | None, pid: str | None) -> str:
    """The sampler loop; nothing on stderr reaches the file (a vanished process is skipped)."""
    seconds = max(1, math.ceil(interval_s))
    pids = watched_pids(processes, pid_file, pid)
    return (f"{HEADER}; while :; do printf '## at %s\\n' \"$({STAMP})\"; "
            "echo '## net/dev'; cat /proc/net/dev; echo '## diskstats'; cat /proc/diskstats; "
            f"{pids}; for p in $pids; do {PROCESS}; done; sleep {seconds}; done")
