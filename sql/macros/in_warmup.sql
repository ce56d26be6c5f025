-- Whether a row of an iteration falls in its warm-up: its first warmup_s seconds (the manifest's
-- iterations[].warmup_s). Such rows are kept and marked (requests.is_warmup, which writes this test out:
-- a public view cannot call a macro) and left out of every per-iteration statistic; an iteration's
-- duration_s is the time after its warm-up. The boundary W = start + warmup_s splits the iteration by the
-- rule that places rows (place_in_iterations.sql): a stamp t at resolution r stands for [t, t + r) and is in
-- the warm-up when more of it lies before W than after (equal: the warm-up, the earlier), i.e.
-- 2t + r < 2W, or = 2W for r > 0; with r = 0, t < W.
-- upstream: none
create or replace temp macro in_warmup(placed_at, resolution_us, iteration_started_at, warmup_s) as
    coalesce(
        warmup_s > 0
        and 2 * epoch_us(placed_at) + resolution_us
            < 2 * (epoch_us(iteration_started_at) + round(warmup_s * 1000000)::bigint) + sign(resolution_us),
        false
    );
