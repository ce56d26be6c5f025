"""The `perfcampaign` command: one module per command group, output that fits a terminal.
May import: every package, and flows (only inside the commands that run a flow)."""
