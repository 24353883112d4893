"""Our semantic checks, grouped by the pages' topics; importing this package registers every one."""

from evalmock.harness.checks import cases, cursors, errors, filters, gradient, pagination  # noqa: F401
from evalmock.harness.checks.base import Exchange, Skip, Violation
from evalmock.harness.checks.registry import (
    RESPONSE_CHECKS,
    SCENARIO_CHECKS,
    Check,
    find_check,
    response_checks,
    scenario_checks,
)

__all__ = [
    "RESPONSE_CHECKS",
    "SCENARIO_CHECKS",
    "Check",
    "Exchange",
    "Skip",
    "Violation",
    "find_check",
    "response_checks",
    "scenario_checks",
]
