"""The audit from pytest, installed as a pytest11 plugin: one test per check, and the `evalmock_results` fixture.

    pytest --evalmock-base-url http://127.0.0.1:8080 --evalmock-targets targets.toml [--junitxml report.xml]

The audit runs once, when the first of its tests (or the fixture) needs it. Each check is a test named
`evalmock::<api>::<check>`: failed with its findings, passed (a warning, for a broken inferred rule, is shown in
pytest's warnings summary), or skipped with the reason; `evalmock::<api>::audit_is_complete` fails when the audit
checked too little to say (as `evalmock contract` exits 4). Without --evalmock-base-url the plugin adds nothing.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # the audit's imports are heavy; they load only when an audit is asked for
    from evalmock.harness.audit import Audit
    from evalmock.harness.results import Results

ROOT = "evalmock"
_SESSION = pytest.StashKey["AuditSession | None"]()


class EvalmockWarning(UserWarning):
    """A broken inferred rule: reported, not failed (unless --evalmock-strict)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("evalmock", "evalmock contract audit")
    group.addoption("--evalmock-base-url", help="audit the implementation at this root URL")
    group.addoption("--evalmock-targets", help="targets file (TOML or YAML) of known ids, facts and [auth] tokens")
    group.addoption("--evalmock-api", choices=["test-set", "gradient", "all"], default="all",
                    help="which API (default all)")
    group.addoption("--evalmock-token", help="bearer token (default: env EVALMOCK_TOKEN, else the targets)")
    group.addoption("--evalmock-second-token", help="a second caller's token (default: env EVALMOCK_SECOND_TOKEN)")
    group.addoption("--evalmock-max-examples", type=int, default=25, help="examples per Schemathesis phase")
    group.addoption("--evalmock-seed", type=int, default=42, help="generation seed")
    group.addoption("--evalmock-no-fuzz", action="store_true", help="semantic checks only, no Schemathesis")
    group.addoption("--evalmock-strict", action="store_true", help="fail on inferred rules too")
    group.addoption("--evalmock-profile", default="pages", help="pages (default) or digitalocean-live")


class AuditSession:
    """The audit, run at most once per pytest session and shared by its tests and the fixture."""

    def __init__(self, audit: Audit) -> None:
        self.audit = audit
        self._results: Results | None = None

    @property
    def results(self) -> Results:
        if self._results is None:
            from evalmock.harness.audit import reachable, run_audit

            problem = reachable(self.audit.base_url)
            if problem:
                raise pytest.UsageError(f"{self.audit.base_url} is unreachable ({problem})")
            self._results = run_audit(self.audit)
        return self._results


def _audit_from_options(config: pytest.Config) -> Audit | None:
    base_url = config.getoption("--evalmock-base-url")
    if not base_url:
        return None
    from evalmock.harness.audit import APIS, AuditError, plan_audit

    api = config.getoption("--evalmock-api")
    try:
        return plan_audit(
            base_url, targets=config.getoption("--evalmock-targets"), token=config.getoption("--evalmock-token"),
            second_token=config.getoption("--evalmock-second-token"), apis=APIS if api == "all" else (api,),
            strict=config.getoption("--evalmock-strict"), profile=config.getoption("--evalmock-profile"),
            seed=config.getoption("--evalmock-seed"), max_examples=config.getoption("--evalmock-max-examples"),
            fuzz=not config.getoption("--evalmock-no-fuzz"),
        )
    except AuditError as exc:
        raise pytest.UsageError(str(exc).replace("the base URL", "--evalmock-base-url")) from None


def pytest_configure(config: pytest.Config) -> None:
    audit = _audit_from_options(config)
    config.stash[_SESSION] = AuditSession(audit) if audit is not None else None


class CheckItem(pytest.Item):
    """One check of one API; its outcome comes from the shared audit."""

    def __init__(self, *, api: str, check: str, audit_session: AuditSession, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.api, self.check, self.session_audit = api, check, audit_session

    def runtest(self) -> None:
        from evalmock.harness.policy import FAILED, SKIPPED, WARNED
        from evalmock.harness.report import finding_text
        from evalmock.harness.results import OFF

        results = self.session_audit.results
        redact = self.session_audit.audit.redactor.text  # again, for any secret learned after a finding was kept
        tally = results.tallies[(self.api, self.check)]
        mine = [f for f in results.findings if f.check is tally.check]
        if tally.outcome == FAILED:
            pytest.fail(redact("\n\n".join(finding_text(f) for f in mine if f.outcome == FAILED)), pytrace=False)
        if tally.outcome == WARNED:
            for finding in (f for f in mine if f.outcome == WARNED):
                warnings.warn(EvalmockWarning(redact(f"{self.check}: {finding_text(finding)}")), stacklevel=1)
        elif tally.outcome == SKIPPED:
            pytest.skip(redact("; ".join(f.title for f in mine if f.outcome == SKIPPED)) or "nothing to check")
        elif tally.outcome == OFF:
            pytest.skip(f"a {tally.check.level} rule: off in profile {results.policy.profile}")

    def reportinfo(self) -> tuple[str, int | None, str]:
        return ROOT, None, f"{ROOT}::{self.api}::{self.check}"


class CompletenessItem(pytest.Item):
    """Fails when the audit of an API checked too little to say whether it conforms."""

    def __init__(self, *, api: str, audit_session: AuditSession, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.api, self.session_audit = api, audit_session

    def runtest(self) -> None:
        reasons = [r for r in self.session_audit.results.incomplete_reasons() if r.startswith(f"{self.api}:")]
        if reasons:
            pytest.fail("the audit is incomplete: " + "; ".join(reasons), pytrace=False)

    def reportinfo(self) -> tuple[str, int | None, str]:
        return ROOT, None, f"{ROOT}::{self.api}::audit_is_complete"


class AuditCollector(pytest.Collector):
    """The audit's tests: per API, every check, then whether the audit was complete."""

    def __init__(self, *, session_audit: AuditSession, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.session_audit = session_audit

    def collect(self) -> list[pytest.Item]:
        from evalmock.harness.checks import checks

        items: list[pytest.Item] = []
        for api in self.session_audit.audit.apis:
            for check in checks(api):
                items.append(CheckItem.from_parent(self, name=f"{api}::{check.name}", api=api, check=check.name,
                                                   audit_session=self.session_audit))
            items.append(CompletenessItem.from_parent(self, name=f"{api}::audit_is_complete", api=api,
                                                      audit_session=self.session_audit))
        return items


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    audit_session = config.stash.get(_SESSION, None)
    if audit_session is None:
        return
    collector = AuditCollector.from_parent(session, name=ROOT, nodeid=ROOT, session_audit=audit_session)
    items.extend(collector.collect())


@pytest.fixture(scope="session")
def evalmock_results(request: pytest.FixtureRequest) -> Results:
    """The Results of the audit the command line asked for (--evalmock-base-url ...); skips without one."""
    audit_session = request.config.stash.get(_SESSION, None)
    if audit_session is None:
        pytest.skip("no audit asked for: pass --evalmock-base-url (or call evalmock.harness.audit.audit_url)")
    return audit_session.results
