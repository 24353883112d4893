"""The pages' rules for a client: what an app must send, judged over the requests it sent, each a
named function.

A rule reads a journal: the exchanges of one caller in arrival order (`ClientExchange`: a mock
session's journal, or what the proxy forwarded). It yields a `ClientBreach` for each request that
breaks it, `Kept` for each occasion it judged and found kept, and `Unjudged` for an occasion it
cannot judge from what the journal holds (a cursor whose issuing answer was dropped from a bounded
journal). Only requests of an API's operation (its method, its path) are judged; a CORS preflight
or a path no API has is none of the pages' business.

`judge` gives the verdict over every rule, JSON-ready for the admin API and the proxy:

- `VIOLATIONS`: a page rule is broken (or an inferred one, with `strict`);
- `INCOMPLETE`: nothing is broken, but the journal cannot speak for the whole traffic: it is
  empty (the app sent nothing, so nothing was judged), or its oldest entries were dropped;
- `CONFORMS`: otherwise. Inferred findings are then warnings, listed with their level.

No finding holds a credential: a journal keeps none (whether a token came is all it knows).
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, unquote

from evalmock.contract.client_exchange import ClientExchange
from evalmock.contract.documents import QUERY_FACTS
from evalmock.contract.filters import LIST_API, filters, list_key
from evalmock.contract.operations import Operation, operation
from evalmock.contract.sources import (
    Level,
    Source,
    inferred,
    on_digitalocean_page,
    on_test_set_page,
    page,
)

CONFORMS, VIOLATIONS, INCOMPLETE = "CONFORMS", "VIOLATIONS", "INCOMPLETE"
FAILED, WARNED = "failed", "warned"  # a finding's outcome: it fails the verdict, or only warns
CURSOR = "cursor"  # the test-set list's cursor parameter (the document's)
_SHOWN = 120  # characters of a value a finding quotes; the rest is cut, saying how much


@dataclass(frozen=True)
class ClientBreach:
    """A request that breaks a rule: which request (its index in the journal as judged, its time,
    method and path), what is wrong, what the page asks and what the app sent."""

    rule: str
    index: int
    problem: str
    expected: str
    received: str


@dataclass(frozen=True)
class Kept:
    """An occasion a rule judged (a request, or a request and the answer before it) and found
    kept."""

    index: int


@dataclass(frozen=True)
class Unjudged:
    """An occasion a rule cannot judge from the journal, and why."""

    index: int
    why: str


Outcome = ClientBreach | Kept | Unjudged


@dataclass(frozen=True)
class Journal:
    """What a caller sent, oldest first, and how many older entries a bounded journal dropped."""

    exchanges: Sequence[ClientExchange]
    dropped: int = 0

    def judged(self) -> Iterator[tuple[int, ClientExchange]]:
        """The requests of an API's operation (its method and path), with their index."""
        for index, exchange in enumerate(self.exchanges):
            if _operation_of(exchange) is not None:
                yield index, exchange

    @functools.cached_property
    def issued(self) -> dict[str, list[int]]:
        """Each nextCursor the answers gave, and the indexes of the requests they answered."""
        found: dict[str, list[int]] = {}
        for index, exchange in enumerate(self.exchanges):
            if exchange.next_cursor is not None:
                found.setdefault(exchange.next_cursor, []).append(index)
        return found

    def unread_before(self, index: int, api: str) -> bool:
        """Whether an answer of `api` before `index` may have given a nextCursor the journal does
        not hold: entries were dropped, or an answer's body was not read."""
        return self.dropped > 0 or any(
            e.api == api and not e.answer_read for e in self.exchanges[:index]
        )


@dataclass(frozen=True)
class ClientRule:
    """A named client rule with its source, the rule in our words, and what traffic it needs (said
    when the journal held none)."""

    name: str
    source: Source
    rule: str
    needs: str
    check: Callable[[Journal], Iterator[Outcome]]

    @property
    def level(self) -> Level:
        return self.source.level

    def __call__(self, journal: Journal) -> Iterator[Outcome]:
        return self.check(journal)


def client_rule(source: Source, *, needs: str) -> Callable[[Callable[..., Any]], ClientRule]:
    """Make a function a ClientRule: its docstring states the rule, `needs` says what it judges."""

    def decorate(func: Callable[..., Any]) -> ClientRule:
        rule = " ".join((func.__doc__ or "").split())
        if not rule:
            raise ValueError(f"client rule {func.__name__} must state its rule")
        return ClientRule(func.__name__, source, rule, needs, func)

    return decorate


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
    needs="no request sent a cursor",
)
def client_sends_the_cursor_as_it_came(journal: Journal) -> Iterator[Outcome]:
    """Every cursor the app sends is a nextCursor an earlier answer gave it, byte for byte."""
    for index, exchange in journal.judged():
        for cursor in _cursors(exchange):
            if _issuer(journal, index, cursor) is not None:
                yield Kept(index)
            elif journal.unread_before(index, exchange.api):
                yield Unjudged(index, _UNREAD)
            else:
                yield ClientBreach(
                    client_sends_the_cursor_as_it_came.name,
                    index,
                    "the app sent a cursor no earlier answer gave it"
                    + _near_miss(journal, index, cursor),
                    expected="a nextCursor an earlier answer gave, as it came",
                    received=_shown(cursor),
                )


@client_rule(
    page(
        _SEALED,
        reading="A cursor goes back with the same list (the path: the agent; and the list's key, "
        "projectId, in either letter case) and the same filters (the query parameters the "
        "document marks cursor-binds, each compared as the list reads it: kind as a set) as the "
        "request whose answer gave it. limit is not among them: the page binds a cursor to its "
        "list, filters and caller only, so the page size may change. The caller is one journal's.",
    ),
    needs="no request sent a cursor an earlier answer in the journal gave",
)
def client_keeps_the_filters_of_its_cursor(journal: Journal) -> Iterator[Outcome]:
    """A cursor goes back with the same list and filters as the request whose answer gave it (the
    page size may change)."""
    for index, exchange in journal.judged():
        for cursor in _cursors(exchange):
            issuer = _issuer(journal, index, cursor)
            if issuer is None:
                continue  # not a cursor it was given: client_sends_the_cursor_as_it_came's
            was, now = _list_and_filters(journal.exchanges[issuer]), _list_and_filters(exchange)
            if was == now:
                yield Kept(index)
                continue
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
                f"the app asked the list again {waited:.3f} seconds after request #{index} was "
                f"answered 503 with Retry-After: {busy.retry_after}",
                expected=f"the next request to the list {busy.retry_after} seconds or more later",
                received=f"{waited:.3f} seconds later",
            )


@client_rule(
    page(
        _SEALED,
        reading="After a 400 to a request whose cursor was its only fault (its other parameters "
        "are of the page's form), the app does not send that cursor again: the list starts "
        "again without it. A 400 to a request with another malformed parameter may be that "
        "parameter's, so it is not read as refusing the cursor.",
    ),
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
            again = [i for i, e in judged[position + 1 :] if cursor in _cursors(e)]
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
                    received=_shown(cursor),
                )


@client_rule(
    page(
        on_test_set_page("--header 'Authorization: Bearer <token>'"),
        on_test_set_page("Needs read on the project."),
        on_test_set_page("Missing / malformed / expired / revoked bearer token."),
        reading="A request without a bearer token cannot have read on the project; the page's "
        "own request carries one. Whether a token came is all a journal keeps, never the token.",
    ),
    needs="no request to the test-set list",
)
def client_sends_a_token(journal: Journal) -> Iterator[Outcome]:
    """Every request to the test-set list carries an Authorization header."""
    yield from _token_outcomes(journal, LIST_API, client_sends_a_token.name)


@client_rule(
    inferred(
        "The page's own sample call passes an access token (option.WithAccessToken), and "
        "DigitalOcean's service refuses a request without one; the page does not state that a "
        "request needs it.",
        on_digitalocean_page('option.WithAccessToken("My Access Token"),'),
    ),
    needs="no request to DigitalOcean's test case",
)
def client_sends_a_token_to_digitalocean(journal: Journal) -> Iterator[Outcome]:
    """Every request for DigitalOcean's test case carries an Authorization header."""
    yield from _token_outcomes(journal, "gradient", client_sends_a_token_to_digitalocean.name)


@client_rule(
    page(
        on_test_set_page(
            "projectId is missing or not a project id (a UUID), or include or kind names "
            "something else."
        ),
        on_test_set_page("1..100. Default 25."),
        reading="The app sends projectId as a UUID, include and kind only as the page allows, "
        "and limit as a whole number 1..100: each query parameter of the form its schema in "
        "openapi/agent-test-set.yaml states. An empty include= or kind= is left open.",
    ),
    needs="no request to the test-set list",
)
def client_sends_the_list_s_parameters_as_the_page_states(journal: Journal) -> Iterator[Outcome]:
    """Every request to the test-set list sends projectId, and projectId, include, kind and limit
    of the form the page states."""
    yield from _form_outcomes(
        journal, LIST_API, client_sends_the_list_s_parameters_as_the_page_states.name
    )


@client_rule(
    page(
        on_digitalocean_page("EvaluationTestCaseVersion param.Field[int64]optional"),
        on_digitalocean_page("Version of the test case."),
        reading="The version is a whole number (int64). Its wire name, "
        "evaluation_test_case_version, is inferred (the page gives the SDK's field); an empty "
        "value is left open, and a version below 1 is not judged (the page names none).",
    ),
    needs="no request to DigitalOcean's test case",
)
def client_sends_an_integer_version(journal: Journal) -> Iterator[Outcome]:
    """Every version the app asks DigitalOcean's test case for is an integer (int64)."""
    yield from _form_outcomes(journal, "gradient", client_sends_an_integer_version.name)


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


# -- the verdict
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClientVerdict:
    """The verdict over a journal: each breach as a finding, the rules not judged and why."""

    verdict: str
    findings: list[dict[str, Any]]
    not_judged: list[dict[str, Any]]
    rules: list[dict[str, Any]]
    judged: int  # requests of an API's operation the rules read
    requests: int  # entries of the journal
    dropped: int
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.verdict == VIOLATIONS

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "findings": self.findings,
            "notJudged": self.not_judged,
            "judged": self.judged,
            "requests": self.requests,
            "dropped": self.dropped,
            "rules": self.rules,
            "notes": self.notes,
        }


def judge(
    exchanges: Sequence[ClientExchange],
    *,
    dropped: int = 0,
    strict: bool = False,
    rules: Sequence[ClientRule] = RULES,
) -> ClientVerdict:
    """Judge one caller's requests (oldest first; `dropped`: how many older ones a bounded journal
    no longer holds) by every client rule. `strict`: an inferred rule's finding fails the verdict
    too, as a page rule's does."""
    return judge_callers([(exchanges, dropped)], strict=strict, rules=rules)


def judge_callers(
    callers: Sequence[tuple[Sequence[ClientExchange], int]],
    *,
    strict: bool = False,
    rules: Sequence[ClientRule] = RULES,
) -> ClientVerdict:
    """Judge several callers' journals, each (requests, dropped) and each apart (a cursor is one
    caller's, a wait is one app's), into one verdict; with more than one, each finding names its
    caller by number (1 = the first seen), never by its token."""
    journals = [Journal(tuple(exchanges), max(0, dropped)) for exchanges, dropped in callers]
    findings: list[dict[str, Any]] = []
    not_judged: list[dict[str, Any]] = []
    tallies: list[dict[str, Any]] = []
    failing = False
    for rule in rules:
        kept, breaches, unjudged = 0, 0, []
        outcome_word = FAILED if rule.level is Level.PAGE or strict else WARNED
        for number, journal in enumerate(journals, 1):
            for outcome in rule(journal):
                if isinstance(outcome, Kept):
                    kept += 1
                elif isinstance(outcome, Unjudged):
                    unjudged.append(outcome)
                else:
                    breaches += 1
                    found = _finding(rule, outcome, journal.exchanges[outcome.index], outcome_word)
                    if len(journals) > 1:
                        found["request"]["caller"] = number
                    findings.append(found)
        failing |= breaches > 0 and outcome_word == FAILED
        tallies.append(
            {"rule": rule.name, "level": str(rule.level), "kept": kept, "broken": breaches}
        )
        if unjudged:
            not_judged.append(
                {
                    "rule": rule.name,
                    "level": str(rule.level),
                    "why": f"{len(unjudged)} occasion(s) not judged: {unjudged[0].why}",
                }
            )
        elif not kept and not breaches:
            not_judged.append({"rule": rule.name, "level": str(rule.level), "why": rule.needs})
    requests = sum(len(journal.exchanges) for journal in journals)
    judged = sum(1 for journal in journals for _ in journal.judged())
    dropped = sum(journal.dropped for journal in journals)
    notes = []
    if dropped:
        notes.append(
            f"the journal dropped its {dropped} oldest entries (it is bounded): what they held is "
            "not judged, and a cursor they may have given is not judged either"
        )
    if not requests:
        notes.append("the journal is empty: the app sent nothing, so nothing was judged")
    elif not judged:
        notes.append("no request of the journal is one of the APIs' operations: nothing was judged")
    if failing:
        verdict = VIOLATIONS
    elif not judged or dropped:
        verdict = INCOMPLETE
    else:
        verdict = CONFORMS
    return ClientVerdict(verdict, findings, not_judged, tallies, judged, requests, dropped, notes)


def _finding(
    rule: ClientRule, breach: ClientBreach, exchange: ClientExchange, outcome: str
) -> dict[str, Any]:
    return {
        "rule": rule.name,
        "level": str(rule.level),
        "outcome": outcome,
        "request": {
            "index": breach.index,
            "at": _rfc3339(exchange.at),
            "method": exchange.method,
            "path": _clipped(exchange.path),
            "status": exchange.status,
        },
        "problem": breach.problem,
        "expected": breach.expected,
        "received": breach.received,
        "message": f"{breach.problem}: expected {breach.expected}, received {breach.received}",
        "source": rule.source.describe(),
    }


# -- helpers
# ------------------------------------------------------------------------------------------

_UNREAD = (
    "the answer that gave the cursor may be among the entries the journal dropped, or an answer "
    "whose body was not read"
)


def _operation_of(exchange: ClientExchange) -> Operation | None:
    try:
        found = operation(exchange.api)
    except (KeyError, ValueError):
        return None  # "" or a name no document has
    if exchange.method.upper() != found.method or found.path_parameters(exchange.path) is None:
        return None
    return found


def _cursors(exchange: ClientExchange) -> list[str]:
    """The non-empty cursors a request of the list sent (an empty one is left open)."""
    if exchange.api != LIST_API:
        return []
    return [value for name, value in exchange.query if name == CURSOR and value]


def _issuer(journal: Journal, index: int, cursor: str) -> int | None:
    """The latest request before `index` whose answer gave `cursor`, byte for byte."""
    given = journal.issued.get(cursor, [])
    before = bisect.bisect_left(given, index)
    return given[before - 1] if before else None


def _near_miss(journal: Journal, index: int, cursor: str) -> str:
    """What the app did to a cursor it was given, when the one it sent is recognisably that one."""
    for earlier in range(index - 1, -1, -1):
        given = journal.exchanges[earlier].next_cursor
        if not given:
            continue
        if cursor.strip() == given:
            how = "with white space added"
        elif unquote(cursor) == given or quote(cursor, safe="") == given:
            how = "percent-encoded differently"
        elif given.startswith(cursor):
            how = "cut short"
        elif cursor.startswith(given):
            how = "with characters added"
        elif cursor.lower() == given.lower():
            how = "in another letter case"
        else:
            continue
        return f" (it is request #{earlier}'s nextCursor {how})"
    return ""


def _path_parameters(exchange: ClientExchange) -> dict[str, str]:
    found = _operation_of(exchange)
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
        f"{name} {_shown(path[name])}" if name in path else f"{name}={_sent(exchange, name)}"
        for name in names
    ]
    return ", ".join(parts)


def _sent(exchange: ClientExchange, name: str) -> str:
    value = exchange.param(name)
    return "(left out)" if value is None else _shown(value)


def _same_list(busy: ClientExchange, other: ClientExchange) -> bool:
    if other.api != busy.api:
        return False
    key = list_key(busy.api)
    return _path_parameters(other) == _path_parameters(busy) and key.read(
        other.param(key.name)
    ) == key.read(busy.param(key.name))


def _token_outcomes(journal: Journal, api: str, rule: str) -> Iterator[Outcome]:
    for index, exchange in journal.judged():
        if exchange.api != api:
            continue
        if exchange.authorized:
            yield Kept(index)
        else:
            yield ClientBreach(
                rule,
                index,
                "the app sent a request without a token",
                expected="Authorization: Bearer <token>",
                received="no Authorization header",
            )


def _form_outcomes(journal: Journal, api: str, rule: str) -> Iterator[Outcome]:
    for index, exchange in journal.judged():
        if exchange.api != api:
            continue
        problems = _form_breaches(exchange)
        if not problems:
            yield Kept(index)
        for name, expected, received in problems:
            yield ClientBreach(
                rule,
                index,
                f"the app sent {name} of another form than the page's",
                expected=f"{name} {expected}",
                received=received,
            )


_INT64 = (-(2**63), 2**63 - 1)
_INT32 = (-(2**31), 2**31 - 1)
_WHOLE = re.compile(r"-?[0-9]+")


def _form_breaches(exchange: ClientExchange) -> list[tuple[str, str, str]]:
    """Each query parameter of the request's operation that is missing (when required) or not of
    its schema's form: (name, what the schema asks, what was sent)."""
    found = _operation_of(exchange)
    if found is None:
        return []
    problems = []
    for name, parameter in found.query_parameters().items():
        open_empty = parameter.get(QUERY_FACTS, {}).get("empty-value") == "open"
        values = [value for key, value in exchange.query if key == name]
        if not values and parameter.get("required"):
            problems.append((name, "sent (it is required)", "(left out)"))
        for value in values:
            if value == "" and open_empty:
                continue
            asked = _form_problem(parameter.get("schema") or {}, value)
            if asked is not None:
                problems.append((name, asked, _shown(value)))
    return problems


def _form_problem(schema: dict[str, Any], value: str) -> str | None:
    """What the schema asks that `value` (as sent in a query) is not, or None."""
    if schema.get("type") == "integer":
        low, high = _INT32 if schema.get("format") == "int32" else _INT64
        if not _WHOLE.fullmatch(value):
            return f"a whole number ({schema.get('format', 'integer')})"
        low = max(low, schema.get("minimum", low))
        high = min(high, schema.get("maximum", high))
        if not low <= int(value) <= high:
            return f"a whole number {low}..{high}"
        return None
    if "enum" in schema and value not in schema["enum"]:
        return "one of " + ", ".join(str(member) for member in schema["enum"])
    if "pattern" in schema and not re.search(schema["pattern"], value):
        what = "a UUID" if schema.get("format") == "uuid" else f"matching {schema['pattern']}"
        return what
    return None


def _shown(value: str) -> str:
    """A value as a finding quotes it: in quotes, its control characters escaped, cut to a
    bound."""
    if len(value) <= _SHOWN:
        return repr(value)
    return f"{value[:_SHOWN]!r}… ({len(value)} characters)"


def _clipped(text: str) -> str:
    """A path as a finding names it, cut to a bound (JSON escapes the rest)."""
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}… ({len(text)} characters)"


def _rfc3339(at: float) -> str:
    try:
        return (
            datetime.fromtimestamp(at, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z")
        )
    except (OverflowError, OSError, ValueError):
        return str(at)
