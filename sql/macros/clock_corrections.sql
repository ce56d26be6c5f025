-- The sources of a run whose rows are placed in iterations by corrected time (written time - skew), with
-- the skew in microseconds: on a host whose clock is corrected (clock_skew.is_corrected), its access logs
-- (fact_table 'request') and the host-metric files stamped by its own clock (time_basis 'own timestamps':
-- vmstat -t, docker stats timestamp lines, monitor-prefixed lines; fact_table 'sample'). Times computed
-- from a manifest start time, and sources pinned to one iteration, are not corrected. Used by
-- int_clock_moves (which rows change iteration) and int_sample_windows (counter windows).
-- upstream: clock_skew, sources, host_metric_sources
create or replace temp macro clock_corrections(run) as table
    select
        sources.source_key,
        sources.host,
        round(clock_skew.skew_s * 1e6)::bigint as skew_us,
        case when sources.side = 'server' then 'request' else 'sample' end as fact_table
    from clock_skew
    join sources on sources.run_id = clock_skew.run_id and sources.host = clock_skew.host
    left join host_metric_sources as metric_sources on metric_sources.source_key = sources.source_key
    where
        clock_skew.run_id = run
        and clock_skew.is_corrected
        and sources.pinned_iteration is null
        and (sources.side = 'server' or metric_sources.time_basis = 'own timestamps');
