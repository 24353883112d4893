"""The check registry: per-response checks and scenario checks, each a named function stating one rule."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalmock.harness.checks.base import Exchange
    from evalmock.harness.scenario import Scenario

API_NAMES = ("test-set", "gradient")


@dataclass(frozen=True)
class Check:
    """One rule: its name, the API it applies to, the page's topic, the rule in the page's words, the code."""

    name: str
    api: str
    topic: str
    rule: str
    kind: str  # "response": runs on every response; "scenario": makes its own requests
    func: Callable[..., Any]


RESPONSE_CHECKS: list[Check] = []
SCENARIO_CHECKS: list[Check] = []


def _register(kind: str, api: str, func: Callable[..., Any], into: list[Check]) -> Check:
    if api not in API_NAMES:
        raise ValueError(f"unknown API {api!r}")
    if any(existing.name == func.__name__ for existing in (*RESPONSE_CHECKS, *SCENARIO_CHECKS)):
        raise ValueError(f"a check named {func.__name__!r} is already registered")
    rule = inspect.cleandoc(func.__doc__ or "").strip()
    if not rule:
        raise ValueError(f"check {func.__name__} must state its rule in its docstring")
    check = Check(func.__name__, api, func.__module__.rsplit(".", 1)[-1], rule, kind, func)
    into.append(check)
    return check


def response_check(api: str) -> Callable[[Callable[[Exchange], bool | None]], Callable[[Exchange], bool | None]]:
    """Register a per-response check: `(exchange) -> True` when it applied, None when it did not apply."""

    def decorate(func: Callable[[Exchange], bool | None]) -> Callable[[Exchange], bool | None]:
        _register("response", api, func, RESPONSE_CHECKS)
        return func

    return decorate


def scenario_check(api: str) -> Callable[[Callable[[Scenario], None]], Callable[[Scenario], None]]:
    """Register a scenario check: `(scenario) -> None`, raising Violation or Skip."""

    def decorate(func: Callable[[Scenario], None]) -> Callable[[Scenario], None]:
        _register("scenario", api, func, SCENARIO_CHECKS)
        return func

    return decorate


def response_checks(api: str) -> list[Check]:
    return [check for check in RESPONSE_CHECKS if check.api == api]


def scenario_checks(api: str) -> list[Check]:
    return [check for check in SCENARIO_CHECKS if check.api == api]


def find_check(name: str) -> Check:
    for check in (*RESPONSE_CHECKS, *SCENARIO_CHECKS):
        if check.name == name:
            return check
    raise KeyError(name)
