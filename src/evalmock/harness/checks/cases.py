"""Each case on a page of the test-set API: ids, timestamps, retirement, expert, expect, items, args size."""

from __future__ import annotations

from typing import Any

from evalmock.contract import case_rules
from evalmock.contract.case_rules import CaseRule
from evalmock.harness.checks.base import Exchange, Violation
from evalmock.harness.checks.registry import response_check


def page_cases(exchange: Exchange) -> list[dict[str, Any]] | None:
    """The cases of a 200 page, or None when the exchange is not one."""
    if exchange.status != 200 or not exchange.path.endswith("/test-set/cases"):
        return None
    body = exchange.json_or_none()
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        return None  # the schema checks report a malformed page
    return [case for case in body["data"] if isinstance(case, dict)]


def _keep(cases: list[dict[str, Any]] | None, *rules: CaseRule) -> bool | None:
    """Each case keeps the page's rules; the first breach is the violation."""
    if cases is None:
        return None
    for case in cases:
        for rule in rules:
            for breach in rule(case):
                raise Violation(f"{breach.problem} (case {case.get('id')!r})",
                                expected=breach.expected, received=breach.received)
    return True


@response_check("test-set")
def hand_case_id_starts_with_case(exchange: Exchange) -> bool | None:
    """"A correction's case has the correction's id; a hand case's id starts `case-`"."""
    return _keep(page_cases(exchange), case_rules.hand_case_id_starts_with_case)


@response_check("test-set")
def updated_at_is_added_at_until_retired(exchange: Exchange) -> bool | None:
    """updatedAt: "When the case last changed; equals `addedAt` until the case is retired" (compared as
    instants, so `Z` and `+00:00` spell the same time)."""
    return _keep(page_cases(exchange), case_rules.updated_at_is_added_at_until_retired)


@response_check("test-set")
def retirement_is_consistent(exchange: Exchange) -> bool | None:
    """A retired case was retired after it was added, and its updatedAt ("when the case last changed")
    is not before the retirement."""
    return _keep(page_cases(exchange), case_rules.retirement_is_consistent)


@response_check("test-set")
def hand_cases_are_expert(exchange: Exchange) -> bool | None:
    """expert: "Present (true) on an expert's case: every hand case …". It is "Absent from older servers",
    so a page where no case carries `expert` is left alone; otherwise every hand case has expert: true."""
    cases = page_cases(exchange)
    if cases is not None and not any("expert" in case for case in cases):
        return True  # an older server's page
    return _keep(cases, case_rules.hand_case_is_expert)


@response_check("test-set")
def expect_has_a_part(exchange: Exchange) -> bool | None:
    """expect: "One part for each part its correction gave a verdict on; at least one" (decisions,
    answer or items)."""
    return _keep(page_cases(exchange), case_rules.expect_has_a_part)


@response_check("test-set")
def item_ranks_are_positions(exchange: Exchange) -> bool | None:
    """items[].rank: "The item's position in the ranked list (0 = first)": ranks are distinct positions
    0..n-1 of the n items."""
    return _keep(page_cases(exchange), case_rules.item_ranks_are_positions)


@response_check("test-set")
def should_call_args_fit(exchange: Exchange) -> bool | None:
    """shouldCall[].args: "At most 4000 characters in canonical JSON (sorted keys, no insignificant white
    space)"."""
    return _keep(page_cases(exchange), case_rules.should_call_args_fit)
