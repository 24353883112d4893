"""The context a scenario check runs in: a way to send requests to the target, its targets and
tokens, walks."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from evalmock.contract.operations import operation
from evalmock.contract.targets import ProjectTarget, Targets, TestCaseTarget
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.outcomes import (
    NoToken,
    Skip,
    TurnedAway,
    Unjudged,
    Violation,
    json_body,
)
from evalmock.harness.checks.target_keys import TARGET_NAMES, TargetKey, target_key

# what a page holds when limit is left out, as the document says
DEFAULT_LIMIT: int = operation("test-set").parameters["limit"]["schema"]["default"]

DEFAULT_TOKEN: Any = object()  # use the audit's main token
# An X-Request-Id of the audit's own: sent on the errors the page describes (and a few pages), so
# that a header set from the caller's id while the envelope keeps another is seen.
OWN_REQUEST_ID_PREFIX = "evalmock-audit-"
MAX_WALK_CASES = 2000  # a walk stops after this many cases; comparisons then use the prefixes

ExchangeObserver = Callable[[str, Exchange], None]


class Sender(Protocol):
    """How a scenario's GET reaches the target: the exchange, and whether its answer was still
    throttled after waiting (then no check may judge it); NoAnswer when no answer came, Unread when
    one came past the audit's limits."""

    def __call__(
        self, path: str, query: Mapping[str, Any], headers: Mapping[str, str]
    ) -> tuple[Exchange, bool]: ...


@dataclass(frozen=True)
class Walk:
    """The pages met when following nextCursor from the first page."""

    pages: tuple[dict[str, Any], ...]
    exchanges: tuple[Exchange, ...]
    complete: bool  # False when the walk stopped at MAX_WALK_CASES, or was refused a page

    @property
    def cases(self) -> list[dict[str, Any]]:
        return [
            case if isinstance(case, dict) else {}
            for page in self.pages
            for case in page.get("data", [])
        ]

    @property
    def ids(self) -> list[Any]:
        return [case.get("id") for case in self.cases]


class CursorRefused(Violation):
    """A walk's later page, asked with the nextCursor its page before gave, answered with an error
    instead of a page: the walk rule's finding (the page takes a cursor for the same list, filters
    and caller, within a day), and no page for a rule about pages to judge. `walk` holds the pages
    read before it."""

    def __init__(self, walk: Walk, exchange: Exchange, what: str) -> None:
        self.walk = walk
        self.number = len(walk.pages) + 1  # the page refused; page 1 is the one without a cursor
        self.what = what
        self.status = exchange.status
        super().__init__(
            f"the walk {what} was refused its page {self.number}, asked with the nextCursor its "
            f"page {self.number - 1} gave",
            expected="200 with the page that cursor points at",
            received=f"{exchange.status} {exchange.excerpt(300)}",
            exchange=exchange,
        )


def walk_named(limit: int | None, params: Mapping[str, Any]) -> str:
    """A walk as a message names it: `with limit=33`, `at the default limit with
    include=retired`."""
    filters = " and ".join(f"{name}={value}" for name, value in sorted(params.items()))
    if limit is None:
        return f"at the default limit with {filters}" if filters else "at the default limit"
    return f"with limit={limit} and {filters}" if filters else f"with limit={limit}"


class Scenario:
    """Requests for scenario checks; every response also goes through the per-response checks."""

    def __init__(
        self,
        send: Sender,
        targets: Targets,
        *,
        token: str | None,
        second_token: str | None = None,
        observe: ExchangeObserver | None = None,
        turned_away: frozenset[TargetKey] = frozenset(),
    ) -> None:
        self.send = send
        # What the audit's token gets 403 for even when asked plainly (audit.turned_away_targets):
        # any request for it with that token answered 403 is the caller turned away, whatever else
        # the request asks.
        self.turned_away = turned_away
        self.targets = targets
        self.token = token
        self.second_token = second_token
        self.observe = observe
        self.last: Exchange | None = None
        self._walks: dict[tuple[Any, ...], Walk] = {}
        # what a check says beside its outcome (a list seen to move, a targets count it set aside)
        self.notes: list[str] = []

    # -- raw requests
    # ---------------------------------------------------------------------------------
    def get(
        self,
        api: str,
        path: str,
        params: Mapping[str, Any] | None = None,
        *,
        token: Any = DEFAULT_TOKEN,
        headers: Mapping[str, str] | None = None,
        asks_for: TargetKey | None = None,
        own_request_id: bool = False,
    ) -> Exchange:
        """A GET of `path`; `own_request_id`: with an X-Request-Id of the audit's own (unless the
        headers name one)."""
        sent = dict(headers or {})
        if own_request_id and not any(name.lower() == "x-request-id" for name in sent):
            sent["X-Request-Id"] = f"{OWN_REQUEST_ID_PREFIX}{uuid.uuid4().hex}"
        bearer = self.token if token is DEFAULT_TOKEN else token
        if bearer is not None and "Authorization" not in sent:
            sent["Authorization"] = f"Bearer {bearer}"
        query = {k: v for k, v in (params or {}).items() if v is not None}
        exchange, throttled = self.send(path, query, sent)
        self.last = exchange
        if throttled:
            raise Unjudged(
                f"{exchange.method} {exchange.path} was still throttled ({exchange.status}) after "
                "waiting; "
                "see Throttling"
            )
        if (
            exchange.status == 403
            and asks_for in self.turned_away
            and token is DEFAULT_TOKEN
            and not any(name.lower() == "authorization" for name in (headers or {}))
        ):
            # Before any check judges it: the refusal's answer, not the service's to this request.
            raise TurnedAway.of(exchange.method, exchange.path, TARGET_NAMES[api])
        if self.observe is not None:
            self.observe(api, exchange)
        return exchange

    def require_token(self) -> str:
        if not self.token:
            raise NoToken()
        return self.token

    # -- the test-set API
    # -----------------------------------------------------------------------------
    def project(
        self, fact: str | None = None, why: str = "", *, token: bool = True
    ) -> ProjectTarget:
        """The first target project, or the first whose `fact` is true; Skip when none is known (or
        when `token` and the audit has none: the checks that send no token of their own pass
        token=False)."""
        if token:
            self.require_token()
        if not self.targets.projects:
            raise Skip("the targets name no test-set project ([[test_set.projects]])")
        if fact is None:
            return self.targets.projects[0]
        for project in self.targets.projects:
            if getattr(project, fact) is True:
                return project
        raise Skip(f"no target project states {fact} = true{': ' + why if why else ''}")

    def list_cases(
        self,
        project: ProjectTarget | None = None,
        *,
        agent_id: str | None = None,
        project_id: str | None = None,
        token: Any = DEFAULT_TOKEN,
        headers: Mapping[str, str] | None = None,
        own_request_id: bool = False,
        **params: Any,
    ) -> Exchange:
        agent = agent_id if agent_id is not None else (project.agent_id if project else "")
        query: dict[str, Any] = {
            "projectId": project_id if project_id is not None else project and project.project_id
        }
        query.update(params)
        path = operation("test-set").url_path(agentId=agent)
        asks_for = target_key("test-set", {"agentId": agent}, query)
        return self.get(
            "test-set",
            path,
            query,
            token=token,
            headers=headers,
            asks_for=asks_for,
            own_request_id=own_request_id,
        )

    def page(self, project: ProjectTarget, **params: Any) -> dict[str, Any]:
        """A page that must be a 200 with a JSON object body."""
        exchange = self.list_cases(project, **params)
        return expect_page(exchange)

    def walk(
        self, project: ProjectTarget, *, limit: int | None, again: bool = False, **params: Any
    ) -> Walk:
        """Follow nextCursor from the first page (memoised per project, limit and filters; `again`
        walks anew, as a later reading of the list, and remembers nothing). A later page answered
        with an error is CursorRefused; the first is a Violation, as any page asked for."""
        key = (project, limit, tuple(sorted(params.items())))
        if key in self._walks and not again:
            return self._walks[key]
        pages: list[dict[str, Any]] = []
        exchanges: list[Exchange] = []
        cursor: str | None = None
        seen = 0
        complete = False
        page_size = limit or DEFAULT_LIMIT
        for _ in range(MAX_WALK_CASES // page_size + 2):
            exchange = self.list_cases(project, limit=limit, cursor=cursor, **params)
            if cursor is not None:
                unless_turned_away(exchange, "a project")
                if exchange.status != 200:
                    partial = Walk(tuple(pages), tuple(exchanges), complete=False)
                    where = f"of {project.agent_id}/{project.project_id}"
                    raise CursorRefused(partial, exchange, f"{where} {walk_named(limit, params)}")
            page = expect_page(exchange)
            pages.append(page)
            exchanges.append(exchange)
            seen += len(page.get("data") or [])
            cursor = page.get("nextCursor")
            if page.get("hasMore") is not True or not cursor:
                complete = True
                break
            if seen >= MAX_WALK_CASES:
                break
        walk = Walk(tuple(pages), tuple(exchanges), complete)
        if not again:
            self._walks[key] = walk
        return walk

    # -- the gradient API
    # -----------------------------------------------------------------------------
    def test_case(self, why: str = "", *, token: bool = True) -> TestCaseTarget:
        if token:
            self.require_token()
        if not self.targets.test_cases:
            suffix = f": {why}" if why else ""
            raise Skip(
                "the targets name no evaluation test case ([[gradient.test_cases]])" + suffix
            )
        return self.targets.test_cases[0]

    def get_test_case(
        self, uuid: str, version: int | str | None = None, *, token: Any = DEFAULT_TOKEN
    ) -> Exchange:
        """The test case, at `version` when given (a string is sent as it is: a near miss)."""
        path = operation("gradient").url_path(test_case_uuid=uuid)
        asks_for = target_key("gradient", {"test_case_uuid": uuid}, {})
        return self.get(
            "gradient",
            path,
            {"evaluation_test_case_version": version},
            token=token,
            asks_for=asks_for,
        )


def unless_turned_away(exchange: Exchange, what: str) -> None:
    """TurnedAway when a request for `what`, which the targets say the audit's token reads, was
    answered 403."""
    if exchange.status == 403:
        raise TurnedAway.of(exchange.method, exchange.path, what)


def expect_page(exchange: Exchange) -> dict[str, Any]:
    """The body of a 200 page; a 403 is TurnedAway, anything else stops the scenario as a
    violation."""
    unless_turned_away(exchange, "a project")
    if exchange.status != 200:
        raise Violation(
            f"{exchange.method} {exchange.path} with known-good parameters did not answer 200",
            expected="200 with a page of cases",
            received=f"{exchange.status} {exchange.excerpt(300)}",
            exchange=exchange,
        )
    body = json_body(exchange)
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        raise Violation(
            "a 200 page is not an object with a data array",
            expected="{data: [...], hasMore}",
            received=body,
            exchange=exchange,
        )
    return body
