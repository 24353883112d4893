"""The DigitalOcean call: the test case the path names, at the version asked for; the live service's
404s and latest version.

Its field types and formats (uint64 as decimal strings, the enums, 0..100) are the document's,
judged by Schemathesis's response_schema_conformance on every 200; its error bodies and rate-limit
headers are facts of the live service, judged in the live profile (checks/builtins.py).
"""

from __future__ import annotations

from typing import Any

from evalmock.contract.operations import operation
from evalmock.contract.sources import Source, inferred, live, on_digitalocean_page, page
from evalmock.contract.targets import Targets
from evalmock.harness.checks.context import CheckContext
from evalmock.harness.checks.digitalocean_versions import (
    ask_every_version,
    assert_each_version,
    evaluation_test_case,
    same_version,
    version_asked,
)
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.outcomes import Skip, Violation
from evalmock.harness.checks.registry import response_check, scenario_check
from evalmock.harness.checks.scenario import Scenario, unless_turned_away
from evalmock.harness.excerpts import as_json

UNKNOWN_TEST_CASE = "00000000-0000-4000-8000-00000000dead"
MALFORMED_TEST_CASE = "not-a-uuid"

_ASKED_FOR_A_VERSION = (
    on_digitalocean_page("EvaluationTestCaseVersion param.Field[int64]optional"),
    on_digitalocean_page("Version of the test case."),
)
_VERSION = page(
    *_ASKED_FOR_A_VERSION,
    reading="Asking for a version of the test case gets that version: the body's version is the "
    "one asked for "
    "(a version the test case does not have is never answered with another one). Judged at page "
    "level "
    "once the service's own answers confirm the query name evaluation_test_case_version (it "
    "answered a "
    "version other than the latest when asked by that name); until then the wire name is only "
    "inferred.",
)


def _version_name(settled_live_by: str) -> Source:
    return inferred(
        "The page gives only the Go field EvaluationTestCaseVersion, not its name on the wire; its "
        "JSON example shows "
        "response fields as the Go names in snake_case, so the query parameter is read as "
        "evaluation_test_case_version. Until the service answers a version other than the latest "
        "when asked by that "
        "name, a wrong version may only mean that it reads the version under another name.",
        *_ASKED_FOR_A_VERSION,
        settled_live_by=settled_live_by,
    )


# In the live profile the name is no longer an inference: these judge what the inferred twins judge
# elsewhere.
_VERSION_NAME_LIVE = live(
    "DigitalOcean's public spec names the query parameter evaluation_test_case_version (Version of "
    "the test case), "
    "and its SDKs, generated from that spec, send it so: a version asked by that name is judged "
    "whether or not "
    "the service's answers confirm the name.",
    *_ASKED_FOR_A_VERSION,
)


# Why a version rule did not judge an answer it speaks about (said when it judged none).
_NAME_UNCONFIRMED = (
    "the answer did not confirm the query name evaluation_test_case_version (it was the latest "
    "version, or the targets do not list the test case): body_is_the_version_asked_by_its_inferred_"
    "name judged it (body_is_the_version_asked_by_the_spec_s_name in the live profile)"
)
_NAME_CONFIRMED = (
    "the answer confirmed the query name evaluation_test_case_version: "
    "body_is_the_requested_version "
    "judged it"
)


@response_check("gradient", _VERSION)
def body_is_the_requested_version(context: CheckContext) -> bool | str | None:
    """A 200 to a request naming evaluation_test_case_version carries that version (when it carries
    one), judged when the answer confirms the name: it is a version the targets list, other than the
    latest."""
    exchange = context.exchange
    targets = context.targets
    asked = version_asked(exchange, targets)
    if asked is None:
        return None
    if not asked[2]:
        return _NAME_UNCONFIRMED
    return same_version(asked[0], asked[1])


def _unconfirmed_version(exchange: Exchange, targets: Targets) -> bool | str | None:
    asked = version_asked(exchange, targets)
    if asked is None:
        return None
    if asked[2]:
        return _NAME_CONFIRMED
    return same_version(asked[0], asked[1])


@response_check(
    "gradient", _version_name(settled_live_by="body_is_the_version_asked_by_the_spec_s_name")
)
def body_is_the_version_asked_by_its_inferred_name(context: CheckContext) -> bool | str | None:
    """A 200 to a request naming evaluation_test_case_version carries that version, where the answer
    does not confirm the name (it is the latest, or the targets do not list the test case): a
    warning by default."""
    exchange = context.exchange
    targets = context.targets
    return _unconfirmed_version(exchange, targets)


@response_check("gradient", _VERSION_NAME_LIVE)
def body_is_the_version_asked_by_the_spec_s_name(context: CheckContext) -> bool | str | None:
    """In the live profile, a 200 to a request naming evaluation_test_case_version carries that
    version, where the answer does not confirm the name (it is the latest, or the targets do not
    list the test case)."""
    exchange = context.exchange
    targets = context.targets
    return _unconfirmed_version(exchange, targets)


@response_check(
    "gradient",
    page(
        on_digitalocean_page(
            "To retrive information about an existing evaluation test case, send a GET request to "
            "/v2/gen-ai/evaluation_test_case/{test_case_uuid}.",
        ),
        on_digitalocean_page("testCaseUuid string"),
        reading="The answer is about the test case the path names; its test_case_uuid, when sent, "
        "is that id (in any "
        "letter case).",
    ),
)
def body_is_the_requested_test_case(context: CheckContext) -> bool | None:
    """A 200's test_case_uuid (when it has one) is the id in the path."""
    exchange = context.exchange
    test_case = evaluation_test_case(exchange)
    parameters = operation("gradient").path_parameters(exchange.path)
    if test_case is None or "test_case_uuid" not in test_case or parameters is None:
        return None
    requested = parameters["test_case_uuid"]
    if str(test_case["test_case_uuid"]).lower() != requested.lower():
        raise Violation(
            "the answer is another test case than the path names",
            expected=requested,
            received=test_case["test_case_uuid"],
            pointer="/evaluation_test_case/test_case_uuid",
        )
    return True


@response_check(
    "gradient",
    inferred(
        "A metric's range runs from its minimum to its maximum; the page gives both but no order "
        "between them.",
        on_digitalocean_page("The maximum value for the metric."),
        on_digitalocean_page("The minimum value for the metric."),
    ),
)
def metric_range_is_ordered(context: CheckContext) -> bool | None:
    """Every metric's range_min is not above its range_max (when both are numbers)."""
    exchange = context.exchange
    test_case = evaluation_test_case(exchange)
    metrics = test_case.get("metrics") if test_case is not None else None
    if not isinstance(metrics, list):
        return None
    for index, metric in enumerate(metrics):
        low, high = (
            metric.get(k) if isinstance(metric, dict) else None for k in ("range_min", "range_max")
        )
        numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (low, high))
        if numbers and low > high:  # type: ignore[operator]
            raise Violation(
                "a metric's range_min is above its range_max",
                expected=f"range_min <= {high}",
                received=low,
                pointer=f"/evaluation_test_case/metrics/{index}/range_min",
            )
    return True


# -- scenarios
# --------------------------------------------------------------------------------------------
def _expect_test_case(exchange: Exchange, what: str) -> dict[str, Any]:
    unless_turned_away(exchange, "a test case")
    test_case = evaluation_test_case(exchange)
    if test_case is None:
        raise Violation(
            f"{what} did not answer 200 with an evaluation_test_case",
            expected=200,
            received=f"{exchange.status} {exchange.excerpt()}",
            exchange=exchange,
        )
    return test_case


@scenario_check("gradient", _VERSION)
def each_version_is_that_version(s: Scenario) -> None:
    """Each version the targets list for each test case answers 200 with that version, and a version
    just beyond them (one below or above one it has) is never a 200 carrying another version. Judged
    once the answers confirm the name evaluation_test_case_version; skipped, with the reason, until
    then."""
    answers, confirmed = ask_every_version(s)
    if not confirmed:
        raise Skip(
            "no answer confirmed the query name evaluation_test_case_version (none was a version "
            "other than "
            "the latest): version_asked_by_its_inferred_name_is_that_version judges the versions "
            "instead "
            "(version_asked_by_the_spec_s_name_is_that_version in the live profile)"
        )
    assert_each_version(answers)


def _unconfirmed_versions(s: Scenario) -> None:
    answers, confirmed = ask_every_version(s)
    if not confirmed:
        assert_each_version(answers)


@scenario_check(
    "gradient", _version_name(settled_live_by="version_asked_by_the_spec_s_name_is_that_version")
)
def version_asked_by_its_inferred_name_is_that_version(s: Scenario) -> None:
    """Asked by evaluation_test_case_version for each version the targets list (and those just
    beyond), the answers are those versions, where no answer confirms the name: a warning by
    default. Once one does, the page rule each_version_is_that_version judges them."""
    _unconfirmed_versions(s)


@scenario_check("gradient", _VERSION_NAME_LIVE)
def version_asked_by_the_spec_s_name_is_that_version(s: Scenario) -> None:
    """In the live profile, asked by evaluation_test_case_version for each version the targets list
    (and those just beyond), the answers are those versions, where no answer confirms the name. Once
    one does, the page rule each_version_is_that_version judges them."""
    _unconfirmed_versions(s)


@scenario_check(
    "gradient",
    live(
        "DigitalOcean's service answers a test case without a version with its latest "
        "version; the page does not say what a request without one gets."
    ),
)
def no_version_is_the_latest(s: Scenario) -> None:
    """Without evaluation_test_case_version the answer is the highest version the targets list."""
    test_case = s.test_case()
    if test_case.latest is None:
        raise Skip("the targets list no versions for the test case")
    body = _expect_test_case(s.get_test_case(test_case.uuid), "the test case without a version")
    if body.get("version") != test_case.latest:
        raise Violation(
            "without a version, the answer is not the latest",
            expected=test_case.latest,
            received=body.get("version", "(no version)"),
            pointer="/evaluation_test_case/version",
        )


@scenario_check(
    "gradient",
    live(
        "DigitalOcean's service treats the path parameter as a plain string: an id that "
        "names no test case, malformed or not, is a 404 not_found, never a 400."
    ),
)
def unknown_test_case_is_404(s: Scenario) -> None:
    """An unknown test case id and a malformed one each get 404 (their bodies are judged against
    DigitalOcean's spec)."""
    s.require_token()
    for what, uuid in {
        "an unknown test case": UNKNOWN_TEST_CASE,
        "a malformed id": MALFORMED_TEST_CASE,
    }.items():
        exchange = s.get_test_case(uuid)
        if exchange.status != 404:
            raise Violation(
                f"{what} was not a 404",
                expected=404,
                received=f"{exchange.status} {exchange.excerpt()}",
                exchange=exchange,
            )


# -- the version's near misses
# --------------------------------------------------------------------------------------------
NOT_WHOLE_VERSIONS = {"a word": "x", "a fraction": "1.5"}
_INT64_VERSION = on_digitalocean_page("EvaluationTestCaseVersion param.Field[int64]optional")


@scenario_check(
    "gradient",
    inferred(
        "The page types the version int64 but names no error at all; refusing a version that is "
        "no whole number is the usual reading, and a 200 that ignores it answers another request "
        "than the one sent.",
        _INT64_VERSION,
    ),
)
def version_that_is_no_integer_is_400(s: Scenario) -> None:
    """A version that is not a whole number (x, 1.5) gets 400, never a 200 that ignores it: a
    warning by default."""
    test_case = s.test_case()
    for what, value in NOT_WHOLE_VERSIONS.items():
        exchange = s.get_test_case(test_case.uuid, value)
        if exchange.status != 400:
            body = evaluation_test_case(exchange)
            shown = (
                f"200 with version {as_json(body.get('version', '(no version)'), 100)}"
                if body is not None
                else f"{exchange.status} {exchange.excerpt()}"
            )
            raise Violation(
                f"a version that is {what} ({value!r}) was not refused with 400",
                expected=400,
                received=shown,
                exchange=exchange,
            )


@scenario_check(
    "gradient",
    inferred(
        "An empty version is left open between two readings: refused like any value that is no "
        "int64 (400), or read as left out, as many servers read an empty query value. Any other "
        "answer is neither.",
        _INT64_VERSION,
    ),
)
def empty_version_is_400_or_left_out(s: Scenario) -> None:
    """An empty version (evaluation_test_case_version=) gets 400, or is read as left out: a 200
    with the version a request without one gets. Which of the two is open."""
    test_case = s.test_case()
    empty = s.get_test_case(test_case.uuid, "")
    if empty.status == 400:
        return
    answered = evaluation_test_case(empty)
    if answered is None:
        raise Violation(
            "an empty version was neither refused with 400 nor read as left out",
            expected="400, or 200 with the version a request without one gets",
            received=f"{empty.status} {empty.excerpt()}",
            exchange=empty,
        )
    plain = evaluation_test_case(s.get_test_case(test_case.uuid))
    if plain is None:
        raise Skip(
            "the test case without a version was not a 200 with an evaluation_test_case, so an "
            "empty version read as left out has nothing to be compared with"
        )
    if answered.get("version") != plain.get("version"):
        raise Violation(
            "an empty version was answered with another version than a request without one gets",
            expected=plain.get("version", "(no version)"),
            received=answered.get("version", "(no version)"),
            exchange=empty,
            pointer="/evaluation_test_case/version",
        )
