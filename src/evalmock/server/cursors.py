"""Sealed cursors: a world position, signed (HMAC-SHA256) together with the list, filters, caller,
the list's generation and issue time.

A cursor is base64url (no padding) of 25 bytes of payload followed by the 32-byte MAC:
payload = version (1 byte, 3) | position (signed 64-bit) | issued at (unsigned 64-bit, Unix seconds)
          | list generation (unsigned 64-bit).
The binding (agent, the values of the parameters the document says a cursor binds, as the world
reads them: the lower-cased project, include, the sorted kinds; then the caller id) is not in the
cursor; it goes into the MAC only, so a cursor presented for another list, other filters or
another caller simply fails to verify, and a cursor reveals nothing about who asked. The binding's
list generation (`World.list_generation`: a hash of that one list's content, the world's own cases
and the data files' cases of it) is in the payload, under the MAC: a cursor issued before its list
changed verifies, and is then refused as such (DataChanged), not as a forgery, while a change of
the data files that leaves a list as it was leaves its cursors valid. Nothing binds the limit: a
cursor survives a change of page size. Version 2 sealed one generation for all the data files;
its cursors are refused as of another version.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

VERSION = 3
TTL_SECONDS = 24 * 60 * 60
CLOCK_SKEW_SECONDS = 300  # a cursor "issued" further in the future than this is refused
_PAYLOAD = struct.Struct(">BqQQ")
_MAC_SIZE = hashlib.sha256().digest_size
_RAW_SIZE = _PAYLOAD.size + _MAC_SIZE
ENCODED_SIZE = len(base64.urlsafe_b64encode(b"\0" * _RAW_SIZE).rstrip(b"="))


class CursorError(ValueError):
    """A cursor this list, these filters and this caller may not use; `reason` is for the
    message."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class DataChanged(CursorError):
    """A cursor issued before its list changed: its position means nothing in the list served
    now."""


@dataclass(frozen=True)
class Binding:
    """What a cursor is valid for, beside its issue time."""

    agent_id: str
    # The list's bound values, JSON-ready, in the document's order (world.CaseQuery.bound)
    values: tuple[Any, ...]
    caller_id: str
    list_generation: int = 0  # sealed in the payload, not in `encode`

    def encode(self) -> bytes:
        # JSON keeps the parts unambiguous whatever characters an id holds.
        return orjson.dumps([self.agent_id, *self.values, self.caller_id])


class CursorSealer:
    """Seals positions into cursors and opens them again; the clock is injectable for tests."""

    def __init__(
        self, key: bytes, clock: Callable[[], float] = time.time, ttl: int = TTL_SECONDS
    ) -> None:
        if not key:
            raise ValueError("the cursor key must not be empty")
        # copied per MAC: the key is prepared once
        self._keyed = hmac.new(key, digestmod=hashlib.sha256)
        self._clock = clock
        self._ttl = ttl

    def _mac(self, payload: bytes, binding: Binding) -> bytes:
        mac = self._keyed.copy()
        mac.update(payload + b"\n" + binding.encode())
        return mac.digest()

    def seal(self, position: int, binding: Binding) -> str:
        payload = _PAYLOAD.pack(VERSION, position, int(self._clock()), binding.list_generation)
        raw = payload + self._mac(payload, binding)
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")

    def open(self, cursor: str, binding: Binding) -> int:
        """The position sealed in `cursor`, or CursorError when it is not valid for `binding`
        now."""
        if len(cursor) != ENCODED_SIZE:
            raise CursorError("it is not a cursor this server issued")
        try:
            raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        except (binascii.Error, ValueError):
            raise CursorError("it is not a cursor this server issued") from None
        payload, mac = raw[: _PAYLOAD.size], raw[_PAYLOAD.size :]
        if len(raw) != _RAW_SIZE or not hmac.compare_digest(mac, self._mac(payload, binding)):
            raise CursorError(
                "it was tampered with, or issued for another list, other filters or another caller"
            )
        version, position, issued_at, list_generation = _PAYLOAD.unpack(payload)
        if version != VERSION:
            raise CursorError("it comes from another version of this server")
        if list_generation != binding.list_generation:
            raise DataChanged("the list's data changed since it was issued")
        now = self._clock()
        if now - issued_at > self._ttl:
            raise CursorError("it has expired: a cursor is valid for a day")
        if issued_at - now > CLOCK_SKEW_SECONDS:
            raise CursorError("its issue time lies in the future")
        return position
