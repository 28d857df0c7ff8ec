"""The one exception family the ledger raises for bad input or a broken store."""

from __future__ import annotations


class LedgerError(ValueError):
    """A problem the caller can act on; the message names it and the fix."""


class DuplicateBattleError(LedgerError):
    """The battle id is already in the ledger: entries are never replaced."""
