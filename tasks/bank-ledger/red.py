"""Red-agent scenarios for bank-ledger. Stdlib only.

The scenarios run INSIDE the sandbox, in the judge's driver process, where
``solution`` is the answerer's proxies: they record what the code answered;
``check_race`` judges the race record on the host.

The interface is in docs/tasks.md, "Red-agent scenarios"; the [red] tables of
task.toml say which of these the red agent uses and how it describes them.
"""

from __future__ import annotations

import contextlib
import random
from decimal import Decimal
from typing import Any

import solution


NAMES = ("a", "b", "c", "d")


def subject(args: dict[str, Any]) -> Any:
    """The bank the race threads share, four accounts of 100; the host builds it from the reference to judge
    their history."""
    bank = solution.Bank()
    for name in NAMES:
        bank.open_account(name, Decimal(100))
    return bank


def race(args: dict[str, Any], seed: int, run_threads: Any) -> dict[str, Any]:
    """Threads transfer between four accounts of 100; records each transfer's outcome and every balance after."""
    bank = subject(args)
    names = list(NAMES)
    done: list[list[str]] = []  # [source, destination, amount] of each transfer that was not refused

    def work(index: int, rng: random.Random) -> None:
        for _ in range(int(args.get("ops", 40))):
            src, dst = rng.sample(names, 2)
            amount = Decimal(rng.randint(1, 30))
            with contextlib.suppress(ValueError):  # an overdraft refused cleanly is correct
                bank.transfer(src, dst, amount)
                done.append([src, dst, str(amount)])

    errors = run_threads(int(args.get("threads", 6)), seed, float(args.get("chance", 0.05)), work)
    balances = {}
    for name in names:
        got = bank.balance(name)
        balances[name] = str(got) if type(got) is Decimal else repr(got)[:40]
    return {"opening": "100", "done": done, "balances": balances, "errors": errors}


def check_race(args: dict[str, Any], observed: dict[str, Any]) -> list[str]:
    """On the host: each account must end at its opening balance plus what the transfers that went through
    moved in and out (any serial order of them gives that), and no balance below zero. Totals alone can be
    reconciled by code that moves drift between accounts; per-account balances cannot."""
    violations = [str(e) for e in observed["errors"]]
    opening = Decimal(str(observed["opening"]))
    balances = {str(k): str(v) for k, v in dict(observed["balances"]).items()}
    expected = {name: opening for name in balances}
    for src, dst, amount in observed["done"]:
        expected[str(src)] -= Decimal(str(amount))
        expected[str(dst)] += Decimal(str(amount))
    for name in sorted(balances):
        try:
            got = Decimal(balances[name])
        except ArithmeticError:
            violations.append(f"balance({name!r}) is {balances[name]}, not a Decimal")
            continue
        if got != expected[name]:
            violations.append(f"balance({name!r}) is {got} after the threads; the transfers that went through "
                              f"leave {expected[name]}")
        if got < 0:
            violations.append(f"overdraft under concurrency: balance({name!r}) is {got}")
    total = sum((Decimal(v) for v in balances.values() if _is_decimal(v)), Decimal(0))
    if total != opening * len(balances):
        violations.append(f"money not conserved: balances sum to {total}, not {opening * len(balances)}")
    return violations


def _is_decimal(text: str) -> bool:
    try:
        Decimal(text)
    except ArithmeticError:
        return False
    return True


ACCOUNTS = ("a", "b")
UNKNOWN = "z"  # an id no account was opened under: KeyError, for either side of a transfer


def model(rng: random.Random, steps: int) -> dict[str, Any]:
    """Deposits, withdrawals and transfers, some aliased (a transfer to its own source), some on an unknown
    account, some with an invalid amount, each at most one fault; records the exception class each call
    raised (None, ValueError, KeyError or another name) and every balance after it."""
    bank = solution.Bank()
    opening = {"a": "50", "b": "50"}
    for name, amount in opening.items():
        bank.open_account(name, Decimal(amount))
    record: list[dict[str, Any]] = []
    for _ in range(steps):
        op = rng.choice(["deposit", "withdraw", "transfer", "transfer"])
        amount = Decimal(rng.randint(1, 40)) / (10 if rng.random() < 0.3 else 1)
        src, dst = rng.sample(ACCOUNTS, 2)
        fault = rng.random()
        if fault < 0.15 and op == "transfer":
            dst = src  # aliased: the same account on both sides
        elif fault < 0.25:
            src = UNKNOWN if op != "transfer" or rng.random() < 0.5 else src
            dst = UNKNOWN if src != UNKNOWN else dst
        elif fault < 0.3:
            amount = rng.choice([Decimal(0), Decimal(-1) * amount])
        args = (src, dst, amount) if op == "transfer" else (src, amount)
        raised = None
        try:
            getattr(bank, op)(*args)
        except ValueError:
            raised = "ValueError"
        except KeyError:
            raised = "KeyError"
        except Exception as exc:
            raised = type(exc).__name__[:40]
        balances = {}
        for name in opening:
            try:
                got = bank.balance(name)
            except Exception as exc:
                got = exc
            balances[name] = str(got) if type(got) is Decimal else repr(got)[:40]
        record.append({"op": op, "args": [str(a) for a in args], "raised": raised, "balances": balances})
    return {"opening": opening, "steps": record}


def expected_error(ledger: dict[str, Decimal], op: str, op_args: list[str]) -> str | None:
    """What the contract says the call raises (the model makes at most one fault per call)."""
    accounts, amount = op_args[:-1], Decimal(op_args[-1])
    if amount <= 0:
        return "ValueError"
    if any(a not in ledger for a in accounts):
        return "KeyError"
    if op == "transfer" and accounts[0] == accounts[1]:
        return "ValueError"
    if op != "deposit" and ledger[accounts[0]] < amount:
        return "ValueError"
    return None


def check_model(args: dict[str, Any], observed: dict[str, Any]) -> list[str]:
    """On the host: the calls up to the first call that raised what the contract does not say (or did not
    raise what it says), or the first balance a dict of Decimals disagrees with (money created or lost)."""
    ledger = {str(k): Decimal(str(v)) for k, v in dict(observed["opening"]).items()}
    calls = [f"bank.open_account({name!r}, Decimal('{amount}'))" for name, amount in ledger.items()]
    for step in observed["steps"]:
        op, op_args = str(step["op"]), [str(a) for a in step["args"]]
        amount = Decimal(op_args[-1])
        shown = ", ".join([*(repr(a) for a in op_args[:-1]), f"Decimal('{amount}')"])
        calls.append(f"bank.{op}({shown})")
        want, got = expected_error(ledger, op, op_args), step["raised"]
        if got != want:
            said = f"raised {got}" if got else "returned normally"
            return [*calls, f"# {said}; the contract says {'it raises ' + want if want else 'it succeeds'}"]
        if want is None:
            if op == "deposit":
                ledger[op_args[0]] += amount
            else:
                ledger[op_args[0]] -= amount
                if op == "transfer":
                    ledger[op_args[1]] += amount
        for name, balance in ledger.items():
            shown_balance = str(step["balances"].get(name))
            if not _is_decimal(shown_balance) or Decimal(shown_balance) != balance:
                return [*calls, f"# balance({name!r}) is {shown_balance}; the ledger says {balance}"]
    return []


