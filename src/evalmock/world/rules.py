"""What every test-set case of the world must satisfy: the document's schema, the page's rules, stricter readings.

The world's cases must pass any fair reading of the page, so besides the page's rules (shared with the
harness, in evalmock.contract.case_rules) they keep the stricter readings stated here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from jsonschema.exceptions import ValidationError
from openapi_schema_validator import OAS30Validator

from evalmock.contract import case_rules
from evalmock.contract.documents import TEST_SET
from evalmock.contract.lint import pointer
from evalmock.contract.schemas import schema_validator
from evalmock.world.timeline import RFC3339_UTC

_SIZES = {"Length": "characters", "Properties": "properties", "Items": "items"}  # minLength/maxLength, ...


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
        yield CaseFinding(pointer(*error.absolute_path) if error.absolute_path else "", described(error))


def timestamps_are_utc(case: dict[str, Any]) -> Iterator[CaseFinding]:
    stamps = {"/addedAt": case.get("addedAt"), "/updatedAt": case.get("updatedAt")}
    if isinstance(case.get("retired"), dict):
        stamps["/retired/at"] = case["retired"].get("at")
    for where, value in stamps.items():
        if not isinstance(value, str) or not RFC3339_UTC.match(value):
            yield CaseFinding(where, f"must look like 2026-11-20T09:15:02Z, got {value!r}")


def correction_has_its_own_id(case: dict[str, Any]) -> Iterator[CaseFinding]:
    if case.get("kind") == "correction" and str(case.get("id", "")).startswith("case-"):
        yield CaseFinding("/id", f"a correction's case has the correction's id, not a `case-` id: {case.get('id')!r}")


def retirement_is_strictly_later(case: dict[str, Any]) -> Iterator[CaseFinding]:
    """Retiring a case is its last change and comes strictly after it was added."""
    retired = case.get("retired")
    if not isinstance(retired, dict):
        return
    if case.get("updatedAt") != retired.get("at"):
        yield CaseFinding("/updatedAt", f"a retired case's updatedAt equals retired.at {retired.get('at')!r}, "
                                        f"got {case.get('updatedAt')!r}")
    if not str(retired.get("at")) > str(case.get("addedAt")):
        yield CaseFinding("/retired/at", f"retired.at is later than addedAt {case.get('addedAt')!r}, "
                                         f"got {retired.get('at')!r}")


def expert_is_true_or_absent(case: dict[str, Any]) -> Iterator[CaseFinding]:
    if "expert" in case and case["expert"] is not True:
        yield CaseFinding("/expert", f"expert is present only as true, got {case['expert']!r}")


def items_are_in_rank_order(case: dict[str, Any]) -> Iterator[CaseFinding]:
    expect = case.get("expect")
    items = expect.get("items") if isinstance(expect, dict) else None
    for position, item in enumerate(items if isinstance(items, list) else ()):
        if isinstance(item, dict) and item.get("rank", position) != position:
            yield CaseFinding(f"/expect/items/{position}/rank",
                              f"rank is {item.get('rank')!r}, expected {position} (ranks 0..n-1 in order)")


WORLD_RULES: tuple[CaseCheck, ...] = (
    schema_problems,
    timestamps_are_utc,
    correction_has_its_own_id,
    retirement_is_strictly_later,
    expert_is_true_or_absent,
    items_are_in_rank_order,
)
# The page's rules, except the two that the stricter readings above already imply (retirement, ranks);
# shouldCall args are measured with non-ASCII escaped, the longer reading of canonical JSON.
PAGE_RULES: tuple[case_rules.CaseRule, ...] = (
    case_rules.hand_case_id_starts_with_case,
    case_rules.updated_at_is_added_at_until_retired,
    case_rules.hand_case_is_expert,
    case_rules.expect_has_a_part,
    functools.partial(case_rules.should_call_args_fit, ascii=True),
)


def case_findings(case: dict[str, Any]) -> list[CaseFinding]:
    """Every rule `case` breaks, each where it breaks (empty when the case is valid)."""
    findings = [finding for rule in WORLD_RULES for finding in rule(case)]
    return findings + [CaseFinding(breach.pointer, str(breach)) for rule in PAGE_RULES for breach in rule(case)]


def case_problems(case: dict[str, Any]) -> list[str]:
    """Every rule `case` breaks, as readable sentences (empty when the case is valid)."""
    return [str(finding) for finding in case_findings(case)]


def described(error: ValidationError) -> str:
    """A schema error in words (sizes with their bounds)."""
    # jsonschema says only that a value is too long or too short; the schema's bounds say by how much.
    for size, unit in _SIZES.items():
        if error.validator in (f"min{size}", f"max{size}"):
            low, high = error.schema.get(f"min{size}"), error.schema.get(f"max{size}")
            bounds = f"{low}..{high}" if low is not None and high is not None else (
                f"at least {low}" if high is None else f"at most {high}"
            )
            return f"has {len(error.instance)} {unit}, must have {bounds}"
    return error.message
