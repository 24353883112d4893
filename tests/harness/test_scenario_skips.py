"""A scenario whose prerequisite is missing from the targets is skipped with the reason, never
passed."""

from __future__ import annotations

import httpx
import pytest

from evalmock.contract.targets import ProjectTarget, Targets, TestCaseTarget
from evalmock.harness.checks import find_check
from evalmock.harness.checks.policy import FAILED, LIVE_PROFILE, PASSED, SKIPPED, WARNED, Policy
from evalmock.harness.checks.scenario import Scenario
from evalmock.harness.results.audit_results import Results
from evalmock.harness.run.engine import run_scenario_check
from evalmock.harness.run.judge import ResponseJudge
from evalmock.harness.run.transport import HttpSender
from evalmock.harness.secrets.redactor import Redactor

PROJECT = ProjectTarget("acme.drafting", "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0")
ANOTHER_AGENT_S = ProjectTarget("globex.search", "e06f96fd-cb38-40c5-8773-0f81097202f6")


def _refuse(request: httpx.Request) -> httpx.Response:
    raise AssertionError(f"a skipped scenario made a request: {request.url}")


def outcome(
    check: str,
    targets: Targets,
    *,
    token: str | None = "demo-user",
    second: str | None = None,
    handler=_refuse,
) -> tuple[str, str]:
    found = find_check(check)
    # The live profile, so that live checks run; an inference the live spec settles is off there, so
    # not for it.
    results = Results(
        Policy() if found.source.settled_live_by else Policy(profile=LIVE_PROFILE), (found.api,)
    )
    with httpx.Client(
        base_url="http://target.invalid", transport=httpx.MockTransport(handler)
    ) as client:
        scenario = Scenario(HttpSender(client), targets, token=token, second_token=second)
        run_scenario_check(found, scenario, ResponseJudge(found.api, results, Redactor(token)))
    tally = results.tally(found)
    status = next(s for s in (PASSED, FAILED, WARNED, SKIPPED) if getattr(tally, s))
    return status, (results.findings[0].examples[0].message if results.findings else "")


@pytest.mark.parametrize(
    ("check", "targets", "words"),
    [
        ("walk_yields_every_case_once", Targets(), "[[test_set.projects]]"),
        ("include_retired_adds_the_retired_cases", Targets(projects=(PROJECT,)), "has_retired"),
        ("kind_filter_selects_those_kinds", Targets(projects=(PROJECT,)), "has_hand"),
        ("default_limit_fills_a_first_page", Targets(projects=(PROJECT,)), "active_cases"),
        ("tampered_cursor_is_bad_input", Targets(projects=(PROJECT,)), "sealed_cursors"),
        ("cursor_is_bound_to_the_filters", Targets(projects=(PROJECT,)), "sealed_cursors"),
        ("cursor_is_bound_to_the_list", Targets(projects=(PROJECT,)), "sealed_cursors"),
        (
            "cursor_is_bound_to_the_list",
            Targets(projects=(PROJECT,), sealed_cursors=True),
            "a second [[test_set.projects]] entry of that agent",
        ),
        (
            "cursor_is_bound_to_the_list",
            Targets(projects=(PROJECT, ANOTHER_AGENT_S), sealed_cursors=True),
            "one project of agent acme.drafting",
        ),
        ("cursor_is_bound_to_the_agent", Targets(projects=(PROJECT,)), "sealed_cursors"),
        (
            "cursor_is_bound_to_the_agent",
            Targets(projects=(PROJECT, ANOTHER_AGENT_S), sealed_cursors=True),
            "under another agent that serves it, would enable",
        ),
        ("expired_and_revoked_tokens_are_401", Targets(projects=(PROJECT,)), "expired_token"),
        ("caller_without_read_gets_no_cases", Targets(projects=(PROJECT,)), "no_read_token"),
        (
            "cursor_is_bound_to_the_caller",
            Targets(projects=(PROJECT,), sealed_cursors=True),
            "second-token",
        ),
        ("each_version_is_that_version", Targets(), "[[gradient.test_cases]]"),
        ("no_version_is_the_latest", Targets(test_cases=(TestCaseTarget("u"),)), "versions"),
    ],
)
def test_a_missing_fact_skips_with_the_reason(check: str, targets: Targets, words: str) -> None:
    status, message = outcome(check, targets)
    assert status == SKIPPED
    assert words in message


def test_no_token_skips_with_the_reason() -> None:
    status, message = outcome(
        "walk_yields_every_case_once", Targets(projects=(PROJECT,)), token=None
    )
    assert (status, "--token" in message) == (SKIPPED, True)


def test_checks_that_send_no_token_of_their_own_run_without_one() -> None:
    def refused(request: httpx.Request) -> httpx.Response:
        rid = "r-1"
        return httpx.Response(
            401,
            json={"error": {"code": "unauthorized", "message": "No.", "requestId": rid}},
            headers={"X-Request-Id": rid},
        )

    for check in ("missing_or_malformed_token_is_401", "made_up_token_is_refused"):
        status, _ = outcome(check, Targets(projects=(PROJECT,)), token=None, handler=refused)
        assert status == PASSED, check


def test_a_second_caller_who_cannot_read_the_project_skips_the_binding_check() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if request.headers.get("authorization") == "Bearer other":
            return httpx.Response(
                401, json={"error": {"code": "x", "message": "No.", "requestId": "r"}}
            )
        return httpx.Response(200, json={"data": [], "hasMore": False})

    status, message = outcome(
        "cursor_is_bound_to_the_caller",
        Targets(projects=(PROJECT,), sealed_cursors=True),
        second="other",
        handler=answer,
    )
    assert status == SKIPPED and "second caller cannot read" in message


def test_an_unhonoured_prefer_skips_the_busy_scenario_saying_a_real_service_always_does() -> None:
    def ok(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"data": [], "hasMore": False})

    status, message = outcome(
        "busy_answer_says_when_to_retry", Targets(projects=(PROJECT,)), handler=ok
    )
    assert status == SKIPPED and "Prefer: code=503" in message
    assert (
        "only a mock can be made busy" in message
        and "a real service is always skipped here" in message
    )
    assert "response_headers_conformance" in message  # where a 503 met by chance is judged


def test_a_target_that_answers_wrongly_fails_the_scenario() -> None:
    def empty(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, json={"data": [], "hasMore": False}, headers={"X-Request-Id": "r"}
        )

    status, message = outcome(
        "unknown_agent_is_agent_not_found", Targets(projects=(PROJECT,)), handler=empty
    )
    assert status == FAILED and "expected: 404 agent-not-found" in message
