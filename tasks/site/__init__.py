"""The team's site: a static page per campaign, event and the home page, built from the warehouse, published with the store.
May import: bundle, store, warehouse, report, settings."""
