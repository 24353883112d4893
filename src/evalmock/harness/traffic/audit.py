"""Auditing traffic the harness did not send (a proxy's exchanges, a HAR file's entries): each
exchange of an audited API's operation judged by every per-response and document check, everything
else counted with why, and at any moment the results so far, finished as an audit's are."""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

from evalmock import environment
from evalmock.contract.documents import APIS
from evalmock.contract.operations import operation
from evalmock.contract.targets import Targets
from evalmock.harness.checks.builtins import LIVE_SPEC
from evalmock.harness.checks.cursor_binding import SEALED_REASON
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.open_answers import broken_parameters, undeclared_parameters
from evalmock.harness.checks.policy import Policy
from evalmock.harness.checks.registry import RESPONSE, SCENARIO, Check
from evalmock.harness.results.audit_results import UNSEEN_SKIP, Results
from evalmock.harness.run.document_judge import RESPONSE_ONLY, DocumentJudge
from evalmock.harness.run.judge import Breach, ResponseJudge
from evalmock.harness.run.throttle import asked_status, request_kind, throttle_wait
from evalmock.harness.secrets.redactor import Redactor
from evalmock.harness.traffic.walks import TrafficWalks, WalkBounds
from evalmock.nouns import counted

SCENARIO_SKIP = (
    "a scenario check makes its own requests of a live service; a traffic audit only judges the "
    "responses it is given (`evalmock contract --base-url` runs it)"
)
GENERATED_SKIP = "judges the requests Schemathesis generates; traffic has none"
THROTTLED_SKIP = (
    "throttled (a 429, or a 503 with Retry-After): the service's throttling, not a rule's failure"
)

WALK_CHECKS = ("walk_yields_every_case_once", "page_after_has_more_is_not_empty")
NO_WALK = "no walk was followed: no page was asked for with a nextCursor the traffic had carried"
# Why a binding rule met nothing to judge, by the aspect it binds (the traffic may have reused a
# cursor otherwise).
NO_REUSE = {
    "cursor_is_bound_to_the_list": "for another list (another project)",
    "cursor_is_bound_to_the_agent": "for the same project under another agent",
    "cursor_is_bound_to_the_filters": "with other filters",
    "cursor_is_bound_to_the_caller": "by another caller",
}
BINDING_CHECKS = tuple(NO_REUSE)

# Requests remembered while their last answer was throttled, to know the client's retry of one.
MAX_THROTTLED_REMEMBERED = 4096


@dataclass(frozen=True)
class Judged:
    """One exchange judged: the rules its response broke, and how the request itself left the
    document (the client's side: no rule of the service, reported so that the client can be
    fixed)."""

    api: str
    breaches: list[Breach]
    off_document: list[str]
    throttled: bool = (
        False  # the service's throttling (a 429, or a 503 with Retry-After): counted, not judged
    )


class TrafficAudit:
    """Judges exchanges of the audited APIs' operations into one Results; `targets`: what is known
    to exist."""

    def __init__(
        self,
        policy: Policy,
        *,
        apis: tuple[str, ...] = tuple(APIS),
        targets: Targets | None = None,
        redactor: Redactor | None = None,
        walk_bounds: WalkBounds | None = None,
    ) -> None:
        self.results = Results(policy, apis)
        self.results.throttling.recorded = True
        self._throttled: set[int] = set()  # hashes of requests whose last answer was throttled
        self.redactor = redactor or Redactor()
        self.targets = targets
        self.judges = {
            api: ResponseJudge(
                api, self.results, self.redactor, DocumentJudge(api, policy), targets
            )
            for api in apis
        }
        # The walks the traffic follows, judged by the scenario checks' own walk rules.
        self.walks = (
            TrafficWalks(self.judges["test-set"], targets, walk_bounds)
            if "test-set" in apis
            else None
        )
        self.judged = 0
        self.not_judged: Counter[str] = Counter()  # why -> how many exchanges
        self.off_document: Counter[str] = Counter()  # parameter -> how many requests
        for api in apis:
            # traffic chooses no scenario check: none can be "all skipped"
            self.results.selected[api] = set()

    def api_of(self, method: str, path: str) -> str | None:
        """The audited API whose operation a request is (its method, or HEAD, on its path), or
        None."""
        for api in self.results.apis:
            op = operation(api)
            if method.upper() in (op.method, "HEAD") and op.path_parameters(path) is not None:
                return api
        return None

    def judge(self, api: str, exchange: Exchange, *, learned: bool = False) -> Judged:
        """Judge one exchange of `api`'s operation; every outcome is recorded at its rule's level. A
        throttled answer is the service's throttling, no rule's: counted, not judged. `learned`: the
        redactor already knows every secret the exchange carries."""
        asked_for = asked_status(exchange.request_headers)
        throttled = (
            throttle_wait(exchange.status, exchange.header("retry-after"), asked_for=asked_for)
            is not None
        )
        self._count_throttling(exchange, throttled)
        if throttled:
            self.skip(THROTTLED_SKIP)
            return Judged(api, [], [], throttled=True)
        self.judged += 1
        off = list(off_document(api, urlsplit(exchange.url).query))
        self.off_document.update(off)
        breaches = self.judges[api].judge(exchange, learned=learned)
        if api == "test-set" and self.walks is not None:
            breaches += self.walks.observe(exchange)
        return Judged(api, breaches, off)

    def _count_throttling(self, exchange: Exchange, throttled: bool) -> None:
        """Count the answer in the share of throttled ones, as a live audit counts its own; the
        same request after a throttled answer is the client's try after a wait."""
        request = hash((exchange.method, exchange.url))
        again = request in self._throttled
        if throttled and len(self._throttled) < MAX_THROTTLED_REMEMBERED:
            self._throttled.add(request)
        elif not throttled:
            self._throttled.discard(request)
        what = request_kind(exchange.method, urlsplit(exchange.url).path)
        self.results.throttling.shares.count(throttled, after_a_wait=again, what=what)

    def skip(self, why: str) -> None:
        """Count an exchange that is not judged, and why (another host, path or method, no body
        recorded, ...)."""
        self.not_judged[why] += 1

    def snapshot(self) -> Results:
        """The results so far, finished: every check that never ran skipped with why, and what was
        not judged."""
        results = self.results.copy()
        if self.walks is not None:
            # said at each snapshot: a later whole walk may still judge the count
            unjudged = [*self.walks.counts.unjudged(), *self.walks.compared.unjudged()]
            for why, kind in unjudged:
                results.skipped(self.walks.once, why, kind)
                results.notes.append(f"{self.walks.once.name}: {why}")
        sealed = self.targets is not None and self.targets.sealed_cursors is True
        for api in results.apis:
            results.skip_unexercised(
                api, lambda check: unwalked_reason(check, sealed) or _unexercised_reason(check)
            )
        results.notes += self.notes()
        return results

    def notes(self) -> list[str]:
        seen = self.judged + sum(self.not_judged.values())
        notes = [
            f"traffic: {counted(seen, 'exchange')}, {self.judged} judged (a request"
            " of an audited API's operation, with its response)"
        ]
        if self.not_judged:
            notes.append(
                "not judged: "
                + "; ".join(f"{count} {why}" for why, count in self.not_judged.most_common())
            )
        if self.off_document:
            notes.append(
                "requests that leave the document (the client's side; the service should refuse "
                "them): "
                + ", ".join(f"{name} in {count}" for name, count in self.off_document.most_common())
            )
        return notes


# a client asks the same query again and again; each check of one is a schema's
@functools.lru_cache(maxsize=1024)
def off_document(api: str, query: str) -> tuple[str, ...]:
    """How a request's query leaves the document: the parameters it breaks, then those it adds
    (`name (undeclared)`)."""
    values: dict[str, list[str]] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        values.setdefault(key, []).append(value)
    return (
        *sorted(broken_parameters(api, values)),
        *(f"{name} (undeclared)" for name in sorted(undeclared_parameters(api, values))),
    )


def traffic_redactor(targets: Targets | None, *tokens: str | None) -> Redactor:
    """A redactor that knows the tokens given, EVALMOCK_TOKEN and EVALMOCK_SECOND_TOKEN, and the
    targets' [auth] ones from the start; the traffic teaches it the rest."""
    known = targets or Targets()
    redactor = Redactor(known.token, known.second_token, known.expired_token, known.revoked_token)
    for token in (
        known.no_read_token,
        *tokens,
        environment.audit_token(),
        environment.second_token(),
    ):
        if token:
            redactor.learn(token)
    return redactor


def unwalked_reason(check: Check, sealed: bool) -> str | None:
    """Why a check judged from the traffic's walks never ran; None for any other check."""
    if check.api != "test-set":
        return None
    if check.name in WALK_CHECKS:
        return NO_WALK
    if check.name in BINDING_CHECKS:
        return (
            f"no cursor the traffic had carried was sent back {NO_REUSE[check.name]}"
            if sealed
            else SEALED_REASON
        )
    return None


def _unexercised_reason(check: Check) -> str:
    if check.kind == SCENARIO:
        return SCENARIO_SKIP
    judged = check.kind == RESPONSE or check.name in RESPONSE_ONLY or check is LIVE_SPEC
    return UNSEEN_SKIP if judged else GENERATED_SKIP
