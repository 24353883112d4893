"""The pages' rules for a client: what an app must send, judged over the requests it sent, each a
named function with its Source (`evalmock rules` lists them after the checks).

A rule reads one caller's journal (`client_outcomes.Journal`) and yields, for each occasion, a
`ClientBreach`, `Kept`, or `Unjudged` when the journal cannot tell (a cursor whose issuing answer a
bounded journal dropped). `judge` gives the verdict of them all (`client_verdict`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from evalmock.contract.client_exchange import ClientExchange
from evalmock.contract.client_outcomes import (
    ClientBreach,
    ClientRule,
    Journal,
    Kept,
    Outcome,
    Unjudged,
    client_rule,
    operation_of,
    shown,
)
from evalmock.contract.client_verdict import ClientVerdict, judge_callers
from evalmock.contract.documents import GRADIENT
from evalmock.contract.filters import LIST_API, filters, list_key
from evalmock.contract.operations import operation
from evalmock.contract.query_form import form_problems
from evalmock.contract.sources import inferred, on_digitalocean_page, on_test_set_page, page
from evalmock.nouns import counted

CURSOR = "cursor"  # the test-set list's cursor parameter (the document's)
_LIST = operation(LIST_API)
_LIMIT = _LIST.parameters["limit"]["schema"]  # its bounds, which a revision of the page moves


# -- the rules
# ------------------------------------------------------------------------------------------

_AS_IT_CAME = on_test_set_page("Where the previous page ended: its nextCursor, as it came.")
_OPAQUE = on_test_set_page("Opaque cursor. Treat as opaque on the client.")
_SEALED = on_test_set_page(
    "A runtime that seals cursors takes one only for the same list, filters and caller, within a "
    "day; otherwise 400 bad-input, and the list starts again without it."
)
_BUSY = on_test_set_page(
    "The database was too busy to answer in time (database-busy); Retry-After (whole seconds) says "
    "when to try again."
)


@client_rule(
    page(
        _AS_IT_CAME,
        _OPAQUE,
        reading="Every cursor the app sends is a nextCursor an earlier answer gave it, byte for "
        "byte (after the query's percent-decoding): never built, edited, re-encoded or trimmed. "
        "An empty cursor= is left open (the page says only that an absent one asks for the first "
        "page).",
    ),
    api=LIST_API,
    needs="no request sent a cursor",
)
def client_sends_the_cursor_as_it_came(journal: Journal) -> Iterator[Outcome]:
    """Every cursor the app sends is a nextCursor an earlier answer gave it, byte for byte."""
    for index, exchange in journal.judged():
        for cursor in _cursors(exchange):
            if journal.issuer(index, cursor) is not None:
                yield Kept(index)
            elif journal.unread_before(index, exchange.api):
                yield Unjudged(index, _UNREAD)
            else:
                yield ClientBreach(
                    client_sends_the_cursor_as_it_came.name,
                    index,
                    "the app sent a cursor no earlier answer gave it"
                    + journal.near_miss(index, cursor),
                    expected="a nextCursor an earlier answer gave, as it came",
                    received=shown(cursor),
                )


@client_rule(
    page(
        _SEALED,
        reading="A cursor goes back with the same list (the path: the agent; and the list's key, "
        "projectId, in either letter case) and the same filters (the query parameters the "
        "document marks cursor-binds, each compared as the list reads it: kind as a set) as the "
        "request whose answer gave it. limit is not among them: the page binds a cursor to its "
        "list, filters and caller only, so the page size may change. The caller is one journal's. "
        "A cursor two answers gave alike (a runtime whose cursors are offsets) may go back with "
        "either's.",
    ),
    api=LIST_API,
    needs="no request sent a cursor an earlier answer in the journal gave",
)
def client_keeps_the_filters_of_its_cursor(journal: Journal) -> Iterator[Outcome]:
    """A cursor goes back with the same list and filters as the request whose answer gave it (the
    page size may change)."""
    for index, exchange in journal.judged():
        for cursor in _cursors(exchange):
            # a cursor written the same by two answers (a runtime whose cursors are offsets) is
            # kept when it goes back with the list and filters of either
            issuers = [i for i in journal.issued.get(cursor, ()) if i < index]
            if not issuers:
                continue  # not a cursor it was given: client_sends_the_cursor_as_it_came's
            now = _list_and_filters(exchange)
            if any(_list_and_filters(journal.exchanges[i]) == now for i in issuers):
                yield Kept(index)
                continue
            if journal.unread_before(index, exchange.api):
                yield Unjudged(index, _UNREAD)
                continue
            issuer = issuers[-1]
            was = _list_and_filters(journal.exchanges[issuer])
            changed = [name for name in now if was.get(name) != now.get(name)]
            yield ClientBreach(
                client_keeps_the_filters_of_its_cursor.name,
                index,
                f"the cursor of request #{issuer} came back with other {', '.join(changed)}",
                expected=_bound(journal.exchanges[issuer], changed),
                received=_bound(exchange, changed),
            )


@client_rule(
    page(
        _BUSY,
        reading="After an answer of the list with status 503 and Retry-After: N, the app's next "
        "request to that list (the same path and projectId) comes N seconds or more after the "
        "request the 503 answered. Times are the journal's (the mock's or the proxy's clock), "
        "taken when each request arrived, so an answer's own latency counts as waiting.",
    ),
    api=LIST_API,
    needs="no 503 with Retry-After was followed by another request to its list",
)
def client_waits_retry_after(journal: Journal) -> Iterator[Outcome]:
    """After a 503 with Retry-After: N, the app's next request to that list comes N seconds or more
    later."""
    judged = list(journal.judged())
    for position, (index, busy) in enumerate(judged):
        if busy.api != LIST_API or busy.status != 503 or busy.retry_after is None:
            continue
        following = next(((i, e) for i, e in judged[position + 1 :] if _same_list(busy, e)), None)
        if following is None:
            continue
        later, retry = following
        waited = retry.at - busy.at
        if waited >= busy.retry_after:
            yield Kept(later)
        else:
            yield ClientBreach(
                client_waits_retry_after.name,
                later,
                f"the app asked the list again {counted(waited, 'second', '.3f')} after request "
                f"#{index} was answered 503 with Retry-After: {busy.retry_after}",
                expected=(
                    f"the next request to the list {counted(busy.retry_after, 'second')} or more "
                    "later"
                ),
                received=f"{counted(waited, 'second', '.3f')} later",
            )


@client_rule(
    page(
        _SEALED,
        reading="After a 400 to a request whose cursor was its only fault (its other parameters "
        "are of the page's form), the app does not send that cursor again: the list starts "
        "again without it, unless a later answer gives it anew. A 400 to a request with another "
        "malformed parameter may be that parameter's, so it is not read as refusing the cursor.",
    ),
    api=LIST_API,
    needs="no request with a cursor (and no other fault) was answered 400",
)
def client_starts_again_after_a_refused_cursor(journal: Journal) -> Iterator[Outcome]:
    """After a 400 to a request whose only fault can be its cursor, the app never sends that cursor
    again."""
    judged = list(journal.judged())
    blamed: set[int] = set()  # a resend is told once, however many refusals it repeats
    for position, (index, refused) in enumerate(judged):
        if refused.status != 400 or _form_breaches(refused):
            continue
        for cursor in _cursors(refused):
            # sent again, unless an answer since gave it anew (a runtime whose cursors are offsets)
            again = [
                i
                for i, e in judged[position + 1 :]
                if cursor in _cursors(e) and not _given_since(journal, index, i, cursor)
            ]
            if not again:
                yield Kept(index)
            for later in again:
                if later in blamed:
                    continue
                blamed.add(later)
                yield ClientBreach(
                    client_starts_again_after_a_refused_cursor.name,
                    later,
                    f"the app sent again the cursor refused with 400 at request #{index}",
                    expected="the list started again without the refused cursor",
                    received=shown(cursor),
                )


@client_rule(
    page(
        on_test_set_page("--header 'Authorization: Bearer <token>'"),
        on_test_set_page("Needs read on the project."),
        on_test_set_page("Missing / malformed / expired / revoked bearer token."),
        reading="A request without a bearer token cannot have read on the project; the page's "
        "own request carries one. Whether a token came is all a journal keeps, never the token.",
    ),
    api=LIST_API,
    needs="no request to the test-set list",
)
def client_sends_a_token(journal: Journal) -> Iterator[Outcome]:
    """Every request to the test-set list carries an Authorization header."""
    yield from _token_outcomes(journal, client_sends_a_token)


@client_rule(
    inferred(
        "The page's own sample call passes an access token (option.WithAccessToken), and "
        "DigitalOcean's service refuses a request without one; the page does not state that a "
        "request needs it.",
        on_digitalocean_page('option.WithAccessToken("My Access Token"),'),
    ),
    api=GRADIENT.name,
    needs="no request to DigitalOcean's test case",
)
def client_sends_a_token_to_digitalocean(journal: Journal) -> Iterator[Outcome]:
    """Every request for DigitalOcean's test case carries an Authorization header."""
    yield from _token_outcomes(journal, client_sends_a_token_to_digitalocean)


@client_rule(
    page(
        on_test_set_page(
            "projectId is missing or not a project id (a UUID), or include or kind names "
            "something else."
        ),
        *(on_test_set_page(words) for words in _LIST.page_words("limit")),
        reading="The app sends projectId as a UUID, include and kind only as the page allows, "
        f"and limit as a whole number {_LIMIT['minimum']}..{_LIMIT['maximum']}: each query "
        "parameter of the form its schema in openapi/agent-test-set.yaml states. An empty "
        "include= or kind= is left open.",
    ),
    api=LIST_API,
    needs="no request to the test-set list",
)
def client_sends_the_list_s_parameters_as_the_page_states(journal: Journal) -> Iterator[Outcome]:
    """Every request to the test-set list sends projectId, and projectId, include, kind and limit
    of the form the page states."""
    yield from _form_outcomes(journal, client_sends_the_list_s_parameters_as_the_page_states)


@client_rule(
    page(
        on_digitalocean_page("EvaluationTestCaseVersion param.Field[int64]optional"),
        on_digitalocean_page("Version of the test case."),
        reading="The version is a whole number (int64). Its wire name, "
        "evaluation_test_case_version, is inferred (the page gives the SDK's field); an empty "
        "value is left open, and a version below 1 is not judged (the page names none).",
    ),
    api=GRADIENT.name,
    needs="no request to DigitalOcean's test case",
)
def client_sends_an_integer_version(journal: Journal) -> Iterator[Outcome]:
    """Every version the app asks DigitalOcean's test case for is an integer (int64)."""
    yield from _form_outcomes(journal, client_sends_an_integer_version)


RULES: tuple[ClientRule, ...] = (
    client_sends_the_cursor_as_it_came,
    client_keeps_the_filters_of_its_cursor,
    client_waits_retry_after,
    client_starts_again_after_a_refused_cursor,
    client_sends_a_token,
    client_sends_a_token_to_digitalocean,
    client_sends_the_list_s_parameters_as_the_page_states,
    client_sends_an_integer_version,
)


def judge(
    exchanges: Sequence[ClientExchange], *, dropped: int = 0, strict: bool = False
) -> ClientVerdict:
    """The verdict of every rule on one caller's requests, oldest first (a mock session's journal);
    `dropped`: how many older ones a bounded journal no longer holds. `strict`: an inferred rule's
    finding fails the verdict too, as a page rule's does."""
    return judge_callers([(exchanges, dropped)], RULES, strict=strict)


# -- helpers
# ------------------------------------------------------------------------------------------

_UNREAD = (
    "the answer that gave the cursor may be among the entries the journal dropped, or an answer "
    "whose body was not read"
)


def _cursors(exchange: ClientExchange) -> list[str]:
    """The non-empty cursors a request of the list sent (an empty one is left open)."""
    if exchange.api != LIST_API:
        return []
    return [value for name, value in exchange.query if name == CURSOR and value]


def _given_since(journal: Journal, refused: int, index: int, cursor: str) -> bool:
    """Whether an answer between the refusal and `index` gave `cursor` anew."""
    issuer = journal.issuer(index, cursor)
    return issuer is not None and issuer > refused


def _path_parameters(exchange: ClientExchange) -> dict[str, str]:
    found = operation_of(exchange)
    return (found.path_parameters(exchange.path) if found else None) or {"path": exchange.path}


def _list_and_filters(exchange: ClientExchange) -> dict[str, Any]:
    """The list a request names (its path parameters) and its cursor-bound filters as read."""
    bound: dict[str, Any] = dict(_path_parameters(exchange))
    for name, declared in filters(exchange.api).items():
        if declared.binds:
            bound[name] = declared.read(exchange.param(name))
    return bound


def _bound(exchange: ClientExchange, names: list[str]) -> str:
    path = _path_parameters(exchange)
    parts = [
        f"{name} {shown(path[name])}" if name in path else f"{name}={_sent(exchange, name)}"
        for name in names
    ]
    return ", ".join(parts)


def _sent(exchange: ClientExchange, name: str) -> str:
    value = exchange.param(name)
    return "(left out)" if value is None else shown(value)


def _same_list(busy: ClientExchange, other: ClientExchange) -> bool:
    if other.api != busy.api:
        return False
    key = list_key(busy.api)
    return _path_parameters(other) == _path_parameters(busy) and key.read(
        other.param(key.name)
    ) == key.read(busy.param(key.name))


def _token_outcomes(journal: Journal, rule: ClientRule) -> Iterator[Outcome]:
    for index, exchange in journal.judged():
        if exchange.api != rule.api:
            continue
        if exchange.authorized:
            yield Kept(index)
        else:
            yield ClientBreach(
                rule.name,
                index,
                "the app sent a request without a token",
                expected="Authorization: Bearer <token>",
                received="no Authorization header",
            )


def _form_outcomes(journal: Journal, rule: ClientRule) -> Iterator[Outcome]:
    for index, exchange in journal.judged():
        if exchange.api != rule.api:
            continue
        problems = _form_breaches(exchange)
        if not problems:
            yield Kept(index)
        for name, expected, received in problems:
            yield ClientBreach(
                rule.name,
                index,
                f"the app sent {name} of another form than the page's",
                expected=f"{name} {expected}",
                received="(left out)" if received is None else shown(received),
            )


def _form_breaches(exchange: ClientExchange) -> list[tuple[str, str, str | None]]:
    found = operation_of(exchange)
    return [] if found is None else form_problems(found, exchange.query)
