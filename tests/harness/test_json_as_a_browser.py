"""JSON read as a browser's `JSON.parse` reads it, by every reader of the audit (its checks,
Schemathesis's): `NaN` and `Infinity` are not JSON, so an answer holding them is a finding; an
integer of 5,000 digits is JSON, judged by its schema, never "not JSON"."""

from __future__ import annotations

from typing import Any

import pytest

from evalmock.harness.checks.exchange import read_json
from evalmock.harness.checks.policy import Policy
from evalmock.harness.results.audit_results import Results
from evalmock.harness.results.verdict import Verdict
from evalmock.harness.run.engine import run_audit
from evalmock.harness.run.options import Audit

from .conftest import MutableServer
from .mutants import Mutation

LONG_INTEGER = b"1" + b"2" * 4999


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity"])
def test_nan_and_infinity_are_not_json(literal: bytes) -> None:
    assert read_json(b'{"a": ' + literal + b"}")[:2] == (False, None)
    assert read_json(b'{"a": "' + literal + b'"}')[0]  # as a string, of course


def test_an_integer_of_5000_digits_or_a_number_past_a_double_is_json() -> None:
    assert read_json(b'{"a": ' + LONG_INTEGER + b"}")[0]
    assert read_json(b"[1e400, -1e400]")[1] == [float("inf"), float("-inf")]  # as a browser


def _audit(server: MutableServer, literal: bytes, *, fuzz: bool) -> Results:
    """The pages' answers with one more member, `"extra": literal`; a scenario check's audit, or
    Schemathesis's alone."""

    def extra(scope: dict[str, Any], status: int, headers: Any, body: bytes) -> Any:
        if status == 200 and body.startswith(b"{"):
            body = b'{"extra": ' + literal + b", " + body[1:]
        return status, headers, body

    server.switch.mutation = Mutation("extra", "one more member", "", (), response=extra)
    try:
        return run_audit(
            Audit(
                base_url=server.base_url,
                targets=server.targets,
                apis=("test-set",),
                token=server.targets.token,
                fuzz=fuzz,
                max_examples=2,
                phases=("examples",),
                only=frozenset() if fuzz else frozenset({"limit_fills_a_first_page"}),
                policy=Policy(),
            )
        )
    finally:
        server.switch.mutation = None


def _said(results: Results) -> str:
    return "\n".join(
        f"{f.check.name}: {example.message}" for f in results.findings for example in f.examples
    )


@pytest.mark.parametrize("fuzz", [False, True], ids=["scenario", "schemathesis"])
def test_an_answer_holding_nan_is_a_finding(mutable_server: MutableServer, fuzz: bool) -> None:
    results = _audit(mutable_server, b"NaN", fuzz=fuzz)
    assert results.verdict is Verdict.VIOLATIONS
    # Schemathesis's own check reads it as the audit's checks do
    said = "JSON deserialization error" if fuzz else "with a body that is not JSON"
    assert said in _said(results)


@pytest.mark.parametrize("fuzz", [False, True], ids=["scenario", "schemathesis"])
def test_an_answer_holding_an_integer_of_5000_digits_is_json(
    mutable_server: MutableServer, fuzz: bool
) -> None:
    results = _audit(mutable_server, LONG_INTEGER, fuzz=fuzz)
    assert "deserialization" not in _said(results) and "not JSON" not in _said(results)
    assert results.verdict is Verdict.CONFORMS, _said(results)
