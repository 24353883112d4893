"""The versions of DigitalOcean test cases as the version rules read them: the test case a 200
carries, the version asked for and the one answered, and whether an answer confirms the query
name."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalmock.contract.operations import operation
from evalmock.contract.targets import Targets
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.outcomes import Skip, Violation
from evalmock.harness.checks.scenario import Scenario, unless_turned_away

VERSION = "evaluation_test_case_version"
# The page names no version below 1, and DigitalOcean's service is generated from protobuf, where 0
# is the unset value: a 200 with the latest is as plausible an answer to one as a 404. Open, never
# judged.
FIRST_VERSION = 1


def evaluation_test_case(exchange: Exchange) -> dict[str, Any] | None:
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
    test_case = next(
        (t for t in (targets.test_cases if targets else ()) if t.uuid.lower() == uuid.lower()), None
    )
    return test_case.latest if test_case is not None else None


def confirms_the_version_name(answered: object, latest: int | None) -> bool:
    """Whether an answer to a request naming evaluation_test_case_version shows the service reads
    it: a version the targets list for the test case, other than its latest (what a service that
    ignores the name answers)."""
    return isinstance(answered, int) and latest is not None and answered != latest


def version_asked(exchange: Exchange, targets: Targets) -> tuple[int, Any, bool] | None:
    """The version asked for, the one answered and whether the answer confirms the wire name; None
    when the exchange is no 200 answering a version asked for once."""
    test_case = evaluation_test_case(exchange)
    requested = _whole_number(exchange.query.get(VERSION, ""))
    if (
        test_case is None
        or requested is None
        or requested < FIRST_VERSION  # open: see FIRST_VERSION
        or "version" not in test_case
        or exchange.ambiguous(VERSION)
    ):
        return None
    uuid = (operation("gradient").path_parameters(exchange.path) or {}).get("test_case_uuid", "")
    answered = test_case["version"]
    return requested, answered, confirms_the_version_name(answered, _latest(targets, uuid))


def same_version(requested: int, answered: Any) -> bool:
    if answered != requested:
        raise Violation(
            "the answer is another version than the one asked for",
            expected=requested,
            received=answered,
            pointer="/evaluation_test_case/version",
        )
    return True


def versions_at_the_edges(versions: tuple[int, ...]) -> list[int]:
    """Versions just beyond those a test case has: one below and one above each of them that it does
    not have (below the lowest, above the highest, either side of a gap), none below FIRST_VERSION
    (open)."""
    beyond = {v + step for v in versions for step in (-1, 1)} - set(versions)
    return sorted(v for v in beyond if v >= FIRST_VERSION)


@dataclass(frozen=True)
class VersionAnswer:
    uuid: str
    asked: int
    listed: bool  # a version the targets say the test case has
    exchange: Exchange
    answered: Any  # the 200's version; None when there is no 200 evaluation_test_case


def ask_every_version(s: Scenario) -> tuple[list[VersionAnswer], bool]:
    """Every test case the targets list, asked for each version they name and those just beyond; and
    whether the answers confirm the query name (one was a listed version other than the latest)."""
    s.test_case()
    if not any(test_case.versions for test_case in s.targets.test_cases):
        raise Skip("the targets list no versions for the test cases")
    answers = []
    for test_case in s.targets.test_cases:
        for version in (*test_case.versions, *versions_at_the_edges(test_case.versions)):
            exchange = s.get_test_case(test_case.uuid, version)
            if version in test_case.versions:
                unless_turned_away(exchange, "a test case version")
            body = evaluation_test_case(exchange)
            answered = body.get("version", "(no version)") if body is not None else None
            answers.append(
                VersionAnswer(
                    test_case.uuid, version, version in test_case.versions, exchange, answered
                )
            )
    latest = {t.uuid: t.latest for t in s.targets.test_cases}
    confirmed = any(
        a.listed and confirms_the_version_name(a.answered, latest[a.uuid]) for a in answers
    )
    return answers, confirmed


def assert_each_version(answers: list[VersionAnswer]) -> None:
    for a in answers:
        if a.listed and a.answered is None:
            raise Violation(
                f"version {a.asked} of {a.uuid} did not answer 200 with an evaluation_test_case",
                expected=200,
                received=f"{a.exchange.status} {a.exchange.excerpt()}",
                exchange=a.exchange,
            )
        if a.answered is not None and a.answered != a.asked:
            what = (
                "a version it has"
                if a.listed
                else "a version it does not have (just beyond those it has)"
            )
            raise Violation(
                f"asking {a.uuid} for {what}, {a.asked}, gave another",
                expected=a.asked,
                received=a.answered,
                exchange=a.exchange,
                pointer="/evaluation_test_case/version",
            )
