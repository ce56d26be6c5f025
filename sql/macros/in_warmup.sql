-- Whether a row of an iteration falls in its warm-up: its first warmup_s seconds (the manifest's
-- iterations[].warmup_s). Such rows are kept and marked (requests.is_warmup, which writes this test out:
-- a public view cannot call a macro) and left out of every per-iteration statistic; an iteration's
-- duration_s is the time after its warm-up.
-- upstream: none
create or replace temp macro in_warmup(started_at, iteration_started_at, warmup_s) as
    coalesce(
        warmup_s > 0 and epoch_us(started_at) < epoch_us(iteration_started_at) + round(warmup_s * 1000000)::bigint,
        false
    );
