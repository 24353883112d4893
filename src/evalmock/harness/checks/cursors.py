"""Cursors of the test-set API: a cursor is taken only for its own list, filters and caller; junk is a 400."""

from __future__ import annotations

from typing import Any

from evalmock.harness.checks.base import Exchange, Skip, Violation
from evalmock.harness.checks.errors import expect_error
from evalmock.harness.checks.registry import scenario_check
from evalmock.harness.scenario import Scenario
from evalmock.harness.targets import ProjectTarget

GARBAGE_CURSORS = {"a cursor that is no cursor": "not-a-cursor", "an over-long cursor": "A" * 3000}
FORGED_CURSOR = "eyJwIjoxfQ.c2lnbmF0dXJl"  # the document's example cursor: never issued by any target
OTHER_PROJECT = "00000000-0000-4000-8000-000000000000"
SEALED_REASON = (
    "the page binds cursors only for \"a runtime that seals cursors\"; set test_set.sealed_cursors = true "
    "in the targets when the target does"
)


def _first_cursor(s: Scenario, project: ProjectTarget, **params: Any) -> str:
    page = s.page(project, limit=1, **params)
    cursor = page.get("nextCursor")
    if not page.get("hasMore") or not cursor:
        raise Skip("the target project has fewer than two matching cases, so no page has a nextCursor")
    return cursor


def _require_sealed(s: Scenario) -> None:
    if s.targets.sealed_cursors is not True:
        raise Skip(SEALED_REASON)


def _refused(exchange: Exchange, what: str) -> None:
    expect_error(exchange, 400, "bad-input", f"{what} was not refused with 400 bad-input")


def _tamper(cursor: str) -> dict[str, str]:
    middle = len(cursor) // 2
    swapped = "B" if cursor[middle] != "B" else "C"
    return {
        "a cursor with one character changed": cursor[:middle] + swapped + cursor[middle + 1 :],
        "a truncated cursor": cursor[:-4] if len(cursor) > 4 else cursor + "A",
        "a cursor with a character appended": cursor + "A",
    }


@scenario_check("test-set")
def junk_cursor_is_bad_input(s: Scenario) -> None:
    """The cursor is "its `nextCursor`, exactly as it came"; one that no list may use gets 400 `bad-input`
    (never a 500): tried with a string that is no cursor and an over-long one."""
    project = s.project()
    for what, cursor in GARBAGE_CURSORS.items():
        _refused(s.list_cases(project, cursor=cursor), what)


@scenario_check("test-set")
def tampered_cursor_is_bad_input(s: Scenario) -> None:
    """"A cursor is opaque: a client never builds or edits one"; a runtime that seals cursors answers a
    tampered or forged one with 400 `bad-input`, while the cursor exactly as it came is taken."""
    _require_sealed(s)
    project = s.project()
    cursor = _first_cursor(s, project)
    exchange = s.list_cases(project, limit=1, cursor=cursor)
    if exchange.status != 200:
        raise Violation("the page's own nextCursor, exactly as it came, was refused", expected=200,
                        received=f"{exchange.status} {exchange.text[:200]}", exchange=exchange)
    for what, tampered in {**_tamper(cursor), "a forged cursor": FORGED_CURSOR}.items():
        _refused(s.list_cases(project, limit=1, cursor=tampered), what)


@scenario_check("test-set")
def cursor_is_bound_to_the_filters(s: Scenario) -> None:
    """A runtime that seals cursors "takes one only for … the same filters (`include`, `kind`)"; otherwise
    400 `bad-input`."""
    _require_sealed(s)
    project = s.project()
    cursor = _first_cursor(s, project)
    _refused(s.list_cases(project, limit=1, cursor=cursor, include="retired"), "a cursor reused with include=retired")
    _refused(s.list_cases(project, limit=1, cursor=cursor, kind="hand"), "a cursor reused with kind=hand")
    if project.has_corrections:
        narrow = _first_cursor(s, project, kind="correction")
        _refused(s.list_cases(project, limit=1, cursor=narrow), "a kind=correction cursor reused without kind")


@scenario_check("test-set")
def cursor_is_bound_to_the_list(s: Scenario) -> None:
    """A runtime that seals cursors "takes one only for the same list (agent and project)"; otherwise 400
    `bad-input`."""
    _require_sealed(s)
    project = s.project()
    cursor = _first_cursor(s, project)
    others = [p for p in s.targets.projects if p.project_id.lower() != project.project_id.lower()]
    same_agent = next((p.project_id for p in others if p.agent_id == project.agent_id), OTHER_PROJECT)
    _refused(s.list_cases(project, project_id=same_agent, limit=1, cursor=cursor),
             "a cursor reused for another project")
    other_agent = next((p for p in others if p.agent_id != project.agent_id), None)
    if other_agent is not None:
        _refused(s.list_cases(other_agent, limit=1, cursor=cursor), "a cursor reused for another agent")


@scenario_check("test-set")
def cursor_is_bound_to_the_caller(s: Scenario) -> None:
    """A runtime that seals cursors "takes one only for … the same caller"; a cursor replayed by another
    caller gets 400 `bad-input`."""
    _require_sealed(s)
    if not s.second_token:
        raise Skip("no second caller: pass --second-token, set EVALMOCK_SECOND_TOKEN, or give "
                   "[auth].second_token in the targets")
    project = s.project()
    cursor = _first_cursor(s, project)
    replay = s.list_cases(project, limit=1, cursor=cursor, token=s.second_token)
    _refused(replay, "a cursor replayed by another caller")
