"""Fixtures shared by the ledger tests (helpers live in ``ledger_fixtures``)."""

from ledger_fixtures import home, ledger, verify_workers

__all__ = ["home", "ledger", "verify_workers"]
