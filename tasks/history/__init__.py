"""Nightly history: comparable series across runs and the change points in them.
May import numpy/scipy and tasks.bundle; nothing from flows/."""
