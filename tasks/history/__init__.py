"""Nightly history: comparable series across runs and the change points in them.
May import: bundle, warehouse, settings."""
