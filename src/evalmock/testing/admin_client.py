"""The admin API of sessions (`/__evalmock`, openapi/evalmock-admin.yaml) as a small client: a
session's world, its faults, its journal and its client verdict."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from evalmock.exits import EvalmockError
from evalmock.testing.keywords import snake_case_keywords

ADMIN_PATH = "/__evalmock"
MAX_ANSWER_BYTES = 16 * 2**20  # a journal is bounded by the mock; a larger answer is not the mock's
TIMEOUT_S = 30.0
CONFORMS = "CONFORMS"


class AdminError(EvalmockError):
    """The admin API refused a request (its status, code and message), or could not be reached."""

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None):
        super().__init__(message)
        self.status = status
        self.code = code


@dataclass(frozen=True)
class Verdict:
    """How the session's callers used the APIs, judged by what the pages ask of a client."""

    verdict: str  # CONFORMS, VIOLATIONS, or INCOMPLETE (nothing judged, or entries dropped)
    findings: list[dict[str, Any]]
    not_judged: list[Any]
    judged: int
    notes: list[str] = field(default_factory=list)

    @property
    def conforms(self) -> bool:
        return self.verdict == CONFORMS

    def explain(self) -> str:
        """The verdict and each finding, one a line, in the mock's words; then what was not
        judged."""
        lines = [f"client verdict: {self.verdict} ({self.judged} requests judged)"]
        lines += [f"  - {finding_words(finding)}" for finding in self.findings]
        lines += [f"  note: {note}" for note in self.notes]
        if not self.findings:  # INCOMPLETE: what was not judged is the story
            lines += [f"  not judged: {finding_words(item)}" for item in self.not_judged]
        return "\n".join(lines)


def finding_words(finding: Any) -> str:
    """One finding (or rule not judged) as a line: its rule and level, what the app sent against
    what the page asks (or why it was not judged), and the page's words."""
    if not isinstance(finding, Mapping):
        return str(finding)
    head = " ".join(
        f"[{finding[key]}]" if key == "level" else str(finding[key])
        for key in ("rule", "level")
        if finding.get(key)
    )
    said = (
        finding.get("message")
        or finding.get("why")
        or "; ".join(
            f"{key} {finding[key]}" for key in ("expected", "received") if finding.get(key)
        )
    )
    source = f"(source: {finding['source']})" if finding.get("source") else ""
    words = " ".join(filter(None, [f"{head}:" if head and said else head, said, source]))
    return words or json.dumps(finding, ensure_ascii=False)


@dataclass
class Session:
    """One session of a mock: its world, answered to requests carrying `token`."""

    admin: Admin = field(repr=False)
    id: str
    token: str = field(repr=False)  # a credential: never in a repr, a log or an assertion
    base_url: str

    @property
    def headers(self) -> dict[str, str]:
        """What a request to the session's world carries."""
        return {"Authorization": f"Bearer {self.token}"}

    def info(self) -> dict[str, Any]:
        return self.admin.call("GET", self._path())

    @snake_case_keywords
    def fault(
        self,
        api: str = "test-set",
        *,
        times: int = 1,
        status: int | None = None,
        code: str | None = None,
        retry_after: int | None = None,
        latency_ms: int | None = None,
        query: Mapping[str, str] | None = None,
        page: int | None = None,
    ) -> dict[str, Any]:
        """Queue an answer for the next `times` requests of `api` (matching `query`, a value or "*"
        for present, and `page`); the queue is used up in order. Returns the fault as queued."""
        body: dict[str, Any] = {"api": api, "times": times}
        optional = {"status": status, "code": code, "retryAfter": retry_after}
        optional["latencyMs"] = latency_ms
        body |= {key: value for key, value in optional.items() if value is not None}
        match = {key: value for key, value in (("query", query), ("page", page)) if value}
        if match:
            body["match"] = dict(match)
        return self.admin.call("POST", self._path("faults"), json=body)

    def faults(self) -> list[dict[str, Any]]:
        """The faults still queued, in order."""
        answer = self.admin.call("GET", self._path("faults"))
        return answer["faults"] if isinstance(answer, dict) else answer

    def clear_faults(self) -> None:
        self.admin.call("DELETE", self._path("faults"))

    @snake_case_keywords
    def requests(
        self,
        api: str | None = None,
        *,
        method: str | None = None,
        path: str | None = None,
        query: str | Mapping[str, str] | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """The journal: what the session's callers sent and got, newest last; `query` is
        `NAME=VALUE`, or `NAME` for any value, or one `{NAME: VALUE}` as a fault's."""
        answer = self.admin.call(
            "GET", self._path("requests"), params=_filters(api, method, path, query, limit)
        )
        return list(answer["requests"])

    @snake_case_keywords
    def count(
        self,
        api: str | None = None,
        *,
        method: str | None = None,
        path: str | None = None,
        query: str | Mapping[str, str] | None = None,
    ) -> int:
        """How many journaled requests match (WireMock's verify)."""
        answer = self.admin.call(
            "GET",
            self._path("requests/count"),
            params=_filters(api, method, path, query, None),
        )
        return int(answer["count"])

    def clear_requests(self) -> None:
        self.admin.call("DELETE", self._path("requests"))

    def verdict(self) -> Verdict:
        """The session's traffic judged by the client rules."""
        answer = self.admin.call("GET", self._path("verdict"))
        return Verdict(
            verdict=answer["verdict"],
            findings=list(answer.get("findings", [])),
            not_judged=list(answer.get("notJudged", [])),
            judged=int(answer.get("judged", 0)),
            notes=[str(note) for note in answer.get("notes", [])],
        )

    def assert_conforms(self) -> Verdict:
        """AssertionError with every finding's words unless the app used the APIs as the pages
        ask."""
        verdict = self.verdict()
        if not verdict.conforms:
            raise AssertionError(verdict.explain())
        return verdict

    def delete(self) -> None:
        """End the session: its token gets 401 from now on. A session already gone is no error."""
        try:
            self.admin.call("DELETE", self._path())
        except AdminError as exc:
            if exc.status != 404:
                raise

    def _path(self, tail: str = "") -> str:
        return f"{ADMIN_PATH}/sessions/{self.id}" + (f"/{tail}" if tail else "")


def _query_filter(query: str | Mapping[str, str] | None) -> str | None:
    """The journal's `query` filter: `NAME=VALUE` as given, or from a fault's form `{NAME: VALUE}`
    (the filter takes one parameter, so one entry)."""
    if query is None or isinstance(query, str):
        return query
    if len(query) != 1:
        raise ValueError(
            f"query filters by one parameter ('NAME=VALUE', 'NAME' or {{NAME: VALUE}}); "
            f"received {len(query)} entries"
        )
    [(name, value)] = query.items()
    return f"{name}={value}"


def _filters(
    api: str | None,
    method: str | None,
    path: str | None,
    query: str | Mapping[str, str] | None,
    limit: int | None,
) -> dict[str, str]:
    params = {"api": api, "method": method, "path": path, "query": _query_filter(query)}
    params["limit"] = limit
    return {key: str(value) for key, value in params.items() if value is not None}


class Admin:
    """A mock's admin API at `base_url` (with `admin_token` where the mock asks for one)."""

    def __init__(
        self,
        base_url: str,
        *,
        admin_token: str | None = None,
        timeout: float = TIMEOUT_S,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        headers = {"Authorization": f"Bearer {admin_token}"} if admin_token else {}
        self._client = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_url!r})"

    def close(self) -> None:
        self._client.close()

    @snake_case_keywords
    def create_session(
        self,
        *,
        seed: int | None = None,
        cases: int | None = None,
        data: Mapping[str, Any] | None = None,
        data_only: bool | None = None,
        churn: int | None = None,
    ) -> Session:
        """A new session: a world of its own (the default one when nothing is given)."""
        given = {"seed": seed, "cases": cases, "data": data, "dataOnly": data_only, "churn": churn}
        body = {key: value for key, value in given.items() if value is not None}
        answer = self.call("POST", f"{ADMIN_PATH}/sessions", json=body)
        return Session(self, str(answer["id"]), str(answer["token"]), self.base_url)

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """One admin request: its JSON answer (None for 204), or AdminError with the mock's
        words."""
        request = self._client.build_request(method, path, **kwargs)
        try:
            response = self._client.send(request, stream=True)
            try:
                body = _bounded(response)
            finally:
                response.close()
        except httpx.HTTPError as exc:
            # its words are in the message: the transport's traceback would only bury them
            raise AdminError(f"{method} {path}: the mock did not answer: {exc}") from None
        if response.status_code >= 400:
            raise _refusal(method, path, response.status_code, body)
        if not body:
            return None
        try:
            return json.loads(body)
        except ValueError as exc:
            raise AdminError(
                f"{method} {path}: the answer is not JSON", status=response.status_code
            ) from exc


def _bounded(response: httpx.Response) -> bytes:
    read = bytearray()
    for chunk in response.iter_bytes():
        read += chunk
        if len(read) > MAX_ANSWER_BYTES:
            raise AdminError(
                f"{response.request.method} {response.request.url.path}: the answer is over "
                f"{MAX_ANSWER_BYTES} bytes",
                status=response.status_code,
            )
    return bytes(read)


def _refusal(method: str, path: str, status: int, body: bytes) -> AdminError:
    """The admin API's error envelope `{"error": {code, message, details}}` as an AdminError."""
    code, message, details = None, body[:200].decode("utf-8", "replace"), []
    try:
        error = json.loads(body)["error"]
        code, message, details = error.get("code"), error.get("message"), error.get("details", [])
    except (ValueError, KeyError, TypeError, AttributeError):
        pass
    detail = "".join(f"\n  {json.dumps(item, ensure_ascii=False)}" for item in details or [])
    return AdminError(
        f"{method} {path}: {status} {code or ''} {message}".rstrip() + detail,
        status=status,
        code=code,
    )
