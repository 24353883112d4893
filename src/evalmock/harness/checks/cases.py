"""Each case on a page of the test-set API: ids, timestamps, retirement, expert, expect, items, args size."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from evalmock.harness.checks.base import Exchange, Violation
from evalmock.harness.checks.registry import response_check

MAX_ARGS_CHARS = 4000


def page_cases(exchange: Exchange) -> list[dict[str, Any]] | None:
    """The cases of a 200 page, or None when the exchange is not one."""
    if exchange.status != 200 or not exchange.path.endswith("/test-set/cases"):
        return None
    body = exchange.json_or_none()
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        return None  # the schema checks report a malformed page
    return [case for case in body["data"] if isinstance(case, dict)]


def instant(value: Any) -> datetime | None:
    """An RFC 3339 date-time as an aware datetime, or None when it is not one."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def _label(case: dict[str, Any]) -> str:
    return f"case {case.get('id')!r}"


def _each(exchange: Exchange) -> Iterator[dict[str, Any]]:
    yield from page_cases(exchange) or ()


@response_check("test-set")
def hand_case_id_starts_with_case(exchange: Exchange) -> bool | None:
    """"A correction's case has the correction's id; a hand case's id starts `case-`"."""
    cases = page_cases(exchange)
    if cases is None:
        return None
    for case in cases:
        if case.get("kind") == "hand" and not str(case.get("id", "")).startswith("case-"):
            raise Violation(f"a hand case's id does not start with case- ({_label(case)})",
                            expected="case-…", received=case.get("id"))
    return True


@response_check("test-set")
def updated_at_is_added_at_until_retired(exchange: Exchange) -> bool | None:
    """updatedAt: "When the case last changed; equals `addedAt` until the case is retired" (compared as
    instants, so `Z` and `+00:00` spell the same time)."""
    cases = page_cases(exchange)
    if cases is None:
        return None
    for case in cases:
        if "retired" in case:
            continue
        added, updated = instant(case.get("addedAt")), instant(case.get("updatedAt"))
        if added is None or updated is None:
            continue  # not date-times: the schema check reports it
        if added != updated:
            raise Violation(f"an active case's updatedAt differs from its addedAt ({_label(case)})",
                            expected=case.get("addedAt"), received=case.get("updatedAt"))
    return True


@response_check("test-set")
def retirement_is_consistent(exchange: Exchange) -> bool | None:
    """A retired case was retired after it was added, and its updatedAt ("when the case last changed")
    is not before the retirement."""
    cases = page_cases(exchange)
    if cases is None:
        return None
    for case in cases:
        retired = case.get("retired")
        if not isinstance(retired, dict):
            continue
        added, updated, at = instant(case.get("addedAt")), instant(case.get("updatedAt")), instant(retired.get("at"))
        if added and at and at < added:
            raise Violation(f"retired before it was added ({_label(case)})",
                            expected=f"retired.at >= addedAt {case.get('addedAt')}", received=retired.get("at"))
        if updated and at and updated < at:
            raise Violation(f"updatedAt is before the retirement ({_label(case)})",
                            expected=f"updatedAt >= retired.at {retired.get('at')}", received=case.get("updatedAt"))
    return True


@response_check("test-set")
def hand_cases_are_expert(exchange: Exchange) -> bool | None:
    """expert: "Present (true) on an expert's case: every hand case …". It is "Absent from older servers",
    so a page where no case carries `expert` is left alone; otherwise every hand case has expert: true."""
    cases = page_cases(exchange)
    if cases is None:
        return None
    server_sends_expert = any("expert" in case for case in cases)
    for case in cases:
        if case.get("kind") != "hand":
            continue
        marked = case["expert"] is True if "expert" in case else not server_sends_expert
        if not marked:
            raise Violation(f"a hand case is not marked expert ({_label(case)})",
                            expected="expert: true", received=case.get("expert", "(absent)"))
    return True


@response_check("test-set")
def expect_has_a_part(exchange: Exchange) -> bool | None:
    """expect: "One part for each part its correction gave a verdict on; at least one" (decisions,
    answer or items)."""
    cases = page_cases(exchange)
    if cases is None:
        return None
    for case in cases:
        expect = case.get("expect")
        if not isinstance(expect, dict) or not any(part in expect for part in ("decisions", "answer", "items")):
            raise Violation(f"a case's expect has no part ({_label(case)})",
                            expected="at least one of decisions, answer, items", received=expect)
    return True


@response_check("test-set")
def item_ranks_are_positions(exchange: Exchange) -> bool | None:
    """items[].rank: "The item's position in the ranked list (0 = first)": ranks are distinct positions
    0..n-1 of the n items."""
    cases = page_cases(exchange)
    if cases is None:
        return None
    for case in cases:
        expect = case.get("expect")
        items = expect.get("items") if isinstance(expect, dict) else None
        if not isinstance(items, list):
            continue
        ranks = [item.get("rank") for item in items if isinstance(item, dict) and "rank" in item]
        valid = all(isinstance(r, int) and not isinstance(r, bool) and 0 <= r < len(items) for r in ranks)
        if not valid or len(set(ranks)) != len(ranks):
            raise Violation(f"item ranks are not positions in the list of {len(items)} ({_label(case)})",
                            expected=f"distinct ranks within 0..{len(items) - 1}", received=ranks)
    return True


def canonical_json(value: Any) -> str:
    """Canonical JSON as the page means it: sorted keys, no insignificant white space."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@response_check("test-set")
def should_call_args_fit(exchange: Exchange) -> bool | None:
    """shouldCall[].args: "At most 4000 characters in canonical JSON (sorted keys, no insignificant white
    space)"."""
    cases = page_cases(exchange)
    if cases is None:
        return None
    for case in cases:
        expect = case.get("expect")
        decisions = expect.get("decisions") if isinstance(expect, dict) else None
        calls = decisions.get("shouldCall") if isinstance(decisions, dict) else None
        for call in calls if isinstance(calls, list) else ():
            if not isinstance(call, dict) or "args" not in call:
                continue
            size = len(canonical_json(call["args"]))
            if size > MAX_ARGS_CHARS:
                raise Violation(f"shouldCall args of tool {call.get('tool')!r} are too long ({_label(case)})",
                                expected=f"<= {MAX_ARGS_CHARS} characters", received=f"{size} characters")
    return True
