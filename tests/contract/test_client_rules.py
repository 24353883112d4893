"""The pages' rules for a client: each passes a correct app and fails a misbehaving one, saying
what the app sent and what the page asks; the verdict never passes a journal that judged nothing."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from evalmock.contract import client_rules, client_verdict
from evalmock.contract.client_exchange import ClientExchange
from evalmock.contract.client_outcomes import ClientBreach, ClientRule, Journal
from evalmock.contract.client_rules import RULES, judge
from evalmock.contract.client_verdict import CONFORMS, INCOMPLETE, VIOLATIONS
from evalmock.contract.sources import Level
from shared import LIMIT

LIST = "/v1/agents/acme.drafting/test-set/cases"
OTHER_AGENT = "/v1/agents/acme.billing/test-set/cases"
PROJECT = "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0"
OTHER_PROJECT = "9d0b7c1e-5f5a-4c4e-9a57-2f3f4f3c2b11"
TEST_CASE = "/v2/gen-ai/evaluation_test_cases/123e4567-e89b-12d3-a456-426614174000"


def sent(
    at: float,
    *query: tuple[str, str],
    status: int = 200,
    path: str = LIST,
    api: str = "test-set",
    method: str = "GET",
    authorized: bool = True,
    **answer: object,
) -> ClientExchange:
    if api == "test-set" and not any(name == "projectId" for name, _ in query):
        query = (("projectId", PROJECT), *query)
    return ClientExchange(
        api,
        method,
        path,
        tuple(query),
        at,
        status,
        authorized,
        **answer,  # type: ignore[arg-type]
    )


def breaches(rule: ClientRule, *exchanges: ClientExchange, dropped: int = 0) -> list[ClientBreach]:
    return [o for o in rule(Journal(exchanges, dropped)) if isinstance(o, ClientBreach)]


def outcomes(rule: ClientRule, *exchanges: ClientExchange, dropped: int = 0) -> list[str]:
    return [type(o).__name__ for o in rule(Journal(exchanges, dropped))]


# A correct app: two pages of one list, a busy answer waited out, a refused cursor dropped and the
# list started again, a version asked for by number.
CORRECT = (
    sent(0.0, ("kind", "hand,correction"), ("limit", "10"), next_cursor="c1/+=="),
    sent(
        1.0,
        ("kind", "correction,hand"),
        ("limit", "50"),
        ("cursor", "c1/+=="),
        status=503,
        retry_after=2,
    ),
    sent(3.5, ("kind", "hand,correction"), ("cursor", "c1/+=="), next_cursor="c2"),
    sent(4.0, ("kind", "hand,correction"), ("cursor", "c2"), status=400),
    sent(4.1, ("kind", "hand,correction"), next_cursor="c3"),
    sent(5.0, ("evaluation_test_case_version", "2"), path=TEST_CASE, api="gradient"),
)


def test_a_correct_app_conforms_to_every_rule_and_every_rule_is_judged() -> None:
    verdict = judge(CORRECT)
    assert verdict.verdict == CONFORMS, verdict.findings
    assert verdict.findings == [] and verdict.not_judged == []
    assert verdict.judged == 6 and all(tally["kept"] for tally in verdict.rules)


# -- client_sends_the_cursor_as_it_came


@pytest.mark.parametrize(
    ("cursor", "how"),
    [
        ("c1%2F%2B%3D%3D", "percent-encoded differently"),
        ("c1/+== ", "with white space added"),
        ("c1/+", "cut short"),
        ("C1/+==", "in another letter case"),
        ("made-up", ""),
    ],
)
def test_a_cursor_the_app_built_or_edited_breaks_as_it_came(cursor: str, how: str) -> None:
    rule = client_rules.client_sends_the_cursor_as_it_came
    given = sent(0.0, next_cursor="c1/+==")
    assert breaches(rule, given, sent(1.0, ("cursor", "c1/+=="))) == []
    [breach] = breaches(rule, given, sent(1.0, ("cursor", cursor)))
    assert breach.index == 1 and breach.received == repr(cursor)
    assert breach.expected == "a nextCursor an earlier answer gave, as it came"
    assert (f"request #0's nextCursor {how}" in breach.problem) is bool(how)


def test_a_cursor_given_only_later_or_to_nobody_is_not_as_it_came() -> None:
    rule = client_rules.client_sends_the_cursor_as_it_came
    assert breaches(rule, sent(0.0, ("cursor", "c1")), sent(1.0, next_cursor="c1"))


def test_an_empty_cursor_is_left_open() -> None:
    assert (
        outcomes(client_rules.client_sends_the_cursor_as_it_came, sent(0.0, ("cursor", ""))) == []
    )


def test_a_cursor_whose_answer_the_journal_no_longer_holds_is_not_judged() -> None:
    rule = client_rules.client_sends_the_cursor_as_it_came
    assert outcomes(rule, sent(1.0, ("cursor", "c1")), dropped=3) == ["Unjudged"]
    unread = sent(0.0, answer_read=False)
    assert outcomes(rule, unread, sent(1.0, ("cursor", "c1"))) == ["Unjudged"]


# -- client_keeps_the_filters_of_its_cursor


def test_a_cursor_goes_back_with_its_filters_read_as_the_list_reads_them() -> None:
    rule = client_rules.client_keeps_the_filters_of_its_cursor
    given = sent(0.0, ("kind", "hand,correction"), ("limit", "10"), next_cursor="c1")
    # kind as a set, projectId in either letter case, limit free to change
    same = sent(
        1.0,
        ("projectId", PROJECT.upper()),
        ("kind", "correction,hand"),
        ("cursor", "c1"),
        ("limit", "100"),
    )
    assert outcomes(rule, given, same) == ["Kept"]


@pytest.mark.parametrize(
    ("changed", "names"),
    [
        ({"query": (("kind", "hand"), ("cursor", "c1"))}, "kind"),
        (
            {"query": (("kind", "hand,correction"), ("include", "retired"), ("cursor", "c1"))},
            "include",
        ),
        (
            {
                "query": (
                    ("projectId", OTHER_PROJECT),
                    ("kind", "hand,correction"),
                    ("cursor", "c1"),
                )
            },
            "projectId",
        ),
        (
            {"path": OTHER_AGENT, "query": (("kind", "hand,correction"), ("cursor", "c1"))},
            "agentId",
        ),
    ],
)
def test_a_cursor_sent_with_another_list_or_filter_breaks_its_binding(
    changed: dict[str, object], names: str
) -> None:
    rule = client_rules.client_keeps_the_filters_of_its_cursor
    given = sent(0.0, ("kind", "hand,correction"), next_cursor="c1")
    moved = replace(sent(1.0), **changed)  # type: ignore[arg-type]
    if not any(name == "projectId" for name, _ in moved.query):
        moved = replace(moved, query=(("projectId", PROJECT), *moved.query))
    [breach] = breaches(rule, given, moved)
    assert breach.problem == f"the cursor of request #0 came back with other {names}"
    assert breach.expected != breach.received and names in breach.expected


# -- client_waits_retry_after


def test_the_next_request_to_a_busy_list_waits_retry_after_seconds() -> None:
    rule = client_rules.client_waits_retry_after
    busy = sent(10.0, status=503, retry_after=3)
    assert outcomes(rule, busy, sent(13.0)) == ["Kept"]
    # another list in between is not the busy list's retry
    elsewhere = sent(10.5, ("projectId", OTHER_PROJECT))
    assert outcomes(rule, busy, elsewhere, sent(13.2)) == ["Kept"]
    [breach] = breaches(rule, busy, elsewhere, sent(11.0))
    assert breach.index == 2
    assert breach.expected == "the next request to the list 3 seconds or more later"
    assert breach.received == "1.000 seconds later"


def test_a_retry_after_of_one_second_is_said_in_the_singular() -> None:
    rule = client_rules.client_waits_retry_after
    [breach] = breaches(rule, sent(10.0, status=503, retry_after=1), sent(10.25))
    assert breach.expected == "the next request to the list 1 second or more later"
    assert breach.received == "0.250 seconds later"
    assert "again 0.250 seconds after request #0" in breach.problem


def test_a_busy_answer_with_no_retry_after_or_no_next_request_is_not_an_occasion() -> None:
    rule = client_rules.client_waits_retry_after
    assert outcomes(rule, sent(0.0, status=503), sent(0.1)) == []
    assert outcomes(rule, sent(0.0, status=503, retry_after=1)) == []
    verdict = judge([sent(0.0)])
    assert {
        "rule": "client_waits_retry_after",
        "level": "page",
        "why": "no 503 with Retry-After was followed by another request to its list",
    } in (verdict.not_judged)


# -- client_starts_again_after_a_refused_cursor


def test_a_refused_cursor_is_never_sent_again() -> None:
    rule = client_rules.client_starts_again_after_a_refused_cursor
    given = sent(0.0, next_cursor="c1")
    refused = sent(1.0, ("cursor", "c1"), status=400)
    assert outcomes(rule, given, refused, sent(2.0)) == ["Kept"]
    [breach] = breaches(rule, given, refused, sent(2.0), sent(3.0, ("cursor", "c1")))
    assert breach.index == 3 and breach.received == "'c1'"
    assert breach.problem == "the app sent again the cursor refused with 400 at request #1"


def test_a_400_that_another_malformed_parameter_explains_does_not_refuse_the_cursor() -> None:
    rule = client_rules.client_starts_again_after_a_refused_cursor
    given = sent(0.0, next_cursor="c1")
    refused = sent(1.0, ("cursor", "c1"), ("limit", "500"), status=400)
    assert outcomes(rule, given, refused, sent(2.0, ("cursor", "c1"))) == []


# -- tokens, parameters, version


def test_every_request_carries_a_token_and_a_preflight_is_not_judged() -> None:
    rule = client_rules.client_sends_a_token
    assert outcomes(rule, sent(0.0), sent(0.1, method="OPTIONS", authorized=False)) == ["Kept"]
    [breach] = breaches(rule, sent(0.0), sent(1.0, authorized=False))
    assert breach.index == 1 and breach.received == "no Authorization header"
    other = client_rules.client_sends_a_token_to_digitalocean
    assert breaches(other, sent(0.0, path=TEST_CASE, api="gradient", authorized=False))


@pytest.mark.parametrize(
    ("query", "name", "expected"),
    [
        ((("projectId", "not-a-uuid"),), "projectId", "projectId a UUID"),
        ((("include", "archived"),), "include", "include one of retired"),
        ((("kind", "hand,"),), "kind", "kind matching ^(correction|hand)(,(correction|hand))*$"),
        (
            (("limit", str(LIMIT["maximum"] + 1)),),
            "limit",
            f"limit a whole number {LIMIT['minimum']}..{LIMIT['maximum']}",
        ),
        ((("limit", "ten"),), "limit", "limit a whole number (int32)"),
    ],
)
def test_a_parameter_of_another_form_than_the_page_s_breaks_the_list_s_rule(
    query: tuple[tuple[str, str], ...], name: str, expected: str
) -> None:
    rule = client_rules.client_sends_the_list_s_parameters_as_the_page_states
    [breach] = breaches(rule, sent(0.0, *query))
    assert breach.expected == expected and breach.received == repr(query[0][1])
    # the page's own forms, and an empty include= or kind= (left open)
    assert not breaches(
        rule,
        sent(0.0, ("include", "retired"), ("kind", "hand"), ("limit", "100")),
        sent(0.1, ("include", ""), ("kind", "")),
    )


def test_a_request_without_project_id_breaks_the_list_s_rule() -> None:
    rule = client_rules.client_sends_the_list_s_parameters_as_the_page_states
    [breach] = breaches(rule, replace(sent(0.0), query=()))
    assert (breach.expected, breach.received) == ("projectId sent (it is required)", "(left out)")


@pytest.mark.parametrize("version", ["x", "1.5", "9223372036854775808", " 2"])
def test_a_version_that_is_no_int64_breaks_the_version_rule(version: str) -> None:
    rule = client_rules.client_sends_an_integer_version
    asked = sent(0.0, ("evaluation_test_case_version", version), path=TEST_CASE, api="gradient")
    [breach] = breaches(rule, asked)
    assert breach.expected == "evaluation_test_case_version a whole number (int64)" or (
        "9223372036854775807" in breach.expected
    )
    good = replace(asked, query=(("evaluation_test_case_version", "-3"),))
    assert outcomes(rule, good) == ["Kept"]  # below 1: the page names no such version, not judged


# -- the verdict


def test_a_page_finding_says_what_the_app_sent_and_what_the_page_asks() -> None:
    verdict = judge([sent(0.0, next_cursor="c1"), sent(1.5, ("cursor", "c2"), status=400)])
    assert verdict.verdict == VIOLATIONS and verdict.failed
    [finding] = verdict.findings
    assert finding["rule"] == "client_sends_the_cursor_as_it_came" and finding["level"] == "page"
    assert finding["request"] == {
        "index": 1,
        "at": "1970-01-01T00:00:01.500Z",
        "method": "GET",
        "path": LIST,
        "status": 400,
    }
    assert finding["message"] == (
        "the app sent a cursor no earlier answer gave it: expected a nextCursor an earlier "
        "answer gave, as it came, received 'c2'"
    )
    assert "“Where the previous page ended: its nextCursor, as it came.”" in finding["source"]
    json.dumps(verdict.to_json())  # the route's body


def test_an_empty_journal_is_incomplete_never_a_pass() -> None:
    verdict = judge([])
    assert verdict.verdict == INCOMPLETE and not verdict.failed
    assert verdict.not_judged == [] and verdict.rules == []  # no API was called
    assert verdict.notes == [
        "the journal is empty: the app sent nothing, so nothing was judged",
        f"no request to test-set or gradient: their {len(RULES)} client rules are left out",
    ]
    # requests to no API's operation judge nothing either
    assert judge([sent(0.0, path="/favicon.ico", api="")]).verdict == INCOMPLETE


def test_the_rules_of_an_api_the_traffic_never_called_are_left_out_in_one_note() -> None:
    list_only = [exchange for exchange in CORRECT if exchange.api == "test-set"]
    verdict = judge(list_only)
    assert verdict.verdict == CONFORMS
    gradient = {rule.name for rule in RULES if rule.api == "gradient"}
    assert len(gradient) == 2
    assert not gradient & {entry["rule"] for entry in verdict.not_judged}
    assert not gradient & {tally["rule"] for tally in verdict.rules}
    assert verdict.notes == ["no request to gradient: its 2 client rules are left out"]
    # a called API's rule with no occasion is still listed as not judged, with its reason
    no_busy = judge([list_only[0], list_only[2]])
    assert {
        "rule": "client_waits_retry_after",
        "level": "page",
        "why": ("no 503 with Retry-After was followed by another request to its list"),
    } in no_busy.not_judged
    # an API called only off its operation is called: its rules say why they judged nothing
    stray = judge([*list_only, sent(6.0, path=TEST_CASE, api="gradient", method="POST")])
    assert gradient <= {entry["rule"] for entry in stray.not_judged}
    assert stray.notes == []


def test_every_rule_names_the_api_whose_requests_it_judges() -> None:
    assert {rule.api for rule in RULES} == {"test-set", "gradient"}
    assert client_rules.client_sends_an_integer_version.api == "gradient"
    assert client_rules.client_waits_retry_after.api == "test-set"


def test_a_journal_whose_oldest_entries_were_dropped_is_incomplete_unless_it_fails() -> None:
    kept = [sent(10.0, ("cursor", "from-a-dropped-answer"))]
    verdict = judge(kept, dropped=2)
    assert verdict.verdict == INCOMPLETE and verdict.findings == []
    assert verdict.dropped == 2 and "dropped its 2 oldest entries" in verdict.notes[0]
    [cursor] = [e for e in verdict.not_judged if e["rule"] == "client_sends_the_cursor_as_it_came"]
    assert cursor["why"].startswith("1 occasion not judged: the answer that gave the cursor")
    assert judge([*kept, sent(11.0, authorized=False)], dropped=2).verdict == VIOLATIONS


def test_an_inferred_finding_is_a_warning_unless_strict() -> None:
    journal = [*CORRECT, sent(6.0, path=TEST_CASE, api="gradient", authorized=False)]
    lenient = judge(journal)
    assert lenient.verdict == CONFORMS
    assert [f["level"] for f in lenient.findings] == [str(Level.INFERRED)]
    assert judge(journal, strict=True).verdict == VIOLATIONS


def test_every_rule_states_its_rule_and_what_it_needs() -> None:
    assert len({rule.name for rule in RULES}) == len(RULES)
    for rule in RULES:
        assert rule.rule and rule.needs and rule.name.startswith("client_")
        assert (
            '"' not in rule.rule and "“" not in rule.rule
        )  # our words, never passed off as the page's


def test_callers_are_judged_apart_and_named_by_number() -> None:
    first = [sent(0.0, status=503, retry_after=5), sent(6.0, ("cursor", "theirs"))]
    second = [sent(1.0, next_cursor="theirs")]  # at once, but another app's request
    verdict = client_verdict.judge_callers([(first, 0), (second, 0)], RULES)
    [finding] = verdict.findings
    assert finding["rule"] == "client_sends_the_cursor_as_it_came"
    assert (finding["request"]["caller"], finding["request"]["index"]) == (1, 1)
    assert finding["outcome"] == client_verdict.FAILED
    assert "caller" not in judge(first).findings[0]["request"]  # one caller: no number


def test_a_long_or_hostile_value_is_quoted_bounded_and_escaped() -> None:
    cursor = "\x1b[31m" + "x" * 10_000
    path = LIST.replace("acme.drafting", "a" * 5_000)
    [finding] = judge([sent(0.0, ("cursor", cursor), path=path)]).findings
    assert len(finding["received"]) < 200 and "(10005 characters)" in finding["received"]
    assert "\x1b" not in finding["received"] and "\\x1b" in finding["received"]
    assert len(finding["request"]["path"]) < 200
    json.dumps(finding)


def test_a_cursor_two_lists_were_given_alike_goes_back_with_either_s_filters() -> None:
    # a runtime whose cursors are offsets gives "25" to every list: no false failure
    rule = client_rules.client_keeps_the_filters_of_its_cursor
    hand = sent(0.0, ("kind", "hand"), next_cursor="25")
    every = sent(1.0, next_cursor="25")
    assert outcomes(rule, hand, every, sent(2.0, ("kind", "hand"), ("cursor", "25"))) == ["Kept"]
    assert breaches(rule, hand, every, sent(2.0, ("kind", "correction"), ("cursor", "25")))
    # with older answers dropped, another one may have given it for these filters
    assert outcomes(rule, every, sent(2.0, ("kind", "hand"), ("cursor", "25")), dropped=1) == [
        "Unjudged"
    ]


def test_a_refused_cursor_given_anew_by_a_later_answer_may_go_back() -> None:
    rule = client_rules.client_starts_again_after_a_refused_cursor
    refused = sent(1.0, ("cursor", "25"), status=400)
    again = [sent(0.0, next_cursor="25"), refused, sent(2.0, next_cursor="25")]
    assert breaches(rule, *again, sent(3.0, ("cursor", "25"))) == []
    assert breaches(rule, *again[:2], sent(3.0, ("cursor", "25")))
