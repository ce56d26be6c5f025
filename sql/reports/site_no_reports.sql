-- Statement: an empty `reports` table for this connection only, when the warehouse has none yet (no report
-- was published from it), so the site's queries can read it; the same columns as create_reports.sql. Made only
-- when there is none (tasks/site/data.py asks site_has_reports.sql): a temporary table hides a stored one.
-- grain: none (no rows)
-- upstream: none
create temp table if not exists reports (run_id varchar, uri varchar, created_at timestamptz)
