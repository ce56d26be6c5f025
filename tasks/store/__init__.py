"""Bundle stores (a local folder or S3): bundles kept forever, verified by their SHA256SUMS.
May import: bundle, settings."""
