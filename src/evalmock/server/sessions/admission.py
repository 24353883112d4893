"""When the admin API is on: only where it is safe, and where sessions can be kept."""

from __future__ import annotations

import ipaddress

from evalmock import environment
from evalmock.contract.documents import ADMIN

LOOPBACK_NAMES = frozenset({"localhost"})


def admin_api_off_reason(
    host: str, admin_token: str | None, *, workers: int = 1, shared_store: bool = False
) -> str | None:
    """Why the admin API is off for a mock bound to `host`, or None when it is on: it is on for a
    loopback address, or anywhere with an admin token; and with several worker processes only over
    a store they share (each process's own store would know only its own sessions)."""
    if workers > 1 and not shared_store:
        return (
            f"the admin API ({ADMIN.base_path}/) is off: {workers} worker processes would each "
            "keep sessions of their own; sessions need one process, or a shared --store"
        )
    if admin_token:
        return None
    try:
        loopback = ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        loopback = host.lower() in LOOPBACK_NAMES
    if loopback:
        return None
    # the address is not named: the banner shows a server on every interface at its loopback one
    return (
        f"the admin API ({ADMIN.base_path}/) is off: the mock listens beyond a loopback address "
        f"and was started without --admin-token ({environment.ADMIN_TOKEN})"
    )
