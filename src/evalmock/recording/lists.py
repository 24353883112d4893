"""The test-set lists a recording saw: each case once (its latest state by `updatedAt`), the walks
that read it page by page, and whether those walks saw the whole list.

A walk is a chain of pages, each asked for with the cursor the one before gave; the order of its
cases is the order the service listed them in, which the data file keeps where `addedAt` ties.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from evalmock.contract.filters import Filter, narrowing
from evalmock.nouns import counted
from evalmock.recording.answers import Source
from evalmock.recording.spool import Store


def moment(text: Any) -> datetime | None:
    """An RFC 3339 time as an aware datetime, or None when it is not one (the rules say why)."""
    if not isinstance(text, str):
        return None
    try:
        found = datetime.fromisoformat(text)
    except ValueError:
        return None
    return found if found.tzinfo is not None else None


@dataclass(frozen=True)
class Filters:
    """A walk's filters, each narrowing filter the document declares with its value as read."""

    values: tuple[Any, ...]  # in the order of `narrowing()`

    @classmethod
    def of(cls, query: Mapping[str, str]) -> Filters:
        return cls(tuple(f.read(query.get(f.name)) for f in narrowing()))

    def covers(self) -> set[tuple[Any, ...]]:
        """The categories of case the walk lets through (see `categories`); none when it names a
        value to match (it sees part of every category) or a set no member of which is known."""
        axes: list[tuple[Any, ...]] = []
        for declared, value in zip(narrowing(), self.values, strict=True):
            if declared.members is not None:
                if not isinstance(value, tuple):
                    return set()
                axes.append(value)
            elif declared.present_only_with is not None:
                axes.append((False, True) if value else (False,))
            elif value is not None:
                return set()
        return set(itertools.product(*axes))

    def __str__(self) -> str:
        said = []
        for declared, value in zip(narrowing(), self.values, strict=True):
            if declared.members is not None:
                if value != tuple(sorted(declared.members)):
                    said.append(
                        f"{declared.name}={','.join(value) if isinstance(value, tuple) else value}"
                    )
            elif declared.present_only_with is not None:
                if value:
                    said.append(f"{declared.name}={declared.present_only_with}")
            elif value is not None:
                said.append(f"{declared.name}={value}")
        return " ".join(said) or "no filter"


def categories(held_too: bool) -> set[tuple[Any, ...]]:
    """Every category of case a list holds: one member of each set filter (a case's kind) and,
    for each filter listing a case only when asked (`include=retired`), whether the case holds
    its field; `held_too` False leaves out the cases such a filter must be asked for."""
    axes = [
        tuple(f.members) if f.members is not None else ((False, True) if held_too else (False,))
        for f in _categorical()
    ]
    return set(itertools.product(*axes))


def _categorical() -> list[Filter]:
    """The filters a category has an axis for, in the order of a category's values."""
    return [f for f in narrowing() if f.members is not None or f.present_only_with is not None]


def _members(found: set[tuple[Any, ...]]) -> list[str]:
    """The set filters' members the categories name (the kinds of case they are)."""
    sets = [f.members is not None for f in _categorical()]
    return sorted(
        {str(v) for category in found for v, is_set in zip(category, sets, strict=True) if is_set}
    )


@dataclass
class Walk:
    filters: Filters
    from_start: bool  # its first page was asked for without a cursor
    number: int  # the walk's number in its list, for the store's rows of what it listed
    listed: int = 0  # cases listed (each a row of the store)
    pages: int = 0
    next_cursor: str | None = None  # the last page's, when it said there is more
    finished: bool = False


@dataclass
class Seen:
    """One case, in its latest state, and the answer that showed it."""

    case: dict[str, Any]
    source: Source
    first: int  # when it was first seen, in the recording's order


def _seconds(text: Any) -> float | None:
    found = moment(text)
    return None if found is None else found.timestamp()


@dataclass
class RecordedList:
    """One agent's project as the recording saw it; its cases and the order its walks listed them
    in are the store's rows, under `key`."""

    agent_id: str
    project_id: str  # lower-case
    store: Store
    key: int
    walks: list[Walk] = field(default_factory=list)
    by_cursor: dict[str, Walk] = field(default_factory=dict)  # a next cursor -> its walk

    def page(
        self,
        filters: Filters,
        cursor: str | None,
        cases: list[tuple[dict[str, Any], str | None]],
        body: dict[str, Any],
        source: Source,
        seen: int,
    ) -> None:
        """A page of this list: its cases kept (each with its JSON, None for one left out), its
        walk carried on (or begun)."""
        walk = self.by_cursor.pop(cursor, None) if cursor is not None else None
        if walk is None or walk.filters != filters:
            walk = Walk(filters, from_start=cursor is None, number=len(self.walks))
            self.walks.append(walk)
        walk.pages += 1
        for case, text in cases:
            if text is not None:
                self._keep(case, text, source, seen)
            self.store.listed(self.key, walk.number, walk.listed, case["id"])
            walk.listed += 1
        more, following = body.get("hasMore") is True, body.get("nextCursor")
        walk.finished = not more
        walk.next_cursor = following if more and isinstance(following, str) else None
        if walk.next_cursor is not None:
            self.by_cursor[walk.next_cursor] = walk

    def _keep(self, case: dict[str, Any], text: str, source: Source, seen: int) -> None:
        known = self.store.case_times(self.key, case["id"])
        newer = _seconds(case.get("updatedAt"))
        first = seen
        if known is not None:
            older, first = known
            if newer is not None and older is not None and newer < older:
                return
        times = (_seconds(case.get("addedAt")), newer, first)
        self.store.keep_case(self.key, case["id"], times, text, source)

    def ordered(self) -> Iterator[Seen]:
        """Newest `addedAt` first; cases that share one in the order the walks listed them (a case
        with no readable addedAt last, for the rules to refuse); read from the store one by one."""
        group: list[tuple[str, int]] = []
        added: float | None = None
        for case_id, seconds, first in self.store.case_order(self.key):
            if group and (seconds != added or seconds is None):
                yield from self._seen(self._tied(group) if added is not None else group)
                group = []
            group.append((case_id, first))
            added = seconds
        if group:
            yield from self._seen(self._tied(group) if added is not None else group)

    def _seen(self, ids: list[tuple[str, int]]) -> Iterator[Seen]:
        for case_id, first in ids:
            case, source = self.store.case(self.key, case_id)
            yield Seen(case, source, first)

    def _tied(self, group: list[tuple[str, int]]) -> list[tuple[str, int]]:
        """Cases sharing an addedAt: each walk's order kept (a topological order of what the walks
        listed), first seen first where no walk tells."""
        if len(group) == 1:
            return group
        firsts = dict(group)
        after: dict[str, set[str]] = {case_id: set() for case_id in firsts}
        before_count = dict.fromkeys(firsts, 0)
        walks: dict[int, list[str]] = {}
        for walk, case_id in self.store.walk_positions(self.key, list(firsts)):
            walks.setdefault(walk, []).append(case_id)
        for order in walks.values():
            for earlier, later in itertools.pairwise(dict.fromkeys(order)):
                if later not in after[earlier]:
                    after[earlier].add(later)
                    before_count[later] += 1
        ready = [(firsts[i], i) for i, count in before_count.items() if count == 0]
        heapq.heapify(ready)
        result: list[tuple[str, int]] = []
        while ready:
            first, case_id = heapq.heappop(ready)
            result.append((case_id, first))
            for later in after[case_id]:
                before_count[later] -= 1
                if before_count[later] == 0:
                    heapq.heappush(ready, (firsts[later], later))
        # walks that disagree (the list moved between them): the rest as first seen
        placed = {case_id for case_id, _ in result}
        rest = sorted((item for item in group if item[0] not in placed), key=lambda item: item[1])
        return result + rest

    def completeness(self) -> str:
        """`complete`, or `partial: ...` saying what the walks did not see."""
        covered: set[tuple[Any, ...]] = set()
        for walk in self.walks:
            if walk.finished and walk.from_start:
                covered |= walk.filters.covers()
        stopped = [walk for walk in self.walks if walk.next_cursor is not None]
        missing = categories(held_too=False) - covered
        if not missing:
            retired = categories(held_too=True) - covered
            return "complete" + (" (retired cases not walked)" if retired else "")
        # the same walk in two recordings (two HAR files of one session) is said once
        said = list(
            dict.fromkeys(
                f"a walk ({walk.filters}) stopped after {counted(walk.pages, 'page')} with hasMore "
                "true"
                for walk in stopped
            )
        )
        if not said:
            said = [f"no walk of its {' and '.join(_members(missing))} cases reached the end"]
        return "partial: " + "; ".join(said)
