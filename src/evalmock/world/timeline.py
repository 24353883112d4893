"""When each generated case was added: strictly decreasing with rank, always on an odd second.

Curated fixtures are added on even seconds, so a curated case never ties with a generated one and
"newest added first" is one unambiguous order.
"""

from __future__ import annotations

import calendar
import re
import time

from evalmock.world.hashing import splitmix64

# the newest generated case is added just before this
NEWEST = calendar.timegm((2026, 11, 20, 9, 0, 0))
# the world's "now", a day after its newest generated case: no generated date is later
WORLD_NOW = NEWEST + 86_400
STEP = 90  # seconds between consecutive generated cases, on average
RFC3339_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


def added_at(time_base: int, rank: int) -> int:
    """Unix seconds; rank 0 is the newest. Gaps are at least 1 s, so no two ranks tie."""
    jitter = splitmix64(time_base ^ rank) % (STEP - 1)  # 0 .. STEP-2 keeps consecutive gaps >= 2 s
    seconds = NEWEST - 1 - rank * STEP - jitter
    if seconds % 2 == 0:  # even seconds belong to curated cases
        seconds -= 1
    return seconds


def arrived_at(salt: int, start: int, number: int) -> int:
    """Unix seconds when the `number`-th case (from 0) arrived under `--churn`: after `start` and
    every earlier arrival, by 2 s or more (no ties), STEP s apart on average."""
    return start + (number + 1) * STEP - splitmix64(salt ^ number) % (STEP - 1)


def rfc3339(seconds: int) -> str:
    """`2026-11-20T09:15:02Z` (UTC, whole seconds)."""
    t = time.gmtime(seconds)
    return (
        f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}"
        f"T{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}Z"
    )


def parse_rfc3339(text: str) -> int:
    """The inverse of `rfc3339`; only that exact shape is accepted."""
    if not RFC3339_UTC.match(text):
        raise ValueError(f"{text!r} is not a UTC timestamp like 2026-11-20T09:15:02Z")
    return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ"))


def first_rank_older_than(time_base: int, size: int, seconds: int) -> int:
    """The number of generated ranks added strictly after `seconds` (binary search, O(log size))."""
    low, high = 0, size
    while low < high:
        middle = (low + high) // 2
        if added_at(time_base, middle) > seconds:
            low = middle + 1
        else:
            high = middle
    return low
