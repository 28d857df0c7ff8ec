"""The ledger browser: the entries table and the entry detail view."""
