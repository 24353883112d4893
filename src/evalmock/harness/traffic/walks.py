"""Walks followed in traffic (the proxy's, a HAR file's): each nextCursor a page gave is remembered
with the request it answered, per caller (a keyed hash of the credential, never the credential), so
that the page a later request gets for it is judged against the pages before it by the harness's own
walk rules; open walks and their pages are held in a bounded LRU, as case-id hashes."""

from __future__ import annotations

import hashlib
import os
import sys
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evalmock.contract.filters import narrowing
from evalmock.contract.operations import operation
from evalmock.contract.targets import ProjectTarget, Targets
from evalmock.defaults import DEFAULT_MAX_PAGES, DEFAULT_MAX_WALKS
from evalmock.harness.checks.cursor_binding import assert_cursor_refused
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.outcomes import Violation
from evalmock.harness.checks.pagination import requested_limit
from evalmock.harness.checks.registry import Check, find_check
from evalmock.harness.checks.walk_pages import PageMark, WalkLedger
from evalmock.harness.checks.walk_rules import assert_follows_has_more, assert_page_continues
from evalmock.harness.run.judge import Breach, ResponseJudge, violation_example
from evalmock.harness.traffic.list_counts import CountToJudge, DatedCases, ListCounts
from evalmock.harness.traffic.walk_comparison import Comparing, KeptBounds, WalkComparisons

# The list's filters, which a walk keeps from page to page, as the document declares them.
_DECLARED = narrowing()
FILTERS = tuple(declared.name for declared in _DECLARED)
# What each filter stands for when left out: a walk with these filters lists every active case.
UNFILTERED = tuple(declared.read(None) for declared in _DECLARED)
# ... and with include=retired alone (the filter a case is listed by only when asked): every case
EVERYTHING = tuple(
    declared.read(declared.present_only_with) if declared.present_only_with else read
    for declared, read in zip(_DECLARED, UNFILTERED, strict=True)
)
# A request that sends one of these twice is left alone: the page does not say which value wins.
_ONCE = ("projectId", "cursor", "limit", *FILTERS)
# per process: a caller's hash cannot be matched against a list of tokens
_CALLER_KEY = os.urandom(16)


@dataclass(frozen=True)
class WalkBounds:
    """How much walk state is held: open walks, and pages over all of them (least recently used go
    first); whole walks kept to compare."""

    walks: int = DEFAULT_MAX_WALKS
    pages: int = DEFAULT_MAX_PAGES
    kept: KeptBounds = field(default_factory=KeptBounds)

    def __post_init__(self) -> None:
        if self.walks < 1 or self.pages < 1:
            raise ValueError("walk bounds must be at least 1")


@dataclass(frozen=True, slots=True)
class ListKey:
    """The list a walk reads (agent and project, the project in lower case) and its filters, by
    what they stand for: the same list however a request spells it (the kinds in any order)."""

    agent: str
    project: str
    filters: tuple[Any, ...]  # each of FILTERS, as the document reads it (contract/filters.py)
    # each of FILTERS as sent, None when left out: for the messages only
    sent: tuple[str | None, ...] = field(default=(), compare=False)


class OpenWalk:
    """A walk whose last page said hasMore: who walks it, which list, its pages so far."""

    __slots__ = ("caller", "compare", "dated", "key", "ledger")

    def __init__(self, caller: bytes, key: ListKey, dated: DatedCases | None = None) -> None:
        self.caller = caller
        self.key = key
        self.ledger = WalkLedger()
        self.dated = dated  # its cases' dates, for a count that has its moment
        self.compare: Comparing | None = None


def caller_of(exchange: Exchange) -> bytes:
    """Who sent a request: a hash of its Authorization header, keyed per process (the credential is
    never kept)."""
    credential = exchange.request_headers.get("authorization", "")
    return hashlib.blake2b(
        credential.encode("utf-8", "surrogateescape"), key=_CALLER_KEY, digest_size=16
    ).digest()


def list_key(exchange: Exchange) -> ListKey | None:
    """The list and filters a request of the test-set operation asks for; None when it is not one,
    or sends a parameter twice."""
    parameters = operation("test-set").path_parameters(exchange.path)
    query = exchange.query
    if parameters is None or "projectId" not in query or exchange.ambiguous(*_ONCE):
        return None
    # Interned: every walk of one list shares the strings (a set of kinds, the document's).
    sent = tuple(None if query.get(name) is None else sys.intern(query[name]) for name in FILTERS)
    return ListKey(
        sys.intern(parameters["agentId"]),
        sys.intern(query["projectId"].lower()),
        tuple(declared.read(value) for declared, value in zip(_DECLARED, sent, strict=True)),
        sent,
    )


class TrafficWalks:
    """Follows the walks in the exchanges it is given, in time order, and judges each page that
    continues one; the outcomes go to `judge`'s results, as the scenario checks' would."""

    def __init__(
        self, judge: ResponseJudge, targets: Targets | None = None, bounds: WalkBounds | None = None
    ) -> None:
        self.judge = judge
        self.targets = targets or Targets()
        self.bounds = bounds or WalkBounds()
        self.walks: OrderedDict[int, OpenWalk] = OrderedDict()  # least recently used first
        # A cursor's key -> the walk and the page that gave it. The key is of the caller and the
        # cursor, so that a service whose cursors are the same for everyone (an offset) gives each
        # caller's walks their own; of the cursor alone when the targets say cursors are sealed
        # (each is then its caller's), so that another caller's replay is found.
        self.cursors: dict[int, tuple[int, PageMark]] = {}
        self.sealed = self.targets.sealed_cursors is True
        # the targets' projects as a walk's ListKey names them (of one listed twice, the first)
        self.projects = {
            (p.agent_id, p.project_id.lower()): p for p in reversed(self.targets.projects)
        }
        self.pages = 0  # held over all open walks
        self.counts = ListCounts()  # the first and latest whole walk of each list the targets count
        self._next_id = 0
        self.once = find_check("walk_yields_every_case_once", "test-set")
        self.compared = WalkComparisons(self.once.source, self.bounds.kept)
        self.not_empty = find_check("page_after_has_more_is_not_empty", "test-set")
        self.binding = {
            aspect: find_check(f"cursor_is_bound_to_the_{aspect}", "test-set")
            for aspect in ("list", "agent", "filters", "caller")
        }

    def observe(self, exchange: Exchange) -> list[Breach]:
        """Judge one exchange of the test-set operation as part of the walks so far; returns the
        rules it broke."""
        if exchange.method.upper() != "GET" or "prefer" in exchange.request_headers:
            return []  # a forced answer (a mock's or Prism's Prefer control) is no page of the list
        key = list_key(exchange)
        if key is None:
            return []
        cursor = exchange.query.get("cursor")
        if not cursor:
            return self._first_page(exchange, key)
        caller = caller_of(exchange)
        found = self.cursors.get(self._key(caller, cursor))
        if found is None:  # a cursor the traffic never gave (a walk begun before, or a made-up one)
            return []
        walk_id, mark = found
        walk = self.walks[walk_id]
        if walk.caller != caller or walk.key != key:
            return self._elsewhere(exchange, walk, key, caller)
        self.walks.move_to_end(walk_id)
        body = _page(exchange)
        if body is None:  # an error (a busy service, an expired token): the walk may still go on
            return []
        return self._continues(exchange, walk_id, walk, mark, body)

    # -- pages
    # ----------------------------------------------------------------------------------------------
    def _first_page(self, exchange: Exchange, key: ListKey) -> list[Breach]:
        body = _page(exchange)
        if body is None:
            return []
        project = self._counted(key)
        at = None if project is None else project.active_cases_at
        walk = OpenWalk(caller_of(exchange), key, None if at is None else DatedCases(at))
        walk.compare = self.compared.begin(key, exchange, requested_limit(exchange))
        walk_id, self._next_id = self._next_id, self._next_id + 1
        return self._add(exchange, walk_id, walk, body, _cases(body), [], first=True)

    def _continues(
        self, exchange: Exchange, walk_id: int, walk: OpenWalk, mark: PageMark, body: dict[str, Any]
    ) -> list[Breach]:
        pages = walk.ledger.pages
        if not any(held is mark for held in pages):
            return []  # the page before was let go to bound memory
        # the cursor of an earlier page again: the walk goes on from there
        while pages[-1] is not mark:
            self._drop(walk.ledger.pages.pop())
        broken: list[Breach] = []
        number = walk.ledger.forgotten_pages + len(pages)
        self._apply(
            broken,
            self.not_empty,
            exchange,
            lambda: assert_follows_has_more(number, body, exchange),
        )
        cases = _cases(body)
        self._apply(
            broken,
            self.once,
            exchange,
            lambda: assert_page_continues(walk.ledger, cases, exchange, requested_limit(exchange)),
        )
        return self._add(exchange, walk_id, walk, body, cases, broken)

    def _add(
        self,
        exchange: Exchange,
        walk_id: int,
        walk: OpenWalk,
        body: dict[str, Any],
        cases: list[dict[str, Any]],
        broken: list[Breach],
        *,
        first: bool = False,
    ) -> list[Breach]:
        """Hold the page in its walk; at the walk's last page, judge the whole walk (its count
        against the targets' when the list stood still: see ListCounts) and let it go."""
        cursor = body.get("nextCursor")
        has_more = body.get("hasMore") is True and isinstance(cursor, str) and bool(cursor)
        mark = PageMark(
            cases, requested_limit(exchange), self._key(walk.caller, cursor) if has_more else 0
        )
        if walk.dated is not None:
            walk.dated.note(cases)
        self.compared.page(walk.compare, walk.key, cases, mark.limit, walk.ledger.next_page_number)
        if first and len(set(mark.ids)) < len(mark.ids):
            # A case twice on a walk's first page (a list that fits on one page included), told as
            # the scenario walks tell it; a first page without one is no walk yet, and no pass is
            # counted for it.
            self._apply(
                broken,
                self.once,
                exchange,
                lambda: assert_page_continues(walk.ledger, cases, exchange, mark.limit),
            )
        if has_more:
            walk.ledger.add(mark)
            self.walks[walk_id] = walk
            self.walks.move_to_end(walk_id)
            self.cursors[mark.cursor] = (walk_id, mark)
            self.pages += 1
            self._bound(walk_id)
            return broken
        if walk_id in self.walks:
            self._close(walk_id)
        walk.ledger.add(mark)
        count = self._whole(walk) if walk.ledger.whole else None
        if count is not None:
            self._apply(broken, self.once, exchange, count.judge)
        where = _where(walk.key)
        compared = self.compared.whole(walk.compare, walk.key, walk.ledger, exchange, where)
        if compared is not None:
            self._apply(broken, self.once, exchange, compared)
        return broken

    def _whole(self, walk: OpenWalk) -> CountToJudge | None:
        """A whole walk of a list the targets count: the count to judge now, if any (see
        ListCounts)."""
        project = self._counted(walk.key)
        if project is None or project.active_cases is None:
            return None
        key = (walk.key.agent, walk.key.project)
        if walk.key.filters == EVERYTHING:
            if walk.dated is None:
                return None  # without the count's moment its retired cases explain nothing
            return self.counts.whole_everything_walk(key, walk.ledger, walk.dated)
        where = f"{walk.key.agent}/{walk.key.project}"
        return self.counts.whole_walk(
            key, where, project.active_cases, walk.ledger, project.active_cases_at, walk.dated
        )

    def _key(self, caller: bytes, cursor: str) -> int:
        return hash(cursor) if self.sealed else hash((caller, cursor))

    def _counted(self, key: ListKey) -> ProjectTarget | None:
        """The project the targets count, for a walk of all its active cases (no filters, or
        filters that stand for none) or of all its cases (include=retired alone)."""
        if key.filters != UNFILTERED and key.filters != EVERYTHING:
            return None
        return self.projects.get((key.agent, key.project))

    # -- a cursor sent back elsewhere
    # ----------------------------------------------------------------------------------------------
    def _elsewhere(
        self, exchange: Exchange, walk: OpenWalk, key: ListKey, caller: bytes
    ) -> list[Breach]:
        """A cursor sent back for another list, with other filters or by another caller: a runtime
        that seals cursors refuses it (the targets say whether this one does); any other may answer
        as it likes."""
        if not self.sealed or exchange.status not in (200, 400):
            # another status is refused for another reason (a token, an agent, a busy database)
            return []
        broken: list[Breach] = []
        given = walk.key
        if key.project != given.project:
            what = "another agent's project" if key.agent != given.agent else "another project"
            self._refused(broken, "list", exchange, f"a cursor reused for {what}")
        elif key.agent != given.agent:
            what = "a cursor reused for the same project under another agent"
            self._refused(broken, "agent", exchange, what)
        changed = [
            _filter_change(name, given.sent[index], key.sent[index])
            for index, name in enumerate(FILTERS)
            if given.filters[index] != key.filters[index]
        ]
        if changed:
            self._refused(broken, "filters", exchange, " and ".join(changed))
        if caller != walk.caller:
            self._refused(broken, "caller", exchange, "a cursor replayed by another caller")
        return broken

    def _refused(self, broken: list[Breach], aspect: str, exchange: Exchange, what: str) -> None:
        self._apply(
            broken, self.binding[aspect], exchange, lambda: assert_cursor_refused(exchange, what)
        )

    # -- outcomes and bounds
    # ----------------------------------------------------------------------------------------------
    def _apply(
        self, broken: list[Breach], check: Check, exchange: Exchange, rule: Callable[[], None]
    ) -> None:
        """Run one rule; a breach is recorded as the scenario check's, with the request that showed
        it."""
        try:
            rule()
        except Violation as violation:
            shown = violation.exchange or exchange
            example = violation_example(
                violation, self.judge.record(shown), self.judge.redactor, shown
            )
            outcome = self.judge.breach(check, shown, example)
            if outcome is not None:
                broken.append(Breach(check, outcome, example))
        else:
            self.judge.results.passed(check)

    def _bound(self, current: int) -> None:
        """Let the least recently used walks go until the bounds hold; a single walk longer than the
        page bound forgets its first pages (it is then judged without them, and not counted
        whole)."""
        while len(self.walks) > self.bounds.walks or self.pages > self.bounds.pages:
            oldest = next(iter(self.walks))
            if oldest == current and len(self.walks) == 1:
                self._drop(self.walks[current].ledger.forget_first())
                continue
            self._close(oldest)

    def _close(self, walk_id: int) -> None:
        for mark in self.walks.pop(walk_id).ledger.pages:
            self._drop(mark)

    def _drop(self, mark: PageMark) -> None:
        """A held page let go (every held page gave a cursor)."""
        self.pages -= 1
        if self.cursors.get(mark.cursor, (None, None))[1] is mark:
            del self.cursors[mark.cursor]


def _page(exchange: Exchange) -> dict[str, Any] | None:
    """The body of a 200 page (an object with a data array), else None."""
    if exchange.status != 200:
        return None
    body = exchange.json_or_none()
    return body if isinstance(body, dict) and isinstance(body.get("data"), list) else None


def _cases(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [case if isinstance(case, dict) else {} for case in body.get("data") or []]


def _where(key: ListKey) -> str:
    """A list as a finding names it: `acme.drafting/<project>`, then its filters as sent."""
    sent = [f"{name}={value}" for name, value in zip(FILTERS, key.sent, strict=False) if value]
    return f"{key.agent}/{key.project}" + (f" ({', '.join(sent)})" if sent else "")


def _filter_change(name: str, given: str | None, sent: str | None) -> str:
    """In the scenario checks' words: `a cursor reused with include=retired`, `a kind=correction
    cursor reused without kind`."""
    if given is None:
        return f"a cursor reused with {name}={sent}"
    if sent is None:
        return f"a {name}={given} cursor reused without {name}"
    return f"a {name}={given} cursor reused with {name}={sent}"
