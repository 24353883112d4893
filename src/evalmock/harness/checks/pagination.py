"""Pagination of the test-set API: page size, newest first, hasMore and nextCursor, walking every
page."""

from __future__ import annotations

from typing import Any

from evalmock.contract.operations import operation
from evalmock.contract.sources import inferred, on_test_set_page, page
from evalmock.contract.targets import ProjectTarget
from evalmock.harness.checks.case_invariants import page_cases
from evalmock.harness.checks.context import CheckContext
from evalmock.harness.checks.counts import dated_between, judge_the_count, service_time
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.moving import Readings, differences, first_parting, listed_count
from evalmock.harness.checks.outcomes import Skip, Unjudged, Violation, json_body
from evalmock.harness.checks.registry import response_check, scenario_check, stating
from evalmock.harness.checks.scenario import CursorRefused, Scenario, Walk
from evalmock.harness.checks.walk_rules import (
    assert_follows_has_more,
    assert_newest_first,
    follow,
)

# the document's limit: its default and bounds
LIMIT = operation("test-set").parameters["limit"]["schema"]
FULL_LIMIT = LIMIT["maximum"]  # the largest page: the walk every other walk is compared with
# A small page size that lines up with neither the default nor the largest, unless the document's
# limit is so small that it cannot.
SMALL_LIMIT = min(37, FULL_LIMIT)
MIN_SMALL_PAGES = (
    4  # a small-limit walk reaches at least this many pages when the project has the cases
)
SHORT_LIST = 10  # a list this short without a divisor is walked at limit 1 to end on a full page

_NEWEST_FIRST = on_test_set_page("Cursor-paginated, newest added first.")
_AS_IT_CAME = on_test_set_page("Where the previous page ended: its nextCursor, as it came.")
_FIRST_PAGE = on_test_set_page("Absent → first page.")
# the page's words stating limit's bounds and default, as the document keeps them with the numbers
_LIMIT = tuple(on_test_set_page(words) for words in operation("test-set").page_words("limit"))
_LIMIT_READING = "limit bounds how many cases one page of this cursor-paginated list holds."


def requested_limit(exchange: Exchange) -> int | None:
    """The page size asked for: the default when left out; None when outside the document's bounds
    (what such a request gets is limit_outside_its_bounds_is_bad_input's business, and a runtime may
    clamp)."""
    raw = exchange.query.get("limit")
    if raw is None:
        return LIMIT["default"]
    try:
        limit = int(raw)
    except ValueError:
        return None
    return limit if LIMIT["minimum"] <= limit <= LIMIT["maximum"] else None


@response_check("test-set", page(*_LIMIT, reading=_LIMIT_READING))
def page_holds_at_most_limit(context: CheckContext) -> bool | None:
    """A page holds at most limit cases (the document's default when limit is left out)."""
    exchange = context.exchange
    cases = page_cases(exchange)
    limit = requested_limit(exchange)
    if cases is None or limit is None or exchange.ambiguous("limit"):
        return None
    if len(cases) > limit:
        raise Violation(
            "a page holds more cases than the limit",
            expected=f"<= {limit}",
            received=len(cases),
            pointer=f"/data/{limit}",
        )
    return True


@response_check("test-set", page(_NEWEST_FIRST))
def page_is_newest_first(context: CheckContext) -> bool | None:
    """Along a page, addedAt never increases (cases with equal addedAt may come in any order)."""
    exchange = context.exchange
    cases = page_cases(exchange)
    if cases is None:
        return None
    assert_newest_first([cases], [None])
    return True


@response_check(
    "test-set",
    page(
        _AS_IT_CAME,
        reading="A page that says more follows (hasMore: true) gives the nextCursor to ask for it "
        "with; "
        "without one the rest of the list cannot be read.",
    ),
)
def has_more_page_has_a_next_cursor(context: CheckContext) -> bool | None:
    """A page with hasMore: true carries a nextCursor string."""
    exchange = context.exchange
    if page_cases(exchange) is None:
        return None
    body = json_body(exchange)
    if body.get("hasMore") is not True:
        return None
    cursor = body.get("nextCursor")
    if not (isinstance(cursor, str) and cursor):
        raise Violation(
            "hasMore is true but the page has no nextCursor",
            expected="a nextCursor",
            received=cursor if "nextCursor" in body else "(absent)",
            pointer="/nextCursor",
        )
    return True


@response_check(
    "test-set",
    inferred(
        "The page defines nextCursor only as where the next page starts; a last page (hasMore: "
        "false) has no next "
        "page, so by convention it carries no cursor. A client that stops on hasMore: false is "
        "not misled either way.",
        _AS_IT_CAME,
    ),
)
def last_page_has_no_next_cursor(context: CheckContext) -> bool | None:
    """A page with hasMore: false carries no nextCursor."""
    exchange = context.exchange
    if page_cases(exchange) is None:
        return None
    body = json_body(exchange)
    if body.get("hasMore") is not False:
        return None
    if "nextCursor" in body:
        raise Violation(
            "the last page (hasMore false) carries a nextCursor",
            expected="no nextCursor",
            received=body["nextCursor"],
            pointer="/nextCursor",
        )
    return True


# -- scenarios
# --------------------------------------------------------------------------------------------
def walk_limits(project: ProjectTarget, listed: int | None = None) -> dict[str, int | None]:
    """The page sizes a project is walked with, as clients walk: the default (no limit sent), a
    small limit that reaches at least four pages when the targets' count of active cases allows it,
    the largest, and, when none of them divides the list's count (`listed`, as a walk found it, else
    the targets'), one that does, so that a walk meets an exactly full last page."""
    small = SMALL_LIMIT
    if project.active_cases is not None:
        small = max(1, min(SMALL_LIMIT, (project.active_cases - 1) // (MIN_SMALL_PAGES - 1)))
    limits: dict[str, int | None] = {"the default limit": None, f"limit={small}": small}
    count = listed if listed is not None else project.active_cases
    exact = full_last_page_limit(count, (LIMIT["default"], small, FULL_LIMIT))
    if exact is not None:
        limits[f"limit={exact}"] = exact
    limits[f"limit={FULL_LIMIT}"] = FULL_LIMIT
    return limits


def full_last_page_limit(count: int | None, walked: tuple[int, ...]) -> int | None:
    """A limit whose walk ends on an exactly full last page of a list of `count` cases, when no
    limit `walked` does and the count is at most the largest limit: the largest divisor below the
    count (two pages at least), limit 1 for a list of at most SHORT_LIST cases without one, else the
    count."""
    if count is None or not 0 < count <= FULL_LIMIT or any(count % limit == 0 for limit in walked):
        return None
    divisor = next((d for d in range(count // 2, 1, -1) if count % d == 0), None)
    if divisor is not None:
        return divisor
    return 1 if count <= SHORT_LIST else count


@scenario_check(
    "test-set",
    page(
        _AS_IT_CAME,
        _FIRST_PAGE,
        _NEWEST_FIRST,
        reading="Following each page's nextCursor from the first page lists every matching case "
        "once, newest first, "
        "whatever the page size; a case listed before and after the walks, on a list in use, "
        "is listed by every walk between. A count of active cases holds at one moment: cases "
        "added after it, and cases retired after it (their retired.at), are the difference.",
    ),
    each_project=True,
)
def walk_yields_every_case_once(s: Scenario) -> None:
    """Every project the targets list is walked from the first page at the largest limit, then
    at the default limit (no limit sent), at a small limit that reaches at least four pages when
    the targets' counts allow it, at a limit that ends on an exactly full page when the list's
    count has one, and at the largest limit again. Each walk lists no case twice and newest
    first. On a list that stood still, all list the same cases: a walk that ends early (hasMore:
    false before the last case) is caught. A targets' active_cases stated with its moment
    (active_cases_at) must then match, up to the cases whose own dates (include=retired lists
    them) say they were added or retired after that moment; a count without its moment may be
    stale, and a difference is only noted. On a list seen to move (cases arrived or left between
    the first walk and the last, or dated while the walks ran, on the service's clock: its Date
    header), every walk lists each case both of those list, and the targets' count is set aside
    in a note. Walks followed in traffic (the proxy, --har) are judged page by page by the same
    rules; of whole walks of one list at different page sizes, a case a later one lists that an
    earlier one did not, added before that one began, fails; the count is judged once a later
    whole walk lists the same cases as the first, and one that differs only with its moment, by
    the dates the traffic shows (include=retired walks); else it is not judged."""
    s.project()
    for project in s.targets.projects:
        full_what = f"limit={FULL_LIMIT}"
        first = s.walk(project, limit=FULL_LIMIT)
        limits = walk_limits(project, listed_count(first))
        walks = {what: s.walk(project, limit=limit) for what, limit in limits.items()}
        last = s.walk(project, limit=FULL_LIMIT, again=True)
        walks[f"{full_what}, again after the others"] = last
        limits[f"{full_what}, again after the others"] = FULL_LIMIT
        ledgers = {
            what: follow(walk.pages, walk.exchanges, limits[what]) for what, walk in walks.items()
        }
        # the walks' span on the service's clock: a case dated within it moved the list
        start, end = service_time(first.exchanges[0]), service_time(last.exchanges[-1])
        read = [case for walk in walks.values() for case in walk.cases]
        readings = Readings(first, last, tuple(dated_between(read, start, end)))
        where = f"{project.agent_id}/{project.project_id}"
        if readings.moved:
            _judge_on_a_moving_list(s, project, walks, readings, where)
            continue
        for what, walk in walks.items():
            if walk is first or not (walk.complete and first.complete):
                continue
            if set(walk.ids) != set(first.ids):
                _parted(project, where, what, walk, first, full_what)
        if first.complete:
            judge_the_count(s, project, ledgers[full_what], first, start, FULL_LIMIT)


def _parted(
    project: ProjectTarget, where: str, what: str, walk: Walk, full: Walk, full_what: str
) -> None:
    parting, number = first_parting(walk, full, full_what)
    stated = (
        ""
        if project.active_cases in (None, len(set(full.ids)))
        else f"; the targets say {project.active_cases} active"
    )
    raise Violation(
        f"in {where}, the walk at {what} ({len(walk.pages)} pages) lists other cases than the walk "
        f"at {full_what}: a page ended the list early, or a case was skipped or repeated between "
        f"pages; {parting} (the request below is that page's)",
        expected=f"the same cases at every limit ({len(set(full.ids))} at {full_what}{stated})",
        received=differences(walk, full),
        exchange=walk.exchanges[number],
    )


def _judge_on_a_moving_list(
    s: Scenario, project: ProjectTarget, walks: dict[str, Walk], readings: Readings, where: str
) -> None:
    """Every whole walk lists each case the first and the last walk list; the rest of a comparison
    of walks taken at other moments, and the targets' count, prove nothing and are said so."""
    full_what = f"limit={FULL_LIMIT}"
    for what, walk in walks.items():
        if not walk.complete or not readings.unlisted(walk):
            continue
        parting, number = first_parting(walk, readings.before, full_what, readings.stable)
        raise Violation(
            f"in {where}, the list moved during the audit ({readings.movement()}), and the walk "
            f"at {what} ({len(walk.pages)} pages) left out a case listed before the first walk and "
            f"after the last: a page ended the list early, or a case was skipped between pages; "
            f"{parting} (the request below is that page's)",
            expected=f"the {len(readings.stable)} cases both the first and the last walk list",
            received=f"{len(readings.unlisted(walk))} of them missing: "
            f"{sorted(map(str, readings.unlisted(walk)))[:5]}",
            exchange=walk.exchanges[number],
        )
    stated = project.active_cases
    counts = {len(set(readings.before.ids)), len(set(readings.after.ids))}
    targets = (
        f"; the targets' active_cases ({stated}) was not compared: it describes the list at "
        "another moment (update it if it is stale)"
        if stated is not None and counts != {stated}
        else ""
    )
    s.notes.append(
        f"The list of {where} moved during the audit ({readings.movement()}): the walks were "
        f"judged each on its own, and each case listed throughout was required in every walk; "
        f"cases that arrived or left between them were not{targets}."
    )


@scenario_check(
    "test-set",
    inferred(
        "hasMore is read as saying a further page exists; a page after hasMore: true that lists "
        "nothing says otherwise. "
        "The page does not state it.",
        _AS_IT_CAME,
    ),
)
def page_after_has_more_is_not_empty(s: Scenario) -> None:
    """In a walk, every page that follows a page with hasMore: true lists at least one case (in
    walks followed in traffic too): the walks at every page size the walk rule uses, one of them
    ending on an exactly full page when the list's count has a divisor to walk at. A page refused
    (an error answer to the nextCursor the page before gave) is no page, empty or not: the walk
    rule's finding; the pages before it are judged, the rest said not judged."""
    project = s.project()
    refusals: list[CursorRefused] = []

    def walked(limit: int | None) -> Walk:
        try:
            return s.walk(project, limit=limit)
        except CursorRefused as refused:
            refusals.append(refused)
            return refused.walk

    first = walked(FULL_LIMIT)
    for limit in walk_limits(project, listed_count(first)).values():
        walk = first if limit == FULL_LIMIT else walked(limit)
        for index, page_body in enumerate(walk.pages[:-1]):
            if page_body.get("hasMore") is True:
                assert_follows_has_more(index + 1, walk.pages[index + 1], walk.exchanges[index + 1])
    if refusals:
        refused = refusals[0]
        raise Unjudged(
            f"the walk {refused.what} was refused its page {refused.number} "
            f"({refused.status}), so no page followed its page {refused.number - 1}: a "
            "refused cursor is walk_yields_every_case_once's finding"
        )


def _enough_cases(s: Scenario, needed: int) -> bool:
    """Whether the project has at least `needed` active cases, as the targets state (Skip when they
    do not)."""
    project = s.project()
    if project.active_cases is not None:
        return project.active_cases >= needed
    raise Skip(f"the targets do not state active_cases for {project.agent_id}/{project.project_id}")


def _whole_list(body: dict[str, Any], limit: int) -> bool:
    """Whether a first page shorter than `limit` says it is the last: the list holds no more cases
    now, whatever the targets' count says (a list in use shrinks as cases are retired; a list that
    ends early is the walks' finding)."""
    return len(body["data"]) < limit and body.get("hasMore") is False


_FULL_PAGES = (
    f"The page bounds a page by limit (default {LIMIT['default']}) but does not say a first page "
    "is full when more cases exist; a full page is how the default and the limit show from outside."
)


@scenario_check(
    "test-set",
    inferred(_FULL_PAGES, *_LIMIT),
    formerly=("default_limit_is_25",),
)
@stating(
    f"Without limit, a project with more than {LIMIT['default']} active cases gives a first page "
    f"of {LIMIT['default']}, unless the page says it is the last (the list holds fewer now)."
)
def default_limit_fills_a_first_page(s: Scenario) -> None:
    project = s.project()
    default = LIMIT["default"]
    if not _enough_cases(s, default + 1):
        raise Skip(
            f"the target project has {project.active_cases} active cases, "
            f"not more than the default limit ({default})"
        )
    body = s.page(project)
    if len(body["data"]) != default and not _whole_list(body, default):
        raise Violation(
            f"a first page without limit does not hold the default {default} cases",
            expected=default,
            received=len(body["data"]),
        )


@scenario_check("test-set", inferred(_FULL_PAGES, *_LIMIT))
def limit_fills_a_first_page(s: Scenario) -> None:
    """A first page at the smallest limit, at 7 and at the largest holds exactly that many cases
    when the targets say the project has more, unless the page says it is the last (the list holds
    fewer now); never more is page_holds_at_most_limit's rule."""
    project = s.project()
    for limit in sorted({LIMIT["minimum"], min(7, FULL_LIMIT), FULL_LIMIT}):
        body = s.page(project, limit=limit, own_request_id=True)
        count = len(body["data"])
        if count > limit:
            raise Violation(
                f"limit={limit} was not honoured", expected=f"<= {limit} cases", received=count
            )
        if (
            project.active_cases is not None
            and project.active_cases > limit
            and count != limit
            and not _whole_list(body, limit)
        ):
            raise Violation(
                f"limit={limit} on a project with {project.active_cases} active cases",
                expected=f"{limit} cases",
                received=count,
            )
