"""What the Schemathesis run does with each answer before a check sees it: a throttled one waited
out and sent again, one that turns the audit's token away set aside."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from schemathesis.core.transport import Response

from evalmock.harness.checks.exchange import Exchange, exchange_from_schemathesis, first_header
from evalmock.harness.checks.target_keys import TargetKey, target_key
from evalmock.harness.run.answer_limits import AnswerLimits
from evalmock.harness.run.bounded_requests import CutAnswers, bounded_session
from evalmock.harness.run.throttle import Throttle, request_kind


class ThrottledRetry:
    """Waits out a throttled answer in Schemathesis's `after_call` hook and puts the answer to the
    same request, sent again, in its place (the hook's way of post-processing a response, in place),
    before any check sees it. No check of Schemathesis's sees the throttled answer: `judge`
    (ResponseJudge.judge_met_by_chance) does, before it is waited out. A gateway's 502 or 504 is
    asked again alike (Throttle.send); one that asking again cleared goes to `cleared`."""

    def __init__(
        self,
        throttle: Throttle,
        limits: AnswerLimits | None = None,
        judge: Callable[[Exchange], object] | None = None,
        cuts: CutAnswers | None = None,
        cleared: Callable[[Exchange], object] | None = None,
    ) -> None:
        self.throttle = throttle
        self.limits = limits or AnswerLimits()
        self.judge = judge
        self.cleared = cleared  # ResponseJudge.judge_cleared_gateway_error
        self.cuts = cuts
        # ids of the cases whose answer was still throttled: no check judges them
        self.unjudged: set[str] = set()
        # ids of throttled probes already counted (recorders may repeat them)
        self.counted_probes: set[str] = set()
        self._local = threading.local()

    def wait_out(self, case: Any, response: Response) -> bool:
        """Whether the answer in `response` (replaced by a later one, if it was throttled) may be
        judged."""
        final, throttled = self.throttle.send(
            lambda: self._send_again(response),
            lambda answer: (answer.status_code, answer.headers),
            first=response,
            judge=self.judge_met_by_chance,
            what=request_kind(
                response.request.method or "GET", urlsplit(response.request.url or "").path
            ),
            took=response.elapsed,
            cleared=self.judge_cleared_gateway_error,
        )
        if final is not response:
            _replace(response, final)
        if throttled:
            self.unjudged.add(case.id)
        return not throttled

    def judge_met_by_chance(self, answer: Response) -> None:
        """Judge a throttled answer (one waited out, or a probe's that no hook can wait out)."""
        if self.judge is not None:
            self.judge(exchange_from_schemathesis(answer))

    def judge_cleared_gateway_error(self, answer: Response) -> None:
        """Name a gateway's 502 or 504 that asking again cleared (Schemathesis's checks judge the
        answer put in its place)."""
        if self.cleared is not None:
            self.cleared(exchange_from_schemathesis(answer))

    def unwaited_probe(self, probe_id: str, answer: Response) -> None:
        """Count and judge, once, a throttled answer to a probe a check sent from inside itself
        (ignored_auth's), which no hook reaches: it is never waited out."""
        if probe_id in self.counted_probes:
            return
        self.counted_probes.add(probe_id)
        self.throttle.unwaited_probe(retry_after(answer))
        self.judge_met_by_chance(answer)

    def _send_again(self, response: Response) -> Response:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = bounded_session(self.limits, self.cuts)
        # verified as the request it repeats was (by the audit's certificate authorities)
        answer = session.send(
            response.request,
            timeout=self.limits.seconds,
            allow_redirects=False,
            verify=response.verify,
        )
        return Response.from_requests(answer, verify=response.verify)


def retry_after(response: Response) -> str | None:
    return first_header(response.headers, "retry-after")


def _replace(target: Response, answer: Response) -> None:
    for name in Response.__slots__:
        if hasattr(answer, name):
            setattr(target, name, getattr(answer, name))
        elif hasattr(target, name):
            delattr(target, name)  # a cached view of the throttled body


class Refusal:
    """Whether an answer turns the audit's token away from a project or test case it is turned away
    from everywhere (audit.turned_away_targets): a 403 to a request that carries that token and asks
    for it."""

    def __init__(self, api: str, token: str | None, turned_away: frozenset[TargetKey]) -> None:
        self.api = api
        self.token = token
        self.turned_away = turned_away

    def of(
        self,
        status: int | None,
        headers: Mapping[str, str] | None,
        query: Mapping[str, Any] | None,
        path_parameters: Mapping[str, Any] | None,
    ) -> bool:
        if status != 403 or not self.token or not self.turned_away or headers is None:
            return False
        sent = next(
            (value for name, value in headers.items() if name.lower() == "authorization"), ""
        )
        scheme, _, credentials = sent.strip().partition(" ")
        # a scheme's case is free, a token's not
        if scheme.lower() != "bearer" or credentials.strip() != self.token:
            return False
        return target_key(self.api, path_parameters or {}, query or {}) in self.turned_away
