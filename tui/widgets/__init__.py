"""Widgets, grouped by feature: ``battle/`` for the live battle, ``ledger/`` for the ledger browser."""
