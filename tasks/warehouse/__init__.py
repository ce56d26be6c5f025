"""The DuckDB warehouse: connection and lock, the SQL model runner, the ingest, clock skew, readers of every kind.
May import: bundle, store (a lake's S3 keys from a Prefect block), settings."""
