"""A case's rules are remembered per case JSON: a page seen again is judged alike (its passes are
looked up, its breaches still found), a changed case is judged afresh, a page every case of which
kept a rule before does not run it at all, a body that is not plain JSON is never looked up, the
cases of a body seen before are not written out again to be looked up, and the memory is bounded."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from evalmock.contract.case_rules import Breach, CaseRule
from evalmock.contract.sources import inferred
from evalmock.contract.targets import Targets
from evalmock.harness.checks import case_invariants
from evalmock.harness.checks.context import CheckContext
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.outcomes import Violation
from evalmock.harness.checks.policy import Policy

from .builders import hand_case, page


def hand_case_id(exchange: Exchange) -> bool | None:
    """The registered check hand_case_id_starts_with_case on one exchange."""
    return case_invariants.hand_case_id_starts_with_case(
        CheckContext(exchange, Targets(), Policy())
    )


@pytest.fixture(autouse=True)
def forget() -> None:
    case_invariants._kept.clear()
    case_invariants._case_keys.forget()


def remembered(rule: str) -> set[int]:
    """The hashes of the case JSONs remembered as having kept `rule`."""
    bit = case_invariants._bits.get(rule, 0)
    return {key for key, kept in case_invariants._kept.items() if kept & bit}


def test_a_kept_rule_is_remembered_by_the_case_json_and_a_page_seen_again_passes_alike() -> None:
    good = page([hand_case()])
    assert hand_case_id(good) is True
    assert len(remembered("hand_case_id_starts_with_case")) == 1
    assert hand_case_id(page([hand_case()])) is True


def test_a_changed_case_on_a_page_seen_before_is_judged_afresh() -> None:
    assert hand_case_id(page([hand_case(), hand_case(id="case-2")])) is True
    with pytest.raises(Violation) as found:
        hand_case_id(page([hand_case(), hand_case(id="hand-2")]))
    assert found.value.pointer == "/data/1/id"


def test_a_breach_is_never_remembered_as_a_pass() -> None:
    bad = page([hand_case(id="hand-7f3a9c21")])
    for _ in range(2):
        with pytest.raises(Violation):
            hand_case_id(bad)
    assert remembered("hand_case_id_starts_with_case") == set()


def test_a_body_that_is_not_plain_json_is_judged_every_time_and_not_remembered() -> None:
    # an integer past 64 bits: orjson's reading is not the standard parser's, so equal text may not
    # be an equal case
    exchange = page([hand_case(n=123456789012345678901234567890)])
    assert exchange.plain_json == (False, None)
    assert hand_case_id(exchange) is True
    assert remembered("hand_case_id_starts_with_case") == set()


def test_the_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(case_invariants, "CASES_REMEMBERED", 3)
    for number in range(10):
        hand_case_id(page([hand_case(id=f"case-{number}")]))
    assert 1 <= len(remembered("hand_case_id_starts_with_case")) <= 3


def test_a_rule_every_case_on_a_page_kept_before_is_not_run_again() -> None:
    seen: list[Any] = []

    def counted(case: Any) -> Iterator[Breach]:
        seen.append(case.get("id"))
        yield from ()

    rule = CaseRule("counted_rule", inferred("a rule that counts the cases it reads"), counted)
    assert case_invariants.keep(page([hand_case(), hand_case(id="case-2")]), rule) is True
    assert seen == ["case-7f3a9c21", "case-2"]
    assert case_invariants.keep(page([hand_case(), hand_case(id="case-2")]), rule) is True
    assert (
        case_invariants.keep(page([hand_case(id="case-2"), hand_case(id="case-3")]), rule) is True
    )
    assert seen == ["case-7f3a9c21", "case-2", "case-3"]  # only the case not seen before


def test_the_cases_of_a_body_seen_before_are_not_written_out_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    written: list[Any] = []
    dumps = case_invariants.orjson.dumps

    def counted(value: Any) -> bytes:
        # a case (the page's rules also write shouldCall args)
        if isinstance(value, dict) and "kind" in value:
            written.append(value)
        return dumps(value)

    monkeypatch.setattr(case_invariants.orjson, "dumps", counted)
    for _ in range(2):
        assert hand_case_id(page([hand_case(), hand_case(id="case-2")])) is True
    assert len(written) == 2  # the two cases, once
    with pytest.raises(Violation):  # a body that differs is read afresh
        hand_case_id(page([hand_case(), hand_case(id="hand-2")]))
    assert len(written) == 4


def test_the_page_rules_are_judged_in_one_pass_each_breach_at_its_first_case(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[str, Any]] = []

    def counted(name: str, breaks: str) -> CaseRule:
        def check(case: Any) -> Iterator[Breach]:
            seen.append((name, case.get("id")))
            if case.get("id") != breaks:
                yield Breach(
                    name, "broken", expected="kept", received=case.get("id"), pointer="/id"
                )

        return CaseRule(name, inferred("a rule that counts the cases it reads"), check)

    first, second = counted("first_rule", breaks="case-1"), counted("second_rule", breaks="case-3")
    monkeypatch.setattr(case_invariants.case_rules, "RULES", (first, second))
    exchange = page([hand_case(id="case-1"), hand_case(id="case-2"), hand_case(id="case-3")])
    with pytest.raises(Violation) as found:
        case_invariants.keep(exchange, first)
    assert found.value.pointer == "/data/1/id"
    # the second rule was judged in the first one's pass: asking for it reads no case again
    assert seen == [
        ("first_rule", "case-1"),
        ("second_rule", "case-1"),
        ("first_rule", "case-2"),
        ("second_rule", "case-2"),
        ("first_rule", "case-3"),
        ("second_rule", "case-3"),
    ]
    with pytest.raises(Violation) as found:
        case_invariants.keep(exchange, second)
    assert found.value.pointer == "/data/0/id"
    assert len(seen) == 6
    # what each case kept is remembered: on a page seen again only what a case broke is judged
    # afresh
    again = page([hand_case(id="case-1"), hand_case(id="case-2"), hand_case(id="case-3")])
    with pytest.raises(Violation):
        case_invariants.keep(again, first)
    assert seen[6:] == [
        ("second_rule", "case-1"),
        ("first_rule", "case-2"),
        ("second_rule", "case-2"),
        ("first_rule", "case-3"),
    ]
