"""Site speed on a large warehouse: 20 campaigns x 1,000 runs, with change points. Targets: the whole site in
under 30 s, every page under 1 MB; a rebuild after one more run rewrites only the pages it changes.

The echo sample bundle is ingested once (so every table exists as the code makes it); then the runs, their key
series (2 sides x 3 iterations x p95, throughput, error rate over all hosts and labels), 4 events of 6 change
points per campaign, 3 requirements judged per run (and at each iteration) and each run's capacity (2 sides, a knee
every third run) are written straight into `runs`, `series_values`, `detected_changes`, `requirements`, `verdicts`
and `capacity` with SQL.

    .venv/bin/python bench/site.py [--campaigns 20] [--runs 1000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tasks.site.build import build_site  # noqa: E402
from tasks.warehouse.connection import open_warehouse  # noqa: E402
from tasks.warehouse.ingest import ingest_bundle  # noqa: E402

SYNTHETIC = """
insert into runs by name
select 'c' || c || '-' || lpad(i::varchar, 4, '0') as run_id, 'campaign-' || c as campaign, 'nightly' as scenario,
    map(['sut_version'], ['1.' || (i // 250)]) as labels, if(i % 97 = 5, 'failed', 'completed') as status,
    timestamptz '2024-01-01 02:00:00+00' + to_days(i::integer) as started_at,
    timestamptz '2024-01-01 02:30:00+00' + to_days(i::integer) as ended_at, '{}'::json as manifest,
    '/bundles/c' || c || '-' || lpad(i::varchar, 4, '0') as bundle_uri
from range($campaigns) as k(c), range($runs) as r(i);

insert into series_values by name
select runs.campaign, 'nightly' as scenario, 'p1' as plan_id, '1:vus=10 2:vus=20 3:vus=40' as plan, side,
    '(all)' as host, iteration, '(all)' as label, metric, runs.run_id, runs.started_at as run_started_at,
    (case metric when 'p95_ms' then 50.0 * iteration when 'calls_per_s' then 100.0 * iteration else 0.01 end)
        * (1 + 0.15 * (substr(runs.run_id, -4)::int // 250)) * (0.97 + 0.06 * random()) as value,
    1000 as calls, runs.labels
from runs, (values ('server'), ('client')) s(side), range(1, 4) it(iteration),
    (values ('p95_ms'), ('calls_per_s'), ('error_rate')) m(metric)
where runs.campaign like 'campaign-%';

insert into detected_changes by name
select 'ch-' || c || '-' || e || '-' || side || '-' || iteration as change_id, 'campaign-' || c as campaign,
    'nightly' as scenario, 'p1' as plan_id, side, '(all)' as host, iteration, '(all)' as label, 'p95_ms' as metric,
    'c' || c || '-' || lpad((e * 250)::varchar, 4, '0') as run_id,
    timestamptz '2024-01-01 02:00:00+00' + to_days((e * 250)::integer) as run_started_at,
    'c' || c || '-' || lpad((e * 250 - 1)::varchar, 4, '0') as previous_run_id,
    100.0 as before_value, 115.0 as after_value, 15.0 as change_pct, 'regression' as direction, 0.001 as p_value,
    'change' as kind, 'sut_version: 1.' || (e - 1) || ' -> 1.' || e as label_changes,
    'c' || c || '-' || lpad((e * 250)::varchar, 4, '0') as first_detected_in, now() as detected_at,
    'ev-' || c || '-' || e as event_id
from range($campaigns) as k(c), range(1, 5) as ev(e), (values ('server'), ('client')) s(side), range(1, 4) it(iteration);

insert into verdicts by name
select *, measured < threshold as passed
from (
    select runs.run_id, requirement_id, null::integer as iteration, side, metric, op, threshold,
        threshold * (0.5 + 0.6 * random()) as measured, true as is_judged,
        format('{} {} {} {:g}', side, metric, op, threshold) as rule, 'every iteration' as judged_by
    from runs, (values ('server-p95', 'server', 'p95_ms', '<', 150.0), ('client-p95', 'client', 'p95_ms', '<', 200.0),
                       ('client-errors', 'client', 'error_rate', '<=', 0.02))
            as r(requirement_id, side, metric, op, threshold)
    where runs.campaign like 'campaign-%'
);

insert into verdicts by name  -- each iteration judged as the whole run (the lines the site's marks join on)
select verdicts.* replace (it.iteration as iteration)
from verdicts, range(1, 4) as it(iteration)
where verdicts.iteration is null and verdicts.run_id in (select run_id from runs where campaign like 'campaign-%');

insert into requirements by name
select distinct run_id, requirement_id, split_part(metric, '.', 1) as metric, op, threshold, side
from verdicts
where run_id in (select run_id from runs where campaign like 'campaign-%');

insert into capacity by name
select runs.run_id, side, '' as series, 300.0 * (0.97 + 0.06 * random()) as max_calls_per_s, 3 as max_iteration,
    if(i % 3 = 0, 2, null) as knee_iteration, if(i % 3 = 0, 20.0, null) as knee_load_level,
    if(i % 3 = 0, 'vus=20', null) as knee_load, if(i % 3 = 0, 200.0, null) as knee_calls_per_s
from (select *, substr(run_id, -4)::int as i from runs where campaign like 'campaign-%') runs,
    (values ('server'), ('client')) s(side)
"""
ONE_MORE = """
insert into runs by name
select 'c0-extra' as run_id, 'campaign-0' as campaign, 'nightly' as scenario, map(['sut_version'], ['9']) as labels,
    'completed' as status, timestamptz '2030-01-01 02:00:00+00' as started_at,
    timestamptz '2030-01-01 02:30:00+00' as ended_at, '{}'::json as manifest, '/bundles/c0-extra' as bundle_uri
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--campaigns", type=int, default=20)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--keep", type=Path, help="build the warehouse and the site in this folder and keep them")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-site-"))
    work.mkdir(parents=True, exist_ok=True)
    warehouse, out = work / "site.duckdb", work / "site"
    warehouse.unlink(missing_ok=True)
    shutil.rmtree(out, ignore_errors=True)
    ingest_bundle(ROOT / "tests" / "data" / "samples" / "bundle-echo", warehouse, progress=lambda message: None)
    started = time.perf_counter()
    with open_warehouse(warehouse, write=True) as con:
        for statement in filter(str.strip, SYNTHETIC.split(";")):
            con.execute(statement, {k: v for k, v in {"campaigns": args.campaigns, "runs": args.runs}.items()
                                    if f"${k}" in statement})
    print(f"synthetic warehouse: {args.campaigns} campaigns x {args.runs} runs, {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    first = build_site(warehouse, out)
    built = time.perf_counter() - started
    sizes = sorted(((out / p).stat().st_size, p) for p in first.pages)
    print(f"whole site: {built:.2f} s (target < 30 s), {len(first.pages)} pages, "
          f"{sum(s for s, _ in sizes) / 1e6:.1f} MB; largest page {sizes[-1][0] / 1e3:.0f} kB ({sizes[-1][1]}; "
          f"target < 1,000 kB)")
    started = time.perf_counter()
    same = build_site(warehouse, out)
    print(f"rebuild, nothing new: {time.perf_counter() - started:.2f} s, {len(same.written)} pages written")
    with open_warehouse(warehouse, write=True) as con:
        con.execute(ONE_MORE)
    started = time.perf_counter()
    after = build_site(warehouse, out)
    print(f"rebuild after one more run: {time.perf_counter() - started:.2f} s, {len(after.written)} pages written "
          f"({', '.join(after.written)})")
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
