"""The version's near misses (DigitalOcean): a version that is no whole number gets 400, an empty
one gets 400 or is read as left out (inferred); a version below 1 is open."""

from __future__ import annotations

import json

import httpx
import pytest

from evalmock.contract.targets import Targets, TestCaseTarget
from evalmock.harness.checks.digitalocean_versions import versions_at_the_edges
from evalmock.harness.checks.policy import PASSED, WARNED

from .builders import TEST_CASE, gradient_test_case
from .test_scenario_skips import outcome

TARGETS = Targets(test_cases=(TestCaseTarget(TEST_CASE, (1, 2, 3)),))
LATEST = 3


def service(
    *, malformed: int | None, empty: int | None, plain: int = LATEST
) -> httpx.MockTransport:
    """Answers versions 1..3 as asked and no version with `plain`; a malformed or an empty version
    with a 200 carrying the given version, or 400 when None."""

    def handle(request: httpx.Request) -> httpx.Response:
        asked = request.url.params.get("evaluation_test_case_version")
        if asked is None:
            version: int | None = plain
        elif asked == "":
            version = empty
        elif asked.isdigit():
            version = int(asked)
        else:
            version = malformed
        if version is None:
            return httpx.Response(400, json={"id": "bad_request", "message": "no"})
        body = {"evaluation_test_case": gradient_test_case(version=version)}
        return httpx.Response(
            200, content=json.dumps(body).encode(), headers={"content-type": "application/json"}
        )

    return handle  # type: ignore[return-value]


def test_a_version_that_is_no_integer_refused_with_400_passes() -> None:
    status, _ = outcome(
        "version_that_is_no_integer_is_400", TARGETS, handler=service(malformed=None, empty=None)
    )
    assert status == PASSED


def test_a_version_that_is_no_integer_ignored_is_a_warning() -> None:
    status, message = outcome(
        "version_that_is_no_integer_is_400", TARGETS, handler=service(malformed=LATEST, empty=None)
    )
    assert status == WARNED
    assert "a word ('x')" in message and f"200 with version {LATEST}" in message


@pytest.mark.parametrize("empty", [None, LATEST], ids=["refused", "read-as-left-out"])
def test_an_empty_version_refused_or_read_as_left_out_passes(empty: int | None) -> None:
    status, _ = outcome(
        "empty_version_is_400_or_left_out", TARGETS, handler=service(malformed=None, empty=empty)
    )
    assert status == PASSED


def test_an_empty_version_answered_with_another_version_than_none_is_a_warning() -> None:
    status, message = outcome(
        "empty_version_is_400_or_left_out", TARGETS, handler=service(malformed=None, empty=1)
    )
    assert status == WARNED and "another version than a request without one gets" in message


def test_no_version_below_1_is_asked_for_at_the_edges() -> None:
    # open: to protobuf, 0 is the unset value; the page names no such version
    assert versions_at_the_edges((1, 2, 3)) == [4]
    assert versions_at_the_edges((2, 5)) == [1, 3, 4, 6]
