"""Find any of a growing set of literal strings in text (the secrets a redactor searches for), at a cost that does not
grow with the set: a gateway that sets a new cookie on every answer teaches thousands of them.

One alternation of N literals costs each position of the text N tries, and compiling it anew for every new literal
made an audit behind such a gateway quadratic. Instead the literals are kept in levels, each compiled once as a trie
(`(?:a(?:bc|xy)|d…)`), whose tries at a position follow only the branch of the next character; a new level is merged
into the one before it while it is as large, so a literal is compiled again O(log N) times and a text is scanned by
O(log N) patterns. The result is what one alternation, longest literal first, would give: at the leftmost position
where any literal starts, the longest one there, and again after its end.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

# Literals searched for one by one (`str.find`, in C) before they are compiled into a level together: compiling a
# level for each new literal cost more than a few searches.
PENDING = 64


@dataclass(frozen=True)
class _Level:
    literals: frozenset[str]
    pattern: re.Pattern[str]  # every position where one starts, the longest there (a lookahead finds overlaps)


class LiteralSearch:
    """The literals added so far, searched for together; safe to add to and search from several threads."""

    def __init__(self) -> None:
        self._known: set[str] = set()
        self._pending: set[str] = set()  # added since the last search
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
        levels, pending = self._compiled()
        found = [(match.start(), -len(match.group(1)), match.group(1))
                 for level in levels for match in level.pattern.finditer(text)]
        for literal in pending:  # a few, each found by str.find rather than compiled yet
            start = text.find(literal)
            while start >= 0:
                found.append((start, -len(literal), literal))
                start = text.find(literal, start + 1)
        found.sort()
        if not found:
            return text
        parts, position = [], 0
        for start, negative_length, literal in found:
            if start < position:
                continue  # inside a literal already replaced
            parts += [text[position:start], replace(literal)]
            position = start - negative_length
        parts.append(text[position:])
        return "".join(parts)

    def _compiled(self) -> tuple[list[_Level], list[str]]:
        """The compiled levels, and the literals not compiled yet (fewer than PENDING)."""
        with self._lock:
            if len(self._pending) >= PENDING:
                literals = frozenset(self._pending)
                self._pending = set()
                levels = list(self._levels)
                while levels and len(levels[-1].literals) <= len(literals):
                    literals |= levels.pop().literals
                levels.append(_Level(literals, re.compile(f"(?=({_trie(literals)}))")))
                self._levels = levels
            return self._levels, list(self._pending)


def _trie(literals: Iterable[str]) -> str:
    """A regular expression matching exactly the literals, the longest where several start alike."""
    root: dict[str, dict] = {}
    for literal in literals:
        node = root
        for character in literal:
            node = node.setdefault(character, {})
        node[""] = {}

    def pattern(node: dict[str, dict]) -> str:
        ends_here = "" in node
        branches = [re.escape(character) + pattern(child) for character, child in sorted(node.items()) if character]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if ends_here:  # greedy: the longer literal when it is there, else this one
            return f"(?:{body})?" if len(branches) == 1 else body + "?"
        return body

    return pattern(root)
