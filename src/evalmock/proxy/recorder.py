"""`evalmock proxy --har`: every exchange the proxy forwards, kept as a HAR 1.2 entry (harfile's
models) in a spool file, so that a HAR file of all the traffic so far can be written at any moment
without holding it in memory."""

from __future__ import annotations

import base64
import json
import os
import re
import tempfile
from email.utils import parsedate_to_datetime
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import harfile

from evalmock import __version__
from evalmock.harness.secrets.har_entries import redacted_har_entry
from evalmock.harness.secrets.redactor import Redactor
from evalmock.proxy.forwarded import Forwarded, Headers
from evalmock.whole_file import staged

NOT_HELD = "body not recorded: the proxy streamed it through without holding it"
NOT_READ = "body not recorded"  # and why: the proxy held it, but did not read it
FORM = "application/x-www-form-urlencoded"


class HarRecorder:
    """Spools one redacted HAR entry per exchange (a JSON line in an unnamed temporary file)."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self.entries = 0
        self._spool = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115  (open until close())

    def record(self, forwarded: Forwarded) -> None:
        entry = {
            "startedDateTime": forwarded.started.isoformat(),
            "time": forwarded.elapsed_ms,
            "request": _request(forwarded).asdict(),
            "response": _response(forwarded).asdict(),
            "cache": {},
            "timings": harfile.Timings(send=0, wait=forwarded.elapsed_ms, receive=0).asdict(),
        }
        self._spool.write(_json_line(redacted_har_entry(self.redactor, entry)) + "\n")
        self.entries += 1

    def write(self, path: str | Path) -> None:
        """A HAR 1.2 file of every entry so far, written whole and then moved into place."""
        path = Path(path)
        self._spool.flush()
        self._spool.seek(0)
        # each entry is searched once below, not once for each level of secrets
        self.redactor.compact()
        creator = json.dumps({"name": "evalmock proxy", "version": __version__})
        try:
            with staged(path) as out:
                out.write(
                    f'{{"log": {{"version": "{harfile.HAR_VERSION}", "creator": {creator}, '
                    '"entries": [\n'
                )
                for number, line in enumerate(self._spool):
                    # Again, for any secret learned after the entry was spooled.
                    out.write(
                        ("" if number == 0 else ",\n") + self.redactor.text(line.rstrip("\n"))
                    )
                out.write("\n]}}\n")
        finally:
            self._spool.seek(0, os.SEEK_END)

    def close(self) -> None:
        self._spool.close()


# DEL and C1 controls: JSON may hold them raw, but a terminal obeys them (`cat` of the file); JSON
# escapes every C0 control itself.
_RAW_CONTROLS = re.compile("[\x7f-\x9f]")


def _json_line(entry: dict) -> str:
    """`entry` as one line of JSON, every control character from the upstream as its \\u escape."""
    text = json.dumps(entry, ensure_ascii=False)
    return _RAW_CONTROLS.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def _records(headers: Headers) -> list[harfile.Record]:
    return [harfile.Record(name=name, value=value) for name, value in headers]


def request_cookies(headers: Headers) -> list[harfile.Cookie]:
    """The cookies of the request's Cookie headers (`name=value; name2=value2`), as a browser's HAR
    lists them."""
    cookies = []
    for name, value in headers:
        if name.lower() == "cookie":
            for pair in value.split(";"):
                key, equals, text = pair.strip().partition("=")
                if key or text:
                    cookies.append(
                        harfile.Cookie(name=key if equals else "", value=text if equals else key)
                    )
    return cookies


def response_cookies(headers: Headers) -> list[harfile.Cookie]:
    """The cookies the response's Set-Cookie headers set, with the attributes HAR has a field
    for."""
    cookies = []
    for name, value in headers:
        if name.lower() != "set-cookie":
            continue
        pair, *attributes = value.split(";")
        key, _, text = pair.strip().partition("=")
        named = {}
        for attribute in attributes:
            field, _, argument = attribute.strip().partition("=")
            named[field.lower()] = argument
        cookies.append(
            harfile.Cookie(
                name=key,
                value=text,
                path=named.get("path"),
                domain=named.get("domain"),
                expires=_iso(named.get("expires")),
                httpOnly=True if "httponly" in named else None,
                secure=True if "secure" in named else None,
            )
        )
    return cookies


def _iso(expires: str | None) -> str | None:
    """A cookie's Expires date (RFC 1123, as Set-Cookie writes it) as HAR writes dates (ISO 8601);
    None when it does not read as one."""
    try:
        return parsedate_to_datetime(expires).isoformat() if expires else None
    except (TypeError, ValueError):
        return None


def _request(forwarded: Forwarded) -> harfile.Request:
    query = urlsplit(forwarded.url).query
    return harfile.Request(
        method=forwarded.method,
        url=forwarded.url,
        httpVersion="HTTP/1.1",
        headers=_records(forwarded.request_headers),
        cookies=request_cookies(forwarded.request_headers),
        queryString=[
            harfile.Record(name=k, value=v) for k, v in parse_qsl(query, keep_blank_values=True)
        ],
        postData=_post_data(forwarded),
        bodySize=forwarded.request_body_size,
    )


def _post_data(forwarded: Forwarded) -> harfile.PostData | None:
    """The request's body as a browser's HAR has it: its text, and a form's parameters; a body that
    was not kept (larger than the bound, or not whole) or is not UTF-8 text (HAR's postData has no
    base64) says so instead."""
    if forwarded.request_body_size == 0:
        return None
    media_type = next(
        (value for name, value in forwarded.request_headers if name.lower() == "content-type"), ""
    )
    if forwarded.request_body is None:
        why = (
            "more than the proxy keeps"
            if forwarded.request_body_whole
            else "the client's body did not come whole"
        )
        return harfile.PostData(
            mimeType=media_type,
            comment=f"body not recorded: {forwarded.request_body_size} bytes, {why}",
        )
    try:
        text = forwarded.request_body.decode("utf-8")
    except UnicodeDecodeError:
        return harfile.PostData(
            mimeType=media_type,
            comment=f"body not recorded: {forwarded.request_body_size} "
            "bytes that are not UTF-8 text",
        )
    params = None
    if media_type.split(";")[0].strip().lower() == FORM:
        params = [
            harfile.PostParameter(name=k, value=v)
            for k, v in parse_qsl(text, keep_blank_values=True)
        ]
    return harfile.PostData(mimeType=media_type, text=text, params=params)


def _response(forwarded: Forwarded) -> harfile.Response:
    media_type = next(
        (value for name, value in forwarded.response_headers if name.lower() == "content-type"), ""
    )
    if forwarded.body is None:
        comment = NOT_HELD if forwarded.unjudged is None else f"{NOT_READ}: {forwarded.unjudged}"
        content = harfile.Content(size=forwarded.body_size, mimeType=media_type, comment=comment)
    else:
        try:
            content = harfile.Content(
                size=len(forwarded.body), mimeType=media_type, text=forwarded.body.decode("utf-8")
            )
        except UnicodeDecodeError:
            content = harfile.Content(
                size=len(forwarded.body),
                mimeType=media_type,
                text=base64.b64encode(forwarded.body).decode("ascii"),
                encoding="base64",
            )
    return harfile.Response(
        status=forwarded.status,
        statusText=forwarded.reason,
        httpVersion=forwarded.http_version,
        headers=_records(forwarded.response_headers),
        cookies=response_cookies(forwarded.response_headers),
        content=content,
        bodySize=forwarded.body_size,
    )
