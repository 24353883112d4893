"""Find any of a growing set of literal strings in text (the secrets a redactor searches for), at a
cost that grows slowly with the set: a gateway that sets a new cookie on every answer teaches
thousands of them.

Each literal is indexed by its last TAIL characters (the whole of a shorter one): the end of a
token, a JWT's signature or a key after its fixed `sk_live_`, is where it differs from the others.
The tails are searched for by Aho-Corasick automata (ahocorasick_rs, built in Rust), one scan of the
text each, and a tail found is checked against the literals that end with it. The automata are kept
in levels: a new one is merged into the one before it while it is as large, up to LEVEL_MAX tails,
so a tail is indexed again O(log N) times, no merge holds the search up for long, and a text is
scanned by few automata. The result is what one alternation, longest literal first, would give: at
the leftmost position where any literal starts, the longest one there, and again after its end.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from ahocorasick_rs import AhoCorasick, Implementation

# Literals searched for one by one (`str.find`, in C) before they are indexed together: building an
# automaton for each new literal cost more than a few searches.
PENDING = 64
TAIL = 12  # characters of a literal's end that index it
# The most tails one automaton holds: merging beyond it would stop every search for the build (0.1 s
# at this size on the machine of docs/maintainers/benchmarks.md; docs/maintainers/performance.md,
# "The redactor"), and a few more automata to scan cost less.
LEVEL_MAX = 16_384


@dataclass(frozen=True)
class _Level:
    tails: list[str]
    automaton: AhoCorasick

    @classmethod
    def of(cls, tails: list[str]) -> _Level:
        return cls(tails, AhoCorasick(tails, implementation=Implementation.ContiguousNFA))


class LiteralSearch:
    """The literals added so far, searched for together; safe to add to and search from several
    threads."""

    def __init__(self) -> None:
        self._known: set[str] = set()
        self._by_tail: dict[str, list[str]] = {}  # a tail -> the literals that end with it
        self._pending: set[str] = set()  # added since the last index was built
        self._levels: list[_Level] = []
        self._lock = threading.Lock()

    def add(self, literals: Iterable[str]) -> None:
        with self._lock:
            for literal in literals:
                if literal and literal not in self._known:
                    self._known.add(literal)
                    self._pending.add(literal)

    def __bool__(self) -> bool:
        return bool(self._known)

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            return iter(list(self._known))

    def sub(self, replace: Callable[[str], str], text: str) -> str:
        """`text` with each literal found replaced by `replace(literal)`."""
        levels, pending, by_tail = self._indexed()
        found = []
        for level in levels:
            for index, _, end in level.automaton.find_matches_as_indexes(text, overlapping=True):
                for literal in by_tail[level.tails[index]]:
                    start = end - len(literal)
                    if start >= 0 and text.startswith(literal, start):
                        found.append((start, -len(literal), literal))
        for literal in pending:  # a few, each found by str.find rather than indexed yet
            start = text.find(literal)
            while start >= 0:
                found.append((start, -len(literal), literal))
                start = text.find(literal, start + 1)
        if not found:
            return text
        found.sort()
        parts, position = [], 0
        for start, negative_length, literal in found:
            if start < position:
                continue  # inside a literal already replaced
            parts += [text[position:start], replace(literal)]
            position = start - negative_length
        parts.append(text[position:])
        return "".join(parts)

    def compact(self) -> None:
        """Index every literal in one automaton, whatever LEVEL_MAX: for a run of many searches in a
        row (a HAR file written whole), where one build costs less than scanning each text with
        every level."""
        with self._lock:
            self._index_pending()
            if len(self._levels) > 1:
                tails = [tail for level in self._levels for tail in level.tails]
                self._levels = [_Level.of(tails)]

    def _indexed(self) -> tuple[list[_Level], list[str], dict[str, list[str]]]:
        """The levels, the literals not indexed yet (fewer than PENDING), and the literals by
        tail."""
        with self._lock:
            if len(self._pending) >= PENDING:
                self._index_pending()
            return self._levels, list(self._pending), self._by_tail

    def _index_pending(self) -> None:
        """The pending literals in a new level, merged with those before it while as large (under
        the lock)."""
        new_tails = []
        for literal in self._pending:
            tail = literal[-TAIL:]
            ending = self._by_tail.get(tail)
            if ending is None:  # a tail not indexed yet
                self._by_tail[tail] = [literal]
                new_tails.append(tail)
            else:
                ending.append(literal)
        self._pending = set()
        levels = list(self._levels)
        while (
            levels
            and len(levels[-1].tails) <= len(new_tails)
            and len(levels[-1].tails) + len(new_tails) <= LEVEL_MAX
        ):
            new_tails = levels.pop().tails + new_tails
        if new_tails:
            levels.append(_Level.of(new_tails))
        self._levels = levels
