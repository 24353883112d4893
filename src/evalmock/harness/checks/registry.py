"""The check registry: every rule the harness applies, each a named function stating it, with its
source.

Three kinds of check:
- `response`: a function of one CheckContext (the exchange, the targets: what is known to exist, and
  the policy), run on every response the audit sees; returns True when it applied, None when the
  response is not one it speaks about, a reason (a string) when it speaks about the response but
  cannot judge it (said in the report when it judged none), and raises Violation when the response
  breaks it;
- `scenario`: a function of a Scenario, making its own requests; raises Violation or Skip;
- `schemathesis`: one of Schemathesis's built-in checks, declared here so that it too has a source.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalmock.contract.documents import APIS
from evalmock.contract.sources import Level, Source

if TYPE_CHECKING:
    from evalmock.harness.checks.context import CheckContext
    from evalmock.harness.checks.scenario import Scenario

RESPONSE, SCENARIO, SCHEMATHESIS = "response", "scenario", "schemathesis"


@dataclass(frozen=True)
class Check:
    """One rule: its name, API, topic and kind, what it checks (our words), where the rule comes
    from, the code."""

    name: str
    api: str
    topic: str
    rule: str
    kind: str
    source: Source
    func: Callable[..., Any] | None = None
    # A scenario check that judges each project of the targets apart, so an audit may run it as one
    # task a project.
    each_project: bool = False
    # The names it had before: still found by them, and selected by them where users select rules.
    formerly: tuple[str, ...] = ()

    @property
    def level(self) -> Level:
        return self.source.level


CHECKS: list[Check] = []
# (api, name) and (None, name) -> the first check registered so: every judged exchange looks its
# built-ins up.
_FOUND: dict[tuple[str | None, str], Check] = {}


def register(check: Check) -> Check:
    """Add a check; its name is unique per API, it states its rule and it has a source."""
    if check.api not in APIS:
        raise ValueError(f"unknown API {check.api!r}")
    if any(existing.name == check.name and existing.api == check.api for existing in CHECKS):
        raise ValueError(f"a check named {check.name!r} is already registered for {check.api}")
    if not check.rule:
        raise ValueError(f"check {check.name} must state its rule")
    if not isinstance(check.source, Source):
        raise TypeError(f"check {check.name} must say where its rule comes from (a Source)")
    CHECKS.append(check)
    for name in (check.name, *check.formerly):
        _FOUND.setdefault((check.api, name), check)
        _FOUND.setdefault((None, name), check)
    return check


def _decorator(
    kind: str,
    api: str,
    source: Source,
    *,
    each_project: bool = False,
    formerly: tuple[str, ...] = (),
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        topic = func.__module__.rsplit(".", 1)[-1]
        rule = " ".join((func.__doc__ or "").split())  # one line, however the docstring wraps
        register(Check(func.__name__, api, topic, rule, kind, source, func, each_project, formerly))
        return func

    return decorate


def stating(rule: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a check the rule it states when the rule's words are read from a document (written under
    the registering decorator): its docstring is then made, not written."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        func.__doc__ = rule
        return func

    return decorate


def response_check(
    api: str, source: Source
) -> Callable[[Callable[[CheckContext], bool | str | None]], Callable[..., Any]]:
    """Register a per-response check: `(context) -> True` when it applied, None when it did not
    apply, or why it did not judge a response it speaks about."""
    return _decorator(RESPONSE, api, source)


def scenario_check(
    api: str, source: Source, *, each_project: bool = False, formerly: tuple[str, ...] = ()
) -> Callable[[Callable[[Scenario], None]], Callable[..., Any]]:
    """Register a scenario check: `(scenario) -> None`, raising Violation or Skip. `each_project`:
    it judges every project of `scenario.targets` and each apart from the others, so it may be run
    once a project, the targets narrowed to it (a slow service's audit then walks them side by
    side). `formerly`: the names it was known by before a rename."""
    return _decorator(SCENARIO, api, source, each_project=each_project, formerly=formerly)


def checks(api: str | None = None, kind: str | None = None) -> list[Check]:
    """The registered checks, in registration order, of one API and kind (or all)."""
    return [c for c in CHECKS if (api is None or c.api == api) and (kind is None or c.kind == kind)]


def response_checks(api: str) -> list[Check]:
    return checks(api, RESPONSE)


def scenario_checks(api: str) -> list[Check]:
    return checks(api, SCENARIO)


def find_check(name: str, api: str | None = None) -> Check:
    try:
        return _FOUND[(api, name)]
    except KeyError:
        raise KeyError(name) from None
