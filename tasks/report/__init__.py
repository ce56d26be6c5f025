"""The run report and comparisons: conclusions from the warehouse as HTML, Markdown, JSON and JUnit; run against run.
May import: bundle, store, warehouse, validate, settings."""
