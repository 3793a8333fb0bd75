"""simdup: near-duplicate text detection with SimHash (see README.md and docs/python.md)."""
