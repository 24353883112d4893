"""A walk's pages as the walk rules need them: where each case stood (its id kept as a hash, not its
body) and the last dated case of each page, small enough to hold thousands of walks at once."""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalmock.contract.case_rules import instant


def id_key(case_id: Any) -> int:
    """A case id as a 64-bit hash (keyed per process by Python): two ids of one walk share one with
    odds of 2^-64."""
    return hash(case_id if isinstance(case_id, str) else repr(case_id))


@dataclass(frozen=True, slots=True)
class Dated:
    """A case with an addedAt that reads as a date-time: its id and its addedAt as sent."""

    case_id: Any
    added_at: str

    @property
    def instant(self) -> Any:
        return instant(self.added_at)


def last_dated(cases: Sequence[Mapping[str, Any]]) -> Dated | None:
    """The last case of a page whose addedAt is a date-time (what the next page's first case is
    compared with)."""
    for case in reversed(cases):
        added = case.get("addedAt")
        if instant(added) is not None:
            return Dated(case.get("id"), added)
    return None


class PageMark:
    """One page of a walk: its cases' id hashes in order, its last dated case, the limit it was
    asked with and the hash of the cursor it gave (0: none)."""

    __slots__ = ("cursor", "ids", "last", "limit")

    def __init__(self, cases: list[Mapping[str, Any]], limit: int | None, cursor: int = 0) -> None:
        self.ids = array("q", (id_key(case.get("id")) for case in cases))
        self.last = last_dated(cases)
        self.limit = limit
        self.cursor = cursor


class WalkLedger:
    """The pages of one walk, from its first page (`forgotten` counts the cases of pages dropped to
    bound memory, so positions stay those of the whole walk)."""

    __slots__ = ("forgotten", "forgotten_pages", "pages")

    def __init__(self) -> None:
        self.pages: list[PageMark] = []
        self.forgotten = 0
        self.forgotten_pages = 0

    @property
    def cases(self) -> int:
        return self.forgotten + sum(len(mark.ids) for mark in self.pages)

    @property
    def distinct(self) -> int:
        """How many different cases the held pages list (a case listed again counts once)."""
        return len({key for mark in self.pages for key in mark.ids})

    @property
    def whole(self) -> bool:
        """Whether every page since the first is still held."""
        return self.forgotten == 0

    def latest(self) -> Dated | None:
        """The last dated case of the walk so far."""
        for mark in reversed(self.pages):
            if mark.last is not None:
                return mark.last
        return None

    def position(self, key: int) -> int | None:
        """Where a case (by its id hash) stood in the walk, counted from 0, or None when the walk
        has not listed it."""
        start = self.forgotten
        for mark in self.pages:
            if key in mark.ids:
                return start + mark.ids.index(key)
            start += len(mark.ids)
        return None

    def page_number(self, key: int) -> int | None:
        """The page of the walk, counted from 1, that listed a case (by its id hash), or None."""
        for number, mark in enumerate(self.pages, start=self.forgotten_pages + 1):
            if key in mark.ids:
                return number
        return None

    @property
    def next_page_number(self) -> int:
        """The number the walk's next page will have, counted from 1."""
        return self.forgotten_pages + len(self.pages) + 1

    def add(self, mark: PageMark) -> None:
        self.pages.append(mark)

    def forget_first(self) -> PageMark:
        mark = self.pages.pop(0)
        self.forgotten += len(mark.ids)
        self.forgotten_pages += 1
        return mark
