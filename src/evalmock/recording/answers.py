"""One recorded answer, as the recording reads it: where it came from, the request's path and query,
and the answer's status and body; built from a HAR entry or from an exchange the proxy forwarded."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from evalmock.harness.traffic.har_stream import CUT, is_cut, string_bound

LIST_PATH = re.compile(r"(?:^|/)v1/agents/([^/]+)/test-set/cases/?$")
TEST_CASE_PATH = re.compile(r"(?:^|/)v2/gen-ai/evaluation_test_cases/([^/]+)/?$")


@dataclass(frozen=True)
class Source:
    """Where a recorded answer came from, as a report names it (its URL already redacted)."""

    where: str  # "HAR entry 12 of staging.har", "exchange 12"
    method: str
    url: str

    def __str__(self) -> str:
        return f"{self.where} ({self.method} {self.url})"


@dataclass(frozen=True)
class Answer:
    """A request and its answer; `body` is None when the recording did not keep it."""

    source: Source
    method: str
    url: str
    status: int
    body: bytes | None
    unread: str | None = None  # why the body was not read (longer than a recording reads)

    @property
    def host(self) -> str:
        return urlsplit(self.url).netloc or "(no host)"

    @property
    def path(self) -> str:
        return urlsplit(self.url).path

    def query(self) -> list[tuple[str, str]]:
        return parse_qsl(urlsplit(self.url).query, keep_blank_values=True)

    def list_agent(self) -> str | None:
        """The agentId of a test-set list request, or None when it is no such request."""
        found = LIST_PATH.search(self.path)
        return unquote(found.group(1)) if found and self.method == "GET" else None

    def test_case_uuid(self) -> str | None:
        """The uuid of a DigitalOcean test case request, or None when it is no such request."""
        found = TEST_CASE_PATH.search(self.path)
        return unquote(found.group(1)) if found and self.method == "GET" else None


def har_answer(entry: Any, source: Source, max_body: int) -> Answer | None:
    """The answer of a HAR entry, or None when the entry has no request URL or status to read; a
    body longer than `max_body` bytes is left unread (never decoded)."""
    if not isinstance(entry, Mapping):
        return None
    request, response = entry.get("request"), entry.get("response")
    if not isinstance(request, Mapping) or not isinstance(response, Mapping):
        return None
    url, status = request.get("url"), response.get("status")
    if not isinstance(url, str) or isinstance(status, bool) or not isinstance(status, int):
        return None
    method = str(request.get("method")).upper()
    content = response.get("content")
    size = _text_size(content)
    if isinstance(content, Mapping) and is_cut(content.get("text")):
        # what was read of the text tells the body passed max_body, or only that the text is long
        if size - len(CUT) > max_body:
            why = f"the answer's body is more than the {max_body:,} bytes a recording reads"
        else:
            why = (
                f"the answer's body's text is more than the {string_bound(max_body):,} bytes of a "
                "HAR file a recording reads"
            )
        return Answer(source, method, url, status, None, why)
    if size > max_body:
        why = f"the answer's body is {size:,} bytes, more than the {max_body:,} a recording reads"
        return Answer(source, method, url, status, None, why)
    return Answer(source, method, url, status, _har_body(content))


def _text_size(content: Any) -> int:
    """The bytes of a HAR response's body, as its text tells before it is decoded (base64 takes 4
    characters for 3 bytes; UTF-8 at most 3 bytes a character of a Python string, and at least
    one)."""
    if not isinstance(content, Mapping) or not isinstance(content.get("text"), str):
        return 0
    text = content["text"]
    if content.get("encoding") == "base64":
        return len(text) * 3 // 4 - text[-2:].count("=")
    return len(text)


def _har_body(content: Any) -> bytes | None:
    """A HAR response's body as bytes: its text, decoded from base64 where the entry says so."""
    if not isinstance(content, Mapping) or not isinstance(content.get("text"), str):
        return None
    text = content["text"]
    if content.get("encoding") == "base64":
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            return None
    return text.encode("utf-8", "surrogatepass")
