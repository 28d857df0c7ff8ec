from observe import call, see
from solution import TicketCounter


def test_first_tickets():
    counter = TicketCounter(5)
    see([counter.take() for _ in range(3)])
    see(counter.issued())


def test_rejects_bad_start():
    for value in (-1, 1.5, "0", None, 0):
        call(TicketCounter, value)
