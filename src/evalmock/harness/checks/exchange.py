"""One HTTP request and its response as every check sees it, built from httpx or Schemathesis
responses."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import orjson

from evalmock.harness.checks.body_memo import BodyMemo
from evalmock.harness.excerpts import clip

# 20 digits in a row may be an integer past 64 bits; found as twenty zeros once every digit reads as
# 0 (a regular expression over a page's 25 KB took a third of the time of judging it).
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 20
# Bytes of plain JSON bodies whose values are remembered (their values take about three times as
# much), and the largest body remembered. A refetch, a poll or a second fetch comes soon after the
# first, so a few pages' worth serves it. More costs every page that is not seen again (a walk's
# pages carry cursors that differ each time): at 2 MiB, judging such a page took a third more CPU,
# spent freeing the oldest page's values from memory no cache held any longer
# (docs/maintainers/performance.md, "The memory of parsed bodies").
PLAIN_JSON_REMEMBERED = 256 * 2**10
PLAIN_JSON_LARGEST = 64 * 2**10
_PLAIN_JSON: BodyMemo[tuple[Any]] = BodyMemo(PLAIN_JSON_REMEMBERED, PLAIN_JSON_LARGEST)
# JSON nested deeper is not read: the checks, the redactor and the schemas' validators walk a body
# by recursion, a few calls a level, within Python's limit of 1,000. orjson writes no deeper: it
# tells, in a tenth of the time it takes to read a page. The proxy reads no deeper either.
MAX_JSON_DEPTH = 254
TOO_DEEP = f"its JSON is nested deeper than {MAX_JSON_DEPTH} levels"
# Nor JSON of more values (members and items, counted by the commas between them): a body of 16 MiB
# holds a million keys, which took half a minute and 600 MiB to judge; a page of 100 cases holds a
# few thousand. The proxy, which judges while its client waits, reads fewer (its own bound).
MAX_JSON_VALUES = 100_000
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)


class NotJson(ValueError):
    """A body a browser's `JSON.parse` refuses though Python's parser takes it."""


def loads(text: str | bytes) -> Any:
    """JSON as a browser's `JSON.parse` reads it (RFC 8259), the one reading of a service's JSON in
    the audit, `--har`, the proxy and Schemathesis's checks: `NaN`, `Infinity` and `-Infinity` are
    not JSON (Python's parser takes them); a number of any length is (Python's refuses an integer
    past 4,300 digits, its guard for `int()`: such an integer is read as a browser reads it, a
    double, so Infinity past 1.8e308)."""
    return json.loads(text, parse_constant=_no_constant, parse_int=_integer)


def _no_constant(name: str) -> Any:
    raise NotJson(f"{name} is not JSON (a browser's JSON.parse refuses it)")


def _integer(literal: str) -> int | float:
    try:
        return int(literal)
    except ValueError:  # past Python's digits for int(): float() has no such guard, nor cost
        return float(literal)


def first_header(headers: Mapping[str, Any], name: str) -> str | None:
    """A header's first value, from names in lower case whose values are strings or lists of them
    (httpx's, an Exchange's, Schemathesis's)."""
    value = headers.get(name)
    if isinstance(value, list):
        value = value[0] if value else None
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class Exchange:
    """One request and its response, as every check sees it (header names lower-case, first value
    only)."""

    method: str
    url: str
    status: int
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    request_headers: Mapping[str, str] = field(default_factory=dict)

    @cached_property
    def path(self) -> str:
        return urlsplit(self.url).path

    @cached_property
    def query(self) -> dict[str, str]:
        """The query as sent (first value of each parameter)."""
        return {key: values[0] for key, values in self.query_values.items()}  # the URL parsed once

    @cached_property
    def query_values(self) -> dict[str, list[str]]:
        """The query as sent, every value of each parameter in order."""
        params: dict[str, list[str]] = {}
        for key, value in parse_qsl(urlsplit(self.url).query, keep_blank_values=True):
            params.setdefault(key, []).append(value)
        return params

    def ambiguous(self, *names: str) -> bool:
        """Whether any of these query parameters was sent more than once (the pages do not say which
        wins)."""
        sent = self.query_values
        return any(len(sent.get(name, ())) > 1 for name in names)

    @property
    def has_body(self) -> bool:
        """False for HEAD, whose answer never has a body."""
        return self.method.upper() != "HEAD"

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    @property
    def media_type(self) -> str:
        return (self.header("content-type") or "").split(";")[0].strip().lower()

    @cached_property
    def _reading(self) -> tuple[bool, Any, bool, str | None]:
        """(parsed, the value, plain, why not read): plain when orjson read the body to what
        `json.loads` of its text gives (UTF-8, no byte-order mark, no integer past 64 bits, which
        orjson reads as a float). A plain body's value is remembered by its bytes, and shared by
        every exchange that carries them: no check changes a body it reads. JSON nested deeper than
        MAX_JSON_DEPTH, or holding more than MAX_JSON_VALUES, is not parsed: why not read then says
        so."""
        remembered = _PLAIN_JSON.get(self.body)
        if remembered is not None:
            return True, remembered[0], True, None
        ok, value, plain, why = read_json(self.body)
        if plain:
            _PLAIN_JSON.put(self.body, (value,))
        return ok, value, plain, why

    @property
    def unread(self) -> str | None:
        """Why the body, which may be JSON, was not read as JSON (nested deeper than the parsers
        read), else None."""
        return self._reading[3]

    @property
    def plain_json(self) -> tuple[bool, Any]:
        """(True, value) when the body is plain UTF-8 JSON that orjson parsed to what `json.loads`
        of its text gives; (False, None) otherwise."""
        ok, value, plain, _ = self._reading
        return (True, value) if ok and plain else (False, None)

    @property
    def parsed(self) -> tuple[bool, Any]:
        """(True, value) when the body is JSON (`json.loads` of its text), else (False, None)."""
        ok, value, _, _ = self._reading
        return ok, value

    def json_or_none(self) -> Any:
        return self._reading[1]

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def excerpt(self, limit: int = 200) -> str:
        """The body's text as a finding quotes it: at most `limit` characters, shortened between
        words (`clip`)."""
        return clip(self.text, limit)


def too_many(max_values: int) -> str:
    return f"its JSON holds more than {max_values:,} values"


def read_json(body: bytes, max_values: int = MAX_JSON_VALUES) -> tuple[bool, Any, bool, str | None]:
    """(parsed, the value, plain, why not read) of a body: Exchange._reading, remembered by none.
    JSON nested deeper than MAX_JSON_DEPTH, or of more than `max_values` values, is not read."""
    if body.count(b",") > max_values and _commas_outside_strings(body, max_values) > max_values:
        return False, None, False, too_many(max_values)
    may_nest_deep = body.count(b"[") + body.count(b"{") > MAX_JSON_DEPTH
    try:
        # several times faster; stricter, so the standard parser decides
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        try:
            value = loads(body)
        except RecursionError:  # deeper than Python's recursion limit
            return False, None, False, TOO_DEEP
        except (ValueError, UnicodeDecodeError):
            return False, None, False, None
        if may_nest_deep and _value_depth(value) > MAX_JSON_DEPTH:
            return False, None, False, TOO_DEEP
        return True, value, False, None
    if may_nest_deep:
        try:
            orjson.dumps(value)
        except orjson.JSONEncodeError:  # its recursion limit: nothing else of what it read fails
            return False, None, False, TOO_DEEP
    if _LONG_NUMBER in body.translate(_DIGITS_AS_ZERO):
        return True, value, False, None
    return True, value, True, None


def json_beyond_reach(body: bytes, max_values: int = MAX_JSON_VALUES) -> str | None:
    """Why a body is JSON that is not read (nested deeper than MAX_JSON_DEPTH, more than
    `max_values` values), else None. A plain body it had to parse is remembered, for the exchange
    that carries it next."""
    if body.count(b",") <= max_values and body.count(b"[") + body.count(b"{") <= MAX_JSON_DEPTH:
        return None
    _, value, plain, why = read_json(body, max_values)
    if plain:
        _PLAIN_JSON.put(body, (value,))
    return why


def _commas_outside_strings(body: bytes, enough: int) -> int:
    """The commas of `body` outside its JSON strings, counted until more than `enough` (a copy of
    the body without its strings would hold a million pieces at once)."""
    count, end = 0, 0
    for string in _STRING.finditer(body):
        count += body.count(b",", end, string.start())
        end = string.end()
        if count > enough:
            return count
    return count + body.count(b",", end)


def _value_depth(value: Any) -> int:
    """How deep a parsed JSON value nests (without recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            inner = item.values() if isinstance(item, dict) else item
            stack.extend((each, depth + 1) for each in inner if isinstance(each, dict | list))
    return deepest


def exchange_from_httpx(response: Any, body: bytes | None = None) -> Exchange:
    """An Exchange from an `httpx.Response`, with `body` when it was read apart (streamed)."""
    request = response.request
    return Exchange(
        method=request.method,
        url=str(request.url),
        status=response.status_code,
        headers={k.lower(): v for k, v in response.headers.items()},
        body=response.content if body is None else body,
        request_headers={k.lower(): v for k, v in request.headers.items()},
    )


def exchange_from_schemathesis(response: Any) -> Exchange:
    """An Exchange from a `schemathesis.Response` (its headers map lower-case names to lists)."""
    request = response.request
    return Exchange(
        method=str(request.method),
        url=str(request.url),
        status=response.status_code,
        headers={
            k.lower(): (v[0] if isinstance(v, list) and v else str(v))
            for k, v in response.headers.items()
        },
        body=response.content or b"",
        request_headers={k.lower(): str(v) for k, v in request.headers.items()},
    )
