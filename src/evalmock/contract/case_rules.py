"""The reference page's rules for one test-set case that its JSON Schema does not state, each a named function.

Each rule reads a case as any implementation may send it: timestamps are compared as instants (`Z` and
`+00:00` spell the same time), and what is malformed (a missing field, a string that is not a date-time) is
left to the schema. A rule yields one Breach for each way the case breaks it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

# shouldCall[].args: "At most 4000 characters in canonical JSON" is stated in prose only.
MAX_ARGS_CHARS = 4000
EXPECT_PARTS = ("decisions", "answer", "items")

Case = Mapping[str, Any]


@dataclass(frozen=True)
class Breach:
    """How a case breaks one rule: the rule, what is wrong, what the rule expects and what the case holds, and
    where in the case (a JSON pointer to the value that breaks it)."""

    rule: str
    problem: str
    expected: Any
    received: Any
    pointer: str = ""

    def __str__(self) -> str:
        return f"{self.rule}: {self.problem} (expected {self.expected!r}, received {self.received!r})"


CaseRule = Callable[[Case], Iterator[Breach]]


def canonical_json(value: Any, *, ascii: bool) -> str:
    """The page's canonical JSON: sorted keys, no insignificant white space. The page does not say whether
    non-ASCII characters are escaped: `ascii=True` is the longer reading, `ascii=False` the shorter one."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=ascii)


def instant(value: Any) -> datetime | None:
    """An RFC 3339 date-time as an aware datetime, or None when it is not one."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def hand_case_id_starts_with_case(case: Case) -> Iterator[Breach]:
    if case.get("kind") == "hand" and not str(case.get("id", "")).startswith("case-"):
        yield Breach("a hand case's id starts `case-`", "a hand case's id does not start with case-",
                     expected="case-…", received=case.get("id"), pointer="/id")


def updated_at_is_added_at_until_retired(case: Case) -> Iterator[Breach]:
    if "retired" in case:
        return
    added, updated = instant(case.get("addedAt")), instant(case.get("updatedAt"))
    if added is not None and updated is not None and added != updated:
        yield Breach("updatedAt equals addedAt until the case is retired",
                     "an active case's updatedAt differs from its addedAt",
                     expected=case.get("addedAt"), received=case.get("updatedAt"), pointer="/updatedAt")


def retirement_is_consistent(case: Case) -> Iterator[Breach]:
    """updatedAt is "when the case last changed", and retiring it is a change."""
    retired = case.get("retired")
    if not isinstance(retired, Mapping):
        return
    added, updated, at = instant(case.get("addedAt")), instant(case.get("updatedAt")), instant(retired.get("at"))
    if at is None:
        return  # not a date-time: the schema says so
    if added is not None and at < added:
        yield Breach("a case is retired after it was added", "retired before it was added",
                     expected=f"retired.at >= addedAt {case.get('addedAt')}", received=retired.get("at"),
                     pointer="/retired/at")
    if updated is not None and updated < at:
        yield Breach("a retired case's updatedAt is not before its retirement", "updatedAt is before the retirement",
                     expected=f"updatedAt >= retired.at {retired.get('at')}", received=case.get("updatedAt"),
                     pointer="/updatedAt")


def hand_case_is_expert(case: Case) -> Iterator[Breach]:
    """Older servers send no `expert` at all; whether a whole page is from one is for the caller to say."""
    if case.get("kind") == "hand" and case.get("expert") is not True:
        yield Breach("every hand case is an expert's case (expert: true)", "a hand case is not marked expert",
                     expected="expert: true", received=case.get("expert", "(absent)"), pointer="/expert")


def expect_has_a_part(case: Case) -> Iterator[Breach]:
    """The schema states it as an `anyOf`, whose error names no part; this one says which parts count."""
    expect = case.get("expect")
    if not isinstance(expect, Mapping) or not any(part in expect for part in EXPECT_PARTS):
        yield Breach("expect holds at least one of decisions, answer, items", "a case's expect has no part",
                     expected="at least one of decisions, answer, items", received=expect, pointer="/expect")


def item_ranks_are_positions(case: Case) -> Iterator[Breach]:
    """A rank is "the item's position in the ranked list": distinct, within 0..n-1, in any listed order."""
    expect = case.get("expect")
    items = expect.get("items") if isinstance(expect, Mapping) else None
    if not isinstance(items, list):
        return
    ranks = [item.get("rank") for item in items if isinstance(item, Mapping) and "rank" in item]
    valid = all(isinstance(r, int) and not isinstance(r, bool) and 0 <= r < len(items) for r in ranks)
    if not valid or len(set(ranks)) != len(ranks):
        yield Breach("items hold distinct ranks 0..n-1, their positions in the ranked list",
                     f"item ranks are not positions in the list of {len(items)}",
                     expected=f"distinct ranks within 0..{len(items) - 1}", received=ranks, pointer="/expect/items")


def should_call_args_fit(case: Case, *, ascii: bool = False) -> Iterator[Breach]:
    """Measured by default in the shorter reading of canonical JSON, so no conforming case fails it."""
    expect = case.get("expect")
    decisions = expect.get("decisions") if isinstance(expect, Mapping) else None
    calls = decisions.get("shouldCall") if isinstance(decisions, Mapping) else None
    for index, call in enumerate(calls if isinstance(calls, list) else ()):
        if not isinstance(call, Mapping) or "args" not in call:
            continue
        size = len(canonical_json(call["args"], ascii=ascii))
        if size > MAX_ARGS_CHARS:
            yield Breach(f"shouldCall args are at most {MAX_ARGS_CHARS} characters of canonical JSON",
                         f"shouldCall args of tool {call.get('tool')!r} are too long",
                         expected=f"<= {MAX_ARGS_CHARS} characters", received=f"{size} characters",
                         pointer=f"/expect/decisions/shouldCall/{index}/args")


# Every rule, each in its lenient reading (hand_case_is_expert, only where a server sends `expert` at all).
RULES: tuple[CaseRule, ...] = (
    hand_case_id_starts_with_case,
    updated_at_is_added_at_until_retired,
    retirement_is_consistent,
    hand_case_is_expert,
    expect_has_a_part,
    item_ranks_are_positions,
    should_call_args_fit,
)
