"""The audit's limits on every answer read with requests: Schemathesis's own requests (its engine's,
its probes', those its checks send) and the throttled ones sent again. A requests transport adapter
cuts each answer at the limits, and refuses JSON nested deeper, or larger, than the audit reads;
every Schemathesis session takes it for the audited origin."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from schemathesis.transport.requests import SameHostRedirectsSession

from evalmock.harness.checks.exchange import json_beyond_reach
from evalmock.harness.run.answer_deadline import DEADLINE_POOLS
from evalmock.harness.run.answer_limits import (
    READ_SIZE,
    AnswerLimits,
    AnswerOverLimit,
    Budget,
    check_header_block,
    head_by_deadline,
)


class BoundedAdapter(HTTPAdapter):
    """requests' adapter, each answer's head read by its deadline and its header block checked,
    its body read within `limits` (requests then raises AnswerOverLimit where `response.content` is
    read)."""

    def __init__(self, limits: AnswerLimits) -> None:
        super().__init__()
        self.limits = limits

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = DEADLINE_POOLS

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if not proxy.lower().startswith("socks"):  # a SOCKS proxy's pools are its own
            manager.pool_classes_by_scheme = DEADLINE_POOLS
        return manager

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> Any:
        started = time.monotonic()
        with head_by_deadline(
            started, self.limits, requests.exceptions.RequestException, request=request
        ):
            response = super().send(request, *args, **kwargs)
        try:
            check_header_block(response.raw.headers.items())
        except AnswerOverLimit as exc:
            response.close()
            raise AnswerOverLimit(exc.why, exc.remedy, request=request) from None
        response.raw = _BoundedBody(response.raw, Budget(self.limits, started), request)
        return response


class _BoundedBody:
    """A urllib3 response whose reads stop at the budget: READ_SIZE decoded bytes at most a read
    (urllib3 then inflates no further), every byte counted, decoded and on the wire."""

    def __init__(self, raw: Any, budget: Budget, request: requests.PreparedRequest) -> None:
        self._raw = raw
        self._budget = budget
        self._request = request
        self._decoded = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    def stream(self, amt: int | None = READ_SIZE, decode_content: bool | None = None) -> Iterator:
        # Schemathesis parses a JSON body with the standard parser, whose recursion error in its
        # worker thread would end the run, and in its time and memory a million keys
        is_json = "json" in (self._raw.headers.get("content-type") or "")
        parts = []
        for part in self._raw.stream(_at_most(amt), decode_content=decode_content):
            self._spent(part)
            if is_json:
                parts.append(part)
            yield part
        if is_json and (beyond := json_beyond_reach(b"".join(parts))):
            raise AnswerOverLimit(beyond, "", request=self._request)

    def read(
        self, amt: int | None = None, decode_content: bool | None = None, **kwargs: Any
    ) -> bytes:
        if amt is None:
            return b"".join(self.stream(READ_SIZE, decode_content))
        parts, left = [], amt
        while left > 0:  # as much as asked for, READ_SIZE at a time
            part = self._raw.read(_at_most(left), decode_content=decode_content, **kwargs)
            if not part:
                break
            parts.append(self._spent(part))
            left -= len(part)
        return b"".join(parts)

    def read1(self, amt: int | None = None, decode_content: bool | None = None) -> bytes:
        return self._spent(self._raw.read1(_at_most(amt), decode_content=decode_content))

    def _spent(self, part: bytes) -> bytes:
        self._decoded += len(part)
        try:
            self._budget.spend(self._decoded, "decoded")
            self._budget.spend(self._raw.tell(), "on the wire")
        except AnswerOverLimit as exc:
            self._raw.close()
            raise AnswerOverLimit(exc.why, exc.remedy, request=self._request) from None
        return part


def _at_most(amt: int | None) -> int:
    return READ_SIZE if amt is None or amt <= 0 else min(amt, READ_SIZE)


def bounded_session(limits: AnswerLimits) -> requests.Session:
    """A requests session that reads every answer within `limits`."""
    session = requests.Session()
    adapter = BoundedAdapter(limits)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


# Schemathesis makes its sessions in several places (its engine's, its probes', one without
# credentials for a check) and has no hook that reaches them all; every one of them is a
# SameHostRedirectsSession and finds its adapter by the URL, there.
_LIMITS: dict[str, AnswerLimits] = {}  # the limits of each audited origin ("http://host:port/")
_LOCK = threading.Lock()


def bound_schemathesis(base_url: str, limits: AnswerLimits) -> None:
    """Every Schemathesis request to `base_url`'s origin, from now on, has its answer read within
    `limits` (an audit of the same origin later in the process sets its own)."""
    with _LOCK:
        _LIMITS[_origin(base_url)] = limits
        if SameHostRedirectsSession.get_adapter is not _bounded_get_adapter:
            SameHostRedirectsSession.get_adapter = _bounded_get_adapter  # type: ignore[method-assign]


_PLAIN_GET_ADAPTER = SameHostRedirectsSession.get_adapter


def _bounded_get_adapter(session: requests.Session, url: str) -> Any:
    origin = _origin(url)
    limits = _LIMITS.get(origin)
    if limits is not None:
        mounted = session.adapters.get(origin)
        if not isinstance(mounted, BoundedAdapter) or mounted.limits != limits:
            session.mount(origin, BoundedAdapter(limits))
    return _PLAIN_GET_ADAPTER(session, url)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/".lower()
