"""The perflog bundle, the contract between running and analysing: manifest models, source kinds, file formats.
May import: nothing of the project (every other package may import it)."""
