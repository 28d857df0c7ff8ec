"""Red-agent scenarios for bank-ledger. Stdlib only; runs INSIDE the sandbox as ``_lm_task.py``.

The interface is in docs/tasks.md, "Red-agent scenarios"; the [red] tables of
task.toml say which of these the red agent uses and how it describes them.
"""

from __future__ import annotations

import contextlib
import random
from decimal import Decimal
from typing import Any

import solution


def race(args: dict[str, Any], seed: int, run_threads: Any) -> list[str]:
    """Threads transfer between four accounts of 100: money is conserved and no balance goes negative."""
    bank = solution.Bank()
    names = ["a", "b", "c", "d"]
    for name in names:
        bank.open_account(name, Decimal(100))
    violations: list[str] = []

    def work(index: int, rng: random.Random) -> None:
        for _ in range(int(args.get("ops", 40))):
            src, dst = rng.sample(names, 2)
            with contextlib.suppress(ValueError):  # an overdraft refused cleanly is correct
                bank.transfer(src, dst, Decimal(rng.randint(1, 30)))

    violations += run_threads(int(args.get("threads", 6)), seed, float(args.get("chance", 0.05)), work)
    balances = [bank.balance(n) for n in names]
    if sum(balances) != Decimal(400):
        violations.append(f"money not conserved: balances {[str(b) for b in balances]} sum to {sum(balances)}, not 400")
    if any(b < 0 for b in balances):
        violations.append(f"overdraft under concurrency: balances {[str(b) for b in balances]}")
    return violations


def model(rng: random.Random, steps: int) -> list[str]:
    """Deposits, withdrawals and transfers against a dict of Decimals; refusals must change nothing."""
    bank = solution.Bank()
    ledger = {"a": Decimal(50), "b": Decimal(50)}
    calls = []
    for name, amount in ledger.items():
        bank.open_account(name, amount)
        calls.append(f"bank.open_account({name!r}, Decimal('{amount}'))")
    for _ in range(steps):
        op = rng.choice(["deposit", "withdraw", "transfer"])
        amount = Decimal(rng.randint(1, 40)) / (10 if rng.random() < 0.3 else 1)
        src, dst = rng.sample(["a", "b"], 2)
        args = (src, dst, amount) if op == "transfer" else (src, amount)
        calls.append(f"bank.{op}({', '.join(repr(a) for a in args[:-1])}, Decimal('{amount}'))")
        refused = False
        try:
            getattr(bank, op)(*args)
        except ValueError:
            refused = True
        allowed = op == "deposit" or ledger[src] >= amount
        if refused and allowed:
            return [*calls, "# refused a valid operation"]
        if not refused and not allowed:
            return [*calls, "# allowed an overdraft"]
        if allowed:
            if op == "deposit":
                ledger[src] += amount
            else:
                ledger[src] -= amount
                if op == "transfer":
                    ledger[dst] += amount
        for name in ledger:
            if bank.balance(name) != ledger[name]:
                return [*calls, f"# balance({name!r}) is {bank.balance(name)}; the ledger says {ledger[name]}"]
    return []
