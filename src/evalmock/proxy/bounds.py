"""What the proxy reads of an answer from an upstream it does not trust, bounded: a body decoded
only up to a size, through at most a few codings; its nesting and its count of values measured
before any parser or check reads it; headers that no client may be sent found before they are
sent."""

from __future__ import annotations

import re
import zlib

from httpx._decoders import SUPPORTED_DECODERS

from evalmock.harness.checks.exchange import json_beyond_reach
from evalmock.harness.run.answer_limits import size_text
from evalmock.proxy.wire import RawHeaders

# Codings stacked in one Content-Encoding: each is a pass over up to the decoded bound (urllib3
# decodes as many).
MAX_CODINGS = 5
# Values in a body the checks read (commas outside strings): the largest page (100 cases) holds
# about 2,000; a case of 20,000 keys took 1.4 s to judge, while every other request waited. Its
# nesting is bounded as the audit's is (exchange.MAX_JSON_DEPTH).
MAX_VALUES = 10_000
# The codings zlib undoes within a bound; httpx's others (br, zstd, where their packages are
# installed) would be undone whole, so a body in one of them is not read at all.
_ZLIB = {"gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}
# What uvicorn (and RFC 9110, 5.5) refuses in a header's value, and what is not a token in its name.
_BAD_VALUE = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
_BAD_NAME = re.compile(rb"[^!#$%&'*+\-.^_`|~0-9A-Za-z]")


class NotRead(Exception):
    """A body the proxy does not read; its text says why, as the console and the notes say it."""


def decoded_within(headers: RawHeaders, raw: bytes, limit: int) -> bytes:
    """The body as the upstream meant it, its Content-Encoding undone as httpx undoes it (a coding
    httpx does not know is left as it is; raw bytes that do not decode are kept raw), each coding's
    output cut at `limit` bytes; NotRead when it is longer, or names more than MAX_CODINGS codings
    or one that cannot be undone within a bound."""
    codings = [
        coding.strip().lower()
        for name, value in headers
        if name == b"content-encoding"
        for coding in value.decode("latin-1").split(",")
    ]
    codings = [coding for coding in codings if coding in SUPPORTED_DECODERS.keys() - {"identity"}]
    if len(codings) > MAX_CODINGS:
        raise NotRead(f"more than {MAX_CODINGS} content codings")
    body = raw
    for coding in reversed(codings):  # the last applied is undone first
        if coding not in _ZLIB:
            raise NotRead(f"encoded with {coding}, which the proxy does not decode")
        try:
            body = _inflated(coding, body, limit)
        except zlib.error:
            return raw
    return body


def _inflated(coding: str, data: bytes, limit: int) -> bytes:
    """One coding undone, at most `limit` bytes of it; deflate as zlib's format, or else raw (as
    httpx reads it)."""
    decompressor = zlib.decompressobj(_ZLIB[coding])
    try:
        out = decompressor.decompress(data, limit + 1)
    except zlib.error:
        if coding != "deflate":
            raise
        decompressor = zlib.decompressobj(-zlib.MAX_WBITS)
        out = decompressor.decompress(data, limit + 1)
    if len(out) > limit or decompressor.unconsumed_tail:
        raise NotRead(f"larger than {size_text(limit)} once decoded")
    return out + decompressor.flush()


def judgeable(headers: RawHeaders, raw: bytes, limit: int) -> bytes:
    """The body the checks read: decoded within `limit` bytes (`decoded_within`), and no deeper or
    wider than a check may read (`too_much_json`); NotRead, saying why, when it is not."""
    body = decoded_within(headers, raw, limit)
    too_much = too_much_json(body)
    if too_much is not None:
        raise NotRead(too_much)
    return body


def too_much_json(body: bytes) -> str | None:
    """Why the checks are not to read the body: nested deeper than the audit reads, or of more than
    MAX_VALUES values (`json_beyond_reach`); None when neither."""
    return json_beyond_reach(body, MAX_VALUES)


def refused_header(headers: RawHeaders) -> str | None:
    """What makes a header unfit to be sent on to a client (a control character in its value, a
    name that is no token), naming the header; None when every header is fit."""
    for name, value in headers:
        shown = name.decode("latin-1")
        if _BAD_NAME.search(name) or not name:
            return f"a header name that is not a token ({shown!r})"
        if _BAD_VALUE.search(value):
            return f"a control character in the value of {shown}"
    return None
