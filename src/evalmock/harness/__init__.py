"""The harness: audit any implementation of the two APIs against the contract, from Python, CI or
pytest.

    from evalmock.harness import audit_url, summary_text

    results = audit_url("http://127.0.0.1:8080", targets="targets.toml")
    assert results.conforms, summary_text(results)

The names below are the library's public surface; they load on first use, so importing this package
(as pytest's plugin does) costs nothing until an audit is asked for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalmock.harness.checks.policy import Policy
    from evalmock.harness.report.files import write_report
    from evalmock.harness.report.junit import write_junit
    from evalmock.harness.report.terminal import summary_text
    from evalmock.harness.results.audit_results import Results
    from evalmock.harness.results.findings import Example, Finding
    from evalmock.harness.results.verdict import Verdict
    from evalmock.harness.run.engine import audit_url, run_audit
    from evalmock.harness.run.options import Audit, AuditError, plan_audit
    from evalmock.harness.secrets.redactor import Redactor

_WHERE = {
    "Audit": "evalmock.harness.run.options",
    "AuditError": "evalmock.harness.run.options",
    "Example": "evalmock.harness.results.findings",
    "Finding": "evalmock.harness.results.findings",
    "Policy": "evalmock.harness.checks.policy",
    "Redactor": "evalmock.harness.secrets.redactor",
    "Results": "evalmock.harness.results.audit_results",
    "Verdict": "evalmock.harness.results.verdict",
    "audit_url": "evalmock.harness.run.engine",
    "plan_audit": "evalmock.harness.run.options",
    "run_audit": "evalmock.harness.run.engine",
    "summary_text": "evalmock.harness.report.terminal",
    "write_junit": "evalmock.harness.report.junit",
    "write_report": "evalmock.harness.report.files",
}
__all__ = [
    "Audit",
    "AuditError",
    "Example",
    "Finding",
    "Policy",
    "Redactor",
    "Results",
    "Verdict",
    "audit_url",
    "plan_audit",
    "run_audit",
    "summary_text",
    "write_junit",
    "write_report",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value
