"""The one list of named thresholds a manifest's (or campaign's) `thresholds:` map may set, with defaults.

The SQL models and the validation read these names with these defaults; tests/unit/test_thresholds.py
checks that every name read anywhere is here, every name here is read, and the defaults agree, so a key
that nothing reads is refused at load instead of being ignored.
"""

from __future__ import annotations

THRESHOLDS: dict[str, float] = {
    # requests (int_request_stats): a call slower than this counts in slow_calls
    "slow_call_ms": 1000,
    # health findings (int_health_thresholds, docs/warehouse-host-metrics.md)
    "cpu_idle_min_pct": 10,
    "loadgen_cpu_idle_min_pct": 10,
    "cpu_busy_share_pct": 50,
    "cpu_wait_max_pct": 10,
    "gc_overhead_max_pct": 5,
    "old_gen_growth_max_pct_per_h": 5,
    "old_gen_full_pct": 90,
    "container_mem_growth_max_pct_per_h": 5,
    "trend_min_span_s": 300,
    # soak drift (soak_drift, docs/warehouse.md): tolerated slope per hour, in % of the soak's mean level
    # (the error rate: percentage points; the old generation: old_gen_growth_max_pct_per_h above), and the
    # fewest windows a trend is judged on
    "avg_ms_drift_max_pct_per_h": 2,
    "p95_ms_drift_max_pct_per_h": 2,
    "calls_per_s_drift_max_pct_per_h": 2,
    "error_rate_drift_max_pp_per_h": 0.1,
    "drift_min_windows": 5,
    "net_per_call_max_ratio": 3,
    # network, disks and processes (sar, pidstat)
    "nic_link_gbps": 10,
    "nic_busy_max_pct": 80,
    "disk_util_max_pct": 90,
    "process_cpu_max_pct": 90,
    "thread_growth_max_pct": 20,
    # data checks and clock skew (docs/warehouse.md)
    "clock_skew_max_s": 2,
    "clock_skew_search_s": 300,
    "run_margin_s": 60,
    # bad input (docs/security.md): requests and samples further than this outside the run are rejected
    "reject_outside_run_h": 24,
    "background_rate_tolerance_pct": 10,
}
