"""Judging one exchange: every per-response check of its API and, unless Schemathesis already did,
the document's own response checks; each outcome recorded at its rule's level (scenarios,
Schemathesis and recorded traffic)."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from evalmock.contract.operations import operation
from evalmock.contract.schemas import value_at
from evalmock.contract.targets import Targets
from evalmock.harness.checks.attribution import attribute
from evalmock.harness.checks.context import CheckContext
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.gateway_errors import GATEWAY_ERROR_RULE
from evalmock.harness.checks.outcomes import Violation, not_read
from evalmock.harness.checks.registry import Check, response_checks
from evalmock.harness.checks.schema_parts import schema_part_source
from evalmock.harness.excerpts import as_json, quoted
from evalmock.harness.results.audit_results import COUNT, counted_word
from evalmock.harness.results.findings import Example, Gap, RequestRecord, request_shape
from evalmock.harness.results.ledger import Recorder
from evalmock.harness.run.document_judge import BODY_CHECK, DocumentJudge
from evalmock.harness.secrets.redactor import Redactor

# The rules of an answer's status, which do not judge a throttled answer: throttling is the
# service's, not a rule's failure (docs/fairness.md), and its request is sent again, whose answer
# they judge.
STATUS_RULES = frozenset({"status_code_conformance", "not_a_server_error"})
# How the example of a rule broken by a throttled answer starts its last line.
MET_BY_CHANCE = "met by chance"


@dataclass(frozen=True)
class Breach:
    """A rule one exchange broke: the check, what it counts as under the policy (failed or warned),
    the example."""

    check: Check
    outcome: str
    example: Example


class ResponseJudge:
    """Judges the exchanges of one API into `results`; `document` adds the document's checks (None:
    not those); `targets` is what is known to exist (a check that needs it does not apply without
    it)."""

    def __init__(
        self,
        api: str,
        results: Recorder,
        redactor: Redactor,
        document: DocumentJudge | None = None,
        targets: Targets | None = None,
    ) -> None:
        self.api = api
        # nothing known: each check says what it can
        self.targets = targets if targets is not None else Targets()
        self.results = results
        self.redactor = redactor
        self.document = document
        self.checks = [c for c in response_checks(api) if results.policy.runs(c.source)]
        self._operation_path = operation(api).base_path + operation(api).path

    def judge(
        self, exchange: Exchange, *, learned: bool = False, by_chance: bool = False
    ) -> list[Breach]:
        """Every check that applies to the exchange; returns the broken ones (each recorded into the
        results). `learned`: the redactor already knows every secret the exchange carries (the
        caller taught it); `by_chance`: see judge_met_by_chance."""
        if not learned:
            # Before any check can quote the exchange: a secret it carries may be echoed in what a
            # check says.
            self.redactor.learn_exchange(exchange.url, exchange.request_headers, exchange.headers)
        if exchange.unread is not None:  # what it says is unknown: no rule judges it
            what = f"{exchange.method} {quoted(self.redactor.text(exchange.url))}"
            self.results.gap(Gap(self.api, not_read(what, exchange.status, exchange.unread)))
            return []
        broken: list[Breach] = []
        context = CheckContext(exchange, self.targets, self.results.policy)
        for check in self.checks:
            try:
                applied = check.func(context)  # type: ignore[misc]
            except Violation as violation:
                example = violation_example(
                    violation, self.record(exchange), self.redactor, exchange
                )
                self._breach(broken, check, exchange, self._said(example, exchange, by_chance))
            else:
                if isinstance(applied, str):
                    self.results.not_judged(check, applied)
                elif applied:
                    self.results.passed(check)
        if self.document is not None:
            self._judge_document(exchange, broken, by_chance)
        return broken

    def judge_met_by_chance(self, exchange: Exchange) -> list[Breach]:
        """A throttled answer the audit met by chance (a 429, or a 503 that says when to try again),
        before it is waited out: judged by every rule of its answer but those of its status
        (STATUS_RULES), each breach saying it was met by chance."""
        return self.judge(exchange, by_chance=True)

    def judge_cleared_gateway_error(self, exchange: Exchange) -> list[Breach]:
        """A 502 or 504 that the same request, asked again, did not get (run/throttle.py): judged
        by the gateway error rule alone, a gateway's answer, not the API's."""
        self.redactor.learn_exchange(exchange.url, exchange.request_headers, exchange.headers)
        broken: list[Breach] = []
        context = CheckContext(exchange, self.targets, self.results.policy, True)
        for check in self.checks:
            if check.name != GATEWAY_ERROR_RULE:
                continue
            try:
                check.func(context)  # type: ignore[misc]
            except Violation as violation:
                example = violation_example(
                    violation, self.record(exchange), self.redactor, exchange
                )
                self._breach(broken, check, exchange, example)
        return broken

    def _judge_document(self, exchange: Exchange, broken: list[Breach], by_chance: bool) -> None:
        assert self.document is not None
        for outcome in self.document.judge(exchange) or ():
            if by_chance and outcome.check in STATUS_RULES:
                continue
            check = attribute(
                self.api,
                outcome.check,
                status=exchange.status,
                query=exchange.query_values,
                method=exchange.method,
                headers=exchange.request_headers,
                targets=self.targets,
            )
            if check is None:
                if outcome.check == "status_code_conformance" and outcome.failure is not None:
                    self._open_status(exchange.status)
                continue
            if outcome.failure is None:
                self.results.passed(check)
            else:
                example = failure_example(
                    outcome.failure,
                    self.record(exchange),
                    self.redactor,
                    api=self.api,
                    check=outcome.check,
                )
                example = self._said(example, exchange, by_chance)
                self._breach(
                    broken, check, exchange, example, getattr(outcome.failure, "code", None)
                )

    def _said(self, example: Example, exchange: Exchange, by_chance: bool) -> Example:
        """The example as found; one of an answer met by chance says so, with what it asked."""
        if not by_chance:
            return example
        retry_after = exchange.header("retry-after")
        asked = "no Retry-After" if retry_after is None else f"Retry-After: {retry_after[:40]!r}"
        url = quoted(self.redactor.text(exchange.url))
        note = self.redactor.text(
            f"{MET_BY_CHANCE}: a throttled answer ({exchange.status}, {asked}) to "
            f"{exchange.method} {url}, judged like any other before the audit tried again"
        )
        return dataclasses.replace(example, message=f"{example.message}\n{note}")

    def _open_status(self, status: int) -> None:
        """Count, per status, the answers not judged: the pages name no other status for their
        requests."""
        self.results.count_note(
            f"{self.api}: {COUNT} {counted_word('answer')} of {status} to requests for which the "
            f"pages name no status {counted_word('was', 'were')} not judged "
            "by status_code_conformance (docs/fairness.md: statuses the pages leave open)"
        )

    def breach(
        self, check: Check, exchange: Exchange, example: Example, code: str | None = None
    ) -> str | None:
        shape = request_shape(exchange.method, self._operation_path, exchange.status)
        return self.results.breach(check, example, shape=shape, code=code)

    def _breach(
        self,
        broken: list[Breach],
        check: Check,
        exchange: Exchange,
        example: Example,
        code: str | None = None,
    ) -> None:
        outcome = self.breach(check, exchange, example, code)
        if outcome is not None:
            broken.append(Breach(check, outcome, example))

    def record(self, exchange: Exchange | None) -> RequestRecord | None:
        """The request of a finding. Its body's secret-named fields are learned here, on the way to
        a finding only (reading every body for them would cost each judgement): the finding may
        quote the body."""
        if exchange is not None:
            self.redactor.learn_json(exchange.json_or_none())
        return request_record(exchange, self.redactor)


def request_record(exchange: Exchange | None, redactor: Redactor) -> RequestRecord | None:
    if exchange is None:
        return None
    return RequestRecord(
        method=exchange.method,
        url=redactor.text(exchange.url),
        headers=redactor.headers(dict(exchange.request_headers)),
        status=exchange.status,
        curl=redactor.curl(exchange.method, exchange.url, exchange.request_headers),
    )


def violation_example(
    violation: Violation,
    request: RequestRecord | None,
    redactor: Redactor,
    shown: Exchange | None = None,
) -> Example:
    """An Example of a violation; the value shown at its pointer is what the body of `shown` (the
    exchange the example names) holds there, and what the violation received where the body holds
    nothing there (a member that is missing): a count received ("4 cases") is not the value at
    /data/3."""
    value = None
    if violation.pointer is not None:
        found = violation.value
        if shown is not None:
            with contextlib.suppress(KeyError):
                found = value_at(shown.json_or_none(), violation.pointer)
        value = redactor.quoting(as_json(redactor.json(found)))
    return Example(redactor.quoting(violation.render()), request, violation.pointer, value)


def failure_example(
    failure: Any,
    request: RequestRecord | None,
    redactor: Redactor,
    *,
    api: str = "",
    check: str = "",
) -> Example:
    """An Example from a Schemathesis Failure; a schema failure points at the offending value and,
    for `check` response_schema_conformance on `api`, quotes the part of the page it broke."""
    title = str(getattr(failure, "title", "") or type(failure).__name__)
    # Schemathesis's message goes on to print the whole schema; its first paragraph says what is
    # wrong.
    message = str(getattr(failure, "message", "") or "").strip().split("\n\n", 1)[0]
    pointer = value = None
    path = getattr(failure, "instance_path", None)
    if isinstance(path, Iterable) and not isinstance(path, str):
        pointer = "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)
        value = redactor.quoting(as_json(redactor.json(getattr(failure, "instance", None))))
    source = None
    schema_path = getattr(failure, "schema_path", None)
    if check == BODY_CHECK and isinstance(schema_path, Iterable) and isinstance(path, Iterable):
        status = request.status if request is not None else None
        source = schema_part_source(api, list(schema_path), list(path), status)
    return Example(
        redactor.quoting(f"{title}\n{message}".strip()), request, pointer, value, source=source
    )
