"""Campaign files and one run of a campaign: the spec, the ramp, the stage lock, the run and its Prefect steps.
May import: bundle, stage, loadtools, store, settings."""
