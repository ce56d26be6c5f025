"""Data expectations (Great Expectations suites in expectations/) run on a stored run, and its validation page.
May import: bundle, warehouse, settings."""
