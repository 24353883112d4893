"""The walk rules: what consecutive pages of a walk must hold, shared by the scenario walks and the
walks followed in traffic."""

from __future__ import annotations

from typing import Any

from evalmock.contract.case_rules import instant
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.outcomes import Violation
from evalmock.harness.checks.walk_pages import PageMark, WalkLedger, id_key


def assert_newest_first(
    pages: list[list[dict[str, Any]]], exchanges: list[Exchange | None]
) -> None:
    """addedAt never increases along consecutive pages; a breach points at its case on its page."""
    previous = None
    for cases, exchange in zip(pages, exchanges, strict=True):
        for index, case in enumerate(cases):
            added = instant(case.get("addedAt"))
            if added is None:
                continue
            if previous is not None and added > previous[0]:
                _added_after(case, index, previous[1], previous[2], exchange)
            previous = (added, case.get("id"), case.get("addedAt"))


def _added_after(
    case: dict[str, Any], index: int, before_id: Any, before_added: Any, exchange: Exchange | None
) -> None:
    raise Violation(
        f"case {case.get('id')!r} was added after the case before it ({before_id!r})",
        expected=f"addedAt <= {before_added}",
        received=case.get("addedAt"),
        exchange=exchange,
        pointer=f"/data/{index}/addedAt",
    )


def assert_page_continues(
    walk: WalkLedger, cases: list[dict[str, Any]], exchange: Exchange | None, limit: int | None
) -> None:
    """The page that follows a walk's pages lists no case the walk listed already (nor one twice),
    and its first dated case was not added after the walk's last: newest first across the boundary.
    The scenario walks and the walks followed in traffic are judged by this one function."""
    keys = [id_key(case.get("id")) for case in cases]
    fresh = set(keys)
    if len(fresh) < len(keys) or any(not fresh.isdisjoint(mark.ids) for mark in walk.pages):
        start, this_page = walk.cases, walk.next_page_number
        here: dict[int, int] = {}
        for index, (key, case) in enumerate(zip(keys, cases, strict=True)):
            before, before_page = walk.position(key), walk.page_number(key)
            if before is None:
                before, before_page = here.get(key), this_page
            if before is not None:
                # The page numbers say which request listed it first: page 1 is the one without a
                # cursor. received: the value at the pointer, as every finding that points shows it
                raise Violation(
                    f"walking {_at(limit)}, case {case.get('id')!r} came back twice, at positions "
                    f"{before} (page "
                    f"{before_page}) and {start + index} (page {this_page})",
                    expected="every case exactly once",
                    received=case.get("id"),
                    exchange=exchange,
                    pointer=f"/data/{index}/id",
                )
            here[key] = start + index
    previous = walk.latest()
    if previous is None:
        return
    for index, case in enumerate(cases):
        added = instant(case.get("addedAt"))
        if added is None:
            continue
        if added > previous.instant:
            _added_after(case, index, previous.case_id, previous.added_at, exchange)
        return


def _at(limit: int | None) -> str:
    return "at the default limit" if limit is None else f"with limit={limit}"


def assert_follows_has_more(
    number: int, following: dict[str, Any], exchange: Exchange | None
) -> None:
    """Page `number` of a walk said hasMore: true; the page that follows it lists at least one
    case."""
    if not following.get("data"):
        raise Violation(
            f"page {number} said hasMore, but the next page is empty",
            expected="a further page with cases",
            received=following,
            exchange=exchange,
        )


def follow(
    pages: tuple[dict[str, Any], ...], exchanges: tuple[Exchange, ...], limit: int | None
) -> WalkLedger:
    """Judge a walk's pages one after another, as a walk seen in traffic is judged (and each page's
    own order)."""
    walk = WalkLedger()
    for body, exchange in zip(pages, exchanges, strict=True):
        cases = [case if isinstance(case, dict) else {} for case in body.get("data") or []]
        assert_page_continues(walk, cases, exchange, limit)
        assert_newest_first([cases], [exchange])
        walk.add(PageMark(cases, limit))
    return walk
