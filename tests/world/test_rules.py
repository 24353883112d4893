"""The case rules catch what they claim to catch (so the suites built on them can fail)."""

from __future__ import annotations

import functools

import pytest

from evalmock.world.rules import case_problems
from valid import changed, valid_case

# a correction holding every part of expect: the page's examples' decisions and items
VALID = valid_case(
    "correction",
    expect={**valid_case("hand")["expect"], **valid_case("correction")["expect"]},
)


def with_change(path: str, value) -> dict:
    return changed(VALID, path, ... if value is KeyError else value)


def test_the_valid_case_has_no_problems():
    assert case_problems(VALID) == []


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        (with_change("id", "case-1"), "correction's id"),
        (with_change("kind", "robot"), '/kind: expected one of "correction", "hand", got "robot"'),
        (
            with_change("projectId", "nope"),
            '/projectId: expected a UUID such as "0b5e6c1a-7d2f-4e8b-9a31-5c4d3e2f1a0b", got '
            '"nope"',
        ),
        (with_change("expert", False), "expert is true or left out, got false"),
        (with_change("updatedAt", "2026-11-21T08:00:01Z"), "updatedAt is its addedAt"),
        (with_change("addedAt", "2026-11-20T08:00:01+00:00"), "2026-11-20T09:15:02Z"),
        (
            with_change(
                "retired",
                {"reason": "r", "by": {"kind": "user", "id": "u"}, "at": VALID["addedAt"]},
            ),
            "later than addedAt",
        ),
        (with_change("expect", {}), "at least one"),
        (with_change("expect.items.0.rank", 1), "ranks 0..n-1"),
        (
            with_change("expect.items.0.pointer", "matches/0"),
            '/expect/items/0/pointer: expected a JSON Pointer (RFC 6901) such as "/matches/2", '
            'got "matches/0"',
        ),
        (with_change("expect.decisions.shouldCall.0.tool", "x" * 201), "1..200"),
        (
            with_change("expect.decisions.shouldCall.0.args", {f"k{i}": i for i in range(101)}),
            "properties",
        ),
        (with_change("expect.decisions.shouldCall.0.args", {"k": "x" * 3995}), "4000"),
        (
            with_change("addedBy", {"kind": "robot", "id": "r"}),
            '/addedBy/kind: expected one of "user", "service", got "robot"',
        ),
    ],
)
def test_each_broken_rule_is_reported(case, expected):
    assert any(expected in problem for problem in case_problems(case)), case_problems(case)


def test_every_page_rule_a_case_keeps_has_words_for_a_file_s_author() -> None:
    from evalmock.world.rules import _PAGE_WORDS, PAGE_RULES

    names = {
        (rule.func if isinstance(rule, functools.partial) else rule).name for rule in PAGE_RULES
    }
    assert names == set(_PAGE_WORDS)


@pytest.mark.parametrize(
    "stamp", ["2026-11-20t08:00:01z", "2026-11-20T08:00:01.5Z", "2026-11-20T09:00:01+01:00"]
)
def test_a_date_time_not_in_the_world_s_utc_form_is_refused(stamp: str) -> None:
    problems = case_problems(with_change("addedAt", stamp))
    assert any("expected a UTC date-time in whole seconds" in problem for problem in problems), (
        problems
    )
