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


class Guarded:
    """A binary file as ijson reads it, each piece measured first: its nesting outside strings, and
    the objects and arrays of each value of the log, neither past its bound (Unreadable); a byte
    order mark at the start left out, as Windows tools write one."""

    def __init__(self, file: BinaryIO, limit: int) -> None:
        self.file = file
        self.limit = limit  # the most bytes read, however the file grows while it is read
        self.size = 0
        self.depth = 0
        self.containers = 0  # objects and arrays opened since a value of the log began
        self.in_string = False
        self.escaped = False  # the piece read last ended inside a string, on a backslash

    def read(self, size: int = READ_SIZE) -> bytes:
        if size == 0:  # how ijson asks whether the file gives bytes or text
            return b""
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


def har_entries(file: BinaryIO, limit: int) -> Iterator[Any]:
    """The entries of the HAR log in `file` (at most `limit` bytes), each built as it is read;
    Unreadable when the file is no JSON, no HAR log, or past a bound."""
    count = 0
    try:
        for entry in ijson.items(
            Guarded(file, limit), "log.entries.item", buf_size=READ_SIZE, use_float=True
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
