"""One agent-and-project list: generated ranks and curated cases merged newest first, filtered and
paged.

A position is an index into the merged list. Curated cases sit at fixed positions (decided by their
`addedAt` among the generated ones), so positions never depend on the filters or the page size, and
a page costs O(limit): from `after`, take each block's matching ranks (layout.block_matches) and the
curated cases between them, and stop after limit+1 matches. A filter on another case field (a
declared equality filter, contract/filters.py) pages by an index of that field, built once per list
on first use: then a page costs O(limit) too.
"""

from __future__ import annotations

import bisect
import copy
import heapq
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import orjson

from evalmock.world.cases import CaseFactory
from evalmock.world.layout import (
    BLOCK,
    CORRECTION_ACTIVE,
    CORRECTION_RETIRED,
    HAND_ACTIVE,
    HAND_RETIRED,
    CategoryFilter,
    block_matches,
    count_in_prefix,
)
from evalmock.world.timeline import (
    RFC3339_UTC,
    WORLD_NOW,
    first_rank_older_than,
    parse_rfc3339,
)

# Generated cases recently served, kept per list as compact JSON: composing a case costs ~20 µs, and
# clients re-read the same pages, which the server sends as these very bytes. Bounded, so memory
# stays flat whatever the world's size: a full cache costs about 0.6 MiB of resident memory per list
# (0.5 KB a case, plus the dict's own overhead; docs/maintainers/performance.md, "The case cache",
# has the measured trade-off of speed against memory).
CACHED_CASES_PER_LIST = 1024
ITER_PAGE = 1_000  # cases a page when `iter_cases` walks a whole list
# (case field, value) per filter beside the categories, as CaseQuery.equal gives them
Equal = tuple[tuple[str, Any], ...]
# (the fields' values, category) -> the positions holding them, in the list's order
FieldIndex = dict[tuple[tuple[Any, ...], int], list[int]]


def encode(value: Any) -> bytes:
    """Compact JSON (orjson) in a bytes object of its own size: orjson's result keeps a buffer of 4
    KiB or more, eight times a typical case, and these bytes are kept for long."""
    return memoryview(orjson.dumps(value)).tobytes()


@dataclass(frozen=True)
class ListPage:
    cases: list[bytes]  # each case as compact JSON (orjson), as the cache holds it
    next_position: int | None


def curated_category(case: dict[str, Any]) -> int:
    retired = "retired" in case
    if case["kind"] == "hand":
        return HAND_RETIRED if retired else HAND_ACTIVE
    return CORRECTION_RETIRED if retired else CORRECTION_ACTIVE


def _retired_at(case: dict[str, Any]) -> Any:
    retired = case.get("retired")
    return retired.get("at") if isinstance(retired, dict) else None


class CaseList:
    """The cases of one agent and project: `size` generated ones plus the curated ones placed among
    them."""

    def __init__(self, factory: CaseFactory, size: int, curated: list[dict[str, Any]]) -> None:
        self.factory = factory
        self.size = size
        # A curated case goes before the first generated rank added before it; equal ranks keep
        # newest first.
        stamped = sorted(
            ((parse_rfc3339(case["addedAt"]), case) for case in curated), key=lambda pair: -pair[0]
        )
        placed = [
            (first_rank_older_than(factory.time_base, size, seconds), case)
            for seconds, case in stamped
        ]
        # the generated rank each curated case goes before
        self._curated_ranks = [rank for rank, _ in placed]
        self._curated_positions = [rank + number for number, rank in enumerate(self._curated_ranks)]
        self._curated_cases = [case for _, case in placed]
        self._curated_categories = [curated_category(case) for case in self._curated_cases]
        self._curated_encoded = [encode(case) for case in self._curated_cases]
        self.total = size + len(placed)
        self._texts: dict[int, bytes] = {}  # source -> its JSON; see CACHED_CASES_PER_LIST
        self._indexes: dict[tuple[str, ...], FieldIndex] = {}  # by the fields indexed; see `index`

    def counted_at(self) -> int:
        """Unix seconds at which this list's counts hold: after every date its cases carry (the
        world's "now", a day after its newest generated case, or a curated case's later date)."""
        dates = [
            parse_rfc3339(text)
            for case in self._curated_cases
            for text in (case.get("addedAt"), case.get("updatedAt"), _retired_at(case))
            if isinstance(text, str) and RFC3339_UTC.match(text)
        ]
        return max([WORLD_NOW, *dates])

    def _encoded_case(self, source: int) -> bytes:
        return self._texts.get(source) or self._encode(source)

    def _encode(self, source: int) -> bytes:
        """Source >= 0 is a generated rank, -1 - i the i-th curated case. A full cache is emptied,
        not aged: a hit is then one dict lookup, where a least-recently-used order cost a relink per
        case served."""
        if len(self._texts) >= CACHED_CASES_PER_LIST:
            self._texts.clear()
        text = (
            encode(self.factory.case(source)) if source >= 0 else self._curated_encoded[-source - 1]
        )
        self._texts[source] = text
        return text

    def _case(self, source: int) -> dict[str, Any]:
        # a fresh dict every time: callers may keep or edit it
        return orjson.loads(self._encoded_case(source))

    def page(
        self, wanted: CategoryFilter, after: int | None, limit: int, equal: Equal = ()
    ) -> ListPage:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        start = self.start_after(after)
        if not wanted.accepted:
            return ListPage([], None)
        # one match past the page says there is more
        sources = self.sources(wanted.accepted, start, limit + 1, equal)
        if len(sources) > limit:
            return ListPage(
                self.encoded_cases(sources[:limit]), self.position_of(sources[limit - 1])
            )
        return ListPage(self.encoded_cases(sources), None)

    def sources(
        self, accepted: frozenset[int], start: int, wanted_count: int, equal: Equal = ()
    ) -> list[int]:
        """The sources (see `_encode`) of up to `wanted_count` accepted cases (whose fields hold
        `equal`'s values too) from position `start` on, in O(wanted_count).

        Between two curated cases the generated ranks run on unbroken, so a stretch of them is read
        a block at a time from the block's matching offsets (slices, not a step per position).
        """
        if equal:
            return self.indexed_sources(accepted, equal, start, wanted_count)
        positions, categories, total = self._curated_positions, self._curated_categories, self.total
        block_base = self.factory.block_base
        curated = bisect.bisect_left(positions, start)
        position, rank = start, start - curated
        sources: list[int] = []
        while position < total and len(sources) < wanted_count:
            next_curated = positions[curated] if curated < len(positions) else total
            end_rank = rank + next_curated - position
            while rank < end_rank and len(sources) < wanted_count:
                block, offset = divmod(rank, BLOCK)
                first = block * BLOCK
                matches = block_matches(block_base, block, accepted)
                stop = min(end_rank - first, BLOCK)
                taken = matches[
                    bisect.bisect_left(matches, offset) : bisect.bisect_left(matches, stop)
                ]
                sources += [first + match for match in taken[: wanted_count - len(sources)]]
                rank = first + stop
            if (
                next_curated < total
                and len(sources) < wanted_count
                and categories[curated] in accepted
            ):
                sources.append(-curated - 1)
            curated, position = curated + 1, next_curated + 1
        return sources

    def indexed_sources(
        self, accepted: frozenset[int], equal: Equal, start: int, wanted_count: int
    ) -> list[int]:
        """`sources` for cases whose fields hold `equal`'s values: from the index of those fields,
        one run of positions per accepted category, merged (O(wanted_count) once it is built)."""
        index = self.index(tuple(name for name, _ in equal))
        values = tuple(value for _, value in equal)
        runs = [index.get((values, category), []) for category in sorted(accepted)]
        firsts = [bisect.bisect_left(run, start) for run in runs]
        heads = [run[first : first + wanted_count] for run, first in zip(runs, firsts, strict=True)]
        merged = itertools.islice(heapq.merge(*heads), wanted_count)
        return [self.source_at(position) for position in merged]

    def index(self, fields: tuple[str, ...]) -> FieldIndex:
        """Where each combination of these fields' values stands, per category: built once per
        list and fields, on first use, by one read of every case (`field_values`)."""
        index = self._indexes.get(fields)
        if index is None:
            index = {}
            for position in range(self.total):
                source = self.source_at(position)
                values, category = self.field_values(source, fields)
                index.setdefault((values, category), []).append(position)
            self._indexes[fields] = index
        return index

    def field_values(self, source: int, fields: tuple[str, ...]) -> tuple[tuple[Any, ...], int]:
        """A case's values of `fields` (None where it has none; a value that is no JSON scalar, as
        its JSON) and its category."""
        if source >= 0:
            values = tuple(_hashable(self.factory.field(source, name)) for name in fields)
            return values, self.factory.category(source)
        case = self._curated_cases[-source - 1]
        return tuple(_hashable(case.get(name)) for name in fields), curated_category(case)

    def source_at(self, position: int) -> int:
        """The source (see `_encode`) at a position of the merged list."""
        curated = bisect.bisect_left(self._curated_positions, position)
        if curated < len(self._curated_positions) and self._curated_positions[curated] == position:
            return -curated - 1
        return position - curated

    def position_of(self, source: int) -> int:
        """The position of a generated rank (source >= 0) or of curated case -source-1 in the merged
        list."""
        if source < 0:
            return self._curated_positions[-source - 1]
        return source + bisect.bisect_right(self._curated_ranks, source)

    def encoded_cases(self, sources: list[int]) -> list[bytes]:
        texts, miss = self._texts, self._encode
        if len(sources) > 1:
            # all cached, as in a walk over a warm list: one lookup in C for the page, not one call
            # per case
            try:
                return list(itemgetter(*sources)(texts))
            except KeyError:
                pass
        return [texts.get(source) or miss(source) for source in sources]

    def start_after(self, after: int | None) -> int:
        if after is None:
            return 0
        if isinstance(after, bool) or not isinstance(after, int) or not 0 <= after < self.total:
            raise ValueError(f"position {after!r} is not in this list (0..{self.total - 1})")
        return after + 1

    def iter_cases(self, wanted: CategoryFilter, equal: Equal = ()) -> Iterator[dict[str, Any]]:
        """Every accepted case in the list's order, page after page (the one walk of the list is
        `page`'s)."""
        after = None
        while True:
            found = self.page(wanted, after, ITER_PAGE, equal)
            yield from (orjson.loads(encoded) for encoded in found.cases)
            if found.next_position is None:
                return
            after = found.next_position

    def count(self, wanted: CategoryFilter, equal: Equal = ()) -> int:
        """Exact, in O(BLOCK + curated) whatever the size (by the index, with `equal`)."""
        if equal:
            index = self.index(tuple(name for name, _ in equal))
            values = tuple(value for _, value in equal)
            return sum(len(index.get((values, category), [])) for category in wanted.accepted)
        generated = count_in_prefix(self.factory.block_base, self.size, wanted.accepted)
        return generated + sum(
            1 for category in self._curated_categories if category in wanted.accepted
        )

    def curated_cases(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self._curated_cases)


def _hashable(value: Any) -> Any:
    """A field's value as an index key: a JSON scalar as it is, anything else as its JSON (which no
    query value, a string, equals)."""
    return value if value is None or isinstance(value, str | int | float | bool) else encode(value)
