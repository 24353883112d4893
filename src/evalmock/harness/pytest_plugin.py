"""The audit as pytest tests: one test per semantic check and one per Schemathesis run, on any base URL.

    pytest -p evalmock.harness.pytest_plugin --evalmock-base-url http://127.0.0.1:8080 \\
        --evalmock-targets targets.toml [--evalmock-api test-set] [--junitxml report.xml]

The audit runs once, when the first of its tests runs; each test then reports its own check: failed with
the rule, what was expected and received and a reproducing curl (token redacted), skipped with the reason
(a fact missing from the targets, no response the check speaks about), or passed.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from evalmock.contract.targets import Targets, TargetsError, load_targets
from evalmock.harness.audit import APIS, Audit, run_audit
from evalmock.harness.checks import response_checks, scenario_checks
from evalmock.harness.contract_command import check_base_url, reachable
from evalmock.harness.results import FAILED, SKIPPED, Finding, Results

SCHEMATHESIS = "schemathesis"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("evalmock", "evalmock contract audit")
    group.addoption("--evalmock-base-url", help="audit the implementation at this root URL")
    group.addoption("--evalmock-targets", help="targets file (TOML or YAML) of known ids and facts")
    group.addoption("--evalmock-api", choices=[*APIS, "all"], default="all", help="which API (default all)")
    group.addoption("--evalmock-token", help="bearer token (default: env EVALMOCK_TOKEN, else the targets)")
    group.addoption("--evalmock-second-token", help="a second caller's token (default: env EVALMOCK_SECOND_TOKEN)")
    group.addoption("--evalmock-max-examples", type=int, default=25, help="examples per Schemathesis phase")
    group.addoption("--evalmock-seed", type=int, default=42, help="generation seed")
    group.addoption("--evalmock-no-fuzz", action="store_true", help="semantic checks only, no Schemathesis")


class AuditSession:
    """The audit, run at most once per pytest session and shared by its tests."""

    def __init__(self, audit: Audit) -> None:
        self.audit = audit
        self._results: Results | None = None

    @property
    def results(self) -> Results:
        if self._results is None:
            problem = reachable(self.audit.base_url)
            if problem:
                raise pytest.UsageError(f"{self.audit.base_url} is unreachable ({problem})")
            self._results = run_audit(self.audit)
        return self._results


def _audit_from_options(config: pytest.Config) -> Audit | None:
    base_url = config.getoption("--evalmock-base-url")
    if not base_url:
        return None
    problem = check_base_url(base_url)
    if problem:
        raise pytest.UsageError(problem.replace("--base-url", "--evalmock-base-url"))
    path = config.getoption("--evalmock-targets")
    try:
        targets = load_targets(path) if path else Targets()
    except TargetsError as exc:
        raise pytest.UsageError(str(exc)) from None
    token = config.getoption("--evalmock-token") or os.environ.get("EVALMOCK_TOKEN") or targets.token
    second = (config.getoption("--evalmock-second-token") or os.environ.get("EVALMOCK_SECOND_TOKEN")
              or targets.second_token)
    api = config.getoption("--evalmock-api")
    return Audit(
        base_url=base_url.rstrip("/"), targets=targets, apis=APIS if api == "all" else (api,), token=token,
        second_token=second, seed=config.getoption("--evalmock-seed"),
        max_examples=config.getoption("--evalmock-max-examples"), fuzz=not config.getoption("--evalmock-no-fuzz"),
    )


class CheckItem(pytest.Item):
    """One check of one API; its outcome comes from the shared audit."""

    def __init__(self, *, api: str, check: str, audit: AuditSession, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.api = api
        self.check = check
        self.audit = audit

    def runtest(self) -> None:
        results = self.audit.results
        findings = [f for f in results.findings if f.api == self.api and self._mine(f)]
        failed = [f for f in findings if f.status == FAILED]
        if failed:
            pytest.fail("\n\n".join(_describe(f) for f in failed), pytrace=False)
        ran = any(row.passed for row in results.rows() if row.api == self.api and self._mine_row(row.check, row.source))
        skipped = [f for f in findings if f.status == SKIPPED]
        if skipped and not ran:
            pytest.skip(skipped[0].message)

    def _mine(self, finding: Finding) -> bool:
        return self._mine_row(finding.check, finding.source)

    def _mine_row(self, check: str, source: str) -> bool:
        if self.check == SCHEMATHESIS:
            return source == SCHEMATHESIS
        return check == self.check and source != SCHEMATHESIS

    def reportinfo(self) -> tuple[str, int | None, str]:
        return "evalmock", None, f"{self.api}::{self.check}"


class AuditCollector(pytest.Collector):
    """The audit's tests: per API, every scenario check, every per-response check, and the Schemathesis run."""

    def __init__(self, *, audit: AuditSession, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.audit = audit

    def collect(self) -> list[pytest.Item]:
        items: list[pytest.Item] = []
        for api in self.audit.audit.apis:
            names = [c.name for c in scenario_checks(api)] + [c.name for c in response_checks(api)]
            if self.audit.audit.fuzz:
                names.append(SCHEMATHESIS)
            for name in names:
                items.append(CheckItem.from_parent(self, name=f"{api}::{name}", api=api, check=name, audit=self.audit))
        return items


def _describe(finding: Finding) -> str:
    lines = [f"{finding.check}: {finding.message}", f"rule: {finding.rule}"]
    if finding.code:
        lines.append(f"code: {finding.code}")
    if finding.request is not None:
        lines.append(f"reproduce: {finding.request.curl}")
    return "\n".join(lines)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    audit = _audit_from_options(config)
    if audit is None:
        return
    collector = AuditCollector.from_parent(session, name="evalmock-contract", audit=AuditSession(audit))
    items.extend(collector.collect())
