"""In-memory bank with exact Decimal balances, safe under concurrent use."""

from __future__ import annotations

import threading
from decimal import Decimal
from typing import Dict


def _check_amount(amount: object) -> Decimal:
    """A valid amount is a finite Decimal > 0 (bool/int/float/str are rejected)."""
    if not isinstance(amount, Decimal) or not amount.is_finite() or amount <= 0:
        raise ValueError(f"amount must be a finite positive Decimal, got {amount!r}")
    return amount


class Bank:
    """Accounts and balances behind one lock.

    A single lock makes every operation linearizable and rules out lock-order
    deadlocks between opposite transfers; each critical section is a few
    dictionary operations, so contention is cheap.
    """

    def __init__(self) -> None:
        self._balances: Dict[str, Decimal] = {}
        self._lock = threading.Lock()

    def open_account(self, account_id: str, initial: Decimal = Decimal(0)) -> None:
        if not isinstance(initial, Decimal) or not initial.is_finite() or initial < 0:
            raise ValueError(f"initial balance must be a finite Decimal >= 0, got {initial!r}")
        with self._lock:
            if account_id in self._balances:
                raise ValueError(f"account {account_id!r} already exists")
            self._balances[account_id] = initial + Decimal(0)

    def deposit(self, account_id: str, amount: Decimal) -> None:
        amount = _check_amount(amount)
        with self._lock:
            self._balances[account_id] = self._existing(account_id) + amount

    def withdraw(self, account_id: str, amount: Decimal) -> None:
        amount = _check_amount(amount)
        with self._lock:
            current = self._existing(account_id)
            if amount > current:
                raise ValueError(f"insufficient funds in {account_id!r}")
            self._balances[account_id] = current - amount

    def transfer(self, src: str, dst: str, amount: Decimal) -> None:
        amount = _check_amount(amount)
        with self._lock:
            source = self._existing(src)
            target = self._existing(dst)
            if src == dst:
                raise ValueError("cannot transfer to the same account")
            if amount > source:
                raise ValueError(f"insufficient funds in {src!r}")
            self._balances[src] = source - amount
            self._balances[dst] = target + amount

    def balance(self, account_id: str) -> Decimal:
        with self._lock:
            return self._existing(account_id)

    def _existing(self, account_id: str) -> Decimal:
        try:
            return self._balances[account_id]
        except KeyError:
            raise KeyError(account_id) from None
