"""The reference page's rules for one test-set case that its JSON Schema does not state, each a
named function.

Each rule reads a case as any implementation may send it: timestamps are compared as instants (`Z`
and `+00:00` spell the same time), and what is malformed (a missing field, a string that is not a
date-time) is left to the schema. A rule yields one Breach for each way the case breaks it, and
carries its Source: the page's words it rests on, or why it is only inferred from them.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from evalmock.contract.sources import Source, inferred, on_test_set_page, page

# shouldCall[].args: the page states this bound in prose only, so the schema cannot carry it.
MAX_ARGS_CHARS = 4000
EXPECT_PARTS = ("decisions", "answer", "items")
_EXPECT_PARTS = frozenset(EXPECT_PARTS)

Case = Mapping[str, Any]
# isinstance against this tuple decides a dict (what JSON gives) without Mapping's abstract-class
# machinery, and anything else as isinstance(value, Mapping) does: a judge of a page asks it some
# 300 times.
MAPPING = (dict, Mapping)
_LEAVES = (str, int, type(None))  # JSON values that hold nothing (a bool is an int)


@dataclass(frozen=True)
class Breach:
    """How a case breaks one rule: the rule, what is wrong, where in the case (a JSON pointer), what
    the rule expects and what the case holds."""

    rule: str
    problem: str
    expected: Any
    received: Any
    pointer: str = ""

    def __str__(self) -> str:
        return (
            f"{self.rule}: {self.problem} (expected {self.expected!r}, received {self.received!r})"
        )


@dataclass(frozen=True)
class CaseRule:
    """A named per-case rule with its source; calling it yields the case's breaches."""

    name: str
    source: Source
    check: Callable[..., Iterator[Breach]]

    def __call__(self, case: Case, **options: Any) -> Iterator[Breach]:
        return self.check(case, **options)


def case_rule(source: Source) -> Callable[[Callable[..., Iterator[Breach]]], CaseRule]:
    def decorate(func: Callable[..., Iterator[Breach]]) -> CaseRule:
        return CaseRule(func.__name__, source, func)

    return decorate


def canonical_json(value: Any, *, ascii: bool) -> str:
    """Canonical JSON as we read the page's term: sorted keys, no insignificant white space. The
    page does not say more. `ascii=False` is the shorter reading (non-ASCII characters as they are,
    and a whole number written without a fraction, as RFC 8785 writes 1.0); `ascii=True` the longer
    one (escaped, and Python's own numbers)."""
    return _CANONICAL[ascii].encode(value if ascii else _whole_floats(value))


# json.dumps with these options builds an encoder on every call; a page's rules call it for every
# shouldCall.
_CANONICAL = {
    ascii: json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=ascii)
    for ascii in (False, True)
}


def canonical_length(value: Any, *, ascii: bool) -> int:
    """len(canonical_json(value, ascii=ascii)). A value of JSON's own types that holds no number
    written as a float is written by orjson, in the shorter reading, as the same text (each
    character escaped alike, no white space, keys sorted or not: the length is the same), several
    times faster; a page's rules measure every shouldCall."""
    if not ascii and _floatless(value):
        try:
            return len(orjson.dumps(value).decode("utf-8"))
        # orjson writes no integer past 64 bits, no lone surrogate, no nesting past its limit
        except TypeError:
            pass
    return len(canonical_json(value, ascii=ascii))


def _floatless(value: Any) -> bool:
    """Whether a value is made of dict (with text keys), list, str, int, bool and None only: no
    float, no subclass."""
    kind = type(value)
    if kind is dict:
        return all(type(key) is str for key in value) and all(map(_floatless, value.values()))
    if kind is list:
        return all(map(_floatless, value))
    return kind is str or kind is int or kind is bool or value is None


def _whole_floats(value: Any) -> Any:
    # most of what args hold, decided before Mapping's abstract-class machinery
    if isinstance(value, _LEAVES):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, MAPPING):
        return {key: _whole_floats(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_whole_floats(item) for item in value]
    return value


def instant(value: Any) -> datetime | None:
    """An RFC 3339 date-time as an aware datetime, or None when it is not one."""
    if not isinstance(value, str):
        return None
    return _instant(value)


# several rules read each case's times; pages of one list repeat them
@functools.lru_cache(maxsize=4096)
def _instant(value: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


@case_rule(
    page(
        on_test_set_page("A correction’s case has the correction’s id; a hand case’s starts case-.")
    )
)
def hand_case_id_starts_with_case(case: Case) -> Iterator[Breach]:
    if case.get("kind") == "hand" and not str(case.get("id", "")).startswith("case-"):
        yield Breach(
            "a hand case's id starts `case-`",
            "a hand case's id does not start with case-",
            expected="case-…",
            received=case.get("id"),
            pointer="/id",
        )


@case_rule(page(on_test_set_page("When the case last changed: its addedAt until it’s retired.")))
def updated_at_is_added_at_until_retired(case: Case) -> Iterator[Breach]:
    if "retired" in case:
        return
    added, updated = instant(case.get("addedAt")), instant(case.get("updatedAt"))
    if added is not None and updated is not None and added != updated:
        yield Breach(
            "updatedAt equals addedAt until the case is retired",
            "an active case's updatedAt differs from its addedAt",
            expected=case.get("addedAt"),
            received=case.get("updatedAt"),
            pointer="/updatedAt",
        )


@case_rule(
    inferred(
        "A case cannot be retired before it was added, and retiring it is a change, so updatedAt "
        "(when the case "
        "last changed) is not before retired.at. The page gives retired.at and updatedAt but no "
        "order between them.",
        on_test_set_page("When the case last changed: its addedAt until it’s retired."),
    )
)
def retirement_is_consistent(case: Case) -> Iterator[Breach]:
    retired = case.get("retired")
    if not isinstance(retired, MAPPING):
        return
    added, updated, at = (
        instant(case.get("addedAt")),
        instant(case.get("updatedAt")),
        instant(retired.get("at")),
    )
    if at is None:
        return  # not a date-time: the schema says so
    if added is not None and at < added:
        yield Breach(
            "a case is retired after it was added",
            "retired before it was added",
            expected=f"retired.at >= addedAt {case.get('addedAt')}",
            received=retired.get("at"),
            pointer="/retired/at",
        )
    if updated is not None and updated < at:
        yield Breach(
            "a retired case's updatedAt is not before its retirement",
            "updatedAt is before the retirement",
            expected=f"updatedAt >= retired.at {retired.get('at')}",
            received=case.get("updatedAt"),
            pointer="/updatedAt",
        )


@case_rule(
    page(
        on_test_set_page(
            "Present (true) on an expert’s case: a correction’s case when the correction was "
            "recorded "
            "while its group was restricted, and every hand case, since adding one needs publish "
            "on "
            "the agent, or write on its project when more than one project serves the agent.",
        ),
        on_test_set_page("Absent from older servers."),
        reading="Whether a whole page comes from an older server (no case carries expert) is for "
        "the caller to say.",
    )
)
def hand_case_is_expert(case: Case) -> Iterator[Breach]:
    if case.get("kind") == "hand" and case.get("expert") is not True:
        yield Breach(
            "every hand case is an expert's case (expert: true)",
            "a hand case is not marked expert",
            expected="expert: true",
            received=case.get("expert", "(absent)"),
            pointer="/expert",
        )


@case_rule(
    page(on_test_set_page("One part for each part its correction gave a verdict on; at least one."))
)
def expect_has_a_part(case: Case) -> Iterator[Breach]:
    """The schema states it as an `anyOf`, whose error names no part; this one says which parts
    count."""
    expect = case.get("expect")
    if not isinstance(expect, MAPPING) or _EXPECT_PARTS.isdisjoint(expect.keys()):
        yield Breach(
            "expect holds at least one of decisions, answer, items",
            "a case's expect has no part",
            expected="at least one of decisions, answer, items",
            received=expect,
            pointer="/expect",
        )


@case_rule(
    page(
        on_test_set_page("The item’s position in the ranked list (0 = first)."),
        reading="A position is a whole number from 0, and two items cannot hold one position. The "
        "ranked list may be "
        "longer than the judged items, so ranks may have gaps (1, 3, 5).",
    )
)
def item_ranks_are_distinct_positions(case: Case) -> Iterator[Breach]:
    expect = case.get("expect")
    items = expect.get("items") if isinstance(expect, MAPPING) else None
    if not isinstance(items, list):
        return
    seen: dict[Any, int] = {}
    for index, item in enumerate(items):
        if not isinstance(item, MAPPING) or "rank" not in item:
            continue
        rank = item["rank"]
        if not isinstance(rank, int) or isinstance(rank, bool) or rank < 0:
            yield Breach(
                "an item's rank is its position in the ranked list, from 0",
                "a rank is not a position",
                expected="a whole number >= 0",
                received=rank,
                pointer=f"/expect/items/{index}/rank",
            )
        elif rank in seen:
            yield Breach(
                "two items cannot hold one position in the ranked list",
                "two items share a rank",
                expected=f"a rank other than items/{seen[rank]}'s",
                received=rank,
                pointer=f"/expect/items/{index}/rank",
            )
        else:
            seen[rank] = index


@case_rule(page(on_test_set_page("At most 4000 characters in canonical JSON.")))
def should_call_args_fit(case: Case, *, ascii: bool = False) -> Iterator[Breach]:
    """Measured by default in the shorter reading of canonical JSON, so no conforming case fails
    it."""
    expect = case.get("expect")
    decisions = expect.get("decisions") if isinstance(expect, MAPPING) else None
    calls = decisions.get("shouldCall") if isinstance(decisions, MAPPING) else None
    for index, call in enumerate(calls if isinstance(calls, list) else ()):
        if not isinstance(call, MAPPING) or "args" not in call:
            continue
        size = canonical_length(call["args"], ascii=ascii)
        if size > MAX_ARGS_CHARS:
            yield Breach(
                f"shouldCall args are at most {MAX_ARGS_CHARS} characters of canonical JSON",
                f"shouldCall args of tool {call.get('tool')!r} are too long",
                expected=f"<= {MAX_ARGS_CHARS} characters",
                received=f"{size} characters",
                pointer=f"/expect/decisions/shouldCall/{index}/args",
            )


_NOTHING_TO_DO = (
    "A `wrong` verdict says what the agent should do instead; with nothing to say it, no run could "
    "be "
    "graded against it. The page does not state it as a rule."
)


@case_rule(inferred(_NOTHING_TO_DO, on_test_set_page("wrong: it does what shouldSay or why asks.")))
def wrong_answer_says_what_to_do(case: Case) -> Iterator[Breach]:
    expect = case.get("expect")
    answer = expect.get("answer") if isinstance(expect, MAPPING) else None
    if (
        isinstance(answer, MAPPING)
        and answer.get("verdict") == "wrong"
        and not (answer.get("shouldSay") or answer.get("why"))
    ):
        yield Breach(
            "a wrong answer says what to say instead",
            "a wrong answer has neither shouldSay nor why",
            expected="shouldSay or why",
            received=answer,
            pointer="/expect/answer",
        )


@case_rule(
    inferred(
        _NOTHING_TO_DO,
        on_test_set_page(
            "wrong: it calls every shouldCall tool (with its args where given) and none of "
            "mustNotCall, checked exactly, "
            "without a model.",
        ),
    )
)
def wrong_decisions_name_tools(case: Case) -> Iterator[Breach]:
    expect = case.get("expect")
    decisions = expect.get("decisions") if isinstance(expect, MAPPING) else None
    if (
        isinstance(decisions, MAPPING)
        and decisions.get("verdict") == "wrong"
        and not (decisions.get("shouldCall") or decisions.get("mustNotCall"))
    ):
        yield Breach(
            "wrong decisions name the tools to call or not",
            "wrong decisions name no tool",
            expected="a shouldCall or mustNotCall tool",
            received=decisions,
            pointer="/expect/decisions",
        )


# Every rule, each in its lenient reading (hand_case_is_expert, only where a server sends `expert`
# at all).
RULES: tuple[CaseRule, ...] = (
    hand_case_id_starts_with_case,
    updated_at_is_added_at_until_retired,
    retirement_is_consistent,
    hand_case_is_expert,
    expect_has_a_part,
    item_ranks_are_distinct_positions,
    should_call_args_fit,
    wrong_answer_says_what_to_do,
    wrong_decisions_name_tools,
)
