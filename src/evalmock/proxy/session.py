"""What `evalmock proxy` does with the traffic it forwards: each exchange of an audited operation
judged by the harness, each broken rule told on a live line and in the response's header, every
exchange recorded, and what the app sent journaled for the client rules; and the outputs (report,
JUnit, HAR) of all the traffic so far, whenever they are asked for."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TextIO

from evalmock.contract.client_verdict import ClientVerdict
from evalmock.defaults import DEFAULT_PROXY_JUDGE
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.excerpts import printable, quoted
from evalmock.harness.report.files import write_report
from evalmock.harness.report.junit import write_junit
from evalmock.harness.report.run_info import RunInfo
from evalmock.harness.report.view import replay_notes
from evalmock.harness.results.audit_results import Results
from evalmock.harness.results.verdict import Verdict
from evalmock.harness.secrets.redactor import Redactor
from evalmock.harness.traffic.audit import TrafficAudit
from evalmock.proxy.client_journal import ClientJournals
from evalmock.proxy.forwarded import Forwarded, Headers
from evalmock.proxy.recorder import HarRecorder
from evalmock.proxy.violations import (
    HEADER,
    header_value,
    live_line,
    request_line,
    throttled_line,
    unjudged_line,
)
from evalmock.recording.live import LiveRecording
from evalmock.recording.output import WriteOptions

PREFIX = "evalmock proxy: "  # of every console line
SERVICE_NOT_JUDGED = "of the service, which --judge client leaves unjudged"


@dataclass(frozen=True)
class Outputs:
    """Where to write the results: a Markdown or HTML report, JUnit XML, a HAR file of the
    traffic."""

    report: str | None = None
    junit: str | None = None
    har: str | None = None
    record: str | None = None  # a data file of what the APIs answered
    anonymize_seed: int | None = None  # the data file's people made up, from this seed

    @property
    def paths(self) -> list[str]:
        return [path for path in (self.report, self.junit, self.har, self.record) if path]


class ProxySession:
    """The proxy's Observer: judges, tells, records; `write_outputs` writes everything seen so
    far."""

    def __init__(
        self,
        audit: TrafficAudit,
        upstream: str,
        outputs: Outputs,
        stream: TextIO | None = None,
        run: RunInfo | None = None,
        *,
        judge: str = DEFAULT_PROXY_JUDGE,
    ) -> None:
        self.audit = audit
        # whose side is judged (--judge): the service's answers, the app's requests, or both
        self.judges_service = judge in ("both", "service")
        self.judges_client = judge in ("both", "client")
        self.upstream = upstream
        self.run = run or RunInfo.of(upstream, target_kind="upstream")
        self.outputs = outputs
        self.stream = stream or sys.stderr
        self.recorder = HarRecorder(audit.redactor) if outputs.har else None
        self.data = (
            LiveRecording(outputs.record, audit.redactor, WriteOptions(outputs.anonymize_seed))
            if outputs.record
            else None
        )
        self.clients = ClientJournals()

    @property
    def redactor(self) -> Redactor:
        return self.audit.redactor

    # -- the Observer
    # ----------------------------------------------------------------------------------------
    def api_of(self, method: str, path: str) -> str | None:
        return self.audit.api_of(method, path)

    def judge(self, api: str, forwarded: Forwarded) -> Headers:
        self._learn(forwarded)
        exchange = Exchange(
            method=forwarded.method,
            url=forwarded.url,
            status=forwarded.status,
            headers=first_values(forwarded.response_headers),
            body=forwarded.body or b"",
            request_headers=first_values(forwarded.request_headers),
        )
        if not self.judges_service:
            self.audit.skip(SERVICE_NOT_JUDGED)
            self._journal(api, forwarded, exchange.json_or_none())
            self._record(forwarded)
            return []
        # from every header value, not the first only
        judged = self.audit.judge(api, exchange, learned=True)
        if judged.throttled:
            self._say(
                throttled_line(
                    forwarded.method,
                    self._url(forwarded),
                    forwarded.status,
                    exchange.header("retry-after"),
                )
            )
        if judged.off_document:
            self._say(
                request_line(
                    forwarded.method, self._url(forwarded), forwarded.status, judged.off_document
                )
            )
        for breach in judged.breaches:
            self._say(
                live_line(
                    breach, forwarded.method, self._url(forwarded), forwarded.status, self.redactor
                )
            )
        self._journal(api, forwarded, exchange.json_or_none())
        self._record(forwarded)
        return [(HEADER, header_value(judged.breaches))] if judged.breaches else []

    def passed(self, forwarded: Forwarded, why: str) -> None:
        self._learn(forwarded)
        if forwarded.kept_aside:
            # A sign-in's answer carries the token that later traffic may echo. (A judged body's
            # secret-named fields are learned on the way to a finding that may quote them.)
            self.redactor.learn_body(forwarded.kept_aside)
        self.audit.skip(why)
        self._journal(self.api_of(forwarded.method, forwarded.path), forwarded, read=False)
        self._record(forwarded)

    def unjudged(self, forwarded: Forwarded, why: str) -> None:
        """An answer of an audited operation the proxy held but does not read (`why`): said,
        counted, recorded without its body."""
        self._learn(forwarded)
        forwarded.unjudged = why
        self.audit.skip(why)
        self._say(unjudged_line(forwarded.method, self._url(forwarded), forwarded.status, why))
        self._journal(self.api_of(forwarded.method, forwarded.path), forwarded, read=False)
        self._record(forwarded)

    def failed(self, forwarded: Forwarded, status: int, why: str) -> None:
        self._learn(forwarded)
        self.audit.skip(f"answered {status} by the proxy (the upstream gave no answer)")
        # the app got the proxy's answer: no cursor, and no Retry-After of the page's
        answered = replace(forwarded, status=status, response_headers=[])
        self._journal(self.api_of(forwarded.method, forwarded.path), answered)
        # The error body's message names the proxy; the line already does.
        said = f"{status} {forwarded.method} {quoted(self._url(forwarded))}: "
        said += why.removeprefix(PREFIX)
        self._say(said)

    # -- outputs
    # ---------------------------------------------------------------------------------------------
    def results(self) -> Results:
        return self.audit.snapshot()

    def client_verdict(self) -> ClientVerdict | None:
        """The client rules' verdict on what the app sent so far (each caller apart); None when
        the app is not judged (--judge service)."""
        if not self.judges_client:
            return None
        return self.clients.verdict(strict=self.audit.results.policy.strict)

    def exit_code(self, results: Results, client: ClientVerdict | None) -> int:
        """The verdict on what is judged: the service's, unless the app broke a rule (then
        VIOLATIONS); the app's alone with --judge client (docs/proxy.md)."""
        if client is not None and client.failed:
            return Verdict.VIOLATIONS.exit_code
        if not self.judges_service:
            assert client is not None
            return Verdict[client.verdict].exit_code
        return results.verdict.exit_code

    def write_outputs(self, *, behind: bool = False) -> Results:
        """Write every output asked for, covering all traffic so far; a path that cannot be written
        is said. `behind`: the --record file from a snapshot, in a thread, while traffic goes on."""
        results = self.results()
        results.notes += replay_notes(results, self.redactor)
        client = self.client_verdict()
        for path, write in (
            (
                self.outputs.report,
                lambda p: write_report(
                    results,
                    p,
                    base_url=self.upstream,
                    redactor=self.redactor,
                    run=self.run,
                    client=client,
                ),
            ),
            (self.outputs.junit, lambda p: write_junit(results, p, self.redactor, client)),
            (self.outputs.har, lambda p: self.recorder.write(p) if self.recorder else None),
            (self.outputs.record, lambda p: self._write_data(p, behind)),
        ):
            if not path:
                continue
            try:
                write(path)
            except OSError as exc:
                self._say(f"cannot write {path}: {exc.strerror or exc}")
        if self.outputs.paths:
            self._say(f"wrote {', '.join(self.outputs.paths)} ({self._judged_so_far(client)})")
        return results

    def _judged_so_far(self, client: ClientVerdict | None) -> str:
        """What --judge judges, counted: the service's exchanges, the app's requests, or both."""
        counts = [f"{self.audit.judged} exchanges"] if self.judges_service else []
        if client is not None:
            counts.append(f"{client.judged} requests of the app")
        return f"{' and '.join(counts)} judged so far"

    def close(self) -> None:
        if self.recorder is not None:
            self.recorder.close()
        if self.data is not None:
            self.data.close()

    def _write_data(self, path: str, behind: bool) -> None:
        if self.data is None:
            return
        if behind:
            self.data.write_behind(lambda exc: self._say(f"cannot write {path}: {exc.strerror}"))
        else:
            self.data.write()

    # -- helpers
    # ---------------------------------------------------------------------------------------------
    def _learn(self, forwarded: Forwarded) -> None:
        self.redactor.learn_exchange(
            forwarded.url, forwarded.request_headers, forwarded.response_headers
        )
        if forwarded.request_body:  # a sign-in's password, a form's secret-named values
            self.redactor.learn_body(forwarded.request_body)

    def _journal(
        self, api: str | None, forwarded: Forwarded, answer: object = None, *, read: bool = True
    ) -> None:
        """Journal a request of an audited API for the client rules (a path no API has is none of
        their business)."""
        if api is None or not self.judges_client:
            return
        self.clients.add(
            api,
            forwarded.method,
            forwarded.url,
            forwarded.started.timestamp(),
            forwarded.status,
            forwarded.request_headers,
            forwarded.response_headers,
            answer,
            answer_read=read,
        )

    def _record(self, forwarded: Forwarded) -> None:
        if self.recorder is not None:
            self.recorder.record(forwarded)
        if self.data is not None:
            self.data.feed(forwarded.method, forwarded.url, forwarded.status, forwarded.body)

    def _url(self, forwarded: Forwarded) -> str:
        """The request's URL for a console line, its secrets replaced while it is whole: a line
        quotes it cut to a bound (`quoted`), which may cut a secret in two."""
        return self.redactor.text(forwarded.url)

    def _say(self, line: str) -> None:
        # what the upstream sent is in the line: never a raw escape sequence on the console
        print(f"{PREFIX}{printable(self.redactor.text(line))}", file=self.stream, flush=True)


def first_values(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Header names in lower case, the first value of each (as every check reads headers)."""
    found: dict[str, str] = {}
    for name, value in headers:
        found.setdefault(name.lower(), value)
    return found
