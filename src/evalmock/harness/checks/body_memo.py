"""What was read from a response body, remembered by the body's bytes: clients fetch the same pages
again and again (a refetch on focus, a poll, React's development mode fetching twice), and a proxy
judges each of them.

The key is the body itself (with whatever else the reading depends on), never a hash of it: an equal
key is an equal body, byte for byte, so a remembered reading is the reading that body gives. Python
hashes a bytes object once and keeps the hash on it, so every memo an exchange is looked up in costs
one hash of its body.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

T = TypeVar("T")

# A body larger than this is read every time: one such body would crowd out a hundred pages.
LARGEST = 256 * 2**10


class BodyMemo(Generic[T]):
    """Readings of bodies no larger than `largest`, at most `budget` bytes of bodies in all; when
    full, the oldest readings are forgotten first, as many as the new one needs (no order of use is
    kept: a client's pages come back in walks, which an LRU's bookkeeping would cost more than it
    saves). Forgetting a few at a time, not all at once, keeps the cost of freeing them off any one
    request: a full memory of parsed pages took milliseconds to free."""

    def __init__(self, budget: int, largest: int = LARGEST) -> None:
        self.budget = budget
        self.largest = largest
        self._held = 0
        self._readings: OrderedDict[tuple[Hashable, bytes], T] = OrderedDict()
        # The audit's worker threads share a memory: two that forget at once could both take the
        # last reading. A look-up is one dictionary operation and needs no lock.
        self._changing = threading.Lock()

    def get(self, body: bytes, context: Hashable = None) -> T | None:
        """The reading remembered for `body` (and `context`: what else it depends on), or None."""
        return self._readings.get((context, body))

    def put(self, body: bytes, reading: T, context: Hashable = None) -> None:
        if len(body) > self.largest:
            return
        with self._changing:
            readings = self._readings
            if (context, body) in readings:
                return
            while readings and self._held + len(body) > self.budget:
                (_, oldest), _ = readings.popitem(last=False)
                self._held -= len(oldest)
            readings[(context, body)] = reading
            self._held += len(body)

    def forget(self) -> None:
        with self._changing:
            self._readings.clear()
            self._held = 0

    def __len__(self) -> int:
        return len(self._readings)
