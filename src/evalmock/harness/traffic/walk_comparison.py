"""Whole walks of one list compared across page sizes, as the live audit compares its own: a case a
later whole walk lists, whose own addedAt says it was there before an earlier whole walk at another
page size began, and that the earlier walk did not list, was skipped. A few whole walks a list are
kept, as sorted id hashes and when they ran on the service's clock (its Date header)."""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from evalmock.contract.case_rules import instant
from evalmock.contract.sources import Source
from evalmock.contract.targets import rfc3339
from evalmock.harness.checks.counts import service_time
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.outcomes import SkipKind, Violation
from evalmock.harness.checks.walk_pages import WalkLedger, id_key
from evalmock.harness.excerpts import clip, show
from evalmock.nouns import counted

# A case added this shortly before the earlier walk's first page was answered (its Date header, in
# whole seconds) may have come after that page was read: a slow answer, or the clock that dates
# cases a little apart from the one that writes the Date header. Not judged.
CLOCK_SLACK = timedelta(minutes=1)
# Walks further apart are not compared: the longer between them, the more a list in use may change
# in ways its cases' own dates do not show, which the page neither states nor rules out (a retired
# case restored, a case imported with an earlier addedAt).
MAX_APART = timedelta(hours=1)
KEPT_WALKS = 4  # whole walks of one list kept to compare the later ones with
KEPT_CASES = 1_000_000  # case ids held over every kept walk (8 bytes each)
NOT_JUDGED = "not judged: "
MAX_REASONS = 64  # lists whose latest reason a comparison was not judged is kept


@dataclass(frozen=True)
class KeptBounds:
    """How many whole walks of one list are kept, and how many case ids over all of them (the
    least recently walked lists go first)."""

    walks: int = KEPT_WALKS
    cases: int = KEPT_CASES

    def __post_init__(self) -> None:
        if self.walks < 1 or self.cases < 1:
            raise ValueError("kept walk bounds must be at least 1")


@dataclass(frozen=True, slots=True)
class Ran:
    """A walk as a finding places it: its page size, and its first and last page's Date header and
    X-Request-Id."""

    limit: int
    started: datetime | None
    start_id: str | None
    ended: datetime | None = None
    end_id: str | None = None

    def said(self) -> str:
        when = " to ".join(
            "(no Date header)" if moment is None else rfc3339(moment)
            for moment in (self.started, self.ended)
        )
        ids = " to ".join(clip(i, 80) if i else "(none)" for i in (self.start_id, self.end_id))
        return f"whole walk at limit={self.limit} (answered {when}; X-Request-Id {ids})"


class KeptWalk:
    """A whole walk kept to compare: when it ran, and its cases' id hashes, sorted."""

    __slots__ = ("ids", "ran", "serial")

    def __init__(self, serial: int, ran: Ran, ids: set[int]) -> None:
        self.serial = serial
        self.ran = ran
        self.ids = array("q", sorted(ids))

    def lists(self, key: int) -> bool:
        index = bisect_left(self.ids, key)
        return index < len(self.ids) and self.ids[index] == key


@dataclass(frozen=True, slots=True)
class Missed:
    """A case the later walk lists that an earlier one did not, though added before it began."""

    case_id: str
    added_at: str
    page: int  # of the later walk, from 1


@dataclass(slots=True)
class Comparing:
    """An open walk's comparison with the whole walks of its list kept before its first page, at
    other page sizes (by their serials): per earlier walk, the first case it missed, and how many
    cases it did not list cannot be told (no addedAt, or added just before it began)."""

    ran: Ran
    against: tuple[int, ...]
    mixed: bool = False  # its pages were asked at several page sizes
    missed: dict[int, Missed] = field(default_factory=dict)
    unsure: Counter[int] = field(default_factory=Counter)


class WalkComparisons:
    """The kept whole walks of each list (bounded), the comparisons they give, and why a comparison
    was not judged (the latest reason of each list, for the last MAX_REASONS lists)."""

    def __init__(self, source: Source, bounds: KeptBounds | None = None) -> None:
        self.bounds = bounds or KeptBounds()
        self.words = " ".join(f"“{quote.text}”" for quote in source.quotes)
        self.lists: OrderedDict[Hashable, list[KeptWalk]] = OrderedDict()  # least recent first
        self.cases = 0  # ids held over every kept walk
        self.reasons: OrderedDict[Hashable, tuple[str, SkipKind]] = OrderedDict()
        self._serial = 0

    def begin(self, key: Hashable, exchange: Exchange, limit: int | None) -> Comparing | None:
        """A walk's first page: what it will be compared with (None: no page size to tell)."""
        if limit is None:
            return None
        kept = self.lists.get(key, ())
        ran = Ran(limit, service_time(exchange), exchange.header("x-request-id"))
        return Comparing(ran, tuple(w.serial for w in kept if w.ran.limit != limit))

    def page(
        self,
        comparing: Comparing | None,
        key: Hashable,
        cases: Sequence[Mapping[str, Any]],
        limit: int | None,
        number: int,
    ) -> None:
        """Page `number` of an open walk: each case an earlier walk did not list, told by its
        addedAt."""
        if comparing is None:
            return
        comparing.mixed = comparing.mixed or limit != comparing.ran.limit
        earlier = [w for w in self.lists.get(key, ()) if w.serial in comparing.against]
        if comparing.mixed or not earlier:
            return
        for case in cases:
            case_key, added = id_key(case.get("id")), instant(case.get("addedAt"))
            for walk in earlier:
                began = walk.ran.started
                if walk.lists(case_key) or (added and began and added > began):
                    continue  # listed, or added after the earlier walk began: no skip
                if added is None or began is None or added > began - CLOCK_SLACK:
                    comparing.unsure[walk.serial] += 1
                elif walk.serial not in comparing.missed:
                    comparing.missed[walk.serial] = Missed(
                        show(case.get("id")), str(case.get("addedAt")), number
                    )

    def whole(
        self,
        comparing: Comparing | None,
        key: Hashable,
        ledger: WalkLedger,
        exchange: Exchange,
        where: str,
    ) -> Callable[[], None] | None:
        """A walk's last page: the rule to apply now (it raises the first case skipped, or passes),
        or None when no comparison was judged (the reason is kept); then the walk is kept for the
        next ones."""
        if comparing is None:
            return None
        if comparing.mixed:
            self._said(
                key,
                f"{NOT_JUDGED}{where}: a walk's pages were asked at several page sizes, so it "
                "was compared with no other",
                SkipKind.MISSING,
            )
            return None
        ran = Ran(
            comparing.ran.limit,
            comparing.ran.started,
            comparing.ran.start_id,
            service_time(exchange),
            exchange.header("x-request-id"),
        )
        listed = {case for mark in ledger.pages for case in mark.ids}
        earlier = [w for w in self.lists.get(key, ()) if w.serial in comparing.against]
        verdicts = [self._compare(w, ran, comparing, listed, where) for w in earlier]
        if ledger.whole and listed and ran.started is not None:
            self._keep(key, ran, listed)
        found = next((v for v in verdicts if isinstance(v, Violation)), None)
        if found is not None:

            def skipped() -> None:
                raise found

            return skipped
        for verdict in verdicts:
            if isinstance(verdict, tuple):
                self._said(key, *verdict)
        return (lambda: None) if any(v is None for v in verdicts) else None

    def _compare(
        self, earlier: KeptWalk, ran: Ran, comparing: Comparing, listed: set[int], where: str
    ) -> Violation | tuple[str, SkipKind] | None:
        """The earlier walk against the later: a Violation, why it is not judged, or None (kept)."""
        before, after = f"the {earlier.ran.said()}", f"the later {ran.said()}"
        pair = f"{where}: {before} and {after}"
        if earlier.ran.started is None or ran.ended is None:
            return (
                f"{NOT_JUDGED}{pair}: without the service's Date header on their first and last "
                "pages, when the list could have changed cannot be told",
                SkipKind.MISSING,
            )
        if ran.ended - earlier.ran.started > MAX_APART:
            return (
                f"{NOT_JUDGED}{pair}: more than an hour apart, a list in use may change in ways "
                "its cases' own dates do not show",
                SkipKind.MOVED,
            )
        missed = comparing.missed.get(earlier.serial)
        if missed is not None:
            return Violation(
                f"in {where}, {before} did not list case {missed.case_id!r}, which "
                f"{after} lists on its page {missed.page}, added {missed.added_at}: before the "
                "earlier walk began, so that walk skipped it between pages (the page: "
                f"{self.words}; the request below is the later walk's last page)",
                expected=f"case {missed.case_id!r} in the walk at limit={earlier.ran.limit}, "
                "as every case added before a walk begins and listed after it ends",
                received=f"the walk at limit={earlier.ran.limit} without it "
                f"({len(earlier.ids)} cases; {len(listed)} at limit={ran.limit})",
            )
        left = sum(1 for case in earlier.ids if case not in listed)
        unsure = comparing.unsure[earlier.serial]
        if not (left or unsure):
            return None
        said = []
        if left:
            said.append(
                f"the earlier walk listed {counted(left, 'case')} the later did not: retired "
                "between them, or skipped, which the traffic does not tell"
            )
        if unsure:
            said.append(
                f"the later walk listed {counted(unsure, 'case')} the earlier did not, without an "
                "addedAt or added less than a minute before the earlier began"
            )
        return f"{NOT_JUDGED}{pair}: {'; '.join(said)}", SkipKind.MOVED

    def _keep(self, key: Hashable, ran: Ran, listed: set[int]) -> None:
        """Keep a whole walk; the oldest of its list, then of the least recently walked lists, go
        while the bounds are passed."""
        if len(listed) > self.bounds.cases:
            return
        self._serial += 1
        kept = self.lists.setdefault(key, [])
        self.lists.move_to_end(key)
        kept.append(KeptWalk(self._serial, ran, listed))
        self.cases += len(listed)
        while len(kept) > self.bounds.walks:
            self.cases -= len(kept.pop(0).ids)
        while self.cases > self.bounds.cases:
            oldest = next(iter(self.lists))
            walks = self.lists[oldest]
            self.cases -= len(walks.pop(0).ids)
            if not walks:
                del self.lists[oldest]

    def _said(self, key: Hashable, why: str, kind: SkipKind) -> None:
        self.reasons[key] = (why, kind)
        self.reasons.move_to_end(key)
        while len(self.reasons) > MAX_REASONS:
            self.reasons.popitem(last=False)

    def unjudged(self) -> Iterator[tuple[str, SkipKind]]:
        """Why comparisons were not judged: the latest of each list, in the order they were said."""
        yield from self.reasons.values()
