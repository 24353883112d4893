"""Before an audit: does the target answer HTTP, does it answer an audited API at its base URL, does
it take the audit's token, and which of the targets' projects and test cases does it turn the token
away from."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx

from evalmock import environment
from evalmock.contract.operations import Operation, operation
from evalmock.contract.schemas import schema_errors
from evalmock.contract.statuses import body_code, error_codes
from evalmock.contract.targets import Targets
from evalmock.defaults import DEFAULT_REQUEST_TIMEOUT
from evalmock.exits import UNREACHABLE, USAGE
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.target_keys import TargetKey, target_key
from evalmock.harness.excerpts import quoted
from evalmock.harness.results.findings import Gap
from evalmock.harness.run.answer_deadline import held_to_deadlines, reading_until
from evalmock.harness.run.answer_limits import AnswerOverLimit, read_exchange
from evalmock.harness.run.options import Audit, AuditError
from evalmock.harness.run.throttle import Throttle, request_kind

# a resource no service holds, asked for by probe_answers
MADE_UP_UUID = "00000000-0000-4000-8000-00000000e404"
REACHABILITY_TIMEOUT = 5.0  # seconds to connect, when the target is first tried
CUT_REMEDY = "A service that answers each request whole, as HTTP/1.1 frames it"


def check_target(audit: Audit) -> None:
    """AuditError when the target does not answer HTTP, or answers no audited API at its base URL
    (exit 3), or refuses the audit's token or its caller on every audited API (exit 2)."""
    # A connection within REACHABILITY_TIMEOUT, an answer within the audit's own timeout (a service
    # that starts cold may take its time).
    timeout = httpx.Timeout(audit.request_timeout, connect=REACHABILITY_TIMEOUT)
    unreachable = reachable(audit.base_url, timeout)
    if unreachable:
        if "CERTIFICATE_VERIFY_FAILED" in unreachable:
            unreachable += (
                f". To trust a private certificate authority, set {environment.CA_FILE} to its "
                "certificate (PEM)"
            )
        raise AuditError(f"{audit.base_url} is unreachable ({unreachable})", UNREACHABLE)
    if absent := absent_apis(audit, probe_answers(audit, timeout)):
        raise AuditError(
            f"no audited API answers at {audit.base_url}: {absent}. Is the base URL right? A "
            "gateway's stage or prefix path (https://host/prod) belongs in it, and nothing more",
            UNREACHABLE,
        )
    refused = refused_caller(audit, timeout)
    if refused and all(status == 401 for status in refused.values()):
        raise AuditError(
            f"every audited API refused the token: {_answers(refused)}. Is the token one the "
            f"service takes now (--token, {environment.TOKEN} or [auth].token)? An expired or "
            "revoked one gets 401 everywhere, and every check would then judge 401s",
            USAGE,
        )
    if refused:
        raise AuditError(
            f"every audited API refused the caller: {_answers(refused)}. Does the token read the "
            "targets' "
            "projects and test cases, and does the gateway let this machine through (an IP "
            "allowlist, "
            "a WAF)? Every check would otherwise judge the refusals",
            USAGE,
        )


def reachable(base_url: str, timeout: httpx.Timeout) -> str | None:
    """None when the target answers HTTP at all (any status), else why not. Its body is not read:
    the status line and headers tell, or their start when they are not over by the read timeout
    (the audit then says so of each answer it reads)."""
    with reading_until(time.monotonic() + (timeout.read or DEFAULT_REQUEST_TIMEOUT)) as deadline:
        try:
            with (
                held_to_deadlines(httpx.Client(timeout=timeout)) as client,
                client.stream("GET", base_url.rstrip("/") + "/"),
            ):
                pass
        except httpx.HTTPError as exc:
            if deadline.cut:
                return None
            return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return None


def probe_answers(audit: Audit, timeout: httpx.Timeout) -> dict[str, Exchange]:
    """Each audited API's answer to one request, with the audit's token, for a made-up resource
    (every path and required query parameter a made-up id); an API whose request failed is left out
    (it answered the reachability check: the audit will say what goes wrong), and so is one whose
    answer was past the audit's limits."""
    answers = {}
    for api in audit.apis:
        op = operation(api)
        params = {
            name: MADE_UP_UUID
            for name, parameter in op.parameters.items()
            if parameter.get("in") == "path"
        }
        query = {
            name: MADE_UP_UUID
            for name, parameter in op.query_parameters().items()
            if parameter.get("required")
        }
        if (response := _get(audit, op.url_path(**params), query, timeout, api)) is not None:
            answers[api] = response
    return answers


def absent_apis(audit: Audit, answers: dict[str, Exchange]) -> str | None:
    """None when some audited API answers at the base URL; else what each answered instead. A
    service that follows its page answers the made-up resource in the document's shape (the 404 of
    an unknown one, with the test-set page's code agent-not-found; a 400 or 401 error body); a 404
    that is not is the answer of a server that has no such path (a base URL without a gateway's
    stage path, or with one too many: every request would then fail a rule)."""
    shown = []
    for api in audit.apis:
        response = answers.get(api)
        if response is None or response.status != 404 or _is_the_apis_404(api, response):
            return None
        kind = response.headers.get("content-type", "no content type").split(";")[0]
        shown.append(f"{_request_line(response)} -> 404 ({kind}, not the {api} API's 404 body)")
    return "; ".join(shown)


def refused_caller(audit: Audit, timeout: httpx.Timeout) -> dict[str, int]:
    """Each request's status, when every audited API whose targets name something known (a project,
    a test case) answered the audit's token with 401 or 403 when asked for it; else empty. The
    targets' projects are ones the token reads: a 401 (the pages' answer to a missing, malformed,
    expired or revoked token) says the token is no longer one the service takes, a 403 that the
    caller is turned away (a gateway's allowlist, a token for other projects). A made-up resource
    would not tell: a token without read on a project may get any 4xx."""
    if not audit.token:
        return {}
    refused = {}
    for api in audit.apis:
        request = _known_request(api, audit.targets)
        if request is None:
            continue
        response = _get(audit, *request, timeout, api)
        if response is None or response.status not in (401, 403):
            return {}  # a failed request: the audit will say what goes wrong
        refused[_request_line(response)] = response.status
    return refused


def turned_away_targets(
    audit: Audit,
    throttle: Throttle | None = None,
    judge: Callable[[str, Exchange], object] | None = None,
    cleared: Callable[[str, Exchange], object] | None = None,
) -> frozenset[TargetKey]:
    """The projects and test cases of the targets whose plain request the audit's token gets 403
    for: the service, or a gateway before it, turns the caller away from them (an allowlist, a token
    for other projects). What any request for them with that token gets is then the refusal's, not
    the service's answer to what else it asks, and no rule judges it (TurnedAway); a 403 for
    anything else is judged as ever. One request a project and test case, before the audit, each
    waited out if throttled (`throttle`, the audit's: its waits count in its budget) once `judge`
    (given the API and the answer) has judged it, as every throttled answer met by chance is; a
    gateway's 502 or 504 that asking again cleared is given to `cleared`, to be named as a
    scenario's is."""
    if not audit.token:
        return frozenset()
    if throttle is None:
        with Throttle(audit.throttle) as owned:
            return turned_away_targets(audit, owned, judge, cleared)
    timeout = httpx.Timeout(audit.request_timeout, connect=REACHABILITY_TIMEOUT)
    refused = set()
    for api, (key, path, query) in (
        (name, asked) for name in audit.apis for asked in _target_requests(name, audit.targets)
    ):
        response, _ = throttle.send(
            lambda path=path, query=query, api=api: _get(audit, path, query, timeout, api),
            lambda answer: (answer.status, answer.headers) if answer is not None else (0, {}),
            judge=None if judge is None else _judged_as(api, judge),
            what=request_kind("GET", path),
            cleared=None if cleared is None else _judged_as(api, cleared),
        )
        # None: no answer, which the checks will say
        if response is not None and response.status == 403:
            refused.add(key)
    return frozenset(refused)


def _judged_as(
    api: str, judge: Callable[[str, Exchange], object]
) -> Callable[[Exchange | None], None]:
    def judged(answer: Exchange | None) -> None:
        if answer is not None:
            judge(api, answer)

    return judged


def _get(
    audit: Audit, path: str, query: dict[str, str], timeout: httpx.Timeout, api: str
) -> Exchange | None:
    """The answer to a GET of `path` with the audit's token, read within the audit's limits, or
    None when the request failed or its answer was past them: then named among the audit's gaps
    (`audit.preflight_cuts`), as every answer the checks cannot read is."""
    headers = {"Authorization": f"Bearer {audit.token}"} if audit.token else {}
    url = audit.base_url.rstrip("/") + path
    try:
        with held_to_deadlines(httpx.Client(timeout=timeout)) as client:
            return read_exchange(client, url, query, headers, audit.limits)
    except AnswerOverLimit as exc:
        why, remedy = exc.why, exc.remedy
    except httpx.HTTPError as exc:
        why, remedy = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__, CUT_REMEDY
    shown = quoted(str(httpx.URL(url, params=query)))
    audit.preflight_cuts.append(
        Gap(
            api,
            audit.redactor.text(f"the pre-flight's GET {shown} got no answer read whole: {why}"),
            remedy,
        )
    )
    return None


def _request_line(response: Exchange) -> str:
    return f"GET {httpx.URL(response.url).raw_path.decode('ascii')}"


def _answers(statuses: dict[str, int]) -> str:
    return "; ".join(f"{request} -> {status}" for request, status in statuses.items())


def _known_request(api: str, targets: Targets) -> tuple[str, dict[str, str]] | None:
    """The path and query of a request for the first thing the targets say `api` holds, or None."""
    first = next(iter(_target_requests(api, targets)), None)
    return None if first is None else first[1:]


def _target_requests(api: str, targets: Targets) -> list[tuple[TargetKey, str, dict[str, str]]]:
    """For each thing the targets say `api` holds (a project, a test case): its key, and a plain
    request's path and query."""
    op = operation(api)
    if api == "test-set":
        return [
            (
                target_key(api, {"agentId": p.agent_id}, {"projectId": p.project_id}),
                op.url_path(agentId=p.agent_id),
                {"projectId": p.project_id},
            )
            for p in targets.projects
        ]
    return [
        (target_key(api, {"test_case_uuid": t.uuid}, {}), op.url_path(test_case_uuid=t.uuid), {})
        for t in targets.test_cases
    ]


def _is_the_apis_404(api: str, response: Exchange) -> bool:
    op = operation(api)
    declared = op.responses.get("404")
    if declared is None or not _is_documented_body(op, declared.schema, response):
        return False
    code = error_codes(api).get(404)  # the code its page names for it, if one
    return code is None or body_code(api, response.json_or_none()) == code


def _is_documented_body(op: Operation, schema: object, response: Exchange) -> bool:
    ok, body = response.parsed
    if not ok:
        return False
    return next(schema_errors(op.document.spec, schema, body), None) is None
