"""What every test-set case must satisfy: the document's TestSetCase schema plus the page's own rules."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from openapi_schema_validator import OAS30Validator, oas30_format_checker

from evalmock.contract.documents import TEST_SET
from evalmock.contract.schemas import component_schema

_UTC_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
_JSON_POINTER = re.compile(r"^(/([^~/]|~[01])*)*$")


@functools.cache
def case_validator() -> OAS30Validator:
    """A validator for `#/components/schemas/TestSetCase` of the test-set document (built once)."""
    return OAS30Validator(component_schema(TEST_SET.spec, "TestSetCase"), format_checker=oas30_format_checker)


def canonical_json(value: Any) -> str:
    """The page's canonical JSON: sorted keys, no insignificant white space (non-ASCII escaped, the longer form)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _tool_args_limits() -> tuple[int, int]:
    args = TEST_SET.spec["components"]["schemas"]["ToolCall"]["properties"]["args"]
    return args["maxProperties"], 4000  # the 4000-character bound is stated in prose only


def schema_problems(case: dict[str, Any]) -> Iterator[str]:
    for error in case_validator().iter_errors(case):
        where = "/".join(str(part) for part in error.absolute_path)
        yield f"schema: /{where}: {error.message}"


def id_matches_kind(case: dict[str, Any]) -> Iterator[str]:
    starts_case = str(case.get("id", "")).startswith("case-")
    if case.get("kind") == "hand" and not starts_case:
        yield f"a hand case's id starts `case-`, got {case.get('id')!r}"
    if case.get("kind") == "correction" and starts_case:
        yield f"a correction's case has the correction's id, not a `case-` id: {case.get('id')!r}"


def timestamps_are_utc(case: dict[str, Any]) -> Iterator[str]:
    stamps = {"addedAt": case.get("addedAt"), "updatedAt": case.get("updatedAt")}
    if isinstance(case.get("retired"), dict):
        stamps["retired.at"] = case["retired"].get("at")
    for name, value in stamps.items():
        if not isinstance(value, str) or not _UTC_TIMESTAMP.match(value):
            yield f"{name} must look like 2026-11-20T09:15:02Z, got {value!r}"


def updated_at_follows_retirement(case: dict[str, Any]) -> Iterator[str]:
    retired = case.get("retired")
    if retired is None:
        if case.get("updatedAt") != case.get("addedAt"):
            yield "updatedAt equals addedAt until the case is retired"
        return
    if case.get("updatedAt") != retired.get("at"):
        yield "a retired case's updatedAt equals retired.at"
    if not str(retired.get("at")) > str(case.get("addedAt")):
        yield "retired.at is later than addedAt"


def expert_is_true_or_absent(case: dict[str, Any]) -> Iterator[str]:
    if "expert" in case and case["expert"] is not True:
        yield "expert is present only as true"
    if case.get("kind") == "hand" and case.get("expert") is not True:
        yield "every hand case is an expert's case (expert: true)"


def expect_has_a_part(case: dict[str, Any]) -> Iterator[str]:
    expect = case.get("expect") or {}
    if not any(part in expect for part in ("decisions", "answer", "items")):
        yield "expect holds at least one of decisions, answer, items"


def items_are_ranked(case: dict[str, Any]) -> Iterator[str]:
    items = (case.get("expect") or {}).get("items") or []
    for position, item in enumerate(items):
        if item.get("rank", position) != position:
            yield f"items[{position}].rank is {item.get('rank')}, expected {position} (ranks 0..n-1 in order)"
        if "pointer" in item and not _JSON_POINTER.match(item["pointer"]):
            yield f"items[{position}].pointer is not a JSON Pointer: {item['pointer']!r}"


def tool_calls_within_limits(case: dict[str, Any]) -> Iterator[str]:
    max_properties, max_chars = _tool_args_limits()
    calls = ((case.get("expect") or {}).get("decisions") or {}).get("shouldCall") or []
    for position, call in enumerate(calls):
        tool, args = call.get("tool"), call.get("args")
        if not isinstance(tool, str) or not 1 <= len(tool) <= 200:
            yield f"shouldCall[{position}].tool must have 1..200 characters"
        if not isinstance(args, dict):
            yield f"shouldCall[{position}].args must be an object"
            continue
        if len(args) > max_properties:
            yield f"shouldCall[{position}].args has {len(args)} properties, at most {max_properties}"
        if len(canonical_json(args)) > max_chars:
            yield f"shouldCall[{position}].args is over {max_chars} characters of canonical JSON"


CASE_RULES: tuple[Callable[[dict[str, Any]], Iterator[str]], ...] = (
    schema_problems,
    id_matches_kind,
    timestamps_are_utc,
    updated_at_follows_retirement,
    expert_is_true_or_absent,
    expect_has_a_part,
    items_are_ranked,
    tool_calls_within_limits,
)


def case_problems(case: dict[str, Any]) -> list[str]:
    """Every rule `case` breaks, as readable sentences (empty when the case is valid)."""
    return [problem for rule in CASE_RULES for problem in rule(case)]
