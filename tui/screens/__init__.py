"""The console's screens: battle, ledger, entry detail, help."""
