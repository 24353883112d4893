"""The audit's limits on every answer read with requests: Schemathesis's own requests (its engine's,
its probes', those its checks send) and the throttled ones sent again. A requests transport adapter
reads each answer whole within the limits before anyone sees it, and refuses JSON nested deeper, or
larger, than the audit reads; every Schemathesis session takes it for the audited origin, and every
answer it cuts is counted, for the audit to name."""

from __future__ import annotations

import functools
import io
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import orjson
import requests
import urllib3
from requests.adapters import HTTPAdapter
from schemathesis.transport.requests import SameHostRedirectsSession

from evalmock.contract.documents import APIS as DOCUMENTS
from evalmock.harness.checks.exchange import json_beyond_reach
from evalmock.harness.excerpts import quoted
from evalmock.harness.run.answer_deadline import DEADLINE_POOLS
from evalmock.harness.run.answer_limits import (
    MAX_SENT_VALUE,
    READ_SIZE,
    SENT_VALUE_REMEDY,
    AnswerLimits,
    AnswerOverLimit,
    Budget,
    check_header_block,
    decoded_body,
    head_by_deadline,
    oversized_value,
)


class CutAnswers:
    """Every answer to Schemathesis's requests cut at one of the audit's limits, whichever phase,
    probe or check sent it: why, and the request as sent (its method and URL, nothing of the
    answer). Schemathesis keeps some such errors to itself (a replay it could not repeat is no
    error to it): the audit names them all from here."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (sent, why, remedy, "METHOD url"): sent False for a request refused before it went
        self._cut: list[tuple[bool, str, str, str]] = []
        self._unasked: list[str] = []  # the URL path of each answer with unasked bytes behind

    def add(
        self, request: requests.PreparedRequest, why: str, remedy: str, *, sent: bool = True
    ) -> None:
        shown = f"{request.method} {quoted(request.url or '')}"
        with self._lock:
            self._cut.append((sent, why, remedy, shown))

    def add_unasked(self, request: requests.PreparedRequest) -> None:
        """An answer with bytes behind it that no request asked for (its connection ended)."""
        with self._lock:
            self._unasked.append(_path(f"{request.method} {request.url or ''}"))

    def take_unasked(self, path: str) -> int:
        """How many answers to requests whose URL path starts with `path` had bytes behind them
        that no request asked for, taken out."""
        with self._lock:
            taken = sum(1 for each in self._unasked if each.startswith(path))
            self._unasked = [each for each in self._unasked if not each.startswith(path)]
        return taken

    def take(self, path: str) -> list[tuple[bool, str, str, int, str]]:
        """The cuts of requests whose URL path starts with `path`, taken out: (sent, why, remedy,
        how many, the first request in order), one per why, in order of why."""
        with self._lock:
            taken = [cut for cut in self._cut if _path(cut[3]).startswith(path)]
            self._cut = [cut for cut in self._cut if not _path(cut[3]).startswith(path)]
        grouped: dict[tuple[bool, str, str], list[str]] = {}
        for sent, why, remedy, shown in taken:
            grouped.setdefault((sent, why, remedy), []).append(shown)
        return [(*key, len(shown), min(shown)) for key, shown in sorted(grouped.items())]


def _path(sent: str) -> str:
    return urlsplit(sent.partition(" ")[2]).path


class BoundedAdapter(HTTPAdapter):
    """requests' adapter that reads each answer whole within `limits` before it returns it: its
    head by its deadline, its header block checked, its body by the same deadline and within the
    size limits, JSON too deep or too large refused. A cut answer is counted in `cuts` and raised
    as AnswerOverLimit, nothing of it kept (no frame of that error holds its bytes)."""

    def __init__(self, limits: AnswerLimits, cuts: CutAnswers | None = None) -> None:
        super().__init__()
        self.limits = limits
        self.cuts = cuts

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = DEADLINE_POOLS

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if not proxy.lower().startswith("socks"):  # a SOCKS proxy's pools are its own
            manager.pool_classes_by_scheme = DEADLINE_POOLS
        return manager

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> Any:
        url = urlsplit(request.url or "")
        if oversized := oversized_value(url.path, parse_qsl(url.query, keep_blank_values=True)):
            # a value an answer handed back (a stateful link's cursor): never a URL of any size
            if self.cuts is not None:
                self.cuts.add(request, oversized, SENT_VALUE_REMEDY, sent=False)
            raise AnswerOverLimit(oversized, SENT_VALUE_REMEDY, request=request)
        try:
            return self._read(request, *args, **kwargs)
        except AnswerOverLimit as exc:
            why, remedy = exc.why, exc.remedy
        if self.cuts is not None:
            self.cuts.add(request, why, remedy)
        # raised out of the handler: no context, and no frame below this one, holds the answer
        raise AnswerOverLimit(why, remedy, request=request)

    def _read(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> Any:
        started = time.monotonic()
        exceptions = requests.exceptions.RequestException
        with head_by_deadline(started, self.limits, exceptions, request=request):
            response = super().send(request, *args, **kwargs)
            try:
                check_header_block(response.raw.headers.items())
                with Budget(self.limits, started) as budget:
                    body = _body_within(response.raw, budget)
            except BaseException:
                response.close()  # the connection of a cut answer is not used again
                raise
        content_type = response.headers.get("content-type") or ""
        if "json" in content_type and (beyond := json_beyond_reach(body)):
            # Schemathesis parses JSON with the standard parser: its recursion error in a worker
            # thread would end the run, and a million keys take its time and memory
            raise AnswerOverLimit(beyond, "")
        if "json" in content_type and (oversized := _oversized_link_value(body)):
            # its stateful phase would send it back, in every step after
            raise AnswerOverLimit(oversized, SENT_VALUE_REMEDY)
        if getattr(getattr(response.raw, "_fp", None), "unasked", False) and self.cuts is not None:
            self.cuts.add_unasked(request)
        response._content = body
        response._content_consumed = True
        response.raw = _Spent(response.raw, body)
        return response


@functools.cache
def _link_values() -> tuple[str, ...]:
    """The members of an answer that the documents' links send back (`$response.body#/name`)."""
    names = set()
    for document in DOCUMENTS.values():
        for item in document.spec.get("paths", {}).values():
            for op in item.values():
                for answer in (op.get("responses") or {}).values() if isinstance(op, dict) else ():
                    for link in (answer.get("links") or {}).values():
                        for value in (link.get("parameters") or {}).values():
                            if str(value).startswith("$response.body#/"):
                                names.add(str(value).removeprefix("$response.body#/"))
    return tuple(sorted(names))


def _oversized_link_value(body: bytes) -> str | None:
    """Why an answer is not handed to Schemathesis: a value its links send back is longer than the
    audit sends (answers.MAX_SENT_VALUE), else None."""
    if len(body) <= MAX_SENT_VALUE:
        return None
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    for name in _link_values() if isinstance(value, dict) else ():
        if len(str(value.get(name, "")).encode()) > MAX_SENT_VALUE:
            size = len(str(value[name]).encode())
            return (
                f"its {name} is {size:,} bytes, more than the {MAX_SENT_VALUE // 2**10} KiB the "
                "audit sends back"
            )
    return None


def _body_within(raw: Any, budget: Budget) -> bytes:
    """The decoded body of urllib3's `raw`, its bytes on the wire decoded as `decoded_body` decodes
    them (a bomb inflates no further per read), cut at the budget; urllib3's errors said as
    requests says them."""
    encoding = raw.headers.get("content-encoding")
    try:
        return decoded_body(raw.stream(READ_SIZE, decode_content=False), encoding, budget)
    except BaseException as exc:
        raise _as_requests_error(exc) from None


def _as_requests_error(exc: BaseException) -> BaseException:
    """urllib3's error while reading a body, as requests' Response.content raises it."""
    if isinstance(exc, urllib3.exceptions.ProtocolError):
        return requests.exceptions.ChunkedEncodingError(exc)
    if isinstance(exc, urllib3.exceptions.DecodeError):
        return requests.exceptions.ContentDecodingError(exc)
    if isinstance(exc, urllib3.exceptions.ReadTimeoutError):
        return requests.exceptions.ConnectionError(exc)
    if isinstance(exc, urllib3.exceptions.SSLError):
        return requests.exceptions.SSLError(exc)
    return exc


class _Spent:
    """A urllib3 response already read: its head as it was, its body served again from memory
    (Schemathesis reads an event stream's body from `raw` itself)."""

    def __init__(self, raw: Any, body: bytes) -> None:
        self._raw = raw
        self._body = io.BytesIO(body)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    def read(self, amt: int | None = None, *args: Any, **kwargs: Any) -> bytes:
        return self._body.read(amt)

    def read1(self, amt: int | None = None, *args: Any, **kwargs: Any) -> bytes:
        return self._body.read1(-1 if amt is None else amt)

    def stream(self, amt: int | None = READ_SIZE, *args: Any, **kwargs: Any) -> Iterator[bytes]:
        while part := self._body.read(amt or READ_SIZE):
            yield part


def bounded_session(limits: AnswerLimits, cuts: CutAnswers | None = None) -> requests.Session:
    """A requests session that reads every answer within `limits` (those it cuts counted in
    `cuts`)."""
    session = requests.Session()
    adapter = BoundedAdapter(limits, cuts)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


# Schemathesis makes its sessions in several places (its engine's, its probes', one without
# credentials for a check) and has no hook that reaches them all; every one of them is a
# SameHostRedirectsSession and finds its adapter by the URL, there.
# the limits of each audited origin ("http://host:port/"), and where its cut answers are counted
_LIMITS: dict[str, tuple[AnswerLimits, CutAnswers | None]] = {}
_LOCK = threading.Lock()


def bound_schemathesis(base_url: str, limits: AnswerLimits, cuts: CutAnswers | None = None) -> None:
    """Every Schemathesis request to `base_url`'s origin, from now on, has its answer read within
    `limits`, each one cut counted in `cuts` (an audit of the same origin later in the process sets
    its own)."""
    with _LOCK:
        _LIMITS[_origin(base_url)] = (limits, cuts)
        if SameHostRedirectsSession.get_adapter is not _bounded_get_adapter:
            SameHostRedirectsSession.get_adapter = _bounded_get_adapter  # type: ignore[method-assign]


_PLAIN_GET_ADAPTER = SameHostRedirectsSession.get_adapter


def _bounded_get_adapter(session: requests.Session, url: str) -> Any:
    origin = _origin(url)
    reading = _LIMITS.get(origin)
    if reading is not None:
        limits, cuts = reading
        mounted = session.adapters.get(origin)
        same = isinstance(mounted, BoundedAdapter) and (mounted.limits, mounted.cuts) == reading
        if not same:
            session.mount(origin, BoundedAdapter(limits, cuts))
    return _PLAIN_GET_ADAPTER(session, url)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/".lower()
