"""Every response the audit sees, judged against the document by Schemathesis's own response checks.

Schemathesis judges the responses to the requests it generates; this judges any other exchange of an
API's operation (the scenario walks, and whatever else hands one in) with the same checks,
configuration and document view, through the loop `Case.validate_response` runs them in
(`run_checks`), whose context is built once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import requests
import schemathesis
from requests.structures import CaseInsensitiveDict
from schemathesis.checks import CHECKS, CheckContext, run_checks, run_checks_for

from evalmock.contract.operations import operation
from evalmock.harness.checks.attribution import builtin_check_names
from evalmock.harness.checks.body_memo import BodyMemo
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.policy import Policy
from evalmock.harness.run.schemathesis_schema import load_schema

# The built-in checks that judge a response on its own (the others compare it with the request's
# generation).
RESPONSE_ONLY = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
)
# Schemathesis's Case of a request is built from its URL alone, and clients ask the same URLs again
# and again; a Case costs a fifth of judging a page. Bounded: forgotten all at once when full.
CASES_KEPT = 1_024
# The one check that reads the body. What it says depends on the status, the Content-Type and the
# body alone (the operation's documented response for them), so a body it passed before passes
# again: it is not validated twice.
BODY_CHECK = "response_schema_conformance"
BODIES_PASSED = 2 * 2**20  # bytes of bodies remembered as passed


@dataclass(frozen=True)
class DocumentOutcome:
    """One built-in check on one exchange: passed (failure None) or failed with Schemathesis's
    Failure."""

    check: str
    failure: Any = None


class DocumentJudge:
    """Schemathesis's response-only checks for one API's operation under one policy, built once per
    audit."""

    def __init__(self, api: str, policy: Policy) -> None:
        op = operation(api)
        self.schema = load_schema(api, policy, base_url="http://judge.invalid")
        self.operation = self.schema[op.path][op.method]
        names = [name for name in RESPONSE_ONLY if name in builtin_check_names(api, policy)]
        self.checks = CHECKS.get_by_names(names)
        self._operation = op
        # What `Case.validate_response` builds on every call, built once: its context depends on the
        # document and the configuration only (a response-only check reads no request override, auth
        # or transport).
        self._context = CheckContext(
            override=None,
            auth=None,
            headers=None,
            config=self.schema.config.checks_config_for(operation=self.operation),
            transport_kwargs=None,
            response_checks=run_checks_for(self.schema).for_responses(),
        )
        self._cases: dict[
            str, schemathesis.Case
        ] = {}  # URL -> its Case (no check of a response changes one)
        self._without_body = [check for check in self.checks if check.__name__ != BODY_CHECK]
        self._passed: BodyMemo[bool] = BodyMemo(BODIES_PASSED)

    def judge(self, exchange: Exchange) -> list[DocumentOutcome] | None:
        """The outcome of each check, or None when the exchange is no request of this operation."""
        parameters = self._operation.path_parameters(exchange.path)
        if (
            parameters is None
            or exchange.method.upper() != self._operation.method
            or not self.checks
        ):
            return None
        case = self._cases.get(exchange.url)
        if case is None:
            if len(self._cases) >= CASES_KEPT:
                self._cases.clear()
            case = self._cases[exchange.url] = self.operation.Case(
                path_parameters=parameters, query=exchange.query_values
            )
        outcomes: list[DocumentOutcome] = []
        checks = self.checks
        read_as = (exchange.status, exchange.header("content-type"))
        if len(checks) != len(self._without_body) and self._passed.get(exchange.body, read_as):
            checks = self._without_body
            outcomes.append(DocumentOutcome(BODY_CHECK))

        def failed(name: str, collected: set[Any], failure: Any) -> None:
            collected.add(failure)
            outcomes.append(DocumentOutcome(name, failure))

        # Schemathesis's own loop over the checks, as `Case.validate_response` runs it (its failures
        # filtered alike), without rebuilding the context, the curl command and the report of a
        # failure each time.
        run_checks(
            case=case,
            response=to_schemathesis(exchange),
            ctx=self._context,
            checks=checks,
            on_failure=failed,
            on_success=lambda name, _: outcomes.append(DocumentOutcome(name)),
        )
        if checks is self.checks and _ran_and_passed(outcomes, BODY_CHECK):
            self._passed.put(exchange.body, True, read_as)
        return outcomes


def _ran_and_passed(outcomes: list[DocumentOutcome], name: str) -> bool:
    """Whether the check ran and passed (a check that skipped itself has no outcome; one that
    failed, a failure)."""
    found = [outcome for outcome in outcomes if outcome.check == name]
    return bool(found) and all(outcome.failure is None for outcome in found)


def to_schemathesis(exchange: Exchange) -> schemathesis.Response:
    """A Schemathesis response carrying an exchange, with its request as sent (filled in directly:
    `prepare()` would parse and re-encode the URL again, a good part of the cost of judging a
    page)."""
    request = requests.PreparedRequest()
    request.method, request.url = exchange.method.upper(), exchange.url
    request.headers = CaseInsensitiveDict(exchange.request_headers)
    headers = {name: [value] for name, value in exchange.headers.items()}
    response = schemathesis.Response(exchange.status, headers, exchange.body, request, 0.0, True)
    if exchange.media_type == "application/json" and response.encoding in (None, "utf-8"):
        # The body is already parsed (to the value `json.loads` gives): Schemathesis would parse it
        # again with the standard parser. Its response keeps what it parsed in `_deserialized`,
        # which it reads before parsing.
        is_json, value = exchange.plain_json
        if is_json:
            response._deserialized = value
    return response
