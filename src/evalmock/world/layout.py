"""Which kind each generated case has and whether it is retired: a fixed mix per block of ranks.

Every block of BLOCK consecutive ranks holds the same multiset of categories in a hashed order, so
counts are arithmetic (exact `active_cases` for any size), every filter matches at least
MIN_MATCHES_PER_BLOCK cases per block (a scan for the next match is short), and block 0 opens with
one case of each category (tiny worlds still have hand, correction and retired cases).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from evalmock.world.hashing import Stream, splitmix64

HAND_ACTIVE, HAND_RETIRED, CORRECTION_ACTIVE, CORRECTION_RETIRED = range(4)
CATEGORIES = (HAND_ACTIVE, HAND_RETIRED, CORRECTION_ACTIVE, CORRECTION_RETIRED)
# 12.5% retired
PER_BLOCK = {
    HAND_ACTIVE: 13,
    HAND_RETIRED: 2,
    CORRECTION_ACTIVE: 22,
    CORRECTION_RETIRED: 3,
}
BLOCK = sum(PER_BLOCK.values())
_PATTERN = tuple(category for category in CATEGORIES for _ in range(PER_BLOCK[category]))


def kind_of(category: int) -> str:
    return "hand" if category in (HAND_ACTIVE, HAND_RETIRED) else "correction"


def is_retired(category: int) -> bool:
    return category in (HAND_RETIRED, CORRECTION_RETIRED)


@dataclass(frozen=True)
class CategoryFilter:
    """Which categories a query accepts."""

    accepted: frozenset[int]

    @classmethod
    @functools.cache  # eight filters in all; a page asks for one on every request
    def of(cls, kinds: frozenset[str], include_retired: bool) -> CategoryFilter:
        return cls(
            frozenset(
                category
                for category in CATEGORIES
                if kind_of(category) in kinds and (include_retired or not is_retired(category))
            )
        )

    def per_block(self) -> int:
        return sum(PER_BLOCK[category] for category in self.accepted)


MIN_MATCHES_PER_BLOCK = min(PER_BLOCK.values())


@functools.lru_cache(maxsize=16_384)
def block_pattern(block_base: int, block: int) -> tuple[int, ...]:
    """The categories of ranks block*BLOCK .. block*BLOCK+BLOCK-1, in order."""
    stream = Stream(splitmix64(block_base ^ block))
    if block == 0:
        head = stream.shuffled(CATEGORIES)
        rest = list(_PATTERN)
        for category in head:
            rest.remove(category)
        return (*head, *stream.shuffled(rest))
    return tuple(stream.shuffled(_PATTERN))


@functools.lru_cache(maxsize=8_192)
def block_matches(block_base: int, block: int, accepted: frozenset[int]) -> tuple[int, ...]:
    """The offsets within block `block` (0 .. BLOCK-1) whose category is in `accepted`, in order."""
    return tuple(
        offset
        for offset, category in enumerate(block_pattern(block_base, block))
        if category in accepted
    )


def category_at(block_base: int, rank: int) -> int:
    return block_pattern(block_base, rank // BLOCK)[rank % BLOCK]


def count_in_prefix(block_base: int, size: int, accepted: frozenset[int]) -> int:
    """How many of ranks 0 .. size-1 fall in `accepted` (O(BLOCK), whatever the size)."""
    full, partial = divmod(size, BLOCK)
    per_block = sum(PER_BLOCK[category] for category in accepted)
    tail = block_pattern(block_base, full)[:partial] if partial else ()
    return full * per_block + sum(1 for category in tail if category in accepted)
