"""Every rule the harness applies, grouped by the pages' topics; importing this package registers
every one."""

from evalmock.harness.checks import (  # noqa: F401  (registration)
    authentication,
    builtins,
    case_invariants,
    cursor_binding,
    cursor_reuse,
    digitalocean,
    error_answers,
    filters,
    gateway_errors,
    metric_enums,
    pagination,
    parameters,
)
from evalmock.harness.checks.registry import (
    CHECKS,
    RESPONSE,
    SCENARIO,
    SCHEMATHESIS,
    Check,
    checks,
    find_check,
    response_checks,
    scenario_checks,
)

__all__ = [
    "CHECKS",
    "RESPONSE",
    "SCENARIO",
    "SCHEMATHESIS",
    "Check",
    "checks",
    "find_check",
    "response_checks",
    "scenario_checks",
]
