"""Cursors of the test-set API: a sealed cursor is taken only for its own list, filters and caller;
junk is a 400."""

from __future__ import annotations

from typing import Any

from evalmock import environment
from evalmock.contract.filters import Filter, narrowing
from evalmock.contract.sources import inferred, on_test_set_page, page
from evalmock.contract.targets import ProjectTarget
from evalmock.harness.checks.error_answers import expect_error
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.outcomes import Skip, Violation
from evalmock.harness.checks.registry import scenario_check
from evalmock.harness.checks.scenario import Scenario

GARBAGE_CURSORS = {"a cursor that is no cursor": "not-a-cursor", "an over-long cursor": "A" * 3000}
FORGED_CURSOR = (
    "eyJwIjoxfQ.c2lnbmF0dXJl"  # the document's example cursor: never issued by any target
)
SEALED_REASON = (
    "the page binds cursors only for a runtime that seals them; set test_set.sealed_cursors = true "
    "in the targets "
    "when the target does"
)
_AS_IT_CAME = on_test_set_page("Where the previous page ended: its nextCursor, as it came.")
_SEALED = on_test_set_page(
    "A runtime that seals cursors takes one only for the same list, filters and caller, "
    "within a day; otherwise 400 bad-input, and the list starts again without it.",
)
_BINDING = page(_SEALED, reading="Checked only when the targets say the runtime seals cursors.")


def _first_cursor(s: Scenario, project: ProjectTarget, **params: Any) -> str:
    return _first_page(s, project, **params)[0]


def _first_page(
    s: Scenario, project: ProjectTarget, **params: Any
) -> tuple[str, list[dict[str, Any]]]:
    """The nextCursor of a first page of one case, and the page's cases."""
    page = s.page(project, limit=1, **params)
    cursor = page.get("nextCursor")
    if not page.get("hasMore") or not cursor:
        raise Skip(
            "the target project has fewer than two matching cases, so no page has a nextCursor"
        )
    data = page.get("data")
    return cursor, [case for case in data if isinstance(case, dict)] if isinstance(
        data, list
    ) else []


def _require_sealed(s: Scenario) -> None:
    if s.targets.sealed_cursors is not True:
        raise Skip(SEALED_REASON)


def assert_cursor_refused(exchange: Exchange, what: str) -> None:
    """A cursor the runtime does not take is refused with 400 bad-input (scenarios, and cursors seen
    in traffic)."""
    expect_error(exchange, 400, "bad-input", f"{what} was not refused with 400 bad-input")


def _tamper(cursor: str) -> dict[str, str]:
    # Only changes that alter what the cursor says: an appended character may decode to the same
    # bytes, and the page leaves such a cursor open.
    middle = len(cursor) // 2
    swapped = "B" if cursor[middle] != "B" else "C"
    return {
        "a cursor with one character changed": cursor[:middle] + swapped + cursor[middle + 1 :],
        "a truncated cursor": cursor[:-4] if len(cursor) > 4 else cursor + "A",
    }


@scenario_check(
    "test-set",
    inferred(
        "The page says what a cursor is (the previous page's nextCursor, as it came) and that a "
        "sealing runtime "
        "answers a cursor it does not take with 400 bad-input; a string that is no cursor at all "
        "is read the same way "
        "in any runtime.",
        _AS_IT_CAME,
        _SEALED,
    ),
)
def junk_cursor_is_bad_input(s: Scenario) -> None:
    """A string that is no cursor, and an over-long one, get 400 bad-input."""
    project = s.project()
    for what, cursor in GARBAGE_CURSORS.items():
        assert_cursor_refused(s.list_cases(project, cursor=cursor), what)


@scenario_check(
    "test-set",
    inferred(
        "Sealing a cursor means the runtime can tell one it did not issue; the page names 400 "
        "bad-input for a cursor "
        "it does not take. Taking the page's own nextCursor as it came is the page's rule.",
        _AS_IT_CAME,
        _SEALED,
    ),
)
def tampered_cursor_is_bad_input(s: Scenario) -> None:
    """A runtime that seals cursors takes its nextCursor as it came, and answers a cursor with a
    character changed, a truncated one and a forged one (the document's example) with 400
    bad-input."""
    _require_sealed(s)
    project = s.project()
    cursor = _first_cursor(s, project)
    exchange = s.list_cases(project, limit=1, cursor=cursor)
    if exchange.status != 200:
        raise Violation(
            "the page's own nextCursor, exactly as it came, was refused",
            expected=200,
            received=f"{exchange.status} {exchange.excerpt()}",
            exchange=exchange,
        )
    for what, tampered in {**_tamper(cursor), "a forged cursor": FORGED_CURSOR}.items():
        assert_cursor_refused(s.list_cases(project, limit=1, cursor=tampered), what)


def _narrowed(declared: Filter, cases: list[dict[str, Any]]) -> str | None:
    """A value of a filter that lists other cases than leaving it out: its `present-only-with`
    value, its set's last member alone, or the value a listed case holds (None: no case holds
    one)."""
    if declared.present_only_with is not None:
        return declared.present_only_with
    if declared.members is not None:
        return declared.members[-1]
    held = next((case.get(declared.field) for case in cases), None)
    return held if isinstance(held, str) and held else None


@scenario_check("test-set", _BINDING)
def cursor_is_bound_to_the_filters(s: Scenario) -> None:
    """A sealed cursor reused with other filters gets 400 bad-input: with include=retired, with
    kind=hand, and a kind=correction cursor without kind, each the only change."""
    # Each filter the document says a cursor binds is probed, with the value `_narrowed` picks.
    _require_sealed(s)
    project = s.project()
    cursor, cases = _first_page(s, project)
    bound = [f for f in narrowing() if f.binds]
    for declared in bound:
        value = _narrowed(declared, cases)
        if value is not None:
            assert_cursor_refused(
                s.list_cases(project, limit=1, cursor=cursor, **{declared.name: value}),
                f"a cursor reused with {declared.name}={value}",
            )
    for declared in (f for f in bound if f.members is not None):
        # a narrower set's cursor reused without the filter (the list too short for one: not tried)
        try:
            narrow = _first_cursor(s, project, **{declared.name: declared.members[0]})
        except Skip:
            continue
        assert_cursor_refused(
            s.list_cases(project, limit=1, cursor=narrow),
            f"a {declared.name}={declared.members[0]} cursor reused without {declared.name}",
        )


# Each binding is probed alone: the cursor goes back with one thing changed and everything else as
# it was (the limit too), so a runtime that binds some of them but not the one changed is seen.
@scenario_check("test-set", _BINDING)
def cursor_is_bound_to_the_list(s: Scenario) -> None:
    """A sealed cursor reused for another project of the same agent gets 400 bad-input."""
    _require_sealed(s)
    project = s.project()
    # Only lists the targets know exist: for a project that is not the agent's, an empty page
    # without looking at the cursor is also an answer the page allows.
    other = next(
        (
            p
            for p in s.targets.projects
            if p.agent_id == project.agent_id and p.project_id.lower() != project.project_id.lower()
        ),
        None,
    )
    if other is None:
        raise Skip(
            f"the targets name one project of agent {project.agent_id} only; a second "
            "[[test_set.projects]] entry of that agent would enable reusing a cursor on another "
            "of its lists"
        )
    cursor = _first_cursor(s, project)
    assert_cursor_refused(
        s.list_cases(other, limit=1, cursor=cursor), "a cursor reused for another project"
    )


def _one_project_two_agents(s: Scenario) -> tuple[ProjectTarget, ProjectTarget]:
    """Two entries of the targets naming the same project under two agents; Skip, naming the fact
    that would enable the probe, when there are none."""
    s.project()
    for index, first in enumerate(s.targets.projects):
        for second in s.targets.projects[index + 1 :]:
            same = first.project_id.lower() == second.project_id.lower()
            if same and first.agent_id != second.agent_id:
                return first, second
    raise Skip(
        "the targets name no project under two agents; a second [[test_set.projects]] entry with "
        "the project_id of a listed project, under another agent that serves it, would enable "
        "reusing a cursor on the same project under another agent"
    )


@scenario_check("test-set", _BINDING)
def cursor_is_bound_to_the_agent(s: Scenario) -> None:
    """A sealed cursor reused for the same project under another agent that serves it (the targets
    name both) gets 400 bad-input."""
    _require_sealed(s)
    first, second = _one_project_two_agents(s)
    try:
        cursor = _first_cursor(s, first)
    except Skip:  # the first agent's list is too short for a cursor: the other way round
        first, second = second, first
        cursor = _first_cursor(s, first)
    # the project id exactly as the cursor's request spelled it: only the agent differs
    replay = s.list_cases(
        agent_id=second.agent_id, project_id=first.project_id, limit=1, cursor=cursor
    )
    assert_cursor_refused(replay, "a cursor reused for the same project under another agent")


@scenario_check("test-set", _BINDING)
def cursor_is_bound_to_the_caller(s: Scenario) -> None:
    """A sealed cursor replayed by another caller gets 400 bad-input."""
    _require_sealed(s)
    if not s.second_token:
        raise Skip(
            f"no second caller: pass --second-token, set {environment.SECOND_TOKEN}, or give "
            "[auth].second_token in the targets"
        )
    project = s.project()
    readable = s.list_cases(project, limit=1, token=s.second_token)
    if readable.status != 200:
        raise Skip(
            "the second caller cannot read the project without a cursor (it got "
            f"{readable.status}), so a "
            "refused replay would prove nothing"
        )
    cursor = _first_cursor(s, project)
    replay = s.list_cases(project, limit=1, cursor=cursor, token=s.second_token)
    assert_cursor_refused(replay, "a cursor replayed by another caller")
