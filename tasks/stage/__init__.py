"""The stage hosts: transports (SSH, local), provisioning and teardown steps, monitors on the hosts.
May import: bundle, settings."""
