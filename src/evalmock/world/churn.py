"""`evalmock serve --churn N`: a list that moves while it is read, deterministically per seed.

Every N-th request of a list (one agent and project, whatever its filters) brings a new case to the
top of that list before the page is read, and every RETIRE_EVERY-th arrival retires one of the
list's newest active cases. Nothing depends on a clock or on other lists: the same seed and the same
requests of a list give the same arrivals, retirements and bodies.

Positions stay where they were, so cursors survive: the world's own cases keep theirs (0 ..), and
the case that arrived `number`-th (from 0) has position -1 - number. A cursor "where the previous
page ended" therefore continues below it, and what arrived since lies above it, out of its way. A
retired case keeps its position and only changes its category, so an active list skips it and
`include=retired` shows it retired.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import orjson

from evalmock.contract.operations import operation
from evalmock.defaults import CHURN_RETIRE_EVERY
from evalmock.world.cases import CaseFactory
from evalmock.world.hashing import splitmix64, stable_hash
from evalmock.world.layout import (
    CORRECTION_ACTIVE,
    CORRECTION_RETIRED,
    HAND_ACTIVE,
    HAND_RETIRED,
    CategoryFilter,
    category_at,
)
from evalmock.world.listing import CaseList, encode
from evalmock.world.timeline import NEWEST, arrived_at, parse_rfc3339
from evalmock.world.world import CaseQuery, EncodedPage, World, category_filter

RETIRE_EVERY = CHURN_RETIRE_EVERY  # every so many arrivals in a list retire one of its cases
# ... one of its newest this many: a first page at the document's default limit, where a user
# sees it go
RETIRE_WITHIN = operation("test-set").parameters["limit"]["schema"]["default"]
_DAY = 86_400
_ACTIVE = frozenset({HAND_ACTIVE, CORRECTION_ACTIVE})
_ACTIVE_OF = {HAND_RETIRED: HAND_ACTIVE, CORRECTION_RETIRED: CORRECTION_ACTIVE}
_RETIRED_KIND = {"hand": HAND_RETIRED, "correction": CORRECTION_RETIRED}


@dataclass(frozen=True)
class Entry:
    position: int  # >= 0: the world's list; < 0: the arrival -1 - position
    text: bytes  # the case as compact JSON, as it reads now


class MovingList:
    """One list under churn: the world's `CaseList` below, its arrivals above, its retirements."""

    def __init__(self, seed: int, base: CaseList, every: int) -> None:
        self.base = base
        self.factory: CaseFactory = base.factory
        self.every = every
        self.requests = 0
        salt = stable_hash(seed, self.factory.agent.id, self.factory.project_id, "churn")
        self._kinds, self._times, self._picks = (splitmix64(salt ^ n) for n in range(3))
        self._arrivals: list[bytes] = []  # oldest first; position -1 - index
        self._arrival_categories: list[int] = []
        self._retired: dict[int, tuple[int, bytes]] = {}  # world position -> (category, case)
        self._moved: Counter[tuple[int, int]] = Counter()  # (was, is) of the world's cases
        newest = base.page(CategoryFilter.of(frozenset({"hand", "correction"}), True), None, 1)
        # The world's "now" is a day after its newest generated case (cases.py); arrivals come later
        # than that and than any case of the list, curated or the user's.
        self._start = max(
            [NEWEST + _DAY, *(parse_rfc3339(orjson.loads(c)["addedAt"]) for c in newest.cases)]
        )

    def check(self, after: int | None) -> None:
        """ValueError for a position that is not in this list (before the request is counted)."""
        if after is not None and after < 0 and -1 - after >= len(self._arrivals):
            raise ValueError(f"position {after!r} is not in this list")
        if after is not None and after >= 0:
            self.base.start_after(after)

    def requested(self) -> None:
        """Count one request of this list; every `every`-th brings a case."""
        self.requests += 1
        if self.requests % self.every == 0:
            self._arrive()

    def _arrive(self) -> None:
        number = len(self._arrivals)
        category = category_at(self._kinds, number)
        category = _ACTIVE_OF.get(category, category)  # a case arrives active
        added = arrived_at(self._times, self._start, number)
        self._arrivals.append(encode(self.factory.arrival(number, category, added)))
        self._arrival_categories.append(category)
        if (number + 1) % RETIRE_EVERY == 0:
            self._retire(number // RETIRE_EVERY, after=-1 - number, at=added)

    def _retire(self, number: int, after: int, at: int) -> None:
        """Retire one of the newest active cases below position `after`, at `at` (later than each
        of their addedAt); none when there is none."""
        pick = splitmix64(self._picks ^ number) % RETIRE_WITHIN
        candidates = self.entries(_ACTIVE, after, pick + 1)
        if not candidates:
            return
        chosen = candidates[-1]
        case = self.factory.retired(orjson.loads(chosen.text), at, number)
        category = _RETIRED_KIND[case["kind"]]
        if chosen.position < 0:
            self._arrivals[-1 - chosen.position] = encode(case)
            self._arrival_categories[-1 - chosen.position] = category
        else:
            self._retired[chosen.position] = (category, encode(case))
            self._moved[_ACTIVE_OF[category], category] += 1

    def entries(
        self,
        accepted: frozenset[int],
        after: int | None,
        count: int,
        query: CaseQuery | None = None,
    ) -> list[Entry]:
        """Up to `count` accepted cases below position `after` (None: from the top), newest first,
        of those `query`'s other filters admit too; O(count + retirements among them) beside the
        arrivals such filters leave out."""
        found: list[Entry] = []
        start = 0
        equal = () if query is None else query.equal()
        if after is None or after < 0:
            number = len(self._arrivals) - 1 if after is None else -2 - after
            while number >= 0 and len(found) < count:
                if self._arrival_categories[number] in accepted and (
                    not equal or query is None or query.admits(orjson.loads(self._arrivals[number]))
                ):
                    found.append(Entry(-1 - number, self._arrivals[number]))
                number -= 1
        else:
            start = self.base.start_after(after)
        while len(found) < count and start < self.base.total:
            asked = count - len(found)
            sources = self.base.sources(accepted, start, asked, equal)
            texts = self.base.encoded_cases(sources)
            for source, text in zip(sources, texts, strict=True):
                position = self.base.position_of(source)
                retired = self._retired.get(position)
                if retired is None:
                    found.append(Entry(position, text))
                elif retired[0] in accepted:
                    found.append(Entry(position, retired[1]))
            if len(sources) < asked:
                break
            start = self.base.position_of(sources[-1]) + 1
        return found

    def count(self, accepted: frozenset[int], query: CaseQuery | None = None) -> int:
        """How many cases `accepted` (and `query`'s other filters) match now, in O(1) beside the
        world's own count (O(arrivals + retirements) with other filters)."""
        equal = () if query is None else query.equal()
        if equal and query is not None:
            return self._count_admitted(accepted, query)
        arrived = sum(1 for category in self._arrival_categories if category in accepted)
        moved = sum(
            times * ((now in accepted) - (was in accepted))
            for (was, now), times in self._moved.items()
        )
        return self.base.count(CategoryFilter(accepted)) + arrived + moved

    def _count_admitted(self, accepted: frozenset[int], query: CaseQuery) -> int:
        arrived = sum(
            1
            for category, text in zip(self._arrival_categories, self._arrivals, strict=True)
            if category in accepted and query.admits(orjson.loads(text))
        )
        moved = sum(
            (now in accepted) - (_ACTIVE_OF[now] in accepted)
            for now, text in self._retired.values()
            if query.admits(orjson.loads(text))
        )
        return self.base.count(CategoryFilter(accepted), query.equal()) + arrived + moved


class ChurningWorld:
    """A world whose lists move as they are requested (`evalmock serve --churn N`).

    Built for one world. A reload of the data builds another: given the churning world of the one
    before (`carried`), a list the reload left as it was keeps moving where it was (its arrivals,
    retirements and cursors); every other list starts still again.
    """

    def __init__(self, world: World, every: int, carried: ChurningWorld | None = None) -> None:
        if every < 1:
            raise ValueError(f"churn must be at least 1 request per arrival, got {every}")
        self.world = world
        self.every = every
        self._lists: dict[tuple[str, str], MovingList] = {}
        if carried is not None and carried.every == every:
            changed = set(world.lists_changed_since(carried.world))
            self._lists = {
                key: moving for key, moving in carried._lists.items() if key not in changed
            }

    def moving(self, query: CaseQuery) -> MovingList | None:
        """The query's list under churn (KeyError for an unknown agent; None for a project the
        agent does not have)."""
        key = (query.agent_id, query.project_id.lower())
        moving = self._lists.get(key)
        if moving is None:
            base = self.world.case_list(query)
            if base is None:
                return None
            moving = self._lists[key] = MovingList(self.world.seed, base, self.every)
        return moving

    def encoded_page(self, query: CaseQuery, after: int | None, limit: int) -> EncodedPage:
        """`World.encoded_page` of the list as it is after this request, which counts towards the
        list's next arrival (a request refused for its position does not)."""
        moving = self.moving(query)
        if moving is None:
            return self.world.encoded_page(query, after, limit)
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        moving.check(after)
        moving.requested()
        entries = moving.entries(category_filter(query).accepted, after, limit + 1, query)
        next_position = entries[limit - 1].position if len(entries) > limit else None
        return EncodedPage([entry.text for entry in entries[:limit]], next_position)

    def count_cases(self, query: CaseQuery) -> int:
        """How many cases match now (without counting a request)."""
        moving = self.moving(query)
        if moving is None:
            return self.world.count_cases(query)
        return moving.count(category_filter(query).accepted, query)
