-- Report query: whether the warehouse has the `reports` table yet (create_reports.sql makes it when a report
-- is first published).
-- grain: one row
-- upstream: none
select count(*) > 0 as has_reports from duckdb_tables() where table_name = 'reports' and not temporary
