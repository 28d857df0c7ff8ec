"""Fixtures shared by the ledger tests (helpers live in ``ledger_fixtures``)."""

from ledger_fixtures import home, ledger

__all__ = ["home", "ledger"]
