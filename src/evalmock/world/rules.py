"""What every test-set case of the world must satisfy: the document's schema, the page's rules,
stricter readings.

The world's cases must pass any fair reading of the page, so besides the page's rules (shared with
the harness, in evalmock.contract.case_rules) they keep the stricter readings stated here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalmock.contract import case_rules
from evalmock.contract.documents import TEST_SET
from evalmock.contract.lint import pointer
from evalmock.contract.schemas import schema_validator
from evalmock.world.timeline import RFC3339_UTC
from evalmock.world.wording import described, shown

if TYPE_CHECKING:
    from openapi_schema_validator import OAS30Validator


@functools.cache
def case_validator() -> OAS30Validator:
    """A validator for `#/components/schemas/TestSetCase` of the test-set document (built once)."""
    return schema_validator(TEST_SET.spec, {"$ref": "#/components/schemas/TestSetCase"})


@dataclass(frozen=True)
class CaseFinding:
    """One way a case breaks a rule: where in the case (a JSON pointer) and what is wrong."""

    pointer: str
    message: str

    def __str__(self) -> str:
        return f"{self.pointer}: {self.message}" if self.pointer else self.message


CaseCheck = Callable[[dict[str, Any]], Iterator[CaseFinding]]


def schema_problems(case: dict[str, Any]) -> Iterator[CaseFinding]:
    for error in case_validator().iter_errors(case):
        if error.validator == "anyOf" and list(error.absolute_path) == ["expect"]:
            continue  # case_rules.expect_has_a_part says it, with the page's words
        yield CaseFinding(
            pointer(*error.absolute_path) if error.absolute_path else "", described(error)
        )


def timestamps_are_utc(case: dict[str, Any]) -> Iterator[CaseFinding]:
    # imported when a case is checked (contract/schemas.py)
    from openapi_schema_validator import (
        oas30_format_checker,
    )

    stamps = {"/addedAt": case.get("addedAt"), "/updatedAt": case.get("updatedAt")}
    if isinstance(case.get("retired"), dict):
        stamps["/retired/at"] = case["retired"].get("at")
    for where, value in stamps.items():
        # What is no date-time at all, the schema's format says; this is the world's stricter form
        # of one.
        is_date_time = isinstance(value, str) and oas30_format_checker.conforms(value, "date-time")
        if is_date_time and not RFC3339_UTC.match(value):
            yield CaseFinding(
                where,
                f'expected a UTC date-time in whole seconds such as "2026-11-20T09:15:02Z", '
                f"got {shown(value)}",
            )


def correction_has_its_own_id(case: dict[str, Any]) -> Iterator[CaseFinding]:
    if case.get("kind") == "correction" and str(case.get("id", "")).startswith("case-"):
        yield CaseFinding(
            "/id",
            f"a correction's case has the correction's id, not a case- id, got "
            f"{shown(case.get('id'))}; write the correction's id, or make it kind: hand",
        )


def retirement_is_strictly_later(case: dict[str, Any]) -> Iterator[CaseFinding]:
    """Retiring a case is its last change and comes strictly after it was added."""
    retired = case.get("retired")
    if not isinstance(retired, dict):
        return
    if case.get("updatedAt") != retired.get("at"):
        yield CaseFinding(
            "/updatedAt",
            f"a retired case's updatedAt is its retired.at, {shown(retired.get('at'))}, "
            f"got {shown(case.get('updatedAt'))}",
        )
    if not str(retired.get("at")) > str(case.get("addedAt")):
        yield CaseFinding(
            "/retired/at",
            f"retired.at is later than addedAt {shown(case.get('addedAt'))}, "
            f"got {shown(retired.get('at'))}",
        )


def expert_is_true_or_absent(case: dict[str, Any]) -> Iterator[CaseFinding]:
    # On a hand case, case_rules.hand_case_is_expert says it: expert is true there, never left out.
    if "expert" in case and case["expert"] is not True and case.get("kind") != "hand":
        yield CaseFinding(
            "/expert",
            f"expert is true or left out, got {shown(case['expert'])}; write expert: true, "
            "or remove the key",
        )


def items_are_in_rank_order(case: dict[str, Any]) -> Iterator[CaseFinding]:
    expect = case.get("expect")
    items = expect.get("items") if isinstance(expect, dict) else None
    for position, item in enumerate(items if isinstance(items, list) else ()):
        if isinstance(item, dict) and item.get("rank", position) != position:
            yield CaseFinding(
                f"/expect/items/{position}/rank",
                f"expected {position} (ranks 0..n-1 in order), got {shown(item.get('rank'))}",
            )


WORLD_RULES: tuple[CaseCheck, ...] = (
    schema_problems,
    timestamps_are_utc,
    correction_has_its_own_id,
    retirement_is_strictly_later,
    expert_is_true_or_absent,
    items_are_in_rank_order,
)
# The page's rules, except the two that the stricter readings above already imply (retirement,
# ranks); shouldCall args are measured with non-ASCII escaped, the longer reading of canonical JSON.
PAGE_RULES: tuple[case_rules.CaseRule, ...] = (
    case_rules.hand_case_id_starts_with_case,
    case_rules.updated_at_is_added_at_until_retired,
    case_rules.hand_case_is_expert,
    case_rules.expect_has_a_part,
    functools.partial(case_rules.should_call_args_fit, ascii=True),
)


# Each page rule's breach as a file's author reads it: what the rule asks, what the case holds, what
# to write.
_PAGE_WORDS: dict[str, str] = {
    "hand_case_id_starts_with_case": "a hand case's id starts with case-, got {received}; write an "
    "id such as "
    '"case-refund-crash", or make it kind: correction',
    "updated_at_is_added_at_until_retired": "an active case's updatedAt is its addedAt, "
    "{expected}, got {received}; "
    "write {expected}, or retire the case",
    "hand_case_is_expert": "every hand case is an expert's case: write expert: true (got "
    "{received})",
    "expect_has_a_part": "expect needs at least one of decisions, answer, items, got {received}; "
    "add one, such as "
    "answer with a verdict",
    "should_call_args_fit": "shouldCall args are at most 4000 characters of canonical JSON, got "
    "{received_text}; "
    "compare fewer argument fields",
}


def worded(rule: Any, breach: case_rules.Breach) -> str:
    """The breach of a page rule (or of a functools.partial of one) in the words above."""
    words = _PAGE_WORDS.get((rule.func if isinstance(rule, functools.partial) else rule).name)
    if words is None:  # a page rule added without words still speaks, in the harness's
        return str(breach)
    received = "nothing" if breach.received == "(absent)" else shown(breach.received)
    return words.format(
        expected=shown(breach.expected), received=received, received_text=breach.received
    )


def case_findings(case: dict[str, Any]) -> list[CaseFinding]:
    """Every rule `case` breaks, each where it breaks (empty when the case is valid)."""
    findings = [finding for rule in WORLD_RULES for finding in rule(case)]
    breaches = [(rule, breach) for rule in PAGE_RULES for breach in rule(case)]
    return findings + [
        CaseFinding(breach.pointer, worded(rule, breach)) for rule, breach in breaches
    ]


def case_problems(case: dict[str, Any]) -> list[str]:
    """Every rule `case` breaks, as readable sentences (empty when the case is valid)."""
    return [str(finding) for finding in case_findings(case)]
