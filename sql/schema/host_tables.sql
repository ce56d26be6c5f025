-- Base tables of host and JVM metrics (vmstat, jstat, docker stats); the public view is `host_samples`.
-- All timestamps are UTC (timestamptz); a run is replaced as a whole when it is re-ingested.

-- One row per host-metric file of a run: its host's role (default sut) and how its samples got their time.
create table if not exists host_metric_sources (
    run_id varchar not null,
    source_key integer not null,
    host varchar not null,
    role varchar not null,
    kind varchar not null,
    path varchar not null,
    -- 'own timestamps', 'started_at + k * interval_s', 'first_sample_at + uptime', 'jvm_started_at + uptime',
    -- 'none (whole run only)', or two of them joined with ' / ' when lines differ
    time_basis varchar not null
);

-- One row per sample line (docker stats: per container and frame). Columns of other kinds stay NULL.
create table if not exists host_sample_facts (
    run_id varchar not null,
    source_key integer not null,
    line_no bigint not null,
    container varchar,
    sampled_at timestamptz,
    iteration integer,
    is_since_boot boolean not null default false,
    -- vmstat (procps-ng): memory in KiB, rates per second, CPU in percent of all CPUs
    run_queue integer,
    blocked integer,
    swap_used_kb bigint,
    mem_free_kb bigint,
    mem_buffer_kb bigint,
    mem_cache_kb bigint,
    mem_inactive_kb bigint,
    mem_active_kb bigint,
    swap_in_kb_per_s double,
    swap_out_kb_per_s double,
    blocks_in_per_s double,
    blocks_out_per_s double,
    interrupts_per_s double,
    context_switches_per_s double,
    cpu_user_pct double,
    cpu_system_pct double,
    cpu_idle_pct double,
    cpu_wait_pct double,
    cpu_steal_pct double,
    cpu_guest_pct double,
    -- jstat -gc: sizes in KB as jstat prints them, counters since JVM start
    jvm_uptime_s double,
    survivor_capacity_kb double,
    survivor_used_kb double,
    eden_capacity_kb double,
    eden_used_kb double,
    old_capacity_kb double,
    old_used_kb double,
    metaspace_capacity_kb double,
    metaspace_used_kb double,
    compressed_class_capacity_kb double,
    compressed_class_used_kb double,
    young_gc_count bigint,
    young_gc_time_s double,
    full_gc_count bigint,
    full_gc_time_s double,
    concurrent_gc_count bigint,
    concurrent_gc_time_s double,
    gc_time_s double,
    gc_count_since_previous bigint,
    -- docker stats: bytes as docker prints them (memory binary units, network and block decimal), counters
    -- since the container started
    cpu_pct double,
    mem_used_bytes double,
    mem_limit_bytes double,
    mem_pct double,
    net_in_bytes double,
    net_out_bytes double,
    block_in_bytes double,
    block_out_bytes double,
    pids bigint
);

-- sar (-n DEV, -d) and pidstat (-u -r -v, -t): one row per interface, disk, process or thread line. Rates are
-- averages over the interval that ends at sampled_at; bytes converted from sysstat's kB (1024 bytes).
alter table host_sample_facts add column if not exists cpu_count integer;
alter table host_sample_facts add column if not exists interface varchar;
alter table host_sample_facts add column if not exists rx_packets_per_s double;
alter table host_sample_facts add column if not exists tx_packets_per_s double;
alter table host_sample_facts add column if not exists rx_bytes_per_s double;
alter table host_sample_facts add column if not exists tx_bytes_per_s double;
alter table host_sample_facts add column if not exists if_util_pct double;
alter table host_sample_facts add column if not exists disk varchar;
alter table host_sample_facts add column if not exists disk_transfers_per_s double;
alter table host_sample_facts add column if not exists disk_read_bytes_per_s double;
alter table host_sample_facts add column if not exists disk_write_bytes_per_s double;
alter table host_sample_facts add column if not exists disk_queue_size double;
alter table host_sample_facts add column if not exists disk_await_ms double;
alter table host_sample_facts add column if not exists disk_util_pct double;
alter table host_sample_facts add column if not exists command varchar;
alter table host_sample_facts add column if not exists pid bigint;
alter table host_sample_facts add column if not exists tid bigint;
alter table host_sample_facts add column if not exists process_cpu_user_pct double;
alter table host_sample_facts add column if not exists process_cpu_system_pct double;
alter table host_sample_facts add column if not exists process_cpu_wait_pct double;
alter table host_sample_facts add column if not exists rss_kb double;
alter table host_sample_facts add column if not exists vsz_kb double;
alter table host_sample_facts add column if not exists threads bigint;
alter table host_sample_facts add column if not exists open_files bigint;
alter table host_sample_facts add column if not exists minor_faults_per_s double;
alter table host_sample_facts add column if not exists major_faults_per_s double;
