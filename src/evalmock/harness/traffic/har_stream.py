"""A HAR file read as a stream: its log's entries built one at a time by a C parser (ijson's yajl),
nothing else of the document built at all, and every byte measured before the parser reads it, so
that no entry can cost more memory than a bound (`Guarded`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, BinaryIO

import ijson

from evalmock.input_files import too_large

# Nesting outside strings: a HAR entry is 6 deep (log, entries, an entry, its request, headers, a
# header); a deeper document is no HAR a browser or the proxy writes.
MAX_HAR_DEPTH = 64
# Objects and arrays in one value of the log (an entry, its pages, its comment): an entry of 100
# headers, cookies and parameters holds a few hundred. Each costs about 70 bytes once built, and the
# file's `{}` costs 2: a bound on these bounds what building one entry can cost.
MAX_CONTAINERS = 100_000
ENTRY_DEPTH = 4  # the depth inside an entry: the document, log, entries, the entry
# yajl reads a string that spans pieces again from its start with each piece: pieces of 64 KiB took
# 156 s over a string of 200 MiB, pieces of 1 MiB take a sixteenth of that
READ_SIZE = 2**20
# Measured a part at a time: a part where a value of the log ends counts all its objects and arrays
# towards the next value, and a part this size holds at most 22,000 of them.
MEASURED_SIZE = 2**16
BOM = b"\xef\xbb\xbf"
# A whole string, and the rest of one from inside it (up to its closing quote, not included).
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
# Text outside strings and whole strings, from a part's start up to a string that does not end in
# it: matched once from the start, never tried again at a quote inside a string (an escaped one).
_WHOLE_STRINGS = re.compile(rb'[^"]*(?:"[^"\\]*(?:\\.[^"\\]*)*"[^"]*)*', re.DOTALL)
_STRING_REST = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))
_TRAILING_BACKSLASHES = re.compile(rb"\\+\Z")


class Unreadable(ValueError):
    """A HAR file the audit does not read, and why."""


# What a string cut at `max_string` ends with, once parsed: the reader tells a cut one by it.
CUT = "\x00evalmock: cut"
_CUT_BYTES = b"\\u0000evalmock: cut"
_UNICODE_ESCAPE_END = re.compile(rb"\\u[0-9A-Fa-f]{0,3}\Z")
_HIGH_SURROGATE = re.compile(rb"\\u[dD][89abAB][0-9A-Fa-f]{2}\Z")
_TAIL = 16  # bytes of a string kept to tell whether a cut falls inside an escape


def string_bound(max_body: int) -> int:
    """The bytes of a HAR string read whole where bodies of up to `max_body` bytes are read (the
    `max_string` of `har_entries`, for the audit and the recording alike): such a body takes 4
    characters for 3 bytes as base64, and at most 2 bytes a byte as JSON text with its quotes and
    backslashes escaped. Only text written in escapes (6 bytes for `\\u00e9`, 2 of UTF-8; 6 for
    a control character) may take more within `max_body`: it is cut too, and what reads it says
    that its text passed this bound, never that its body did."""
    return 2 * max_body


def is_cut(value: object) -> bool:
    """Whether a string of an entry was cut as it was parsed (see `Guarded`)."""
    return isinstance(value, str) and value.endswith(CUT)


class Guarded:
    """A binary file as ijson reads it, each piece measured first: its nesting outside strings, and
    the objects and arrays of each value of the log, neither past its bound (Unreadable); a byte
    order mark at the start left out, as Windows tools write one. With `max_string`, a string longer
    than that many bytes is cut there, ending with CUT, the rest of it never handed to the parser
    (which would hold it whole)."""

    def __init__(self, file: BinaryIO, limit: int, max_string: int | None = None) -> None:
        self.file = file
        self.max_string = max_string
        # the cutting's own reading of strings: in one, its bytes so far, cut, an escape begun
        self._in, self._length, self._cut, self._escaped = False, 0, False, False
        self._tail = b""  # the string's last bytes handed on, to tell where an escape is
        self.limit = limit  # the most bytes read, however the file grows while it is read
        self.size = 0
        self.depth = 0
        self.containers = 0  # objects and arrays opened since a value of the log began
        self.in_string = False
        self.escaped = False  # the piece read last ended inside a string, on a backslash

    def read(self, size: int = READ_SIZE) -> bytes:
        if size == 0:  # how ijson asks whether the file gives bytes or text
            return b""
        while True:
            piece = self._measured(size)
            if not piece or self.max_string is None:
                return piece
            kept = self._strings_cut(piece)
            if kept:  # an empty piece would be the end of the file to the parser
                return kept

    def _strings_cut(self, piece: bytes) -> bytes:
        """`piece` with each string's bytes past `max_string` left out, CUT in their place."""
        assert self.max_string is not None
        out, at, end = bytearray(), 0, len(piece)
        while at < end:
            if not self._in:
                quote = piece.find(b'"', at)
                if quote < 0:
                    out += piece[at:]
                    break
                out += piece[at : quote + 1]
                at, self._in, self._length, self._cut = quote + 1, True, 0, False
                self._tail = b""
                continue
            start = at
            if self._escaped:
                at, self._escaped = at + 1, False
            stop = _STRING_REST.match(piece, min(at, end)).end()  # type: ignore[union-attr]
            closing = stop < end and piece[stop] == ord('"')
            if not closing and stop < end:  # a backslash, the piece's last byte
                stop, self._escaped = end, True
            segment = piece[start:stop]
            if not self._cut:
                room = self.max_string - self._length
                cut = None if len(segment) <= room else _safe_cut(self._tail, segment, room)
                if cut is None:
                    out += segment
                    self._length += len(segment)
                    self._tail = (self._tail + segment)[-_TAIL:]
                else:
                    out += segment[:cut] + _CUT_BYTES
                    self._cut = True
            if closing:
                out += b'"'
                self._in = False
                at = stop + 1
            else:
                at = end
        return bytes(out)

    def _measured(self, size: int) -> bytes:
        piece = self.file.read(min(size, READ_SIZE) if size > 0 else READ_SIZE)
        if self.size == 0 and piece.startswith(BOM):
            piece = piece[len(BOM) :]
            self.size = len(BOM)
        self.size += len(piece)
        if self.size > self.limit:
            raise Unreadable(too_large(self.limit))
        for start in range(0, len(piece), MEASURED_SIZE):
            measured = self._outside_strings(piece[start : start + MEASURED_SIZE])
            self._measure(measured.translate(None, _NOT_BRACKETS))
        return piece

    def _outside_strings(self, piece: bytes) -> bytes:
        """The bytes of `piece` outside any string, the state carried on to the next piece."""
        start = 0
        if self.in_string:
            start = 1 if self.escaped else 0  # the character a backslash escaped
            end = _STRING_REST.match(piece, start).end()  # type: ignore[union-attr]
            if end >= len(piece) or piece[end] != ord('"'):  # it goes on into the next piece
                self.escaped = end < len(piece)  # it stopped at a backslash, the piece's last byte
                return b""
            start, self.in_string = end + 1, False
        whole = _WHOLE_STRINGS.match(piece, start).end()  # type: ignore[union-attr]
        if whole < len(piece):  # a string begins there and does not end in this piece
            trailing = _TRAILING_BACKSLASHES.search(piece, whole + 1)
            self.in_string = True
            self.escaped = trailing is not None and len(trailing.group()) % 2 == 1
        return _STRING.sub(b"", piece[start:whole])

    def _measure(self, brackets: bytes) -> None:
        """Nesting and containers of a piece's brackets. Pairs opened and closed within it are
        taken away, innermost first: how many rounds that takes bounds how deep they go; what is
        left closes some and opens others."""
        rounds, rest = 0, brackets
        while rounds <= MAX_HAR_DEPTH:
            inner = rest.replace(b"{}", b"").replace(b"[]", b"")
            if inner == rest:
                break
            rest, rounds = inner, rounds + 1
        closed = rest.count(b"}") + rest.count(b"]")
        opened = len(rest) - closed
        deepest = max(self.depth, self.depth - closed + opened) + rounds
        if deepest > MAX_HAR_DEPTH:
            raise Unreadable(f"nests JSON deeper than a HAR audit reads ({MAX_HAR_DEPTH} levels)")
        lowest, self.depth = self.depth - closed, self.depth - closed + opened
        if lowest < ENTRY_DEPTH:  # a value of the log ended here: count afresh (this piece's all)
            self.containers = 0
        self.containers += brackets.count(b"{") + brackets.count(b"[")
        if self.containers > MAX_CONTAINERS:
            raise Unreadable(
                f"holds more than {MAX_CONTAINERS:,} objects and arrays in one entry (or other "
                "value of its log), more than a HAR audit reads"
            )


def _safe_cut(context: bytes, segment: bytes, room: int) -> int | None:
    """Where to cut a string's `segment` (`context`: the string's last bytes before it), `room`
    bytes in or just after, leaving valid JSON text before it: never inside an escape or a UTF-8
    character. None when the place is not within the segment (an escape or a character goes on into
    the next piece), or when the context cannot tell (a run of backslashes longer than it)."""
    whole = context + segment
    at = len(context) + max(room, 0)
    lead = at - 1  # the first byte of the character before the cut
    while lead > 0 and 0x80 <= whole[lead] < 0xC0:
        lead -= 1
    if lead >= 0 and lead + _utf8_length(whole[lead]) > at:  # the cut is inside it: to its end
        at = lead + _utf8_length(whole[lead])
        if at > len(whole):
            return None
    run = _backslashes_before(whole, at)
    if run is None:
        return None
    if run % 2 == 1:  # an escape begun just before: to its end
        if at >= len(whole):
            return None
        at += 5 if whole[at] == ord("u") else 1
    elif (found := _UNICODE_ESCAPE_END.search(whole, 0, at)) is not None:
        before = _backslashes_before(whole, found.start())
        if before is None:
            return None
        if before % 2 == 0:  # the \u escape begun there: to its end
            at = found.start() + 6
    high = _HIGH_SURROGATE.search(whole, 0, at)
    if high is not None and (_backslashes_before(whole, high.start()) or 0) % 2 == 0:
        # a pair's first half: its second half too, or the parser would join it to what follows
        if at + 2 > len(whole):
            return None
        if whole[at : at + 2] == b"\\u":
            at += 6
    return at - len(context) if at <= len(whole) else None


def _utf8_length(first: int) -> int:
    """The bytes of the UTF-8 character whose first byte is `first`."""
    return 4 if first >= 0xF0 else 3 if first >= 0xE0 else 2 if first >= 0xC0 else 1


def _backslashes_before(text: bytes, at: int) -> int | None:
    """How many backslashes run up to `at`; None when they run from the text's start (the string's
    bytes before it are not known: how many more there were is not told)."""
    run = at - len(text[:at].rstrip(b"\\"))
    return None if run == at and at > 0 else run


def har_entries(file: BinaryIO, limit: int, max_string: int | None = None) -> Iterator[Any]:
    """The entries of the HAR log in `file` (at most `limit` bytes), each built as it is read (a
    string over `max_string` bytes cut, ending with CUT); Unreadable when the file is no JSON, no
    HAR log, or past a bound."""
    count = 0
    try:
        for entry in ijson.items(
            Guarded(file, limit, max_string),
            "log.entries.item",
            buf_size=READ_SIZE,
            use_float=True,
        ):
            count += 1
            yield entry
        if count == 0 and not _entries_listed(file, limit):
            raise _NotAList
    except _NotAList:
        raise Unreadable("is not a HAR log: expected an object with log.entries, a list") from None
    except ijson.JSONError as exc:
        # yajl's message quotes the file around the error: its first line says what is wrong
        raise Unreadable(f"is not JSON: {str(exc).splitlines()[0]}") from None


class _NotAList(Exception):
    """An object where log.entries is: a HAR log's entries are a list."""


def _entries_listed(file: BinaryIO, limit: int) -> bool:
    """Whether the file's log.entries is a list (of no entries: read again to tell it from none)."""
    file.seek(0)
    for prefix, event, _ in ijson.parse(Guarded(file, limit), buf_size=READ_SIZE):
        if prefix == "log.entries":
            return event == "start_array"
    return False
