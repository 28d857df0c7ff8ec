"""The audit ledger: a pure library that imports nothing of ``logomesh``."""
