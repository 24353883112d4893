"""The test-set lists a recording saw: each case once (its latest state by `updatedAt`), the walks
that read it page by page, and whether those walks saw the whole list.

A walk is a chain of pages, each asked for with the cursor the one before gave; the order of its
cases is the order the service listed them in, which the data file keeps where `addedAt` ties.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from evalmock.contract.filters import Filter, narrowing
from evalmock.recording.answers import Source


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
    order: list[str] = field(default_factory=list)  # case ids, as listed
    pages: int = 0
    next_cursor: str | None = None  # the last page's, when it said there is more
    finished: bool = False


@dataclass
class Seen:
    """One case, in its latest state, and the answer that showed it."""

    case: dict[str, Any]
    source: Source
    first: int  # when it was first seen, in the recording's order


@dataclass
class RecordedList:
    """One agent's project as the recording saw it."""

    agent_id: str
    project_id: str  # lower-case
    cases: dict[str, Seen] = field(default_factory=dict)
    walks: list[Walk] = field(default_factory=list)
    by_cursor: dict[str, Walk] = field(default_factory=dict)  # a next cursor -> its walk

    def page(
        self, filters: Filters, cursor: str | None, body: dict[str, Any], source: Source, seen: int
    ) -> None:
        """A page of this list: its cases kept, its walk carried on (or begun)."""
        walk = self.by_cursor.pop(cursor, None) if cursor is not None else None
        if walk is None or walk.filters != filters:
            walk = Walk(filters, from_start=cursor is None)
            self.walks.append(walk)
        walk.pages += 1
        for case in body["data"]:
            self._keep(case, source, seen)
            walk.order.append(case["id"])
        more, following = body.get("hasMore") is True, body.get("nextCursor")
        walk.finished = not more
        walk.next_cursor = following if more and isinstance(following, str) else None
        if walk.next_cursor is not None:
            self.by_cursor[walk.next_cursor] = walk

    def _keep(self, case: dict[str, Any], source: Source, seen: int) -> None:
        known = self.cases.get(case["id"])
        if known is None:
            self.cases[case["id"]] = Seen(case, source, seen)
            return
        newer, older = moment(case.get("updatedAt")), moment(known.case.get("updatedAt"))
        if newer is None or older is None or newer >= older:
            self.cases[case["id"]] = Seen(case, source, known.first)

    def ordered(self) -> list[Seen]:
        """Newest `addedAt` first; cases that share one in the order the walks listed them (a case
        with no readable addedAt last, for the rules to refuse)."""
        groups: dict[datetime | None, list[Seen]] = {}
        for seen in self.cases.values():
            groups.setdefault(moment(seen.case.get("addedAt")), []).append(seen)
        dated = sorted((key for key in groups if key is not None), reverse=True)
        ordered = [seen for key in dated for seen in self._tied(groups[key])]
        return ordered + sorted(groups.get(None, []), key=lambda seen: seen.first)

    def _tied(self, group: list[Seen]) -> list[Seen]:
        """Cases sharing an addedAt: each walk's order kept (a topological order of what the walks
        listed), first seen first where no walk tells."""
        if len(group) == 1:
            return group
        ids = {seen.case["id"]: seen for seen in group}
        after: dict[str, set[str]] = {case_id: set() for case_id in ids}
        before_count = dict.fromkeys(ids, 0)
        for walk in self.walks:
            listed = [case_id for case_id in dict.fromkeys(walk.order) if case_id in ids]
            for earlier, later in itertools.pairwise(listed):
                if later not in after[earlier]:
                    after[earlier].add(later)
                    before_count[later] += 1
        ready = [(ids[i].first, i) for i, count in before_count.items() if count == 0]
        heapq.heapify(ready)
        result: list[Seen] = []
        while ready:
            _, case_id = heapq.heappop(ready)
            result.append(ids[case_id])
            for later in after[case_id]:
                before_count[later] -= 1
                if before_count[later] == 0:
                    heapq.heappush(ready, (ids[later].first, later))
        # walks that disagree (the list moved between them): the rest as first seen
        rest = sorted((s for s in group if s not in result), key=lambda seen: seen.first)
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
                f"a walk ({walk.filters}) stopped after {walk.pages} page"
                f"{'' if walk.pages == 1 else 's'} with hasMore true"
                for walk in stopped
            )
        )
        if not said:
            said = [f"no walk of its {' and '.join(_members(missing))} cases reached the end"]
        return "partial: " + "; ".join(said)
