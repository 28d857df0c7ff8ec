"""Judge tests for the Bank contract."""

import random
import threading
import unittest
from decimal import Decimal

from solution import Bank

D = Decimal

INVALID_AMOUNTS = [
    D(0), D("-0.01"), D(-5), D("NaN"), D("sNaN"), D("Infinity"), D("-Infinity"),
    1.5, 5, "5", True, None,
]


def run_threads(target, args_list, timeout=5.0):
    """Start daemon threads together; return how many are still alive after the timeout."""
    barrier = threading.Barrier(len(args_list))

    def wrapped(*args):
        barrier.wait()
        target(*args)

    threads = [threading.Thread(target=wrapped, args=args, daemon=True) for args in args_list]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    return sum(t.is_alive() for t in threads)


class TestAccounts(unittest.TestCase):
    def test_new_account_defaults_to_zero_decimal(self):
        bank = Bank()
        bank.open_account("alice")
        self.assertEqual(bank.balance("alice"), D(0))
        self.assertIsInstance(bank.balance("alice"), Decimal)

    def test_initial_balance(self):
        bank = Bank()
        bank.open_account("bob", D("125.50"))
        self.assertEqual(bank.balance("bob"), D("125.50"))

    def test_duplicate_account_rejected_and_balance_kept(self):
        bank = Bank()
        bank.open_account("a", D(10))
        with self.assertRaises(ValueError):
            bank.open_account("a", D(99))
        self.assertEqual(bank.balance("a"), D(10))

    def test_invalid_initial_balance(self):
        bank = Bank()
        for bad in (D(-1), D("NaN"), D("Infinity"), 10.0, "10"):
            with self.assertRaises(ValueError, msg=repr(bad)):
                bank.open_account("x-%r" % (bad,), bad)

    def test_unknown_account_raises_key_error(self):
        bank = Bank()
        bank.open_account("a", D(10))
        with self.assertRaises(KeyError):
            bank.balance("ghost")
        with self.assertRaises(KeyError):
            bank.deposit("ghost", D(1))
        with self.assertRaises(KeyError):
            bank.withdraw("ghost", D(1))
        with self.assertRaises(KeyError):
            bank.transfer("a", "ghost", D(1))
        with self.assertRaises(KeyError):
            bank.transfer("ghost", "a", D(1))
        self.assertEqual(bank.balance("a"), D(10))


class TestMoney(unittest.TestCase):
    def test_decimal_arithmetic_is_exact(self):
        bank = Bank()
        bank.open_account("a")
        bank.deposit("a", D("0.1"))
        bank.deposit("a", D("0.2"))
        self.assertEqual(bank.balance("a"), D("0.3"))
        bank.withdraw("a", D("0.3"))
        self.assertEqual(bank.balance("a"), D(0))

    def test_withdraw_entire_balance_allowed_overdraft_rejected(self):
        bank = Bank()
        bank.open_account("a", D("50.00"))
        with self.assertRaises(ValueError):
            bank.withdraw("a", D("50.01"))
        self.assertEqual(bank.balance("a"), D("50.00"))
        bank.withdraw("a", D("50.00"))
        self.assertEqual(bank.balance("a"), D(0))
        with self.assertRaises(ValueError):
            bank.withdraw("a", D("0.01"))

    def test_invalid_amounts_rejected_everywhere_and_change_nothing(self):
        bank = Bank()
        bank.open_account("a", D(100))
        bank.open_account("b", D(100))
        for bad in INVALID_AMOUNTS:
            for call in (
                lambda: bank.deposit("a", bad),
                lambda: bank.withdraw("a", bad),
                lambda: bank.transfer("a", "b", bad),
            ):
                with self.assertRaises(ValueError, msg=repr(bad)):
                    call()
        self.assertEqual(bank.balance("a"), D(100))
        self.assertEqual(bank.balance("b"), D(100))

    def test_transfer_moves_money(self):
        bank = Bank()
        bank.open_account("a", D("10.25"))
        bank.open_account("b")
        bank.transfer("a", "b", D("4.05"))
        self.assertEqual(bank.balance("a"), D("6.20"))
        self.assertEqual(bank.balance("b"), D("4.05"))

    def test_transfer_overdraft_is_all_or_nothing(self):
        bank = Bank()
        bank.open_account("a", D(5))
        bank.open_account("b", D(1))
        with self.assertRaises(ValueError):
            bank.transfer("a", "b", D("5.01"))
        self.assertEqual(bank.balance("a"), D(5))
        self.assertEqual(bank.balance("b"), D(1))

    def test_transfer_to_unknown_destination_does_not_debit(self):
        bank = Bank()
        bank.open_account("a", D(5))
        with self.assertRaises(KeyError):
            bank.transfer("a", "nobody", D(2))
        self.assertEqual(bank.balance("a"), D(5))

    def test_transfer_to_same_account_rejected(self):
        bank = Bank()
        bank.open_account("a", D(5))
        with self.assertRaises(ValueError):
            bank.transfer("a", "a", D(1))
        self.assertEqual(bank.balance("a"), D(5))

    def test_random_sequence_matches_model(self):
        rng = random.Random(99)
        bank = Bank()
        model = {}
        for name in "abcd":
            start = D(rng.randrange(0, 5000)) / 100
            bank.open_account(name, start)
            model[name] = start
        for _ in range(1500):
            op = rng.choice(("deposit", "withdraw", "transfer"))
            amount = D(rng.randrange(1, 3000)) / 100
            src, dst = rng.sample("abcd", 2)
            if op == "deposit":
                bank.deposit(src, amount)
                model[src] += amount
            elif op == "withdraw":
                if amount > model[src]:
                    with self.assertRaises(ValueError):
                        bank.withdraw(src, amount)
                else:
                    bank.withdraw(src, amount)
                    model[src] -= amount
            else:
                if amount > model[src]:
                    with self.assertRaises(ValueError):
                        bank.transfer(src, dst, amount)
                else:
                    bank.transfer(src, dst, amount)
                    model[src] -= amount
                    model[dst] += amount
        for name in "abcd":
            self.assertEqual(bank.balance(name), model[name])


class TestConcurrency(unittest.TestCase):
    def test_concurrent_transfers_conserve_money(self):
        bank = Bank()
        names = ["acct-%d" % i for i in range(5)]
        for name in names:
            bank.open_account(name, D(1000))

        def worker(seed):
            rng = random.Random(seed)
            for _ in range(400):
                src, dst = rng.sample(names, 2)
                try:
                    bank.transfer(src, dst, D(rng.randrange(1, 50000)) / 100)
                except ValueError:
                    pass

        stuck = run_threads(worker, [(s,) for s in range(8)])
        self.assertEqual(stuck, 0, "transfers deadlocked")
        balances = [bank.balance(n) for n in names]
        self.assertEqual(sum(balances), D(5000))
        self.assertTrue(all(b >= 0 for b in balances), balances)

    def test_concurrent_deposits_are_not_lost(self):
        bank = Bank()
        bank.open_account("pot")

        def worker():
            for _ in range(1000):
                bank.deposit("pot", D("0.01"))

        self.assertEqual(run_threads(worker, [()] * 8), 0)
        self.assertEqual(bank.balance("pot"), D("80.00"))

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

        self.assertEqual(run_threads(worker, [()] * 10), 0)
        self.assertEqual(sum(successes), 100)
        self.assertEqual(bank.balance("a"), D(0))

    def test_opposite_transfers_do_not_deadlock(self):
        bank = Bank()
        bank.open_account("x", D(1000))
        bank.open_account("y", D(1000))

        def worker(src, dst):
            for _ in range(2000):
                bank.transfer(src, dst, D(1))
                bank.transfer(dst, src, D(1))

        stuck = run_threads(worker, [("x", "y"), ("y", "x")] * 3)
        self.assertEqual(stuck, 0, "opposite transfers deadlocked")
        self.assertEqual(bank.balance("x") + bank.balance("y"), D(2000))


if __name__ == "__main__":
    unittest.main()
