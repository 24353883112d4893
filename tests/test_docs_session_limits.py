"""docs/admin-api.md's table of limits states the bounds the session store enforces: each row's
number is the one `SessionLimits` (or the journal's middleware, or, for a request's own bound, the
admin document) holds, so a bound changed in its home points at the doc row still stating the old
one."""

from __future__ import annotations

import re
from pathlib import Path

from evalmock.contract.documents import ADMIN
from evalmock.server.sessions.limits import DEFAULT_LIMITS
from evalmock.server.sessions.middleware import MAX_JOURNALED_TEXT

ADMIN_API = Path(__file__).resolve().parent.parent / "docs" / "admin-api.md"
# Each row of the table, by its first cell, and the bound it states, in the row's unit.
BOUNDS = {
    "live sessions": DEFAULT_LIMITS.max_sessions,
    "idle time": DEFAULT_LIMITS.idle_seconds,
    "an admin request's body": DEFAULT_LIMITS.max_body_bytes,
    "queued faults per session": DEFAULT_LIMITS.max_faults,
    "a fault's `times`": ADMIN.spec["components"]["schemas"]["FaultSettings"]["properties"][
        "times"
    ]["maximum"],
    "journal entries per session": DEFAULT_LIMITS.max_journal,
    "a journaled path, parameter name or value": MAX_JOURNALED_TEXT,
    "worlds of non-default sessions built per process": DEFAULT_LIMITS.max_worlds,
}
UNITS = {"MiB": 2**20, "hour": 3600, "hours": 3600}
STATED = re.compile(r"^(\d[\d,]*)(?: (MiB|hours?)\b)?")


def limits_table(text: str) -> dict[str, str]:
    """The first two cells of each row of the table under `## Limits`."""
    section = text.split("\n## Limits\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:3] for line in section.splitlines() if line.startswith("| ")]
    return {name.strip(): bound.strip() for name, bound in rows[1:]}


def stated(bound: str) -> float:
    """The number a bound cell states, in the code's unit: `2 MiB` is 2**20 times 2, `1 hour`
    3,600 seconds, `1,000` 1000."""
    match = STATED.match(bound)
    assert match, f"no number at the start of {bound!r}"
    return int(match[1].replace(",", "")) * UNITS.get(match[2] or "", 1)


def test_reading_a_bound_takes_its_unit() -> None:
    assert stated("2 MiB (a session's `data` included)") == 2 * 2**20
    assert stated("1 hour without a request") == 3600
    assert stated("1,000 (in all)") == 1000


def test_the_limits_table_states_the_bounds_the_store_enforces() -> None:
    table = limits_table(ADMIN_API.read_text(encoding="utf-8"))
    assert set(table) == set(BOUNDS), (
        "a row of the table names no bound the test knows, or one is gone"
    )
    wrong = {
        name: f"the doc says {table[name]!r}, its home holds {value}"
        for name, value in BOUNDS.items()
        if stated(table[name]) != value
    }
    assert wrong == {}
