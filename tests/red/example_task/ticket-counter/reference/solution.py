import threading


class TicketCounter:
    def __init__(self, start=0):
        if isinstance(start, bool) or not isinstance(start, int) or start < 0:
            raise ValueError("start must be a non-negative int")
        self._last = start
        self._issued = 0
        self._lock = threading.Lock()

    def take(self):
        with self._lock:
            self._last += 1
            self._issued += 1
            return self._last

    def issued(self):
        with self._lock:
            return self._issued
