"""Hidden drivers for the Bank contract.

Drivers record what the bank answers (``see``, ``call``); the host compares
the record with the reference solution's. No expected value appears here.
"""

import contextlib
import random
import threading
from decimal import Decimal

from observe import call, drawn, see
from solution import Bank

D = Decimal

INVALID_AMOUNTS = [
    D(0), D("-0.01"), D(-5), D("NaN"), D("sNaN"), D("Infinity"), D("-Infinity"),
    1.5, 5, "5", True, None,
]


def run_threads(target, args_list, wait_s=5.0):
    """Start daemon threads together; after all end (or ``wait_s``), return [still running, ended by an exception].

    One bounded wait for all of them, so deadlocked workers cost ``wait_s`` once, not once per thread.
    Callers observe this first and stop if a worker is still running: reading the bank could block on a
    lock a stuck worker holds.
    """
    count = len(args_list)
    barrier = threading.Barrier(count)
    lock = threading.Lock()
    all_ended = threading.Event()
    ended = {"normally": 0, "raising": 0}

    def wrapped(*args):
        how = "raising"
        try:
            barrier.wait()
            target(*args)
            how = "normally"
        finally:
            with lock:
                ended[how] += 1
                if ended["normally"] + ended["raising"] == count:
                    all_ended.set()

    threads = [threading.Thread(target=wrapped, args=args, daemon=True) for args in args_list]
    for t in threads:
        t.start()
    if all_ended.wait(wait_s):
        for t in threads:
            t.join()
    with lock:
        return [count - ended["normally"] - ended["raising"], ended["raising"]]


def balances(bank, names):
    return [call(bank.balance, name) for name in names]


class TestAccounts:
    def test_new_account_defaults_to_zero_decimal(self):
        bank = Bank()
        bank.open_account("alice")
        see(bank.balance("alice"))
        see(bank.balance("alice"))

    def test_initial_balance(self):
        bank = Bank()
        bank.open_account("bob", D("125.50"))
        see(bank.balance("bob"))
        bank.open_account("carol", D("0.001"))
        see(bank.balance("carol"))

    def test_duplicate_account_rejected_and_balance_kept(self):
        bank = Bank()
        for name, initial in (("a", D(10)), ("b", D(1)), ("a", D(99)), ("b", D(0)), ("c", D(7))):
            call(bank.open_account, name, initial)
        balances(bank, "abc")

    def test_invalid_initial_balance(self):
        bank = Bank()
        candidates = (D(-1), D(0), D("NaN"), D("12.5"), D("Infinity"), 10.0, D("-0.01"), "10", 10, D(3))
        for i, initial in enumerate(candidates):
            call(bank.open_account, f"x-{i}", initial)
        balances(bank, [f"x-{i}" for i in range(len(candidates))])

    def test_unknown_account_raises_key_error(self):
        bank = Bank()
        bank.open_account("a", D(10))
        bank.open_account("b", D(10))
        call(bank.balance, "ghost")
        call(bank.balance, "a")
        call(bank.deposit, "ghost", D(1))
        call(bank.deposit, "b", D(1))
        call(bank.withdraw, "ghost", D(1))
        call(bank.withdraw, "a", D(1))
        call(bank.transfer, "a", "ghost", D(1))
        call(bank.transfer, "ghost", "a", D(1))
        call(bank.transfer, "b", "a", D(2))
        call(bank.transfer, "ghost", "phantom", D(1))
        balances(bank, ["a", "b", "ghost"])


class TestMoney:
    def test_decimal_arithmetic_is_exact(self):
        bank = Bank()
        bank.open_account("a")
        bank.deposit("a", D("0.1"))
        bank.deposit("a", D("0.2"))
        see(bank.balance("a"))
        bank.withdraw("a", D("0.3"))
        see(bank.balance("a"))
        for _ in range(10):
            bank.deposit("a", D("0.1"))
        see(bank.balance("a"))

    def test_withdraw_entire_balance_allowed_overdraft_rejected(self):
        bank = Bank()
        bank.open_account("a", D("50.00"))
        call(bank.withdraw, "a", D("50.01"))
        see(bank.balance("a"))
        call(bank.withdraw, "a", D("50.00"))
        see(bank.balance("a"))
        call(bank.withdraw, "a", D("0.01"))
        see(bank.balance("a"))

    def test_invalid_amounts_rejected_everywhere_and_change_nothing(self):
        bank = Bank()
        bank.open_account("a", D(100))
        bank.open_account("b", D(100))
        for amount in [*INVALID_AMOUNTS[:6], D("0.01"), *INVALID_AMOUNTS[6:], D(3)]:
            call(bank.deposit, "a", amount)
            call(bank.withdraw, "a", amount)
            call(bank.transfer, "a", "b", amount)
            balances(bank, "ab")

    def test_transfer_moves_money(self):
        bank = Bank()
        bank.open_account("a", D("10.25"))
        bank.open_account("b")
        call(bank.transfer, "a", "b", D("4.05"))
        balances(bank, "ab")
        call(bank.transfer, "b", "a", D("4.05"))
        balances(bank, "ab")

    def test_transfer_overdraft_is_all_or_nothing(self):
        bank = Bank()
        bank.open_account("a", D(5))
        bank.open_account("b", D(1))
        call(bank.transfer, "a", "b", D("5.01"))
        balances(bank, "ab")
        call(bank.transfer, "a", "b", D(5))
        balances(bank, "ab")

    def test_transfer_to_unknown_destination_does_not_debit(self):
        bank = Bank()
        bank.open_account("a", D(5))
        bank.open_account("b", D(0))
        call(bank.transfer, "a", "nobody", D(2))
        call(bank.transfer, "a", "b", D(2))
        call(bank.transfer, "a", "nobody", D(1))
        balances(bank, ["a", "b", "nobody"])

    def test_transfer_to_same_account_rejected(self):
        bank = Bank()
        bank.open_account("a", D(5))
        bank.open_account("b", D(5))
        call(bank.transfer, "a", "a", D(1))
        call(bank.transfer, "a", "b", D(1))
        call(bank.transfer, "b", "b", D(100))
        balances(bank, "ab")

    def test_random_sequence_matches_model(self):
        rng = drawn("sequence")
        bank = Bank()
        for name in "abcd":
            bank.open_account(name, D(rng.randrange(0, 5000)) / 100)
        for _ in range(1500):
            op = rng.choice(("deposit", "withdraw", "transfer"))
            amount = D(rng.randrange(1, 3000)) / 100
            src, dst = rng.sample("abcd", 2)
            if op == "deposit":
                call(bank.deposit, src, amount)
            elif op == "withdraw":
                call(bank.withdraw, src, amount)
            else:
                call(bank.transfer, src, dst, amount)
        balances(bank, "abcd")


class TestConcurrency:
    def test_concurrent_transfers_conserve_money(self):
        bank = Bank()
        names = [f"acct-{i}" for i in range(5)]
        for name in names:
            bank.open_account(name, D(1000))
        attempts = []

        def worker(seed):
            rng = random.Random(seed)
            done = 0
            for _ in range(400):
                src, dst = rng.sample(names, 2)
                with contextlib.suppress(ValueError):
                    bank.transfer(src, dst, D(rng.randrange(1, 50000)) / 100)
                done += 1
            attempts.append(done)

        if see(run_threads(worker, [(s,) for s in range(8)]))[0]:
            return
        see(sum(attempts))
        final = [bank.balance(n) for n in names]
        see(sum(final))
        see(sum(1 for b in final if b < 0))

    def test_concurrent_deposits_are_not_lost(self):
        bank = Bank()
        bank.open_account("pot")

        def worker():
            for _ in range(1000):
                bank.deposit("pot", D("0.01"))

        if see(run_threads(worker, [()] * 8))[0]:
            return
        see(bank.balance("pot"))

    def test_concurrent_withdrawals_never_overdraw(self):
        bank = Bank()
        bank.open_account("a", D(100))
        successes = []

        def worker():
            ok = 0
            for _ in range(30):
                try:
                    bank.withdraw("a", D(1))
                    ok += 1
                except ValueError:
                    pass
            successes.append(ok)

        if see(run_threads(worker, [()] * 10))[0]:
            return
        see(sum(successes))
        see(bank.balance("a"))

    def test_opposite_transfers_do_not_deadlock(self):
        bank = Bank()
        bank.open_account("x", D(1000))
        bank.open_account("y", D(1000))

        def worker(src, dst):
            for _ in range(2000):
                bank.transfer(src, dst, D(1))
                bank.transfer(dst, src, D(1))

        if see(run_threads(worker, [("x", "y"), ("y", "x")] * 3))[0]:
            return
        see(bank.balance("x") + bank.balance("y"))
