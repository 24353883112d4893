"""Each case on a page of the test-set API keeps the page's per-case rules
(contract/case_rules.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from evalmock.contract import case_rules
from evalmock.contract.case_rules import CaseRule
from evalmock.contract.operations import operation
from evalmock.harness.checks.body_memo import BodyMemo
from evalmock.harness.checks.context import CheckContext
from evalmock.harness.checks.exchange import PLAIN_JSON_LARGEST, PLAIN_JSON_REMEMBERED, Exchange
from evalmock.harness.checks.outcomes import Violation
from evalmock.harness.checks.registry import response_check

# A case's rules read the case alone, and clients read the same pages again and again: a rule that a
# case kept is remembered by the hash of the case's JSON, so a page seen before costs a look-up per
# case, not each rule again. Only for plain JSON, where orjson's reading is the standard parser's
# and so equal text means an equal case. The key is Python's 64-bit hash (keyed per process, as
# walk_pages keeps ids), not the JSON itself: a look-up then compares two integers, not a kilobyte
# held since the page was last seen. Bounded: forgotten all at once when full. A walk shows the same
# cases again on pages that differ (another filter, limit or cursor): room for a test set of some
# tens of thousands of cases (about 90 bytes each; forgetting them all takes about a millisecond).
CASES_REMEMBERED = 32_768
_kept: dict[int, int] = {}  # the hash of a case's JSON -> the rules it kept, one bit each
_bits: dict[str, int] = {}  # a rule's name -> its bit
# The hashes of a page's cases, by the page's body: a page seen before is not written out again to
# find them.
_case_keys: BodyMemo[list[int]] = BodyMemo(PLAIN_JSON_REMEMBERED, PLAIN_JSON_LARGEST)


@dataclass(frozen=True)
class _Page:
    cases: list[dict[str, Any]]
    # the hash of each case's JSON, where what it kept may be remembered by it
    keys: list[int] | None
    kept: int  # the bits of the rules every case on the page kept when it was read
    # A rule's name -> the first case that breaks it (its index and the breach), or None when every
    # case keeps it.
    verdicts: dict[str, tuple[int, case_rules.Breach] | None] = field(default_factory=dict)


def page_cases(exchange: Exchange) -> list[dict[str, Any]] | None:
    """The cases of a 200 page, or None when the exchange is not one."""
    found = _page(exchange)
    return None if found is None else found.cases


def _page(exchange: Exchange) -> _Page | None:
    """Found once per exchange: every rule asks."""
    global _last_page
    asked, found = _last_page
    if asked is not exchange:
        found = _read_page(exchange)
        _last_page = (exchange, found)
    return found


_last_page: tuple[Exchange | None, _Page | None] = (None, None)  # the last exchange asked about


def _read_page(exchange: Exchange) -> _Page | None:
    if exchange.status != 200 or operation("test-set").path_parameters(exchange.path) is None:
        return None
    body = exchange.json_or_none()
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        return None  # the document checks report a malformed page
    cases = [case if isinstance(case, dict) else {} for case in body["data"]]
    plain, _ = exchange.plain_json
    if not plain:
        return _Page(cases, None, 0)
    keys = _case_keys.get(exchange.body)
    if keys is None:
        keys = [hash(orjson.dumps(case)) for case in cases]
        _case_keys.put(exchange.body, keys)
    kept = -1  # every bit: an empty page keeps every rule
    for key in keys:
        kept &= _kept.get(key, 0)
    return _Page(cases, keys, kept)


def keep(exchange: Exchange, rule: CaseRule) -> bool | None:
    """Every case on the page keeps `rule`; the first breach is the violation, pointing into the
    page."""
    found = _page(exchange)
    if found is None:
        return None
    if rule.name not in found.verdicts:
        # The page's own rules are all judged in the first one's pass over the cases: one look-up of
        # what a case kept before serves them all.
        _judge(found, case_rules.RULES if rule in case_rules.RULES else (rule,))
    verdict = found.verdicts[rule.name]
    if verdict is None:
        return True
    index, breach = verdict
    raise Violation(
        f"{breach.problem} (case {found.cases[index].get('id')!r})",
        expected=breach.expected,
        received=breach.received,
        pointer=f"/data/{index}{breach.pointer}",
    )


def _judge(found: _Page, rules: tuple[CaseRule, ...]) -> None:
    """Each rule's verdict on the page, in one pass over its cases; a case remembered as keeping a
    rule is not judged by it again, and each case's kept rules are remembered."""
    bits = [(rule, _bits.setdefault(rule.name, 1 << len(_bits))) for rule in rules]
    asked = 0
    for rule, bit in bits:
        asked |= bit
        found.verdicts[rule.name] = None
    # a page seen before: one look-up per case, made once for every rule
    if found.kept & asked == asked:
        return
    verdicts, keys = found.verdicts, found.keys
    for index, case in enumerate(found.cases):
        known = 0 if keys is None else _kept.get(keys[index], 0)
        if known & asked == asked:
            continue
        kept = known
        for rule, bit in bits:
            if known & bit:
                continue
            breach = next(rule.check(case), None)
            if breach is None:
                kept |= bit
            elif verdicts[rule.name] is None:
                verdicts[rule.name] = (index, breach)
        if keys is not None and kept != known:
            if len(_kept) >= CASES_REMEMBERED and keys[index] not in _kept:
                _kept.clear()
            _kept[keys[index]] = kept


@response_check("test-set", case_rules.hand_case_id_starts_with_case.source)
def hand_case_id_starts_with_case(context: CheckContext) -> bool | None:
    """Every hand case's id starts `case-`."""
    exchange = context.exchange
    return keep(exchange, case_rules.hand_case_id_starts_with_case)


@response_check("test-set", case_rules.updated_at_is_added_at_until_retired.source)
def updated_at_is_added_at_until_retired(context: CheckContext) -> bool | None:
    """An active case's updatedAt is its addedAt (compared as instants: `Z` and `+00:00` are one
    time)."""
    exchange = context.exchange
    return keep(exchange, case_rules.updated_at_is_added_at_until_retired)


@response_check("test-set", case_rules.retirement_is_consistent.source)
def retirement_is_consistent(context: CheckContext) -> bool | None:
    """A retired case was retired no earlier than it was added, and its updatedAt is not before the
    retirement."""
    exchange = context.exchange
    return keep(exchange, case_rules.retirement_is_consistent)


@response_check("test-set", case_rules.hand_case_is_expert.source)
def hand_cases_are_expert(context: CheckContext) -> bool | str | None:
    """Every hand case has expert: true, on a page where any case carries expert at all (a page
    where none does is an older server's)."""
    exchange = context.exchange
    cases = page_cases(exchange)
    if cases is not None and not any("expert" in case for case in cases):
        if any(isinstance(case, dict) and case.get("kind") == "hand" for case in cases):
            return (
                "hand cases, but no case on the page carries expert: an older server's page, which "
                "the page allows"
            )
        return None
    return keep(exchange, case_rules.hand_case_is_expert)


@response_check("test-set", case_rules.expect_has_a_part.source)
def expect_has_a_part(context: CheckContext) -> bool | None:
    """Every case's expect holds at least one of decisions, answer and items."""
    exchange = context.exchange
    return keep(exchange, case_rules.expect_has_a_part)


@response_check("test-set", case_rules.item_ranks_are_distinct_positions.source)
def item_ranks_are_distinct_positions(context: CheckContext) -> bool | None:
    """Item ranks are whole numbers from 0, no two items of a case sharing one (gaps are
    allowed)."""
    exchange = context.exchange
    return keep(exchange, case_rules.item_ranks_are_distinct_positions)


@response_check("test-set", case_rules.should_call_args_fit.source)
def should_call_args_fit(context: CheckContext) -> bool | None:
    """Every shouldCall's args are at most 4000 characters of canonical JSON (sorted keys, no
    insignificant white space, non-ASCII unescaped: the shorter reading)."""
    exchange = context.exchange
    return keep(exchange, case_rules.should_call_args_fit)


@response_check("test-set", case_rules.wrong_answer_says_what_to_do.source)
def wrong_answer_says_what_to_do(context: CheckContext) -> bool | None:
    """An answer expectation with verdict wrong has a shouldSay or a why."""
    exchange = context.exchange
    return keep(exchange, case_rules.wrong_answer_says_what_to_do)


@response_check("test-set", case_rules.wrong_decisions_name_tools.source)
def wrong_decisions_name_tools(context: CheckContext) -> bool | None:
    """A decisions expectation with verdict wrong names a shouldCall or a mustNotCall tool."""
    exchange = context.exchange
    return keep(exchange, case_rules.wrong_decisions_name_tools)
