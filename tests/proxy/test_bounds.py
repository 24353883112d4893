"""The proxy's bounded reading of a body: decoded as httpx decodes it, within the bound, and its
nesting and values counted outside JSON strings (as the audit reads: exchange.json_beyond_reach)."""

from __future__ import annotations

import gzip
import zlib

import httpx
import pytest

from evalmock.harness.checks.exchange import MAX_JSON_DEPTH as MAX_DEPTH
from evalmock.harness.checks.exchange import TOO_DEEP, too_many
from evalmock.proxy.bounds import (
    MAX_CODINGS,
    MAX_VALUES,
    NotRead,
    decoded_within,
    too_much_json,
)

BODY = b'{"data": [{"id": "case-0001"}], "hasMore": false}'


def _raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


@pytest.mark.parametrize(
    "coding, raw",
    [
        ("identity", BODY),
        ("gzip", gzip.compress(BODY)),
        ("deflate", zlib.compress(BODY)),
        ("deflate", _raw_deflate(BODY)),
        ("gzip, gzip", gzip.compress(gzip.compress(BODY))),
        ("x-unknown", BODY),
        ("gzip", b"not gzip at all"),
        ("gzip", gzip.compress(BODY)[:-12]),
    ],
    ids=["identity", "gzip", "deflate", "raw-deflate", "stacked", "unknown", "broken", "truncated"],
)
def test_a_body_is_decoded_as_httpx_decodes_it(coding: str, raw: bytes) -> None:
    headers = [(b"content-encoding", coding.encode())]
    try:
        expected = httpx.Response(200, headers=headers, content=raw).content
    except httpx.DecodingError:
        expected = raw
    assert decoded_within(headers, raw, 2**20) == expected


def test_a_body_past_the_bound_once_decoded_is_not_read() -> None:
    raw = gzip.compress(bytes(1001))
    headers = [(b"content-encoding", b"gzip")]
    assert decoded_within(headers, raw, 1001) == bytes(1001)
    with pytest.raises(NotRead, match="larger than 1000 bytes once decoded"):
        decoded_within(headers, raw, 1000)


def test_more_codings_than_the_bound_are_not_read() -> None:
    raw = BODY
    for _ in range(MAX_CODINGS + 1):
        raw = gzip.compress(raw)
    headers = [(b"content-encoding", ", ".join(["gzip"] * (MAX_CODINGS + 1)).encode())]
    with pytest.raises(NotRead, match=f"more than {MAX_CODINGS} content codings"):
        decoded_within(headers, raw, 2**20)


@pytest.mark.parametrize(
    "body, why",
    [
        (b"[" * MAX_DEPTH + b"]" * MAX_DEPTH, None),
        (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), TOO_DEEP),
        (b"[" * 1_100, TOO_DEEP),  # never closed, deeper than Python's parser goes
        (b"[[], [[]], " + b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1) + b"]", None),
        (b'["' + b"[" * (MAX_DEPTH + 1) + b'"]', None),  # brackets in a string do not nest
        (b'["\\"' + b"{" * (MAX_DEPTH + 1) + b'"]', None),  # nor after an escaped quote
        (b"[" + b"0," * (MAX_VALUES + 1) + b"0]", too_many(MAX_VALUES)),
        (b"[" + b"0," * MAX_VALUES + b"0]", None),  # as many commas as the bound
        (b"[" + b"[]," * (MAX_VALUES + 1) + b"[]]", too_many(MAX_VALUES)),
        (b'["' + b"," * (MAX_VALUES + 1) + b'"]', None),  # commas in a string are no values
    ],
    ids=[
        "at-depth",
        "too-deep",
        "unclosed",
        "siblings",
        "deep-string",
        "escaped",
        "too-many",
        "as-many",
        "too-many-arrays",
        "commas-string",
    ],
)
def test_nesting_and_values_are_counted_outside_strings(body: bytes, why: str | None) -> None:
    assert too_much_json(body) == why
