"""The DigitalOcean call: the test case the path names, at the version asked for; the live service's 404s and
latest version.

Its field types and formats (uint64 as decimal strings, the enums, 0..100) are the document's, judged by
Schemathesis's response_schema_conformance on every 200; its error bodies and rate-limit headers are facts of the
live service, judged in the live profile (checks/builtins.py).
"""

from __future__ import annotations

from typing import Any

from evalmock.contract.operations import operation
from evalmock.contract.sources import inferred, live, on_digitalocean_page, page
from evalmock.harness.checks.registry import response_check, scenario_check
from evalmock.harness.exchange import Exchange
from evalmock.harness.outcomes import Skip, Violation
from evalmock.harness.scenario import Scenario

UNKNOWN_TEST_CASE = "00000000-0000-4000-8000-00000000dead"
MALFORMED_TEST_CASE = "not-a-uuid"
VERSION = "evaluation_test_case_version"

_VERSION = page(
    on_digitalocean_page(15, "EvaluationTestCaseVersion param.Field[int64]optional"),
    on_digitalocean_page(17, "Version of the test case."),
    reading="Asking for a version of the test case gets that version: the body's version is the one asked for.",
)


def _test_case(exchange: Exchange) -> dict[str, Any] | None:
    if exchange.status != 200 or operation("gradient").path_parameters(exchange.path) is None:
        return None
    body = exchange.json_or_none()
    if isinstance(body, dict) and isinstance(body.get("evaluation_test_case"), dict):
        return body["evaluation_test_case"]
    return None


def _whole_number(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


@response_check("gradient", _VERSION)
def body_is_the_requested_version(exchange: Exchange) -> bool | None:
    """Asked for a version, a 200's version (when it has one) is that one: judged from the request alone, with or
    without targets. What a version the test case does not have gets is open (a 404, live), but never another
    version in a 200."""
    test_case = _test_case(exchange)
    requested = _whole_number(exchange.query.get(VERSION, ""))
    if test_case is None or requested is None or "version" not in test_case or exchange.ambiguous(VERSION):
        return None
    if test_case["version"] != requested:
        raise Violation("the answer is another version than the one asked for", expected=requested,
                        received=test_case["version"], pointer="/evaluation_test_case/version")
    return True


@response_check("gradient", page(
    on_digitalocean_page(7, "To retrive information about an existing evaluation test case, send a GET request to "
                            "/v2/gen-ai/evaluation_test_case/{test_case_uuid}."),
    on_digitalocean_page(11, "testCaseUuid string"),
    reading="The answer is about the test case the path names; its test_case_uuid, when sent, is that id (in any "
            "letter case).",
))
def body_is_the_requested_test_case(exchange: Exchange) -> bool | None:
    """A 200's test_case_uuid (when it has one) is the id in the path."""
    test_case = _test_case(exchange)
    parameters = operation("gradient").path_parameters(exchange.path)
    if test_case is None or "test_case_uuid" not in test_case or parameters is None:
        return None
    requested = parameters["test_case_uuid"]
    if str(test_case["test_case_uuid"]).lower() != requested.lower():
        raise Violation("the answer is another test case than the path names", expected=requested,
                        received=test_case["test_case_uuid"], pointer="/evaluation_test_case/test_case_uuid")
    return True


@response_check("gradient", inferred(
    "A metric's range runs from its minimum to its maximum; the page gives both but no order between them.",
    on_digitalocean_page(139, "The maximum value for the metric."),
    on_digitalocean_page(145, "The minimum value for the metric."),
))
def metric_range_is_ordered(exchange: Exchange) -> bool | None:
    """Every metric's range_min is not above its range_max (when both are numbers)."""
    test_case = _test_case(exchange)
    metrics = test_case.get("metrics") if test_case is not None else None
    if not isinstance(metrics, list):
        return None
    for index, metric in enumerate(metrics):
        low, high = (metric.get(k) if isinstance(metric, dict) else None for k in ("range_min", "range_max"))
        numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (low, high))
        if numbers and low > high:  # type: ignore[operator]
            raise Violation("a metric's range_min is above its range_max", expected=f"range_min <= {high}",
                            received=low, pointer=f"/evaluation_test_case/metrics/{index}/range_min")
    return True


# -- scenarios --------------------------------------------------------------------------------------------
def _expect_test_case(exchange: Exchange, what: str) -> dict[str, Any]:
    test_case = _test_case(exchange)
    if test_case is None:
        raise Violation(f"{what} did not answer 200 with an evaluation_test_case", expected=200,
                        received=f"{exchange.status} {exchange.text[:200]}", exchange=exchange)
    return test_case


@scenario_check("gradient", _VERSION)
def each_version_is_that_version(s: Scenario) -> None:
    """Each version the targets list for a test case answers 200 with that version."""
    test_case = s.test_case()
    if not test_case.versions:
        raise Skip("the targets list no versions for the test case")
    for version in test_case.versions:
        body = _expect_test_case(s.get_test_case(test_case.uuid, version), f"version {version}")
        if body.get("version") != version:
            raise Violation(f"asking for version {version} gave another", expected=version,
                            received=body.get("version", "(no version)"), pointer="/evaluation_test_case/version")


@scenario_check("gradient", live("DigitalOcean's service answers a test case without a version with its latest "
                                 "version; the page does not say what a request without one gets."))
def no_version_is_the_latest(s: Scenario) -> None:
    """Without evaluation_test_case_version the answer is the highest version the targets list."""
    test_case = s.test_case()
    if test_case.latest is None:
        raise Skip("the targets list no versions for the test case")
    body = _expect_test_case(s.get_test_case(test_case.uuid), "the test case without a version")
    if body.get("version") != test_case.latest:
        raise Violation("without a version, the answer is not the latest", expected=test_case.latest,
                        received=body.get("version", "(no version)"), pointer="/evaluation_test_case/version")


@scenario_check("gradient", live("DigitalOcean's service treats the path parameter as a plain string: an id that "
                                 "names no test case, malformed or not, is a 404 not_found, never a 400."))
def unknown_test_case_is_404(s: Scenario) -> None:
    """An unknown test case id and a malformed one each get 404 (their bodies are judged against DigitalOcean's
    spec)."""
    s.require_token()
    for what, uuid in {"an unknown test case": UNKNOWN_TEST_CASE, "a malformed id": MALFORMED_TEST_CASE}.items():
        exchange = s.get_test_case(uuid)
        if exchange.status != 404:
            raise Violation(f"{what} was not a 404", expected=404, received=f"{exchange.status} {exchange.text[:200]}",
                            exchange=exchange)
