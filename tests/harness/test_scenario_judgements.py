"""Scenario checks whose verdict hangs on what the pages leave open: a caller without read, a
version asked by its inferred name. Each passes a conforming service and fails a violating one, at
its level."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from evalmock.contract.targets import ProjectTarget, Targets, TestCaseTarget
from evalmock.harness.checks import find_check
from evalmock.harness.checks.policy import FAILED, PASSED, SKIPPED, WARNED, Policy
from evalmock.harness.checks.scenario import Scenario
from evalmock.harness.checks.target_keys import TargetKey, target_key
from evalmock.harness.results.audit_results import Results
from evalmock.harness.results.verdict import Verdict
from evalmock.harness.run.engine import run_scenario_check
from evalmock.harness.run.judge import ResponseJudge
from evalmock.harness.run.transport import HttpSender
from evalmock.harness.secrets.redactor import Redactor
from shared import LIMIT

from .builders import TEST_CASE, gradient_test_case, hand_case
from .test_scenario_skips import outcome

PROJECT = ProjectTarget("acme.drafting", "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0")
NO_READ = Targets(projects=(PROJECT,), no_read_token="reads-nothing")
VERSIONS = Targets(test_cases=(TestCaseTarget(TEST_CASE, (1, 2, 3)),))


def answering(status: int, body: object) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json=body, headers={"x-request-id": "r"})

    return handle  # type: ignore[return-value]


def test_a_caller_without_read_may_get_any_4xx_or_an_empty_page() -> None:
    for status, body in (
        (403, {"error": {"code": "forbidden", "message": "no", "requestId": "r"}}),
        (404, {"error": {"code": "agent-not-found", "message": "no", "requestId": "r"}}),
        (200, {"data": [], "hasMore": False}),
    ):
        assert (
            outcome("caller_without_read_gets_no_cases", NO_READ, handler=answering(status, body))[
                0
            ]
            == PASSED
        )


def test_a_caller_without_read_served_the_cases_fails() -> None:
    served = answering(200, {"data": [hand_case()], "hasMore": False})
    status, message = outcome("caller_without_read_gets_no_cases", NO_READ, handler=served)
    assert status == FAILED and "without read" in message and "reads-nothing" not in message


def versions(answer: dict[int | None, int]) -> httpx.MockTransport:
    """A DigitalOcean service answering each version asked for with `answer[asked]` (404 when
    absent)."""

    def handle(request: httpx.Request) -> httpx.Response:
        asked = request.url.params.get("evaluation_test_case_version")
        version = answer.get(int(asked) if asked is not None else None)
        if version is None:
            return httpx.Response(404, json={"id": "not_found", "message": "no"})
        body = {"evaluation_test_case": gradient_test_case(version=version)}
        return httpx.Response(
            200, content=json.dumps(body).encode(), headers={"content-type": "application/json"}
        )

    return handle  # type: ignore[return-value]


def test_versions_answered_as_asked_pass_at_page_level() -> None:
    faithful = versions({1: 1, 2: 2, 3: 3})
    assert outcome("each_version_is_that_version", VERSIONS, handler=faithful)[0] == PASSED
    assert (
        outcome("version_asked_by_its_inferred_name_is_that_version", VERSIONS, handler=faithful)[0]
        == PASSED
    )


def test_a_service_that_never_answers_an_older_version_is_judged_at_the_inferred_level() -> None:
    # It may read the version under another name: evaluation_test_case_version is only inferred.
    latest_always = versions({v: 3 for v in (None, 0, 1, 2, 3, 4)})
    status, message = outcome("each_version_is_that_version", VERSIONS, handler=latest_always)
    assert status == SKIPPED and "confirmed" in message
    judged = outcome(
        "version_asked_by_its_inferred_name_is_that_version", VERSIONS, handler=latest_always
    )
    assert judged[0] == WARNED  # an inferred rule: a warning, a failure only with --strict


def test_in_the_live_profile_a_service_that_never_answers_an_older_version_fails() -> None:
    # DigitalOcean's spec names the parameter: what the inferred twin warns of fails there, at live
    # level.
    latest_always = versions({v: 3 for v in (None, 0, 1, 2, 3, 4)})
    status, message = outcome(
        "version_asked_by_the_spec_s_name_is_that_version", VERSIONS, handler=latest_always
    )
    assert status == FAILED and "gave another" in message
    faithful = versions({1: 1, 2: 2, 3: 3})
    assert (
        outcome("version_asked_by_the_spec_s_name_is_that_version", VERSIONS, handler=faithful)[0]
        == PASSED
    )


def test_a_version_beyond_those_listed_answered_with_another_fails_once_the_name_is_confirmed() -> (
    None
):
    clamped = versions({1: 1, 2: 2, 3: 3, 4: 3})  # version 4 does not exist: the latest comes back
    status, message = outcome("each_version_is_that_version", VERSIONS, handler=clamped)
    assert status == FAILED and "does not have" in message
    assert (
        outcome("version_asked_by_its_inferred_name_is_that_version", VERSIONS, handler=clamped)[0]
        == PASSED
    )


DEFAULT, FULL = LIMIT["default"], LIMIT["maximum"]
START = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def _stamp(n: int, seconds: int = 0) -> str:
    """When case n was added: a minute before case n - 1 (`seconds` later, when given)."""
    added = START - timedelta(minutes=n) + timedelta(seconds=seconds)
    return added.strftime("%Y-%m-%dT%H:%M:%SZ")


def _load_more_gateway(
    request: httpx.Request, *, drop: bool = True, add: dict[str, Any] | None = None
) -> httpx.Response:
    """Two default pages and ten cases more, newest first, behind a gateway with a "Load more" bug
    at the default limit only: the second page loses its first case (`drop`) and may list `add` at
    its top. The walk at the largest limit lists every case."""
    cases = [
        hand_case(id=f"case-{n:03d}", addedAt=_stamp(n), updatedAt=_stamp(n))
        for n in range(2 * DEFAULT + 10)
    ]
    start = int(request.url.params.get("cursor", "0"))
    asked = request.url.params.get("limit")
    limit = int(asked or DEFAULT)
    page = cases[start : start + limit]
    if asked is None and start == DEFAULT:
        page = ([add] if add else []) + (page[1:] if drop else page)
    more = start + limit < len(cases)
    body = {"data": page, "hasMore": more, **({"nextCursor": str(start + limit)} if more else {})}
    return httpx.Response(200, json=body, headers={"x-request-id": "r"})


def audited_with(
    check: str, targets: Targets, handler: Any, *, policy: Policy | None = None
) -> Results:
    """`check` run alone against `handler` (an httpx MockTransport's) over `targets`."""
    found = find_check(check)
    results = Results(policy or Policy(), (found.api,))
    with httpx.Client(
        base_url="http://target.invalid", transport=httpx.MockTransport(handler)
    ) as client:
        run_scenario_check(
            found,
            Scenario(HttpSender(client), targets, token="demo-user"),
            ResponseJudge(found.api, results, Redactor("demo-user")),
        )
    return results


def _walk_finding(handler: Any) -> Any:
    results = audited_with("walk_yields_every_case_once", Targets(projects=(PROJECT,)), handler)
    [finding] = [f for f in results.failures if f.check.name == "walk_yields_every_case_once"]
    return finding.examples[0]


def test_walks_that_part_say_where_on_the_page_that_shows_it() -> None:
    example = _walk_finding(_load_more_gateway)
    assert (
        f"first missing: 'case-{DEFAULT:03d}', case {DEFAULT + 1} of the walk at limit={FULL}, "
        f"which this walk should list after 'case-{DEFAULT - 1:03d}' (page 1) and before "
        f"'case-{DEFAULT + 1:03d}' (page 2) (the request below is that page's)"
    ) in example.message
    # its curl asks for page 2
    assert example.request is not None and f"cursor={DEFAULT}" in example.request.url


def test_a_case_only_one_walk_lists_is_named_with_its_page() -> None:
    between = _stamp(DEFAULT, seconds=30)  # after the second page's first case
    stranger = hand_case(id="case-stranger", addedAt=between, updatedAt=between)
    example = _walk_finding(lambda request: _load_more_gateway(request, drop=False, add=stranger))
    assert (
        f"first extra: 'case-stranger', on page 2, in no page of the walk at limit={FULL}"
        in example.message
    )
    assert example.request is not None and f"cursor={DEFAULT}" in example.request.url


def _load_more_everywhere(request: httpx.Request) -> httpx.Response:
    """150 active cases and 20 retired ones (every eighth of the list with include=retired), newest
    first, behind a gateway whose "Load more" loses the first case of every page after the first, at
    every limit and filter."""
    listed = []
    for position in range(170):
        retired = position % 8 == 7 and position < 160
        stamp = f"2026-11-{20 - position // 60:02d}T09:{59 - position % 60:02d}:00Z"
        retirement = {"reason": "Superseded.", "by": {"kind": "user", "id": "user-7"}, "at": stamp}
        extra = {"retired": retirement} if retired else {}
        listed.append(hand_case(id=f"case-{position:03d}", addedAt=stamp, updatedAt=stamp, **extra))
    if request.url.params.get("include") != "retired":
        listed = [case for case in listed if "retired" not in case]
    start = int(request.url.params.get("cursor", "0"))
    limit = int(request.url.params.get("limit") or 25)
    page = listed[start : start + limit][1 if start else 0 :]
    more = start + limit < len(listed)
    body = {"data": page, "hasMore": more, **({"nextCursor": str(start + limit)} if more else {})}
    return httpx.Response(200, json=body, headers={"x-request-id": "r"})


def test_a_load_more_bug_is_the_walks_finding_not_a_retired_filter_one() -> None:
    # At limit=100 the walk of the active cases and the walk with include=retired each lose a case
    # at their page boundary, and not the same one: the active case-100 is lost only by the second,
    # at its own boundary.
    targets = Targets(
        projects=(ProjectTarget(PROJECT.agent_id, PROJECT.project_id, has_retired=True),)
    )
    assert (
        outcome("include_retired_adds_the_retired_cases", targets, handler=_load_more_everywhere)[0]
        == PASSED
    )
    assert (
        outcome("walk_yields_every_case_once", targets, handler=_load_more_everywhere)[0] == FAILED
    )


def _sixty_cases() -> list[dict[str, Any]]:
    """60 cases, newest first, a minute apart."""
    return [
        hand_case(
            id=f"case-{n:03d}",
            addedAt=f"2026-11-20T09:{59 - n:02d}:00Z",
            updatedAt=f"2026-11-20T09:{59 - n:02d}:00Z",
        )
        for n in range(60)
    ]


def _empty_after_more_at_small_pages(request: httpx.Request) -> httpx.Response:
    """60 cases; a page of fewer than 25 that ends where a third of the cases do says hasMore and
    gives a cursor to an empty page (a service that counts pages wrong at small limits only)."""
    listed = _sixty_cases()
    start, limit = (
        int(request.url.params.get("cursor", "0")),
        int(request.url.params.get("limit") or 25),
    )
    if start == -1:
        return httpx.Response(
            200, json={"data": [], "hasMore": False}, headers={"x-request-id": "r"}
        )
    page = listed[start : start + limit]
    more = start + limit < len(listed)
    cursor = "-1" if limit < 25 and start + limit >= 20 and start < 20 else str(start + limit)
    body = {"data": page, "hasMore": more, **({"nextCursor": cursor} if more else {})}
    return httpx.Response(200, json=body, headers={"x-request-id": "r"})


def test_an_empty_page_after_has_more_is_found_at_whatever_page_size_it_shows() -> None:
    targets = Targets(
        projects=(ProjectTarget(PROJECT.agent_id, PROJECT.project_id, active_cases=60),)
    )
    assert (
        outcome(
            "page_after_has_more_is_not_empty", targets, handler=_empty_after_more_at_small_pages
        )[0]
        == WARNED
    )


SIXTY = ProjectTarget(PROJECT.agent_id, PROJECT.project_id, active_cases=60)
SMALL = 19  # the small limit the walks of SIXTY take: pages at 0, 19, 38 and 57
STALE = {"error": {"code": "bad-input", "message": "Start again without it.", "requestId": "r"}}


def _refusing_its_own_cursor(*, empty_page_2: bool) -> Any:
    """60 cases, newest first, whose walk at the small limit is refused its page 3 with 400
    bad-input (as a service whose cursor keys rotate refuses a fresh cursor); with `empty_page_2`,
    that walk's page 2 is empty though page 1 said hasMore."""
    listed = _sixty_cases()

    def handle(request: httpx.Request) -> httpx.Response:
        start = int(request.url.params.get("cursor", "0"))
        limit = int(request.url.params.get("limit") or LIMIT["default"])
        if limit == SMALL and start == 2 * SMALL:
            return httpx.Response(400, json=STALE, headers={"x-request-id": "r"})
        page = [] if empty_page_2 and limit == SMALL and start == SMALL else listed[start:][:limit]
        more = start + limit < len(listed)
        body = {
            "data": page,
            "hasMore": more,
            **({"nextCursor": str(start + limit)} if more else {}),
        }
        return httpx.Response(200, json=body, headers={"x-request-id": "r"})

    return handle


def test_a_refused_cursor_is_the_walk_s_finding_not_an_empty_page() -> None:
    """A 400 to the nextCursor a page gave is no page, empty or not: the walk rule files it, and
    the emptiness rule says it could not judge what follows."""
    handler = _refusing_its_own_cursor(empty_page_2=False)
    status, message = outcome(
        "page_after_has_more_is_not_empty", Targets(projects=(SIXTY,)), handler=handler
    )
    assert status == SKIPPED, message
    assert message == (
        f"could not judge: the walk of {SIXTY.agent_id}/{SIXTY.project_id} with limit={SMALL} was "
        "refused its page 3 (400), so no page followed its page 2: a refused cursor is "
        "walk_yields_every_case_once's finding"
    )
    status, message = outcome(
        "walk_yields_every_case_once", Targets(projects=(SIXTY,)), handler=handler
    )
    assert status == FAILED
    assert message.splitlines() == [
        f"the walk of {SIXTY.agent_id}/{SIXTY.project_id} with limit={SMALL} was refused its "
        "page 3, asked with the nextCursor its page 2 gave",
        "expected: 200 with the page that cursor points at",
        f"received: 400 {json.dumps(STALE, separators=(',', ':'))}",
    ]


def test_an_empty_page_before_a_refused_cursor_is_still_found() -> None:
    handler = _refusing_its_own_cursor(empty_page_2=True)
    status, message = outcome(
        "page_after_has_more_is_not_empty", Targets(projects=(SIXTY,)), handler=handler
    )
    assert status == WARNED
    assert message.splitlines()[0] == "page 1 said hasMore, but the next page is empty"


FORBIDDEN = {"message": "Forbidden"}  # a gateway's own body, not the API's envelope


def test_a_project_or_test_case_the_token_is_turned_away_from_is_unjudged_incomplete() -> None:
    """A 403 for what the targets say the token reads (a gateway's allowlist, a token for other
    projects) is no rule's failure: the pages list no 403, and for a caller without read any 4xx
    conforms. The audit says it could not judge it, and what would let it, and so cannot conform."""
    for check, targets in (
        ("walk_yields_every_case_once", Targets(projects=(PROJECT,))),
        ("no_version_is_the_latest", VERSIONS),
    ):
        results = audited_with(check, targets, answering(403, FORBIDDEN))
        assert not results.failures, check
        [gap] = results.gaps
        assert "answered 403" in gap.what and "turned the audit's token away" in gap.what
        assert "--token" in gap.remedy and "gateway" in gap.remedy
        assert results.verdict is Verdict.INCOMPLETE
        assert results.skips[0].examples[0].message.startswith("could not judge: GET ")


OTHER = ProjectTarget("acme.drafting", "a60767bc-f81b-4009-86cc-372b632c4c53")


def _one_project_refused(request: httpx.Request) -> httpx.Response:
    """PROJECT served (two cases, so its first page has a cursor); OTHER refused by a gateway,
    whatever is asked."""
    if request.url.params.get("projectId") == OTHER.project_id:
        return httpx.Response(403, json=FORBIDDEN)
    if request.url.params.get("cursor"):
        return httpx.Response(
            200,
            json={"data": [hand_case(id="case-2")], "hasMore": False},
            headers={"x-request-id": "r"},
        )
    return httpx.Response(
        200,
        json={"data": [hand_case(id="case-1")], "hasMore": True, "nextCursor": "c1"},
        headers={"x-request-id": "r"},
    )


def _bound_to_the_list(turned_away: frozenset[TargetKey]) -> Results:
    found = find_check("cursor_is_bound_to_the_list")
    results = Results(Policy(), (found.api,))
    targets = Targets(projects=(PROJECT, OTHER), sealed_cursors=True)
    with httpx.Client(
        base_url="http://target.invalid", transport=httpx.MockTransport(_one_project_refused)
    ) as client:
        scenario = Scenario(HttpSender(client), targets, token="demo-user", turned_away=turned_away)
        run_scenario_check(
            found, scenario, ResponseJudge(found.api, results, Redactor("demo-user"))
        )
    return results


def test_a_request_for_a_project_the_token_is_turned_away_from_is_not_judged_whatever_it_asks() -> (
    None
):
    # The cursor reused for OTHER gets the gateway's 403, as every request for OTHER does: not the
    # service's answer to the cursor, so no rule judges it, and the audit cannot conform.
    turned_away = frozenset(
        {target_key("test-set", {"agentId": OTHER.agent_id}, {"projectId": OTHER.project_id})}
    )
    results = _bound_to_the_list(turned_away)
    assert not results.failures and results.verdict is Verdict.INCOMPLETE
    [gap] = results.gaps
    assert gap.what.startswith(
        "GET /v1/agents/acme.drafting/test-set/cases answered 403: the service, or a gateway"
    )


def test_a_403_for_a_project_the_token_is_not_turned_away_from_is_judged() -> None:
    # Asked plainly, OTHER was served (it is not in turned_away): a 403 to the reused cursor is the
    # service's answer.
    results = _bound_to_the_list(frozenset())
    assert [f.check.name for f in results.failures] == [
        "cursor_is_bound_to_the_list"
    ] and not results.gaps


def test_a_known_project_answered_404_still_fails_the_walk() -> None:
    results = audited_with(
        "walk_yields_every_case_once",
        Targets(projects=(PROJECT,)),
        answering(404, {"error": {"code": "agent-not-found", "message": "no", "requestId": "r"}}),
    )
    assert [f.check.name for f in results.failures] == [
        "walk_yields_every_case_once"
    ] and not results.gaps
