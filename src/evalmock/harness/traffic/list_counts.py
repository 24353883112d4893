"""The targets' count of a list, judged from traffic only where the list stood still and the
count's moment is known.

Of each list the targets count, the first and the latest whole walk are kept as fingerprints (how
many different cases, a digest of their ids). A later whole walk that lists the same cases as the
first says the list stood still; then a count that matches passes, an undated one that differs is
said, never failed (it may describe another moment), and a dated one (`active_cases_at`) is
explained by the cases' own dates: those added since it, from the walk itself, and those retired
since it, from a whole walk with `include=retired` in the same traffic that lists the same active
cases. What the dates cannot explain fails; what the traffic cannot show is said not judged."""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from evalmock.contract.targets import rfc3339
from evalmock.harness.checks.counts import ADDED_SINCE, RETIRED_SINCE, Since, change_since
from evalmock.harness.checks.outcomes import MOVED_PREFIX, SkipKind, Violation
from evalmock.harness.checks.walk_pages import WalkLedger, id_key

NOT_JUDGED = "not judged: "


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """A set of cases, small: how many and a 16-byte digest of their id hashes (sorted: the same
    cases in any order give the same digest)."""

    distinct: int
    digest: bytes

    @classmethod
    def of_ids(cls, keys: set[int]) -> Fingerprint:
        ids = sorted(keys)
        return cls(len(ids), hashlib.blake2b(array("q", ids).tobytes(), digest_size=16).digest())


def walked_ids(ledger: WalkLedger) -> set[int]:
    """The id hashes of every case a whole walk listed."""
    return {case for mark in ledger.pages for case in mark.ids}


@dataclass(slots=True)
class DatedCases:
    """What the cases of one walk of a counted list say of themselves after the count's moment:
    the id hashes of the cases added since (active), of those retired since (added by then), and
    of every retired case (none of the list's active cases)."""

    at: datetime
    added: set[int] = field(default_factory=set)
    retired_since: set[int] = field(default_factory=set)
    retired: set[int] = field(default_factory=set)

    def note(self, cases: Iterable[Mapping[str, Any]]) -> None:
        for case in cases:
            key = id_key(case.get("id"))
            change = change_since(case, self.at)
            if change == ADDED_SINCE:
                self.added.add(key)
            elif change == RETIRED_SINCE:
                self.retired_since.add(key)
            if case.get("retired") is not None:
                self.retired.add(key)


@dataclass(frozen=True, slots=True)
class Everything:
    """The latest whole walk of a list with include=retired: its active cases, and how many of its
    cases were retired after the count's moment."""

    active: Fingerprint
    retired_since: int


@dataclass(slots=True)
class ListCount:
    """What is held of one list: its name as the report says it, the targets' count and its moment,
    the first and the latest whole walk, how many whole walks, the cases added since the moment in
    the walk that agreed with the first, and whether its count was judged."""

    where: str
    active: int
    at: datetime | None
    first: Fingerprint
    latest: Fingerprint
    walks: int = 1
    agreed: bool = False
    added: int = 0
    judged: bool = False

    def reason(self, everything: Everything | None) -> tuple[str, SkipKind]:
        """Why the count was not judged, and the kind of skip that is."""
        stated = f"the targets' active_cases ({self.active}) was not compared"
        listed = self.first.distinct
        if self.agreed and self.at is None:
            return (
                f"{NOT_JUDGED}the whole walks of {self.where} agree on {listed} cases; {stated}: "
                "it does not say when it was counted, so it may be stale. Stating that moment "
                "(active_cases_at, as evalmock serve --write-targets writes it) lets the cases' "
                "own dates explain the difference, or fail it",
                SkipKind.MOVED,
            )
        if self.agreed:
            other = "" if everything is None else ", and the latest one listed other active cases"
            return (
                f"{NOT_JUDGED}the whole walks of {self.where} agree on {listed} cases, the targets "
                f"say {self.active} at {rfc3339(self.at)} with {self.added} added since: the "
                "difference may be cases retired since, which only a whole walk of the list with "
                f"include=retired, listing the same active cases, shows{other}",
                SkipKind.MISSING,
            )
        if self.walks == 1:
            return (
                f"{NOT_JUDGED}{self.where} was walked whole once ({listed} cases): whether the "
                f"list moved since the targets were written cannot be told, so {stated}; a second "
                "whole walk that lists the same cases judges it",
                SkipKind.MISSING,
            )
        return (
            f"{MOVED_PREFIX}the first of {self.walks} whole walks of {self.where} listed "
            f"{listed} cases and the latest {self.latest.distinct}, not the same ones (the list "
            f"moved while it was used): {stated}; it may describe another moment",
            SkipKind.MOVED,
        )


@dataclass(frozen=True, slots=True)
class CountToJudge:
    """A count the traffic can judge now: the walks' distinct cases against the targets', with the
    sum the dates give when the count is dated (None: the count matched as it stands)."""

    listed: int
    stated: int
    since: Since | None = None
    at_most: bool = False  # only the cases added since are known: retirements lower the sum

    def judge(self) -> None:
        """Violation when the walks list other than the count and its dates explain."""
        if self.since is None:
            return
        if self.at_most:
            bound = self.since.expected
            if self.listed > bound:
                raise Violation(
                    "the walk did not list every active case as the dates explain: "
                    f"{self.since.arithmetic(self.listed)} (retirements only lower the sum)",
                    expected=f"at most {bound} cases",
                    received=f"{self.listed} cases",
                )
            return
        if self.since.expected != self.listed:
            raise Violation(
                f"the walk did not list every active case: {self.since.arithmetic(self.listed)}",
                expected=f"{self.since.expected} cases",
                received=f"{self.listed} cases",
            )


class ListCounts:
    """The lists' fingerprints, one entry a list the targets count (bounded by the targets), and the
    latest whole include=retired walk of each."""

    def __init__(self) -> None:
        self.lists: dict[Hashable, ListCount] = {}
        self.everything: dict[Hashable, Everything] = {}

    def whole_walk(
        self,
        key: Hashable,
        where: str,
        active: int,
        ledger: WalkLedger,
        at: datetime | None = None,
        dated: DatedCases | None = None,
    ) -> CountToJudge | None:
        """Hold a whole walk of the list (its cases' dates in `dated` when the count has its moment
        `at`); the count to judge now, if any: a later whole walk lists the same cases as the first
        (the list stood still between them), and the count was not judged yet (never twice)."""
        walked = walked_ids(ledger)
        fingerprint = Fingerprint.of_ids(walked)
        held = self.lists.get(key)
        if held is None:
            self.lists[key] = ListCount(where, active, at, fingerprint, fingerprint)
            return None
        held.latest, held.walks = fingerprint, held.walks + 1
        if held.judged or fingerprint != held.first:
            return None
        held.agreed = True
        if dated is not None:
            held.added = len(dated.added & walked)
        return self._judgeable(key, held)

    def whole_everything_walk(
        self, key: Hashable, ledger: WalkLedger, dated: DatedCases
    ) -> CountToJudge | None:
        """Hold a whole include=retired walk of a counted list; the list's count to judge now, if
        it waited for one."""
        walked = walked_ids(ledger)
        self.everything[key] = Everything(
            Fingerprint.of_ids(walked - dated.retired), len(dated.retired_since & walked)
        )
        held = self.lists.get(key)
        if held is None or held.judged or not held.agreed:
            return None
        return self._judgeable(key, held)

    def _judgeable(self, key: Hashable, held: ListCount) -> CountToJudge | None:
        listed = held.first.distinct
        if listed == held.active:
            held.judged = True
            return CountToJudge(listed, held.active)
        if held.at is None:
            return None
        added = Since(held.active, held.at, 0, held.added)
        if listed > added.expected:
            held.judged = True
            return CountToJudge(listed, held.active, added, at_most=True)
        everything = self.everything.get(key)
        if everything is None or everything.active != held.first:
            return None
        held.judged = True
        since = Since(held.active, held.at, everything.retired_since, held.added)
        return CountToJudge(listed, held.active, since)

    def unjudged(self) -> Iterator[tuple[str, SkipKind]]:
        """Why each list's count was not judged (so far), in the order the lists were first
        walked."""
        for key, held in self.lists.items():
            if not held.judged:
                yield held.reason(self.everything.get(key))
