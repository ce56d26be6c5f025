"""Load tools on the generators, one module per tool with one lifecycle: prepare, start, wait, stop, collect.
May import: bundle, stage, settings."""
