"""The lake's fixtures, for the marts' checks that `on_both_engines` runs on a file and on a lake."""

from tests.lakeserver import new_lake, pg_server, s3_endpoint  # noqa: F401 - fixtures of the lake engine
