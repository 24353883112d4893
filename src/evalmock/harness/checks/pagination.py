"""Pagination of the test-set API: page size, newest first, hasMore and nextCursor, walking every page."""

from __future__ import annotations

from evalmock.contract.case_rules import instant
from evalmock.harness.checks.base import Exchange, Skip, Violation
from evalmock.harness.checks.cases import page_cases
from evalmock.harness.checks.registry import response_check, scenario_check
from evalmock.harness.scenario import Scenario, Walk

DEFAULT_LIMIT = 25
WALK_LIMITS = (100, 37)  # two page sizes whose walks must list the same cases in the same order


def _requested_limit(exchange: Exchange) -> int | None:
    raw = exchange.query.get("limit")
    if raw is None:
        return DEFAULT_LIMIT
    try:
        return int(raw)
    except ValueError:
        return None


@response_check("test-set")
def next_cursor_present_exactly_when_has_more(exchange: Exchange) -> bool | None:
    """"`hasMore` is true exactly when a further page exists, and then `nextCursor` is present; the last
    page has no `nextCursor`"."""
    if page_cases(exchange) is None:
        return None
    body = exchange.json()
    has_more, cursor = body.get("hasMore"), body.get("nextCursor")
    if has_more is True and not (isinstance(cursor, str) and cursor):
        raise Violation("hasMore is true but the page has no nextCursor", expected="a nextCursor",
                        received=cursor if "nextCursor" in body else "(absent)")
    if has_more is False and "nextCursor" in body:
        raise Violation("the last page (hasMore false) carries a nextCursor", expected="no nextCursor",
                        received=cursor)
    return True


@response_check("test-set")
def page_holds_at_most_limit(exchange: Exchange) -> bool | None:
    """limit: "The most cases on one page, 1..100. Default 25"."""
    cases = page_cases(exchange)
    limit = _requested_limit(exchange)
    if cases is None or limit is None or exchange.ambiguous("limit"):
        return None
    if len(cases) > limit:
        raise Violation("a page holds more cases than the limit", expected=f"<= {limit}", received=len(cases))
    return True


@response_check("test-set")
def page_is_newest_first(exchange: Exchange) -> bool | None:
    """"Cursor-paginated, newest added first (descending `addedAt`)"."""
    cases = page_cases(exchange)
    if cases is None:
        return None
    _assert_newest_first(cases)
    return True


def _assert_newest_first(cases: list[dict], exchange: Exchange | None = None) -> None:
    previous = None
    for case in cases:
        added = instant(case.get("addedAt"))
        if added is None:
            continue
        if previous is not None and added > previous[0]:
            raise Violation(
                f"case {case.get('id')!r} was added after the case before it ({previous[1]!r})",
                expected=f"addedAt <= {previous[2]}", received=case.get("addedAt"), exchange=exchange,
            )
        previous = (added, case.get("id"), case.get("addedAt"))


# -- scenarios --------------------------------------------------------------------------------------------
def _assert_once(walk: Walk, limit: int) -> None:
    seen: dict[object, int] = {}
    for position, case_id in enumerate(walk.ids):
        if case_id in seen:
            raise Violation(
                f"walking with limit={limit}, case {case_id!r} came back twice",
                expected="every case exactly once", received=f"at positions {seen[case_id]} and {position}",
            )
        seen[case_id] = position


@scenario_check("test-set")
def walk_yields_every_case_once(s: Scenario) -> None:
    """"Walking the pages, from the first (no `cursor`) and passing each page's `nextCursor` as the next
    request's `cursor`, yields every matching case exactly once", newest first: two walks with different
    limits list the same cases in the same order, none repeated, none skipped (and as many as the targets'
    active_cases, when stated)."""
    project = s.project()
    walks = {limit: s.walk(project, limit=limit) for limit in WALK_LIMITS}
    for limit, walk in walks.items():
        _assert_once(walk, limit)
        _assert_newest_first(walk.cases, walk.exchanges[-1])
    (a_limit, a), (b_limit, b) = walks.items()
    shared = min(len(a.ids), len(b.ids)) if not (a.complete and b.complete) else max(len(a.ids), len(b.ids))
    for position in range(shared):
        left = a.ids[position] if position < len(a.ids) else "(walk ended)"
        right = b.ids[position] if position < len(b.ids) else "(walk ended)"
        if left != right:
            raise Violation(
                f"walks with limit={a_limit} and limit={b_limit} differ at position {position}: a case was "
                "skipped or repeated between pages",
                expected=f"{left!r} (limit={a_limit})", received=f"{right!r} (limit={b_limit})",
            )
    if project.active_cases is not None and a.complete and len(a.ids) != project.active_cases:
        raise Violation("the walk did not list every active case", expected=f"{project.active_cases} cases",
                        received=f"{len(a.ids)} cases")


@scenario_check("test-set")
def has_more_means_a_further_page(s: Scenario) -> None:
    """"`hasMore` is true exactly when a further page exists": a page that says hasMore is followed by a
    page with cases, and the walk ends on hasMore false."""
    project = s.project()
    walk = s.walk(project, limit=WALK_LIMITS[0])
    for index, page in enumerate(walk.pages[:-1]):
        following = walk.pages[index + 1]
        if page.get("hasMore") is True and not following.get("data"):
            raise Violation(
                f"page {index + 1} said hasMore, but the next page is empty",
                expected="a further page with cases", received=following, exchange=walk.exchanges[index + 1],
            )
    last = walk.pages[-1]
    if walk.complete and last.get("hasMore") is not False:
        raise Violation("the walk ended on a page without hasMore false", expected="hasMore: false",
                        received=last.get("hasMore"), exchange=walk.exchanges[-1])


def _enough_cases(s: Scenario, needed: int) -> bool:
    """Whether the project has at least `needed` active cases, as the targets state (Skip when they do not)."""
    project = s.project()
    if project.active_cases is not None:
        return project.active_cases >= needed
    raise Skip(f"the targets do not state active_cases for {project.agent_id}/{project.project_id}")


@scenario_check("test-set")
def default_limit_is_25(s: Scenario) -> None:
    """limit: "Default 25": without `limit`, a project with more than 25 active cases gives a page of 25."""
    project = s.project()
    if not _enough_cases(s, DEFAULT_LIMIT + 1):
        raise Skip(f"the target project has {project.active_cases} active cases, fewer than 26")
    page = s.page(project)
    if len(page["data"]) != DEFAULT_LIMIT:
        raise Violation("a first page without limit does not hold the default 25 cases",
                        expected=DEFAULT_LIMIT, received=len(page["data"]))


@scenario_check("test-set")
def limit_is_honoured(s: Scenario) -> None:
    """limit: "The most cases on one page, 1..100": a first page with limit=L holds L cases when the project
    has more, and never more than L."""
    project = s.project()
    for limit in (1, 7, 100):
        page = s.page(project, limit=limit)
        count = len(page["data"])
        if count > limit:
            raise Violation(f"limit={limit} was not honoured", expected=f"<= {limit} cases", received=count)
        if project.active_cases is not None and project.active_cases > limit and count != limit:
            raise Violation(f"limit={limit} on a project with {project.active_cases} active cases",
                            expected=f"{limit} cases", received=count)
