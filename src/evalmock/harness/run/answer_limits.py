"""How much of one answer the audit reads: its header block, its body on the wire and decoded, and
the time from sending the request to the body's last byte. An answer past a limit is cut where it
passes it, never read or decoded whole. The bodies being read at once share one room, whatever the
number of workers reading them."""

from __future__ import annotations

import io
import mmap
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import requests
import urllib3

from evalmock.defaults import DEFAULT_MAX_ANSWER_BYTES, DEFAULT_REQUEST_TIMEOUT
from evalmock.harness.checks.exchange import Exchange, exchange_from_httpx
from evalmock.harness.excerpts import clip
from evalmock.harness.run.answer_deadline import postpone, reading_until

# The header block: as many fields as Python's http.client (which reads Schemathesis's answers)
# takes, as many bytes as h11 (which reads the scenario checks') takes
MAX_HEADER_FIELDS = 100
MAX_HEADER_BYTES = 16 * 2**10
READ_SIZE = 64 * 2**10  # decoded bytes asked for at a time: a bomb inflates no further per read
# Decoded bytes of one body read before it takes room in the shared room (ROOM): the audit's own
# answers and most services' pages are smaller, and never wait for room.
FIRST_SHARE = 256 * 2**10
# The room shared by the bodies being read at once past their first share, in bytes: two answers
# of the default limit. An answer whose limit is past it (--max-answer-bytes raised) is read alone.
ROOM = 2 * DEFAULT_MAX_ANSWER_BYTES
# urllib3's own bound on a body's stacked codings (its DecodeError past it)
MAX_CODINGS = urllib3.response.MultiDecoder.max_decode_links

# The longest value (a query parameter's, or the path) the audit sends in a request of its own
# making: a cursor or an id a service hands back longer than this is not sent back, else a service
# could have the audit send URLs of any size (httpx refuses one over 64 KiB outright).
MAX_SENT_VALUE = 8 * 2**10

BYTES_REMEDY = "A service that answers within the limit, or --max-answer-bytes N to raise it"
MEMORY_REMEDY = "More memory for the audit, or fewer --workers, or a lower --max-answer-bytes"
TIME_REMEDY = "A slow service: --request-timeout SECONDS gives each whole answer longer"
HEADERS_REMEDY = "A service whose header block stays within the limit"


@dataclass(frozen=True)
class AnswerLimits:
    """The most the audit reads of one answer: `max_bytes` of body, on the wire and decoded, within
    `seconds` of sending its request."""

    max_bytes: int = DEFAULT_MAX_ANSWER_BYTES
    seconds: float = DEFAULT_REQUEST_TIMEOUT


class AnswerOverLimit(requests.exceptions.RequestException):
    """An answer cut at one of the audit's limits: `why` says which, `remedy` what would let it be
    read. A requests error, so that Schemathesis counts the request as one that got no answer."""

    def __init__(self, why: str, remedy: str, **kwargs: object) -> None:
        super().__init__(why, **kwargs)
        self.why = why
        self.remedy = remedy


def too_late(seconds: float, **kwargs: object) -> AnswerOverLimit:
    """An answer not over within `seconds` of its request (its head or its body still coming)."""
    return AnswerOverLimit(
        f"it was not over within {seconds:g} s of the request", TIME_REMEDY, **kwargs
    )


@contextmanager
def head_by_deadline(
    started: float, limits: AnswerLimits, timeouts: type[Exception], **kwargs: object
) -> Iterator[None]:
    """Within the block, the answer's head is read by its deadline (`reading_until`); a read cut
    there (one of `timeouts`, once the answer began) becomes `too_late`. Silence from the start
    stays the timeout it was: no answer, said as such."""
    with reading_until(started + limits.seconds) as deadline:
        try:
            yield
        except timeouts:
            if not deadline.cut:
                raise
            raise too_late(limits.seconds, **kwargs) from None


SENT_VALUE_REMEDY = (
    f"A service whose cursors and ids stay within {MAX_SENT_VALUE // 2**10} KiB, the most the "
    "audit sends back"
)


def oversized_value(path: str, query: Iterable[tuple[str, str]]) -> str | None:
    """Why a request with this path and query is not sent (a value longer than MAX_SENT_VALUE
    bytes, said without it), else None."""
    if len(path.encode()) > MAX_SENT_VALUE:
        return (
            f"its path is {len(path.encode()):,} bytes, more than the "
            f"{MAX_SENT_VALUE // 2**10} KiB the audit sends"
        )
    for name, value in query:
        if len(str(value).encode()) > MAX_SENT_VALUE:
            size = len(str(value).encode())
            return (
                f"its {clip(str(name), 40)}= is {size:,} bytes, more than the "
                f"{MAX_SENT_VALUE // 2**10} KiB the audit sends"
            )
    return None


def size_text(count: int) -> str:
    """A size as the audit's and the proxy's messages say it: 16 MiB, or 16384 bytes."""
    return f"{count // 2**20} MiB" if count % 2**20 == 0 else f"{count} bytes"


def check_header_block(fields: Iterable[tuple[bytes | str, bytes | str]]) -> None:
    """AnswerOverLimit when the header block has more fields or bytes than the audit reads."""
    size = 0
    for count, (name, value) in enumerate(fields, 1):
        size += len(name) + len(value) + 4  # ": " and the line's end
        if count > MAX_HEADER_FIELDS:
            raise AnswerOverLimit(
                f"its header block has more than {MAX_HEADER_FIELDS} fields", HEADERS_REMEDY
            )
        if size > MAX_HEADER_BYTES:
            raise AnswerOverLimit(
                f"its header block passed {size_text(MAX_HEADER_BYTES)}", HEADERS_REMEDY
            )


class Room:
    """Room for the bodies being read at once, in bytes, shared by every worker: a reader takes the
    room its body may still need at once, waiting until there is that much free (or nothing taken:
    a body's limit larger than the room is read alone), and never waits while it holds room, so no
    wait can deadlock."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.taken = 0
        self._free = threading.Condition()

    def take(self, amount: int) -> float:
        """Take `amount` bytes of room, waiting until they are free: the seconds it waited."""
        started = time.monotonic()
        with self._free:
            self._free.wait_for(lambda: self.taken == 0 or self.taken + amount <= self.size)
            self.taken += amount
        return time.monotonic() - started

    def give_back(self, amount: int) -> None:
        with self._free:
            self.taken -= amount
            self._free.notify_all()


ANSWERS_ROOM = Room(ROOM)  # the process's, for every audit in it


class Budget:
    """What one answer may still take: bytes of body (counted on the wire and decoded, apart) and
    time, from `started` (time.monotonic() when its request was sent). Its body's bytes past
    FIRST_SHARE are held in `room`, taken for the rest of the limit at once and given back when the
    budget is left (`with`), however it is left."""

    def __init__(self, limits: AnswerLimits, started: float, room: Room = ANSWERS_ROOM) -> None:
        self.limits = limits
        self.deadline = started + limits.seconds
        self.room = room
        self.held = 0  # bytes of the room taken

    def __enter__(self) -> Budget:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.held:
            self.room.give_back(self.held)
            self.held = 0

    def spend(self, size: int, where: str) -> None:
        """AnswerOverLimit once `size` bytes of body `where` ("decoded", "on the wire") pass the
        limit, or the answer's time is up."""
        if size > self.limits.max_bytes:
            raise AnswerOverLimit(
                f"its body passed {size_text(self.limits.max_bytes)} {where}", BYTES_REMEDY
            )
        if time.monotonic() > self.deadline:
            raise too_late(self.limits.seconds)

    def hold(self, size: int) -> None:
        """`size` decoded bytes of body held: spent, and once past FIRST_SHARE, room taken for the
        rest of the limit (a wait the audit's, not the service's: the answer's deadline, of its
        reads too, moves by it)."""
        self.spend(size, "decoded")
        if size > FIRST_SHARE and not self.held:
            self.held = self.limits.max_bytes - FIRST_SHARE
            waited = self.room.take(self.held)
            self.deadline += waited
            postpone(waited)


class _Wire(io.RawIOBase):
    """The body's bytes as they come, as a file that urllib3 decodes from; the wire's share of the
    budget spent on each."""

    def __init__(self, chunks: Iterator[bytes], budget: Budget) -> None:
        self._chunks = chunks
        self._budget = budget
        self._left = b""
        self._read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if not self._left:
            self._left = next(self._chunks, b"")
            self._read += len(self._left)
            self._budget.spend(self._read, "on the wire")
        size = min(len(buffer), len(self._left))
        buffer[:size] = self._left[:size]
        self._left = self._left[size:]
        return size


class _Decoded(io.RawIOBase):
    """One coding's decoded bytes, as a file the next coding's decoder reads from (closed by that
    reader only, when it has read the last of them)."""

    def __init__(self, response: urllib3.HTTPResponse) -> None:
        self._response = response

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self._response.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def codings(content_encoding: str | None) -> list[str]:
    """The codings urllib3 decodes a body of this Content-Encoding by, in the order they were
    applied: one it knows alone, or a list with at least one it knows (any other in it decoded as
    deflate, as urllib3 does); none otherwise (the body read as it is)."""
    header = (content_encoding or "").lower()
    known = urllib3.HTTPResponse.CONTENT_DECODERS
    if header in known:
        return [header]
    listed = [coding.strip() for coding in header.split(",")]
    if "," not in header or not any(coding in known for coding in listed):
        return []
    if len(listed) > MAX_CODINGS:
        raise urllib3.exceptions.DecodeError(
            f"Too many content encodings in the chain: {len(listed)} > {MAX_CODINGS}"
        )
    return [coding if coding in known else "deflate" for coding in listed]


def _decoding(wire: io.BufferedReader, layers: list[str]) -> urllib3.HTTPResponse:
    """The body on `wire` as it decodes by `layers` (`codings`): one urllib3 decoder a coding, each
    reading from the next (the last applied first) only once it has decoded what it was given.
    urllib3's own chain hands each coding all the previous one made: a few KB of `gzip, gzip` with
    a long inner layer held 16 MiB more an answer."""
    source: io.BufferedReader = wire
    for coding in reversed(layers[1:]):
        layer = urllib3.HTTPResponse(
            body=source, headers={"content-encoding": coding}, preload_content=False
        )
        source = io.BufferedReader(_Decoded(layer))
    headers = {"content-encoding": layers[0]} if layers else {}
    return urllib3.HTTPResponse(
        body=source, headers=headers, preload_content=False, decode_content=True
    )


UNDECODED = "Received response with content-encoding: {}, but failed to decode it."  # urllib3's


class _Body:
    """A body as it is decoded, held within its budget (`Budget.hold`): its first share in memory,
    all of it past FIRST_SHARE in an anonymous mapping of the limit's size, given back to the
    system whole when closed. In the heap, each worker's would keep the most it ever held: the
    audit's memory grew with its workers."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.size = 0
        self._parts: list[bytes] = []
        self._mapping: mmap.mmap | None = None

    def add(self, part: bytes) -> None:
        self.size += len(part)
        self.budget.hold(self.size)
        if self._mapping is None and self.size > FIRST_SHARE:
            try:
                self._mapping = mmap.mmap(-1, self.budget.limits.max_bytes)
            except OSError as exc:  # the machine's memory (or the process's ulimit) ran out
                raise AnswerOverLimit(
                    f"the audit could not hold its body past {size_text(FIRST_SHARE)} "
                    f"({exc.strerror or exc})",
                    MEMORY_REMEDY,
                ) from None
            self._mapping.write(b"".join(self._parts))
            self._parts.clear()
        if self._mapping is not None:
            self._mapping.write(part)
        else:
            self._parts.append(part)

    def value(self) -> bytes:
        return self._mapping[: self.size] if self._mapping is not None else b"".join(self._parts)

    def close(self) -> None:
        self._parts.clear()
        if self._mapping is not None:
            self._mapping.close()


def decoded_body(chunks: Iterator[bytes], content_encoding: str | None, budget: Budget) -> bytes:
    """The body whose bytes on the wire are `chunks`, decoded as its Content-Encoding says
    (urllib3's decoders, as for every answer Schemathesis reads), READ_SIZE decoded bytes at a
    time and held within `budget` (`Budget.hold`); cut by AnswerOverLimit at the budget's limits.
    urllib3's DecodeError for a body that does not decode."""
    layers = codings(content_encoding)
    body = _Body(budget)
    try:
        decoder = _decoding(io.BufferedReader(_Wire(chunks, budget)), layers)
        for part in decoder.stream(READ_SIZE):
            body.add(part)
        return body.value()
    except urllib3.exceptions.ProtocolError as exc:
        # urllib3 wraps an OSError of the file it reads, as requests' errors are
        if isinstance(exc.__cause__, AnswerOverLimit):
            raise exc.__cause__ from None
        raise
    except urllib3.exceptions.DecodeError as exc:
        # one coding's failure, said of the whole header as urllib3's own chain says it
        if len(layers) > 1 and exc.args[:1] in [(UNDECODED.format(c),) for c in layers]:
            header = (content_encoding or "").lower()
            raise urllib3.exceptions.DecodeError(UNDECODED.format(header), *exc.args[1:]) from None
        raise
    finally:
        body.close()  # nothing of a cut answer is kept, by the error's frames either


def read_httpx(
    client: httpx.Client, request: httpx.Request, limits: AnswerLimits
) -> tuple[httpx.Response, bytes]:
    """Send `request` and read its answer within `limits`: the response (its body unread) and the
    decoded body. AnswerOverLimit past a limit (the deadline of the head and the body kept by a
    client `held_to_deadlines`); httpx's errors otherwise (DecodingError for a body that does
    not decode)."""
    started = time.monotonic()
    # the body's reads too wait no longer than the time left: a silence mid-body ends there
    with head_by_deadline(started, limits, httpx.TimeoutException):
        response = client.send(request, stream=True)
        try:
            check_header_block(response.headers.raw)
            with Budget(limits, started) as budget:
                if response.is_stream_consumed:  # an answer made in memory (a test's transport)
                    body = response.content
                    budget.spend(len(body), "decoded")
                else:
                    encoding = response.headers.get("content-encoding")
                    body = decoded_body(response.iter_raw(), encoding, budget)
        except urllib3.exceptions.DecodeError as exc:
            raise httpx.DecodingError(str(exc), request=request) from None
        except urllib3.exceptions.ProtocolError as exc:
            raise httpx.ReadError(str(exc), request=request) from None
        finally:
            response.close()  # a cut answer's connection is not used again
    return response, body


def read_exchange(
    client: httpx.Client,
    url: str,
    query: Mapping[str, Any],
    headers: Mapping[str, str],
    limits: AnswerLimits,
) -> Exchange:
    """A GET of `url` sent with `client`, its answer read within `limits` (`read_httpx`)."""
    request = client.build_request("GET", url, params=query, headers=headers)
    return exchange_from_httpx(*read_httpx(client, request, limits))
