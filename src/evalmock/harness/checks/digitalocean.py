"""The DigitalOcean call: the test case the path names, at the version asked for; the live service's 404s and
latest version.

Its field types and formats (uint64 as decimal strings, the enums, 0..100) are the document's, judged by
Schemathesis's response_schema_conformance on every 200; its error bodies and rate-limit headers are facts of the
live service, judged in the live profile (checks/builtins.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalmock.contract.operations import operation
from evalmock.contract.sources import Source, inferred, live, on_digitalocean_page, page
from evalmock.contract.targets import Targets
from evalmock.harness.checks.context import CheckContext
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.outcomes import Skip, Violation
from evalmock.harness.checks.registry import response_check, scenario_check
from evalmock.harness.checks.scenario import Scenario, unless_turned_away

UNKNOWN_TEST_CASE = "00000000-0000-4000-8000-00000000dead"
MALFORMED_TEST_CASE = "not-a-uuid"
VERSION = "evaluation_test_case_version"

_ASKED_FOR_A_VERSION = (
    on_digitalocean_page(15, "EvaluationTestCaseVersion param.Field[int64]optional"),
    on_digitalocean_page(17, "Version of the test case."),
)
_VERSION = page(
    *_ASKED_FOR_A_VERSION,
    reading="Asking for a version of the test case gets that version: the body's version is the one asked for "
            "(a version the test case does not have is never answered with another one). Judged at page level "
            "once the service's own answers confirm the query name evaluation_test_case_version (it answered a "
            "version other than the latest when asked by that name); until then the wire name is only inferred.",
)


def _version_name(settled_live_by: str) -> Source:
    return inferred(
        "The page gives only the Go field EvaluationTestCaseVersion, not its name on the wire; its JSON example shows "
        "response fields as the Go names in snake_case, so the query parameter is read as "
        "evaluation_test_case_version. Until the service answers a version other than the latest when asked by that "
        "name, a wrong version may only mean that it reads the version under another name.",
        *_ASKED_FOR_A_VERSION,
        settled_live_by=settled_live_by,
    )


# In the live profile the name is no longer an inference: these judge what the inferred twins judge elsewhere.
_VERSION_NAME_LIVE = live(
    "DigitalOcean's public spec names the query parameter evaluation_test_case_version (Version of the test case), "
    "and its SDKs, generated from that spec, send it so: a version asked by that name is judged whether or not "
    "the service's answers confirm the name.",
    *_ASKED_FOR_A_VERSION,
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


def _latest(targets: Targets | None, uuid: str) -> int | None:
    test_case = next((t for t in (targets.test_cases if targets else ()) if t.uuid.lower() == uuid.lower()), None)
    return test_case.latest if test_case is not None else None


def confirms_the_version_name(answered: object, latest: int | None) -> bool:
    """Whether an answer to a request naming evaluation_test_case_version shows the service reads it: a version the
    targets list for the test case, other than its latest (what a service that ignores the name answers)."""
    return isinstance(answered, int) and latest is not None and answered != latest


def _version_asked(exchange: Exchange, targets: Targets) -> tuple[int, Any, bool] | None:
    """The version asked for, the one answered and whether the answer confirms the wire name; None when the
    exchange is no 200 answering a version asked for once."""
    test_case = _test_case(exchange)
    requested = _whole_number(exchange.query.get(VERSION, ""))
    if test_case is None or requested is None or "version" not in test_case or exchange.ambiguous(VERSION):
        return None
    uuid = (operation("gradient").path_parameters(exchange.path) or {}).get("test_case_uuid", "")
    answered = test_case["version"]
    return requested, answered, confirms_the_version_name(answered, _latest(targets, uuid))


def _same_version(requested: int, answered: Any) -> bool:
    if answered != requested:
        raise Violation("the answer is another version than the one asked for", expected=requested,
                        received=answered, pointer="/evaluation_test_case/version")
    return True


# Why a version rule did not judge an answer it speaks about (said when it judged none).
_NAME_UNCONFIRMED = ("the answer did not confirm the query name evaluation_test_case_version (it was the latest "
                     "version, or the targets do not list the test case): body_is_the_version_asked_by_its_inferred_"
                     "name judged it (body_is_the_version_asked_by_the_spec_s_name in the live profile)")
_NAME_CONFIRMED = ("the answer confirmed the query name evaluation_test_case_version: body_is_the_requested_version "
                   "judged it")


@response_check("gradient", _VERSION)
def body_is_the_requested_version(context: CheckContext) -> bool | str | None:
    """A 200 to a request naming evaluation_test_case_version carries that version (when it carries one), judged
    when the answer confirms the name: it is a version the targets list, other than the latest."""
    exchange = context.exchange
    targets = context.targets
    asked = _version_asked(exchange, targets)
    if asked is None:
        return None
    if not asked[2]:
        return _NAME_UNCONFIRMED
    return _same_version(asked[0], asked[1])


def _unconfirmed_version(exchange: Exchange, targets: Targets) -> bool | str | None:
    asked = _version_asked(exchange, targets)
    if asked is None:
        return None
    if asked[2]:
        return _NAME_CONFIRMED
    return _same_version(asked[0], asked[1])


@response_check("gradient", _version_name(settled_live_by="body_is_the_version_asked_by_the_spec_s_name"))
def body_is_the_version_asked_by_its_inferred_name(context: CheckContext) -> bool | str | None:
    """A 200 to a request naming evaluation_test_case_version carries that version, where the answer does not
    confirm the name (it is the latest, or the targets do not list the test case): a warning by default."""
    exchange = context.exchange
    targets = context.targets
    return _unconfirmed_version(exchange, targets)


@response_check("gradient", _VERSION_NAME_LIVE)
def body_is_the_version_asked_by_the_spec_s_name(context: CheckContext) -> bool | str | None:
    """In the live profile, a 200 to a request naming evaluation_test_case_version carries that version, where the
    answer does not confirm the name (it is the latest, or the targets do not list the test case)."""
    exchange = context.exchange
    targets = context.targets
    return _unconfirmed_version(exchange, targets)


@response_check("gradient", page(
    on_digitalocean_page(7, "To retrive information about an existing evaluation test case, send a GET request to "
                            "/v2/gen-ai/evaluation_test_case/{test_case_uuid}."),
    on_digitalocean_page(11, "testCaseUuid string"),
    reading="The answer is about the test case the path names; its test_case_uuid, when sent, is that id (in any "
            "letter case).",
))
def body_is_the_requested_test_case(context: CheckContext) -> bool | None:
    """A 200's test_case_uuid (when it has one) is the id in the path."""
    exchange = context.exchange
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
def metric_range_is_ordered(context: CheckContext) -> bool | None:
    """Every metric's range_min is not above its range_max (when both are numbers)."""
    exchange = context.exchange
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
    unless_turned_away(exchange, "a test case")
    test_case = _test_case(exchange)
    if test_case is None:
        raise Violation(f"{what} did not answer 200 with an evaluation_test_case", expected=200,
                        received=f"{exchange.status} {exchange.excerpt()}", exchange=exchange)
    return test_case


def versions_at_the_edges(versions: tuple[int, ...]) -> list[int]:
    """Versions just beyond those a test case has: one below and one above each of them that it does not have
    (below the lowest, above the highest, either side of a gap)."""
    return sorted({v + step for v in versions for step in (-1, 1)} - set(versions))


@dataclass(frozen=True)
class _VersionAnswer:
    uuid: str
    asked: int
    listed: bool  # a version the targets say the test case has
    exchange: Exchange
    answered: Any  # the 200's version; None when there is no 200 evaluation_test_case


def _ask_every_version(s: Scenario) -> tuple[list[_VersionAnswer], bool]:
    """Every test case the targets list, asked for each version they name and those just beyond; and whether the
    answers confirm the query name (one was a listed version other than the latest)."""
    s.test_case()
    if not any(test_case.versions for test_case in s.targets.test_cases):
        raise Skip("the targets list no versions for the test cases")
    answers = []
    for test_case in s.targets.test_cases:
        for version in (*test_case.versions, *versions_at_the_edges(test_case.versions)):
            exchange = s.get_test_case(test_case.uuid, version)
            if version in test_case.versions:
                unless_turned_away(exchange, "a test case version")
            body = _test_case(exchange)
            answered = body.get("version", "(no version)") if body is not None else None
            answers.append(_VersionAnswer(test_case.uuid, version, version in test_case.versions, exchange, answered))
    latest = {t.uuid: t.latest for t in s.targets.test_cases}
    confirmed = any(a.listed and confirms_the_version_name(a.answered, latest[a.uuid]) for a in answers)
    return answers, confirmed


def _assert_each_version(answers: list[_VersionAnswer]) -> None:
    for a in answers:
        if a.listed and a.answered is None:
            raise Violation(f"version {a.asked} of {a.uuid} did not answer 200 with an evaluation_test_case",
                            expected=200, received=f"{a.exchange.status} {a.exchange.excerpt()}",
                            exchange=a.exchange)
        if a.answered is not None and a.answered != a.asked:
            what = "a version it has" if a.listed else "a version it does not have (just beyond those it has)"
            raise Violation(f"asking {a.uuid} for {what}, {a.asked}, gave another", expected=a.asked,
                            received=a.answered, exchange=a.exchange, pointer="/evaluation_test_case/version")


@scenario_check("gradient", _VERSION)
def each_version_is_that_version(s: Scenario) -> None:
    """Each version the targets list for each test case answers 200 with that version, and a version just beyond
    them (one below or above one it has) is never a 200 carrying another version. Judged once
    the answers confirm the name evaluation_test_case_version; skipped, with the reason, until then."""
    answers, confirmed = _ask_every_version(s)
    if not confirmed:
        raise Skip("no answer confirmed the query name evaluation_test_case_version (none was a version other than "
                   "the latest): version_asked_by_its_inferred_name_is_that_version judges the versions instead "
                   "(version_asked_by_the_spec_s_name_is_that_version in the live profile)")
    _assert_each_version(answers)


def _unconfirmed_versions(s: Scenario) -> None:
    answers, confirmed = _ask_every_version(s)
    if not confirmed:
        _assert_each_version(answers)


@scenario_check("gradient", _version_name(settled_live_by="version_asked_by_the_spec_s_name_is_that_version"))
def version_asked_by_its_inferred_name_is_that_version(s: Scenario) -> None:
    """Asked by evaluation_test_case_version for each version the targets list (and those just beyond), the answers
    are those versions, where no answer confirms the name: a warning by default. Once one does, the page rule
    each_version_is_that_version judges them."""
    _unconfirmed_versions(s)


@scenario_check("gradient", _VERSION_NAME_LIVE)
def version_asked_by_the_spec_s_name_is_that_version(s: Scenario) -> None:
    """In the live profile, asked by evaluation_test_case_version for each version the targets list (and those just
    beyond), the answers are those versions, where no answer confirms the name. Once one does, the page rule
    each_version_is_that_version judges them."""
    _unconfirmed_versions(s)


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
            raise Violation(f"{what} was not a 404", expected=404, received=f"{exchange.status} {exchange.excerpt()}",
                            exchange=exchange)
