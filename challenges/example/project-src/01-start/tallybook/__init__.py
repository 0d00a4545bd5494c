"""tallybook: a household ledger in a CSV file."""

__version__ = "0.1.0"
