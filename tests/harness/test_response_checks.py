"""Every per-response check passes a conforming response and fails a violating one, with expected vs
received and a pointer to the offending value; and leaves alone what the pages leave open."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from evalmock.contract.filters import Filter
from evalmock.contract.targets import Targets, TestCaseTarget
from evalmock.harness.checks import CHECKS, Check, find_check, response_checks
from evalmock.harness.checks.context import CheckContext
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.filters import UNRULED
from evalmock.harness.checks.outcomes import Violation, json_body
from evalmock.harness.checks.policy import Policy
from evalmock.harness.excerpts import as_json
from evalmock.harness.run.judge import violation_example
from evalmock.harness.secrets.redactor import Redactor
from revised_documents import run_under, with_a_run_id_filter
from shared import LIMIT

from .builders import (
    LIST_PATH,
    PROJECT,
    TEST_CASE,
    correction_case,
    error,
    evaluation_answer,
    gradient_test_case,
    hand_case,
    page,
    retired_case,
)

CURSOR_QUERY = f"projectId={PROJECT}&cursor=not-one-of-ours"
TARGETS = Targets(test_cases=(TestCaseTarget(TEST_CASE, (1, 2, 3)),), sealed_cursors=True)


def run(name: str, exchange: Exchange) -> Any:
    """A registered response check on one exchange (with the targets when it needs them)."""
    check = next(c for c in CHECKS if c.name == name and c.kind == "response")
    return check.func(CheckContext(exchange, TARGETS, Policy()))  # type: ignore[misc]


def items(*ranks: Any) -> dict[str, Any]:
    return {
        "items": [
            {"key": f"k{i}", "rank": rank, "verdict": "right"} for i, rank in enumerate(ranks)
        ]
    }


# check, a conforming response, a violating response, what is wrong with it, the pointer of the
# offending value
EXAMPLES: list[tuple[str, Exchange, Exchange, str, str | None]] = [
    # error answers
    (
        "request_id_header_is_the_envelope_s",
        error(400, "bad-input"),
        error(400, "bad-input", request_id="rid-1", header="rid-2"),
        "X-Request-Id differs",
        None,
    ),
    (
        "error_code_is_the_page_s",
        error(404, "agent-not-found"),
        error(404, "not-found"),
        "404 not-found",
        "/error/code",
    ),
    (
        "error_code_is_the_page_s",
        error(400, "bad-input", query=CURSOR_QUERY),
        error(400, "bad_request", query=CURSOR_QUERY),
        "400 bad_request for a refused cursor",
        "/error/code",
    ),
    (
        "bad_input_is_every_400_s_code",
        error(400, "bad-input", query="projectId=nope"),
        error(400, "bad_request", query="projectId=nope"),
        "400 bad_request for a malformed projectId",
        "/error/code",
    ),
    (
        "error_code_is_the_page_s",
        error(503, "database-busy", headers={"retry-after": "2"}),
        error(503, "unavailable", headers={"retry-after": "2"}),
        "503 unavailable",
        "/error/code",
    ),
    # cases
    (
        "hand_case_id_starts_with_case",
        page(),
        page([hand_case(id="hand-7f3a9c21")]),
        "hand- id",
        "/data/0/id",
    ),
    (
        "updated_at_is_added_at_until_retired",
        page([correction_case(), retired_case()]),
        page([hand_case(updatedAt="2026-11-21T00:00:00Z")]),
        "updated active case",
        "/data/0/updatedAt",
    ),
    (
        "retirement_is_consistent",
        page([retired_case()], include="retired"),
        page([retired_case(updatedAt="2026-10-29T00:00:00Z")], include="retired"),
        "updatedAt before retirement",
        "/data/0/updatedAt",
    ),
    (
        "retirement_is_consistent",
        page([retired_case()], include="retired"),
        page([retired_case(addedAt="2026-10-31T00:00:00Z")], include="retired"),
        "retired before added",
        "/data/0/retired/at",
    ),
    (
        "hand_cases_are_expert",
        page([hand_case(), correction_case(expert=True)]),
        page(
            [correction_case(expert=True), {k: v for k, v in hand_case().items() if k != "expert"}]
        ),
        "expert missing on a hand case",
        "/data/1/expert",
    ),
    (
        "hand_cases_are_expert",
        page([hand_case()]),
        page([hand_case(expert=False)]),
        "expert false",
        "/data/0/expert",
    ),
    ("expect_has_a_part", page(), page([hand_case(expect={})]), "empty expect", "/data/0/expect"),
    (
        "item_ranks_are_distinct_positions",
        page([correction_case(expect=items(1, 3, 5))]),
        page([correction_case(expect=items(0, 2, 0))]),
        "a repeated rank",
        "/data/0/expect/items/2/rank",
    ),
    (
        "item_ranks_are_distinct_positions",
        page(),
        page([correction_case(expect=items(0, -1))]),
        "a negative rank",
        "/data/0/expect/items/1/rank",
    ),
    (
        "should_call_args_fit",
        page(
            [
                hand_case(
                    expect={
                        "decisions": {
                            "verdict": "wrong",
                            "shouldCall": [{"tool": "t", "args": {"q": "x" * 3990}}],
                        }
                    }
                )
            ]
        ),
        page(
            [
                hand_case(
                    expect={
                        "decisions": {
                            "verdict": "wrong",
                            "shouldCall": [{"tool": "t", "args": {"q": "x" * 3995}}],
                        }
                    }
                )
            ]
        ),
        "4001 characters of args",
        "/data/0/expect/decisions/shouldCall/0/args",
    ),
    (
        "wrong_answer_says_what_to_do",
        page(),
        page([hand_case(expect={"answer": {"verdict": "wrong"}})]),
        "a wrong answer with nothing to say",
        "/data/0/expect/answer",
    ),
    (
        "wrong_decisions_name_tools",
        page(),
        page([hand_case(expect={"decisions": {"verdict": "wrong"}})]),
        "wrong decisions naming no tool",
        "/data/0/expect/decisions",
    ),
    # pagination
    (
        "has_more_page_has_a_next_cursor",
        page(has_more=True, next_cursor="abc"),
        page(has_more=True),
        "hasMore without nextCursor",
        "/nextCursor",
    ),
    (
        "last_page_has_no_next_cursor",
        page(has_more=False),
        page(has_more=False, next_cursor="abc"),
        "nextCursor on the last page",
        "/nextCursor",
    ),
    ("page_holds_at_most_limit", page(limit=2), page(limit=1), "2 cases for limit=1", "/data/1"),
    (
        "page_holds_at_most_limit",
        page([hand_case()] * LIMIT["default"]),
        page([hand_case()] * (LIMIT["default"] + 1)),
        "one case more than the default limit",
        f"/data/{LIMIT['default']}",
    ),
    (
        "page_is_newest_first",
        page([hand_case(), correction_case()]),
        page([correction_case(), hand_case()]),
        "oldest first",
        "/data/1/addedAt",
    ),
    # filters
    (
        "cases_belong_to_the_project",
        page(projectId=PROJECT.upper()),
        page([hand_case(projectId="00000000-0000-4000-8000-000000000000")]),
        "another project's case",
        "/data/0/projectId",
    ),
    (
        "cases_have_the_requested_kinds",
        page([hand_case()], kind="hand"),
        page([hand_case(), correction_case()], kind="hand"),
        "a correction for kind=hand",
        "/data/1/kind",
    ),
    (
        "retired_cases_only_with_include_retired",
        page([hand_case(), correction_case()]),
        page([hand_case(), retired_case()]),
        "retired case without include",
        "/data/1/retired",
    ),
    # DigitalOcean
    (
        "body_is_the_requested_version",
        evaluation_answer(gradient_test_case(version=2), version=2),
        evaluation_answer(gradient_test_case(version=2), version=3),
        "version 2 (not the latest, so the name is read) instead of 3",
        "/evaluation_test_case/version",
    ),
    (
        "body_is_the_version_asked_by_its_inferred_name",
        evaluation_answer(gradient_test_case(version=3), version=3),
        evaluation_answer(gradient_test_case(version=3), version=2),
        "the latest instead of version 2",
        "/evaluation_test_case/version",
    ),
    (
        "body_is_the_version_asked_by_the_spec_s_name",
        evaluation_answer(gradient_test_case(version=3), version=3),
        evaluation_answer(gradient_test_case(version=3), version=2),
        "the latest instead of version 2 (live profile)",
        "/evaluation_test_case/version",
    ),
    (
        "body_is_the_requested_test_case",
        evaluation_answer(uuid="123E4567-E89B-12D3-A456-426614174000"),
        evaluation_answer(
            gradient_test_case(test_case_uuid="00000000-0000-4000-8000-000000000000")
        ),
        "another test case",
        "/evaluation_test_case/test_case_uuid",
    ),
    (
        "metric_range_is_ordered",
        evaluation_answer(gradient_test_case(metrics=[{"range_min": 0, "range_max": 1}])),
        evaluation_answer(gradient_test_case(metrics=[{"range_min": 2, "range_max": 1}])),
        "min above max",
        "/evaluation_test_case/metrics/0/range_min",
    ),
    (
        "metric_enum_values_are_their_own_field_s",
        evaluation_answer(
            gradient_test_case(
                metrics=[
                    {"category": "METRIC_CATEGORY_CORRECTNESS"},
                    {
                        "category": "METRIC_CATEGORY_CONVERSATIONAL"
                    },  # a newer value: not this rule's
                ]
            )
        ),
        evaluation_answer(gradient_test_case(metrics=[{"category": "METRIC_TYPE_RAG_AND_TOOL"}])),
        "a value of another enum",
        "/evaluation_test_case/metrics/0/category",
    ),
    (
        "metric_enum_values_are_listed",
        evaluation_answer(
            gradient_test_case(metrics=[{"metric_value_type": "METRIC_VALUE_TYPE_NUMBER"}])
        ),
        evaluation_answer(
            gradient_test_case(metrics=[{}, {"category": "METRIC_CATEGORY_CONVERSATIONAL"}])
        ),
        "a value no enum lists",
        "/evaluation_test_case/metrics/1/category",
    ),
]


def asked_held_and_other(declared: Filter) -> tuple[str, str, str] | None:
    """A value of the filter to ask for, the case field's value matching it and one that does not;
    None for a filter asked only to widen the list (`present-only-with`)."""
    if declared.present_only_with is not None:
        return None
    if declared.members is not None:
        return declared.members[-1], declared.members[-1], declared.members[0]
    return f"{declared.name}-asked", f"{declared.name}-asked", f"{declared.name}-other"


def other_filters_examples() -> list[tuple[str, Exchange, Exchange, str, str | None]]:
    """The generic filter check's examples, one pair for each filter the document declares without
    a rule of its own: the check registers only while there is one (a revision of the page may
    declare one: tests/revised_documents.py)."""
    examples = []
    for declared in UNRULED:
        values = asked_held_and_other(declared)
        if values is not None:
            asked, held, other = values
            query = {declared.name: asked}
            matching = {**hand_case(), declared.field: held}
            not_matching = {**hand_case(id="case-other"), declared.field: other}
            examples.append(
                (
                    "cases_match_the_other_filters",
                    page([matching], **query),
                    page([matching, not_matching], **query),
                    f"a case of another {declared.name}",
                    f"/data/1/{declared.field}",
                )
            )
    return examples


EXAMPLES += other_filters_examples()
IDS = [f"{name}: {what}" for name, _, _, what, _ in EXAMPLES]


@pytest.mark.parametrize(("name", "good", "bad", "what", "pointer"), EXAMPLES, ids=IDS)
def test_check_passes_the_conforming_response(
    name: str, good: Exchange, bad: Exchange, what: str, pointer: str | None
) -> None:
    assert run(name, good) is True


@pytest.mark.parametrize(("name", "good", "bad", "what", "pointer"), EXAMPLES, ids=IDS)
def test_check_fails_the_violating_response_pointing_at_the_value(
    name: str, good: Exchange, bad: Exchange, what: str, pointer: str | None
) -> None:
    with pytest.raises(Violation) as caught:
        run(name, bad)
    assert "expected:" in str(caught.value) and "received:" in str(caught.value)
    assert caught.value.pointer == pointer
    # what a report shows "at" the pointer is what the body holds there, when it holds one
    if pointer is not None:
        shown = violation_example(caught.value, None, Redactor(), bad).value
        held = at_pointer(json_body(bad), pointer)
        # as_json: as the report writes it
        assert shown == as_json(caught.value.value if held is MISSING else held)


MISSING = object()


def at_pointer(document: Any, pointer: str) -> Any:
    """The value an RFC 6901 JSON pointer finds in a document, or MISSING (a member the rule
    misses)."""
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        try:
            document = document[int(token)] if isinstance(document, list) else document[token]
        except (KeyError, IndexError):
            return MISSING
    return document


@pytest.mark.parametrize("asked", [0, -1])
@pytest.mark.parametrize(
    "name",
    [
        "body_is_the_requested_version",
        "body_is_the_version_asked_by_its_inferred_name",
        "body_is_the_version_asked_by_the_spec_s_name",
    ],
)
def test_a_version_below_1_answered_with_the_latest_is_open(name: str, asked: int) -> None:
    # the page names no such version; to protobuf, 0 is the unset value
    assert run(name, evaluation_answer(gradient_test_case(version=3), version=asked)) is None


def test_an_unlisted_metric_value_is_judged_by_the_inferred_rule_alone() -> None:
    newer = evaluation_answer(
        gradient_test_case(metrics=[{"category": "METRIC_CATEGORY_CONVERSATIONAL"}])
    )
    assert run("metric_enum_values_are_their_own_field_s", newer) is True
    assert find_check("metric_enum_values_are_listed").level == "inferred"
    with pytest.raises(Violation):
        run("metric_enum_values_are_listed", newer)


# Judged only on an answer the audit asked again for (run/throttle.py): its examples are below.
JUDGED_APART = {"gateway_error_is_cleared_by_no_retry"}


def test_a_gateway_error_is_named_only_where_asking_again_cleared_it() -> None:
    check = next(c for c in CHECKS if c.name == "gateway_error_is_cleared_by_no_retry")
    html = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
    url = f"http://t{LIST_PATH}?projectId={PROJECT}"
    blip = Exchange("GET", url, 502, {"content-type": "text/html"}, html)
    # an answer judged as it came is the API's; a 502 that came again is the status rules' business
    assert check.func(CheckContext(page([hand_case()]), TARGETS, Policy())) is True  # type: ignore[misc]
    assert check.func(CheckContext(blip, TARGETS, Policy())) is None  # type: ignore[misc]
    with pytest.raises(Violation) as caught:
        cleared = CheckContext(blip, TARGETS, Policy(), cleared_gateway_error=True)
        check.func(cleared)  # type: ignore[misc]
    assert "a gateway answered 502 once" in str(caught.value)
    assert "received: 502 <html>" in str(caught.value)
    assert check.level == "inferred"


def registered_and_covered() -> dict[str, list[str]]:
    """The response checks registered for the documents this process reads, and those with
    examples here."""
    registered = {check.name for api in ("test-set", "gradient") for check in response_checks(api)}
    covered = {name for name, *_ in EXAMPLES} | JUDGED_APART
    return {"registered": sorted(registered), "covered": sorted(covered)}


def test_every_response_check_has_an_example() -> None:
    found = registered_and_covered()
    assert set(found["registered"]) <= set(found["covered"])


def test_a_check_only_a_revised_document_registers_has_examples_that_hold(
    tmp_path: Path,
) -> None:
    """With a filter declared without a rule of its own (the documents revised with runId), the
    generic filter check registers: it has its examples here, and they hold, as does every check's
    example under that revision."""
    documents = with_a_run_id_filter(tmp_path)
    script = (
        "import json, sys; sys.path.insert(0, 'tests'); "
        "from harness.test_response_checks import registered_and_covered as found; "
        "print(json.dumps(found()))"
    )
    done = run_under(documents, "-c", script)
    assert done.returncode == 0, done.stderr[-3000:]
    revised = json.loads(done.stdout)
    only_revised = set(revised["registered"]) - set(registered_and_covered()["registered"])
    assert "cases_match_the_other_filters" in only_revised
    assert only_revised <= set(revised["covered"])
    # every example's test, and the one counting them, under the revision: the good and the bad
    # example of each check only the revision registers among those passed
    here = str(Path(__file__).relative_to(Path(__file__).parents[2]))
    selected = "test_check_ or test_every_response_check_has_an_example"
    done = run_under(
        documents, "-m", "pytest", here, "-v", "-p", "no:cacheprovider", "-k", selected
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert "test_every_response_check_has_an_example PASSED" in done.stdout
    for name in only_revised:
        passed = re.findall(rf"::test_check_\w+\[{name}: [^\]]*\] PASSED", done.stdout)
        assert len(passed) >= 2, (name, done.stdout[-3000:])


@pytest.mark.parametrize(
    ("name", "exchange"),
    [
        ("error_code_is_the_page_s", page()),
        ("hand_case_id_starts_with_case", error(400, "bad-input")),
        ("page_holds_at_most_limit", error(404, "agent-not-found")),
        ("body_is_the_requested_version", evaluation_answer()),
        ("last_page_has_no_next_cursor", page(has_more=True, next_cursor="abc")),
        ("has_more_page_has_a_next_cursor", page(has_more=False)),
    ],
)
def test_check_does_not_apply_to_other_responses(name: str, exchange: Exchange) -> None:
    assert run(name, exchange) is None


def test_error_rules_speak_only_of_the_documented_get() -> None:
    # A framework's plain-text 405 to another method is HTTP's business (Schemathesis's
    # unsupported_method).
    framework = Exchange(
        "POST",
        error(405, "x").url,
        405,
        {"content-type": "text/plain", "allow": "GET"},
        b"Method Not Allowed",
    )
    assert run("request_id_header_is_the_envelope_s", framework) is None
    assert run("error_code_is_the_page_s", framework) is None


def test_a_page_without_expert_anywhere_is_an_older_server_and_not_judged() -> None:
    older = page([{k: v for k, v in hand_case().items() if k != "expert"}, correction_case()])
    # not judged, and why: the report says it if no page is judged
    said = run("hand_cases_are_expert", older)
    assert isinstance(said, str) and "older server" in said
    # no hand case: nothing to say
    assert run("hand_cases_are_expert", page([correction_case()])) is None


def test_ranks_may_have_gaps() -> None:
    # The judged items of a longer ranked list: positions 1, 3 and 5 of it.
    assert (
        run("item_ranks_are_distinct_positions", page([correction_case(expect=items(1, 3, 5))]))
        is True
    )


def test_timestamps_compare_as_instants() -> None:
    same_instant = page(
        [hand_case(addedAt="2026-11-20T09:15:02Z", updatedAt="2026-11-20T10:15:02+01:00")]
    )
    assert run("updated_at_is_added_at_until_retired", same_instant) is True


def test_args_length_is_measured_in_the_shorter_reading_of_canonical_json() -> None:
    # 3998 characters in RFC 8785's form ({"q":1,...}); Python writes 1.0, two characters more per
    # float.
    args = {"q": "x" * 3980, "n": 1.0}
    fitting = page(
        [
            hand_case(
                expect={
                    "decisions": {"verdict": "wrong", "shouldCall": [{"tool": "t", "args": args}]}
                }
            )
        ]
    )
    assert run("should_call_args_fit", fitting) is True


def test_a_routing_404_for_an_agent_id_holding_a_slash_is_left_alone() -> None:
    routed = error(404, "not-found", path="/v1/agents/a/b/test-set/cases")
    assert run("error_code_is_the_page_s", routed) is None


def test_a_cursor_sent_empty_is_no_cursor_the_page_names_a_code_for() -> None:
    # "Absent → first page": whether `cursor=` is absent the page does not say, so its 400 is not a
    # refused cursor
    assert (
        run(
            "error_code_is_the_page_s",
            error(400, "invalid-cursor", query=f"projectId={PROJECT}&cursor="),
        )
        is None
    )
    with pytest.raises(Violation):
        run("error_code_is_the_page_s", error(400, "invalid-cursor", query=CURSOR_QUERY))


def test_bad_input_is_the_page_s_code_only_for_a_refused_cursor() -> None:
    # The page names bad-input for a cursor it does not take (line 47); for projectId, include or
    # kind it is inferred.
    malformed = error(400, "invalid-project", query="projectId=nope")
    assert run("error_code_is_the_page_s", malformed) is None
    with pytest.raises(Violation):
        run("bad_input_is_every_400_s_code", malformed)
    assert run("bad_input_is_every_400_s_code", error(400, "bad-input", query=CURSOR_QUERY)) is None
    # A cursor sent with a malformed projectId: the 400 is for the projectId, so its code is the
    # inferred rule's.
    both = error(400, "invalid-project", query="projectId=nope&cursor=abc")
    assert run("error_code_is_the_page_s", both) is None
    # A runtime that does not seal cursors: the page's bad-input sentence is about sealing ones.
    unsealed = find_check("error_code_is_the_page_s")
    assert (
        unsealed.func(
            CheckContext(error(400, "invalid-cursor", query=CURSOR_QUERY), Targets(), Policy())
        )
        is None
    )  # type: ignore[misc]


def test_the_401_code_is_left_open() -> None:
    assert run("error_code_is_the_page_s", error(401, "token-expired")) is None
    assert run("error_code_is_the_page_s", error(401, "example")) is None


def test_a_parameter_sent_twice_is_left_alone() -> None:
    twice = page([hand_case(), correction_case()])
    twice = Exchange(
        twice.method,
        twice.url + "&kind=hand&kind=correction",
        twice.status,
        twice.headers,
        twice.body,
    )
    assert run("cases_have_the_requested_kinds", twice) is None


def test_a_base_url_with_a_path_prefix_still_finds_the_path_parameters() -> None:
    answer = evaluation_answer()
    prefixed = Exchange(
        "GET", answer.url.replace("/v2/", "/api/v2/"), 200, answer.headers, answer.body
    )
    assert run("body_is_the_requested_test_case", prefixed) is True


def test_a_version_the_test_case_does_not_have_is_never_a_200_carrying_another() -> None:
    # The status is open (404 is DigitalOcean's); a 200 carrying the latest says nothing of the
    # query name, so it is judged at the inferred name's level, and one carrying an older version at
    # the page's.
    latest_instead = evaluation_answer(gradient_test_case(version=3), version=9)
    assert "did not confirm" in run("body_is_the_requested_version", latest_instead)
    with pytest.raises(Violation):
        run("body_is_the_version_asked_by_its_inferred_name", latest_instead)
    with pytest.raises(Violation):
        run(
            "body_is_the_requested_version",
            evaluation_answer(gradient_test_case(version=1), version=9),
        )


def test_an_answer_that_confirms_the_version_name_is_judged_at_page_level_only() -> None:
    older = evaluation_answer(gradient_test_case(version=1), version=1)
    assert run("body_is_the_requested_version", older) is True
    assert "confirmed the query name" in run(
        "body_is_the_version_asked_by_its_inferred_name", older
    )
    assert "confirmed the query name" in run("body_is_the_version_asked_by_the_spec_s_name", older)
    unlisted = Exchange(
        "GET",
        older.url.replace(TEST_CASE, "00000000-0000-4000-8000-000000000001"),
        200,
        older.headers,
        older.body,
    )
    # the targets know no latest for it
    assert "did not confirm" in run("body_is_the_requested_version", unlisted)


def test_another_version_in_a_200_is_judged_without_targets() -> None:
    # A HAR or proxy audit without a targets file: the version asked for is read from the request
    # alone.
    check = next(c for c in CHECKS if c.name == "body_is_the_version_asked_by_its_inferred_name")
    unknown_version = evaluation_answer(gradient_test_case(version=3), version=9)
    with pytest.raises(Violation):
        check.func(CheckContext(unknown_version, Targets(), Policy()))  # type: ignore[misc]
    answer = evaluation_answer(gradient_test_case(version=9), version=9)
    assert check.func(CheckContext(answer, Targets(), Policy())) is True  # type: ignore[misc]


def test_an_envelope_without_request_id_or_code_is_the_document_s_finding_alone() -> None:
    # One fact, one finding: a missing required member is response_schema_conformance's; these judge
    # values.
    no_id = error(
        404, "agent-not-found", body={"error": {"code": "agent-not-found", "message": "No agent."}}
    )
    assert run("request_id_header_is_the_envelope_s", no_id) is None
    no_code = error(404, "x", body={"error": {"message": "No agent.", "requestId": "rid-1"}})
    assert run("error_code_is_the_page_s", no_code) is None
    assert (
        run(
            "bad_input_is_every_400_s_code",
            error(
                400,
                "x",
                body={"error": {"message": "Bad.", "requestId": "r"}},
                query="projectId=nope",
            ),
        )
        is None
    )
    with pytest.raises(Violation):  # a requestId that is there but differs is still this check's
        run(
            "request_id_header_is_the_envelope_s",
            error(404, "agent-not-found", request_id="a", header="b"),
        )


def test_a_head_answer_needs_no_body() -> None:
    head = error(400, "bad-input")
    head = Exchange("HEAD", head.url, 400, head.headers, b"")
    assert run("request_id_header_is_the_envelope_s", head) is None


def test_every_check_names_its_level_and_source_in_the_docs() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text(encoding="utf-8")
    for check in CHECKS:
        assert f"`{check.name}`" in text, check.name


def test_find_check_tells_apis_apart() -> None:
    assert find_check("response_schema_conformance", "gradient").api == "gradient"
    assert isinstance(find_check("walk_yields_every_case_once"), Check)
