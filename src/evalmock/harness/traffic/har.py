"""`evalmock contract --har FILE`: recorded traffic (a HAR 1.2 file, as browsers' developer tools
and `evalmock proxy
--har` write it) judged offline by every per-response and document check; other hosts, paths and
methods counted."""

from __future__ import annotations

import base64
import binascii
import os
import pickle
import sqlite3
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from evalmock.defaults import DEFAULT_MAX_ANSWER_BYTES
from evalmock.exits import UsageError
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.outcomes import not_read
from evalmock.harness.excerpts import quoted
from evalmock.harness.results.findings import Gap
from evalmock.harness.run.answer_limits import BYTES_REMEDY, size_text
from evalmock.harness.secrets.har_entries import learn_har_entry
from evalmock.harness.traffic.audit import TrafficAudit
from evalmock.harness.traffic.har_stream import (
    CUT,
    Unreadable,
    har_entries,
    is_cut,
    string_bound,
)
from evalmock.input_files import open_regular, too_large

NO_RESPONSE = "without a response (blocked, failed or cancelled in the browser)"
OTHER_HOST = "of other hosts"
HOSTS_NAMED = 3
OTHER_OPERATION = "of other paths or methods"
NO_BODY = "without their response body recorded"


# A HAR file is read as a stream, each entry built on its own (har_stream); 15,000 pages of
# 17 KB fit
MAX_HAR_BYTES = 256 * 2**20


class HarError(UsageError, ValueError):
    """A file that is not a readable HAR log: what is wrong, and in which entry."""


@dataclass(frozen=True)
class Recorded:
    """One entry of a HAR log: the exchange, or why it holds none (no response, no body)."""

    number: int  # from 1, as a reader counts the log's entries
    started: datetime | None  # startedDateTime, when it reads as one
    exchange: Exchange | None
    missing: str | None = None
    entry: Mapping[str, Any] | None = (
        None  # as recorded, for the redactor to learn every secret it carries
    )
    unread: str | None = None  # why its response body was not read (past the audit's limit)


def read_har(path: str | Path, max_body: int = DEFAULT_MAX_ANSWER_BYTES) -> Iterator[Recorded]:
    """The entries of a HAR file, as the file lists them, each built as it is read (never the whole
    document), a response body longer than `max_body` bytes left unread (never decoded), a string
    longer than a body of that size takes cut as it is parsed (never held whole: the entry's
    exchange left unread); HarError when the file is no HAR log, past a bound of the stream's
    (har_stream), or an entry lacks its request."""
    try:
        file = open_regular(path)
    except OSError as exc:
        raise HarError(f"cannot read {path}: {exc.strerror or exc}") from None
    with file:
        if os.fstat(file.fileno()).st_size > MAX_HAR_BYTES:  # refused before a byte is parsed
            raise HarError(f"cannot read {path}: {too_large(MAX_HAR_BYTES)}")
        entries = har_entries(file, MAX_HAR_BYTES, max_string=string_bound(max_body))
        number = 0
        while (entry := _next_entry(entries, path)) is not _END:
            number += 1
            try:
                yield _recorded(number, entry, max_body)
            except (KeyError, TypeError, AttributeError, ValueError) as exc:
                raise HarError(
                    f"{path}: entry {number}: not a HAR entry ({type(exc).__name__}: {exc})"
                ) from None


_END = object()


def _next_entry(entries: Iterator[Any], path: str | Path) -> Any:
    """The next entry as the stream builds it, or _END; HarError for a file it does not read."""
    try:
        return next(entries, _END)
    except Unreadable as exc:
        raise HarError(f"{path} {exc}") from None
    except OSError as exc:
        raise HarError(f"cannot read {path}: {exc.strerror or exc}") from None


def _recorded(number: int, entry: Mapping[str, Any], max_body: int) -> Recorded:
    request, response = entry["request"], entry.get("response") or {}
    started = _started(entry.get("startedDateTime"))
    method, url = str(request["method"]).upper(), str(request["url"])
    request_headers = _headers(request.get("headers") or [])
    status = int(response.get("status") or 0)
    if status <= 0:  # what browsers record for a request that got no answer
        return Recorded(number, started, None, NO_RESPONSE, entry)
    content = response.get("content") or {}
    text = content.get("text")
    # left out (or of unknown size), not an empty body
    if text is None and content.get("size") != 0:
        return Recorded(
            number,
            started,
            Exchange(method, url, status, request_headers=request_headers),
            NO_BODY,
            entry,
        )
    text, encoding = str(text or ""), content.get("encoding")
    headers = _headers(response.get("headers") or [])
    # base64 takes 4 characters for 3 bytes, text at least one a byte: a longer text is not decoded
    longest = 4 * -(-max_body // 3) if encoding == "base64" else max_body
    cut = _cut_part(url, request_headers, headers, text)
    # a body's text cut past what a body of max_body takes: its body passed max_body, as said below
    if cut is not None and not (is_cut(text) and len(text) - len(CUT) > longest):
        exchange = Exchange(method, url, status, headers, request_headers=request_headers)
        unread = f"{cut} passed {size_text(string_bound(max_body))} in the HAR file"
        return Recorded(number, started, exchange, entry=entry, unread=unread)
    body = _body(text, encoding) if len(text) <= longest and not is_cut(text) else None
    if body is None or len(body) > max_body:
        exchange = Exchange(method, url, status, headers, request_headers=request_headers)
        unread = f"its body passed {size_text(max_body)}"
        return Recorded(number, started, exchange, entry=entry, unread=unread)
    exchange = Exchange(method, url, status, headers, body, request_headers)
    return Recorded(number, started, exchange, None, entry)


def _cut_part(
    url: str, request_headers: Mapping[str, str], headers: Mapping[str, str], text: str
) -> str | None:
    """Which string the exchange is read from was cut as it was parsed (har_stream), or None."""
    if is_cut(text):
        return "its body's text"
    if is_cut(url):
        return "its URL"
    if any(is_cut(value) for value in (*request_headers.values(), *headers.values())):
        return "a header's value"
    return None


def _started(value: Any) -> datetime | None:
    try:
        started = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return started if started.tzinfo is not None else None


def _headers(records: list[Mapping[str, Any]]) -> dict[str, str]:
    """Lower-case names, the first value of each; HTTP/2 pseudo-headers (`:authority`, ...) left
    out."""
    headers: dict[str, str] = {}
    for record in records:
        name = str(record["name"]).lower()
        if not name.startswith(":"):
            headers.setdefault(name, str(record["value"]))
    return headers


def _body(text: str, encoding: str | None) -> bytes:
    if encoding == "base64":
        try:
            return base64.b64decode(text, validate=True)
        except binascii.Error as exc:
            raise ValueError(f"response.content.text is not base64: {exc}") from None
    return text.encode("utf-8")


def audit_har(
    path: str | Path,
    audit: TrafficAudit,
    base_url: str | None = None,
    max_body: int | None = None,
) -> None:
    """Judge every entry of the HAR file into `audit`, in time order (walks are followed across
    entries); with `base_url`, entries outside it are other hosts. The redactor learns every
    entry's secrets as it is read; an entry of no audited operation is then counted and let go, and
    one of an audited operation is kept packed (its exchange's bytes, nothing else) on disk until
    all are read and sorted: the audit holds one entry at a time. A response body longer than
    `max_body` bytes (default 16 MiB) is not read: a gap of the audit."""
    # the origins of audited operations' requests outside base_url
    elsewhere: Counter[str] = Counter()
    with _Kept() as kept:
        for recorded in read_har(path, max_body or DEFAULT_MAX_ANSWER_BYTES):
            if recorded.entry is not None:
                learn_har_entry(audit.redactor, recorded.entry)
            if _judged(recorded, audit, base_url, elsewhere):
                kept.add(recorded)
        for recorded in kept.in_order():
            _judge(recorded, audit)
    if elsewhere:
        # Most often the app's base URL (a proxy's, a dev server's) given where the service's was
        # meant.
        hosts = ", ".join(f"{host} ({count})" for host, count in elsewhere.most_common(HOSTS_NAMED))
        audit.results.notes.append(
            "requests of the audited operations went to other hosts than --base-url "
            f"{origin(base_url or '')}: "
            f"{hosts}; pass one of them as --base-url to judge its answers"
        )


def _judge(recorded: Recorded, audit: TrafficAudit) -> None:
    """Judge a kept entry, or say it is a gap of the audit (its body not read)."""
    exchange = recorded.exchange
    assert exchange is not None  # only exchanges of an audited operation are kept
    api = audit.api_of(exchange.method, exchange.path)
    if api is not None and recorded.unread:
        what = f"{exchange.method} {quoted(audit.redactor.text(exchange.url))}"
        why = not_read(f"{what} (entry {recorded.number})", exchange.status, recorded.unread)
        audit.results.gap(Gap(api, why, BYTES_REMEDY))
    elif api is not None:
        audit.judge(api, exchange)


class _Kept:
    """The entries to be judged, packed in a SQLite temporary database on disk (a file no path
    names, removed however the audit ends) until all are read, then read back in time order:
    380,000 small pages held packed in memory took 310 MiB. In the file's order when an entry's
    start is unknown."""

    def __init__(self) -> None:
        self._db = sqlite3.connect("", isolation_level=None)
        # never recovered, so no journal; 2 MiB of pages in memory, whatever the file
        self._db.executescript(
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-2048;"
            "CREATE TABLE kept (started TEXT, number INTEGER, packed BLOB); BEGIN;"
        )
        self._timed = True  # every entry's start known

    def __enter__(self) -> _Kept:
        return self

    def __exit__(self, *_: object) -> None:
        self._db.close()

    def add(self, recorded: Recorded) -> None:
        started = recorded.started
        self._timed = self._timed and started is not None
        # UTC with microseconds: text that sorts as the times do, whatever offset each was given
        when = (
            None if started is None else started.astimezone(UTC).isoformat(timespec="microseconds")
        )
        self._db.execute(
            "INSERT INTO kept VALUES (?, ?, ?)", (when, recorded.number, _packed(recorded))
        )

    def in_order(self) -> Iterator[Recorded]:
        order = "started, number" if self._timed else "number"
        rows = self._db.execute(f"SELECT packed FROM kept ORDER BY {order}")
        while batch := rows.fetchmany(256):
            for (packed,) in batch:
                yield _unpacked(packed)


def _judged(
    recorded: Recorded, audit: TrafficAudit, base_url: str | None, elsewhere: Counter[str]
) -> bool:
    """Whether the entry is to be judged (or is a gap of the audit): an exchange of an audited
    operation on the service. Any other is counted, with why, as not judged."""
    exchange = recorded.exchange
    if exchange is None:
        audit.skip(recorded.missing or NO_RESPONSE)
        return False
    api = audit.api_of(exchange.method, exchange.path)
    if base_url is not None and not under(exchange.url, base_url):
        audit.skip(OTHER_HOST)
        if api is not None:
            elsewhere[origin(exchange.url)] += 1
        return False
    if api is None:
        audit.skip(OTHER_OPERATION)
        return False
    if recorded.missing:
        audit.skip(recorded.missing)
        return False
    return True


def _packed(recorded: Recorded) -> bytes:
    """An entry to be judged later, as bytes: a few hundred for a small page, where its objects
    took thousands (460,000 of them held 1.4 GB)."""
    exchange = recorded.exchange
    assert exchange is not None
    fields = (exchange.method, exchange.url, exchange.status, dict(exchange.headers))
    fields += (exchange.body, dict(exchange.request_headers))
    return pickle.dumps((recorded.number, recorded.started, recorded.unread, fields))


def _unpacked(packed: bytes) -> Recorded:
    # bytes this process packed itself (_packed), never a file's
    number, started, unread, fields = pickle.loads(packed)
    return Recorded(number, started, Exchange(*fields), unread=unread)


def origin(url: str) -> str:
    """A URL's scheme, host and port, without any user or password it carries."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname or ''}{port}"


def under(url: str, base_url: str) -> bool:
    """Whether `url` is on the service at `base_url` (same scheme and host, below its path)."""
    target, base = urlsplit(url), urlsplit(base_url)
    prefix = base.path.rstrip("/")
    return (target.scheme.lower(), target.netloc.lower()) == (
        base.scheme.lower(),
        base.netloc.lower(),
    ) and (target.path == prefix or target.path.startswith(prefix + "/"))
