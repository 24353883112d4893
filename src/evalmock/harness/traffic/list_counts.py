"""The targets' count of a list, judged from traffic only where the list stood still: of each list
the targets count, the first and the latest whole walk are kept as fingerprints (how many different
cases, a digest of their ids), and the count is compared when a later whole walk lists the same
cases as the first; otherwise it is said not judged, and why. A service in use moves its lists while
it is used, and the targets' count was written at another moment: a stale count breaks no rule."""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Hashable, Iterator
from dataclasses import dataclass

from evalmock.harness.checks.outcomes import MOVED_PREFIX, SkipKind
from evalmock.harness.checks.walk_pages import WalkLedger

NOT_JUDGED = "not judged: "


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """One whole walk, small: how many different cases it listed and a 16-byte digest of their ids
    (the ledger's id hashes, sorted: the same cases in any order give the same digest)."""

    distinct: int
    digest: bytes

    @classmethod
    def of(cls, ledger: WalkLedger) -> Fingerprint:
        ids = sorted({key for mark in ledger.pages for key in mark.ids})
        return cls(len(ids), hashlib.blake2b(array("q", ids).tobytes(), digest_size=16).digest())


@dataclass(slots=True)
class ListCount:
    """What is held of one list: its name as the report says it, the targets' count, the first and
    the latest whole walk, how many whole walks, and whether its count was judged."""

    where: str
    active: int
    first: Fingerprint
    latest: Fingerprint
    walks: int = 1
    judged: bool = False

    def reason(self) -> tuple[str, SkipKind]:
        """Why the count was not judged, and the kind of skip that is."""
        stated = f"the targets' active_cases ({self.active}) was not compared"
        if self.walks == 1:
            return (
                f"{NOT_JUDGED}{self.where} was walked whole once ({self.first.distinct} cases): "
                f"whether the list moved since the targets were written cannot be told, so {stated}"
                "; a second whole walk that lists the same cases judges it",
                SkipKind.MISSING,
            )
        return (
            f"{MOVED_PREFIX}the first of {self.walks} whole walks of {self.where} listed "
            f"{self.first.distinct} cases and the latest {self.latest.distinct}, not the same ones "
            f"(the list moved while it was used): {stated}; it may describe another moment",
            SkipKind.MOVED,
        )


class ListCounts:
    """The lists' fingerprints, one entry a list the targets count (bounded by the targets)."""

    def __init__(self) -> None:
        self.lists: dict[Hashable, ListCount] = {}

    def whole_walk(self, key: Hashable, where: str, active: int, ledger: WalkLedger) -> bool:
        """Hold a whole walk of the list; True when its count is to be judged now: a later whole
        walk lists the same cases as the first (the list stood still between them), and the count
        was not judged yet (never twice)."""
        fingerprint = Fingerprint.of(ledger)
        held = self.lists.get(key)
        if held is None:
            self.lists[key] = ListCount(where, active, fingerprint, fingerprint)
            return False
        held.latest, held.walks = fingerprint, held.walks + 1
        if held.judged or fingerprint != held.first:
            return False
        held.judged = True
        return True

    def unjudged(self) -> Iterator[tuple[str, SkipKind]]:
        """Why each list's count was not judged (so far), in the order the lists were first
        walked."""
        for held in self.lists.values():
            if not held.judged:
                yield held.reason()
