"""The bounds of the sessions a mock holds: how many, how large, for how long (documented in
docs/admin-api.md; over a bound, the admin API answers a clear 4xx)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SessionLimits:
    """Every bound a session store enforces; the defaults are the documented ones."""

    max_sessions: int = 1000  # live sessions at once (over it: 429 too-many-sessions)
    idle_seconds: float = 3600.0  # a session unused this long ends
    max_body_bytes: int = 2 * 2**20  # the JSON body of an admin request (over it: 413 too-large)
    max_journal: int = 1000  # journal entries kept per session; older ones are dropped, and counted
    max_faults: int = 100  # faults queued per session (over it: 409 fault-queue-full)
    max_cursor_pages: int = 1000  # cursors a session remembers the page of (for `match.page`)
    max_worlds: int = 32  # worlds of non-default sessions a process keeps built


DEFAULT_LIMITS = SessionLimits()
