"""Source edits that hostile submissions of the adversarial suites share (test_judge_*.py)."""

from __future__ import annotations

ALLOW = "    def allow(self, key: str) -> bool:\n"
BALANCE = "    def balance(self, account_id: str) -> Decimal:\n        return self._balances[account_id]\n"


def reconciled(source: str) -> str:
    """The lockless bank that reports the last account as whatever keeps the total at 400, none negative."""
    changed = source.replace(BALANCE, (
        "    def balance(self, account_id: str) -> Decimal:\n"
        "        names = sorted(self._balances)\n"
        "        if account_id != names[-1]:\n"
        "            return max(self._balances[account_id], Decimal(0))\n"
        "        others = sum(max(self._balances[n], Decimal(0)) for n in names[:-1])\n"
        "        return Decimal(100) * len(names) - others\n"), 1)
    assert changed != source, "the bank's balance() is not where the edit expects it"
    return changed
