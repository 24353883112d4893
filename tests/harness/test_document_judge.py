"""Every response the audit sees is judged against the document (schema, status, headers, content
type) with Schemathesis's own checks, each outcome counted for its rule at that rule's level."""

from __future__ import annotations

import dataclasses
import json

import pytest

from evalmock.contract.statuses import statuses
from evalmock.contract.targets import Targets
from evalmock.harness.checks.builtins import LIVE_SPEC
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.policy import FAILED, LIVE_PROFILE, Policy
from evalmock.harness.results.audit_results import Results
from evalmock.harness.run import document_judge
from evalmock.harness.run.document_judge import DocumentJudge
from evalmock.harness.run.judge import ResponseJudge
from evalmock.harness.secrets.redactor import Redactor

from .builders import PROJECT, error, gradient_error, hand_case, page

PAGES = Policy()


def judged(api: str, exchange: Exchange, policy: Policy = PAGES) -> Results:
    results = Results(policy, (api,))
    ResponseJudge(api, results, Redactor(), DocumentJudge(api, policy)).judge(exchange)
    return results


def test_a_later_page_breaking_the_schema_fails_with_the_pointer_and_value() -> None:
    later = page(
        [
            hand_case(),
            hand_case(
                id="case-2",
                expect={
                    "decisions": {
                        "verdict": "wrong",
                        "shouldCall": [{"tool": "t" * 300, "args": {}}],
                    }
                },
            ),
        ],
        cursor="opaque-cursor",
    )
    results = judged("test-set", later)
    [finding] = [f for f in results.failures if f.check.name == "response_schema_conformance"]
    assert finding.code == "ST108" and finding.check.level.value == "page"
    assert finding.examples[0].pointer == "/data/1/expect/decisions/shouldCall/0/tool"
    assert finding.examples[0].value is not None and finding.examples[0].value.startswith('"ttt')
    assert finding.shape == "GET /v1/agents/{agentId}/test-set/cases -> 200"


def test_a_conforming_page_passes_every_document_check() -> None:
    results = judged("test-set", page())
    assert not results.failures
    passed = {t.check.name for t in results.rows() if t.passed}
    assert {
        "status_code_conformance",
        "content_type_conformance",
        "response_schema_conformance",
        "response_headers_conformance",
        "not_a_server_error",
    } <= passed


def test_an_error_without_x_request_id_breaks_the_documents_header_rule() -> None:
    results = judged("test-set", error(400, "bad-input", header=None))
    assert {f.check.name for f in results.failures} == {"response_headers_conformance"}


def test_an_undocumented_status_where_the_page_names_the_answer_fails() -> None:
    # a request without a token: the page names 401
    results = judged("test-set", error(418, "teapot"))
    assert "status_code_conformance" in {f.check.name for f in results.failures}


def test_an_undocumented_status_the_pages_leave_open_is_noted_not_failed() -> None:
    # a caller without read: 403, while no page documents it
    status = next(s for s in (403, 409) if s not in statuses("test-set", live=True))
    forbidden = error(status, "forbidden")
    forbidden = Exchange(
        forbidden.method,
        forbidden.url,
        status,
        forbidden.headers,
        forbidden.body,
        {"authorization": "Bearer no-read-on-this-project"},
    )
    results = Results(PAGES, ("test-set",))
    judge = ResponseJudge("test-set", results, Redactor(), DocumentJudge("test-set", PAGES))
    judge.judge(forbidden)
    judge.judge(forbidden)
    assert not results.failures
    [note] = [note for note in results.remarks() if "not judged" in note]
    assert note.startswith(
        f"test-set: 2 answers of {status} to requests for which the pages name no status"
    )


def test_digitaloceans_error_bodies_are_not_judged_by_the_pages() -> None:
    problem = gradient_error(
        404,
        {"type": "about:blank", "title": "Not Found"},
        headers={},
        content_type="application/problem+json",
    )
    assert not judged("gradient", problem).failures


def test_digitaloceans_error_bodies_are_judged_against_its_spec_in_the_live_profile() -> None:
    problem = gradient_error(
        404,
        {"type": "about:blank", "title": "Not Found"},
        headers={},
        content_type="application/problem+json",
    )
    results = judged("gradient", problem, Policy(profile=LIVE_PROFILE))
    assert {f.check for f in results.failures} == {LIVE_SPEC}
    assert all(f.outcome == FAILED for f in results.failures)


def test_non_integer_ratelimit_headers_break_the_live_spec_only_in_the_live_profile() -> None:
    answer = gradient_error(404, headers={"ratelimit-limit": "lots"})
    assert not judged("gradient", answer).failures
    assert {f.check for f in judged("gradient", answer, Policy(profile=LIVE_PROFILE)).failures} == {
        LIVE_SPEC
    }


def test_a_request_of_another_path_is_not_the_documents_business() -> None:
    other = Exchange(
        "GET", "http://127.0.0.1:8080/v1/health", 404, {"content-type": "text/plain"}, b"nope"
    )
    assert DocumentJudge("test-set", Policy()).judge(other) is None


def test_uint64_fields_as_numbers_break_the_page_schema() -> None:
    from .builders import evaluation_answer, gradient_test_case

    bad = evaluation_answer(gradient_test_case(created_by_user_id=12345))
    results = judged("gradient", bad)
    [finding] = results.failures
    assert finding.check.name == "response_schema_conformance"
    assert finding.examples[0].pointer == "/evaluation_test_case/created_by_user_id"
    assert json.loads(finding.examples[0].value or "null") == 12345


def test_schemathesis_gets_the_parsed_body_only_when_it_would_parse_it_the_same() -> None:
    from schemathesis.core import NOT_SET

    from evalmock.harness.run.document_judge import to_schemathesis

    plain = page()
    assert to_schemathesis(plain)._deserialized is plain.json_or_none()
    # a BOM; an integer past 64 bits
    for body in (
        b'\xef\xbb\xbf{"data": []}',
        b'{"n": 18446744073709551616}',
    ):
        odd = Exchange(plain.method, plain.url, 200, plain.headers, body, plain.request_headers)
        assert odd.plain_json == (False, None)
        # Schemathesis parses these itself, as it always did
        assert to_schemathesis(odd)._deserialized is NOT_SET


def test_a_url_judged_again_is_judged_alike_and_the_cases_kept_are_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(document_judge, "CASES_KEPT", 2)
    judge = DocumentJudge("test-set", PAGES)
    # an id that is not a string breaks the schema; the same URL as page()'s
    bad = page([hand_case(id=7)])
    for _ in range(2):
        assert {o.check for o in judge.judge(bad) or () if o.failure} == {
            "response_schema_conformance"
        }
        assert not [o for o in judge.judge(page()) or () if o.failure]
    for number in range(5):
        other = page([hand_case()], projectId=str(number))
        judge.judge(other)
        [case] = [c for url, c in judge._cases.items() if url == other.url]
        assert case.query["projectId"] == [str(number)]
    assert len(judge._cases) <= 2


def test_a_body_that_passed_the_schema_is_not_validated_again_and_any_other_body_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from schemathesis.specs.openapi import schemas

    validated: list[bytes] = []
    validate = schemas.validate_documented_response

    def counted(schema: object, operation: object, response: object, case: object) -> object:
        validated.append(response.content)  # type: ignore[attr-defined]
        return validate(schema, operation, response, case)  # type: ignore[arg-type]

    monkeypatch.setattr(schemas, "validate_documented_response", counted)
    judge = DocumentJudge("test-set", PAGES)
    # the same URL; an id that is not a string breaks the schema
    good, bad = (
        page(),
        page([hand_case(id=7)]),
    )

    def schema_outcome(exchange: Exchange) -> str:
        [outcome] = [
            o for o in judge.judge(exchange) or () if o.check == "response_schema_conformance"
        ]
        return "passed" if outcome.failure is None else "failed"

    assert [schema_outcome(good), schema_outcome(good)] == ["passed", "passed"]
    assert len(validated) == 1
    # a failure is never remembered
    assert [schema_outcome(bad), schema_outcome(bad)] == [
        "failed",
        "failed",
    ]
    assert len(validated) == 3
    as_text = Exchange(
        good.method, good.url, 200, {**good.headers, "content-type": "text/plain"}, good.body
    )
    schema_outcome(as_text)
    assert len(validated) == 4  # the same bytes under another Content-Type are read again


def test_a_server_error_breaks_the_page_for_a_sealing_runtimes_cursor_not_for_one_sent_empty() -> (
    None
):
    """A 500 to a bad limit is the inferred rules' (not_a_server_error); the page names the answer
    to a cursor a sealing runtime is sent (a page, or 400 bad-input), and `cursor=` sent empty is no
    cursor it names."""
    sealed = Targets(sealed_cursors=True)

    def status_failures(query: str) -> list[str]:
        results = Results(PAGES, ("test-set",))
        judge = ResponseJudge(
            "test-set", results, Redactor(), DocumentJudge("test-set", PAGES), sealed
        )
        answer = error(500, "internal", query=f"projectId={PROJECT}&limit=0{query}")
        judge.judge(
            dataclasses.replace(answer, request_headers={"authorization": "Bearer demo-user"})
        )
        return [f.check.name for f in results.failures if f.check.name == "status_code_conformance"]

    assert status_failures("") == []
    assert status_failures("&cursor=") == []
    assert status_failures("&cursor=not-one-of-ours") == ["status_code_conformance"]
