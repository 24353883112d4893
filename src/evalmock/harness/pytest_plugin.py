"""The audit from pytest, installed as a pytest11 plugin: one collected test per check, and
`evalmock_results`.

    pytest --evalmock-base-url http://127.0.0.1:8080 --evalmock-targets targets.toml \\
        [--junitxml report.xml]

Each check is a test with the node id `evalmock::<api>::<check>`, which runs again alone as
`pytest --evalmock-base-url URL "evalmock::test-set::walk_yields_every_case_once"` (an argument
starting with `evalmock` selects audit tests; `pytest ... evalmock` runs the audit and no other
tests); `-k`, `--lf` and `--ff` select among them as among any tests. Per API, in this order:

- each scenario check runs its own requests when its test runs (its duration is its own);
- `evalmock::<api>::schemathesis` runs Schemathesis on the document (passes, or skips with
  --evalmock-no-fuzz);
- each check of every response and each Schemathesis check reports on all the responses seen by
  then;
- `evalmock::<api>::audit_is_complete` fails when the audit checked too little to say (as `evalmock
  contract` exits 4).

A check fails with its findings, passes (a warning, for a broken inferred rule, is shown in pytest's
warnings summary), or skips with the reason, reported at its node id. An unreachable target ends the
session before any test, with pytest's usage-error exit code (4). Without --evalmock-base-url the
plugin adds nothing.
"""

from __future__ import annotations

import warnings
from collections.abc import Generator, Iterable
from typing import TYPE_CHECKING, Any

import pytest

from evalmock.harness.pytest_options import add_options, audit_from_options

if TYPE_CHECKING:  # the audit's imports are heavy; they load only when an audit is asked for
    from evalmock.harness.checks.registry import Check
    from evalmock.harness.results.audit_results import Results
    from evalmock.harness.run.options import Audit
    from evalmock.harness.run.throttle import Throttle

ROOT = "evalmock"
FUZZ_ITEM, COMPLETE_ITEM = "schemathesis", "audit_is_complete"
_SESSION = pytest.StashKey["AuditSession | None"]()
_ASKED = pytest.StashKey[list[str]]()  # the `evalmock...` arguments, taken out of pytest's paths


class EvalmockWarning(UserWarning):
    """A broken inferred rule: reported, not failed (unless --evalmock-strict)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """The `--evalmock-...` options (pytest_options.py)."""
    add_options(parser)


class ApiRun:
    """One API's share of the audit, run as its tests ask: a scenario check at a time, Schemathesis
    once."""

    def __init__(self, api: str, audit: Audit, results: Results, throttle: Throttle) -> None:
        self.api, self.audit, self.results, self.throttle = api, audit, results, throttle
        self.ran: set[str] = set()
        self.traffic_done = False

    def scenario(self, check: Check) -> None:
        """Run one scenario check (once); every response it gets is judged by the response checks
        too."""
        from evalmock.harness.run.engine import run_scenario

        if check.name in self.ran or not self.results.policy.runs(check.source):
            return
        self.ran.add(check.name)
        run_scenario(check, self.api, self.audit, self.throttle).replay(self.results)
        self.results.throttling = self.throttle.report()

    def finish_traffic(self) -> None:
        """Run Schemathesis (unless --evalmock-no-fuzz), then mark what met nothing as skipped;
        once."""
        from evalmock.harness.run.engine import name_cut_answers, run_shard, unexercised_reason
        from evalmock.harness.run.fuzzing import shards
        from evalmock.harness.run.workers import worker_pool

        if self.traffic_done:
            return
        self.traffic_done = True
        audit = self.audit
        if audit.fuzz:
            # Side by side with --evalmock-workers; the ledgers are replayed in the shards' order
            # all the same.
            with worker_pool(audit.workers) as pool:
                ledgers = [
                    pool.submit(run_shard, self.api, audit, self.throttle, shard)
                    for shard in shards(audit.phases)
                ]
                for ledger in ledgers:
                    ledger.result().replay(self.results)
            name_cut_answers(self.api, audit, self.results)
        self.results.skip_unexercised(self.api, unexercised_reason(audit.fuzz))
        self.results.throttling = self.throttle.report()


class AuditSession:
    """The audit of one pytest session: its results, filled in by the tests as they run."""

    def __init__(self, audit: Audit) -> None:
        from evalmock.harness.results.audit_results import Results
        from evalmock.harness.run.throttle import Throttle

        self.audit = audit
        self.results = Results(audit.policy, audit.apis)
        # one for the session: its budget and rate limit span every test
        self.throttle = Throttle(audit.throttle)
        self.runs = {api: ApiRun(api, audit, self.results, self.throttle) for api in audit.apis}

    def choose(self, items: Iterable[pytest.Item]) -> None:
        """Record which scenario checks were selected (by node id, -k, --lf): completeness judges
        only those."""
        for api in self.audit.apis:
            self.results.selected[api] = {
                i.check.name
                for i in items
                if isinstance(i, CheckItem) and i.api == api and i.check.kind == "scenario"
            }

    def complete(self) -> Results:
        """The whole audit: every scenario check not yet run, then Schemathesis, for every API."""
        from evalmock.harness.checks.registry import scenario_checks

        for api, run in self.runs.items():
            # every scenario check, whatever the tests selected
            self.results.selected.pop(api, None)
            for check in scenario_checks(api):
                run.scenario(check)
            run.finish_traffic()
        return self.results


def _ours(argument: str) -> bool:
    return argument == ROOT or argument.startswith(f"{ROOT}::")


def pytest_configure(config: pytest.Config) -> None:
    audit = audit_from_options(config)
    config.stash[_SESSION] = AuditSession(audit) if audit is not None else None
    # `evalmock::api::check` names no file: taken out of the paths to collect, it selects among the
    # audit's tests.
    config.stash[_ASKED] = [a for a in config.args if _ours(a)] if audit is not None else []
    if config.stash[_ASKED]:
        config.args[:] = [a for a in config.args if not _ours(a)]


def pytest_unconfigure(config: pytest.Config) -> None:
    audit_session = config.stash.get(_SESSION, None)
    if audit_session is not None:
        audit_session.throttle.close()


def pytest_sessionstart(session: pytest.Session) -> None:
    audit_session = session.config.stash.get(_SESSION, None)
    if audit_session is None:
        return
    from evalmock.harness.run.options import AuditError
    from evalmock.harness.run.preflight import check_target

    try:
        check_target(audit_session.audit)
    except (
        AuditError
    ) as exc:  # one line, before any test; pytest prints it as "ERROR: ..." and exits 4
        message = (
            str(exc)
            .replace("the base URL", "--evalmock-base-url")
            .replace("(--token,", "(--evalmock-token,")
        )
        raise pytest.UsageError(f"evalmock: {message}; no audit test ran") from None
    for cut in audit_session.audit.preflight_cuts:  # answers no check sees: named here
        audit_session.results.gap(cut)


class AuditItem(pytest.Item):
    """A test of the audit: reported at its node id, `evalmock::<api>::<name>`."""

    def __init__(self, *, api: str, audit_session: AuditSession, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.api, self.audit_session = api, audit_session

    @property
    def run(self) -> ApiRun:
        return self.audit_session.runs[self.api]

    def reportinfo(self) -> tuple[str, int | None, str]:
        return self.nodeid, None, self.nodeid

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, pytest.fail.Exception):
            return str(excinfo.value)
        # a bug of ours, not a finding
        return f"{self.nodeid}: the audit itself failed: {excinfo.exconly()}"


class CheckItem(AuditItem):
    """One check of one API; a scenario check runs its requests now, the others report on the
    responses seen."""

    def __init__(self, *, check: Check, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check = check
        # `-k` and node ids still select a renamed rule by the names it had
        self.extra_keyword_matches.update(check.formerly)
        self.former_nodeids = tuple(
            f"{self.parent.nodeid}::{name}" for name in check.formerly if self.parent
        )

    def runtest(self) -> None:
        from evalmock.harness.checks.policy import FAILED, SKIPPED, WARNED
        from evalmock.harness.report.junit import finding_text
        from evalmock.harness.results.tally import OFF

        if self.check.kind == "scenario":
            self.run.scenario(self.check)
        else:
            self.run.finish_traffic()
        results = self.audit_session.results
        # again, for any secret learned after a finding was kept
        redact = self.audit_session.audit.redactor.text
        tally = results.tallies[(self.api, self.check.name)]
        mine = [f for f in results.findings if f.check is self.check]
        if tally.outcome == FAILED:
            pytest.fail(
                redact("\n\n".join(finding_text(f) for f in mine if f.outcome == FAILED)),
                pytrace=False,
            )
        if tally.outcome == WARNED:
            for finding in (f for f in mine if f.outcome == WARNED):
                warnings.warn(
                    EvalmockWarning(redact(f"{self.check.name}: {finding_text(finding)}")),
                    stacklevel=1,
                )
        elif tally.outcome == SKIPPED:
            pytest.skip(
                redact("; ".join(f.title for f in mine if f.outcome == SKIPPED))
                or "nothing to check"
            )
        elif tally.outcome == OFF:
            pytest.skip(results.policy.why_off(self.check.source))


class FuzzItem(AuditItem):
    """Schemathesis on the API's document, once; its checks are the tests that follow."""

    def runtest(self) -> None:
        self.run.finish_traffic()
        if not self.run.audit.fuzz:
            pytest.skip("Schemathesis did not run (--evalmock-no-fuzz)")


class CompletenessItem(AuditItem):
    """Fails when the audit of an API checked too little to say whether it conforms."""

    def runtest(self) -> None:
        self.run.finish_traffic()
        results = self.audit_session.results
        reasons = [str(r) for r in results.incomplete_reasons() if r.api == self.api]
        # the session's throttle spans every API: said under each one's completeness
        if results.throttling.given_up:
            reasons.append(f"throttling: {results.throttling.text('--evalmock-rate-limit')}")
        if reasons:
            pytest.fail("the audit is incomplete: " + "; ".join(reasons), pytrace=False)


class AuditCollector(pytest.Collector):
    """The audit's tests: a collector per API under one root named `evalmock`."""

    def __init__(self, *, audit_session: AuditSession, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.audit_session = audit_session

    def collect(self) -> list[ApiCollector]:
        return [
            ApiCollector.from_parent(self, name=api, audit_session=self.audit_session)
            for api in self.audit_session.audit.apis
        ]

    def items(self) -> list[pytest.Item]:
        return [item for api in self.collect() for item in api.collect()]


class ApiCollector(pytest.Collector):
    """One API's tests, in the order they must run: scenario checks, Schemathesis, the other checks,
    completeness."""

    def __init__(self, *, audit_session: AuditSession, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.audit_session = audit_session

    def collect(self) -> list[pytest.Item]:
        from evalmock.harness.checks import checks

        api, found = self.name, checks(self.name)
        common = {"api": api, "audit_session": self.audit_session}
        items: list[pytest.Item] = [
            CheckItem.from_parent(self, name=c.name, check=c, **common)
            for c in found
            if c.kind == "scenario"
        ]
        items.append(FuzzItem.from_parent(self, name=FUZZ_ITEM, **common))
        items += [
            CheckItem.from_parent(self, name=c.name, check=c, **common)
            for c in found
            if c.kind != "scenario"
        ]
        items.append(CompletenessItem.from_parent(self, name=COMPLETE_ITEM, **common))
        return items


def _asked_for(item: pytest.Item, asked: list[str]) -> bool:
    names = (item.nodeid, *getattr(item, "former_nodeids", ()))
    return any(name == a or name.startswith(a + "::") for name in names for a in asked)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Add the audit's tests before -k, -m, --lf and --ff select among them."""
    audit_session = config.stash.get(_SESSION, None)
    if audit_session is None:
        return
    ours = AuditCollector.from_parent(
        session, name=ROOT, nodeid=ROOT, audit_session=audit_session
    ).items()
    asked = config.stash.get(_ASKED, [])
    if asked:
        unknown = [a for a in asked if not any(_asked_for(i, [a]) for i in ours)]
        if unknown:
            raise pytest.UsageError(
                f"evalmock: no audit test {', '.join(unknown)} (node ids look like "
                f"evalmock::test-set::walk_yields_every_case_once)"
            )
        ours = [i for i in ours if _asked_for(i, asked)]
    items.extend(ours)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    audit_session = session.config.stash.get(_SESSION, None)
    if audit_session is not None:
        audit_session.choose(session.items)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, Any]:
    """A skip of an audit test is located at its node id (pytest would point at this plugin's
    line)."""
    report = yield
    if isinstance(item, AuditItem) and report.skipped and isinstance(report.longrepr, tuple):
        report.longrepr = (item.nodeid, None, report.longrepr[2])
    return report


@pytest.fixture(scope="session")
def evalmock_results(request: pytest.FixtureRequest) -> Results:
    """The Results of the whole audit the command line asked for (--evalmock-base-url ...); skips
    without one."""
    audit_session = request.config.stash.get(_SESSION, None)
    if audit_session is None:
        pytest.skip(
            "no audit asked for: pass --evalmock-base-url (or call evalmock.harness.audit_url)"
        )
    return audit_session.complete()
