"""What an audit found: counts per operation and check, and the failures and skips with their requests."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"
_SOURCE_ORDER = {"scenario": 0, "response": 1, "schemathesis": 2}


@dataclass(frozen=True)
class RequestRecord:
    """A request that shows a finding, already redacted, with a reproducing curl command."""

    method: str
    url: str
    headers: dict[str, str]
    status: int | None
    response_excerpt: str
    curl: str


@dataclass(frozen=True)
class Finding:
    """One failed or skipped check: the rule it states, what happened, and the request that shows it."""

    api: str
    operation: str
    check: str
    status: str
    source: str  # "schemathesis", "response" (our per-response checks) or "scenario"
    rule: str
    message: str
    request: RequestRecord | None = None
    code: str | None = None  # Schemathesis failure code, e.g. ST201
    repeats: int = 1


@dataclass(frozen=True)
class Row:
    api: str
    operation: str
    check: str
    source: str
    passed: int
    failed: int
    skipped: int

    @property
    def status(self) -> str:
        return FAILED if self.failed else PASSED if self.passed else SKIPPED


@dataclass
class Results:
    """Accumulates outcomes; failures are kept once per (operation, check, message) with a repeat count."""

    counts: dict[tuple[str, str, str, str], Counter[str]] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # run-level remarks (warnings, stop reasons)
    _index: dict[tuple[str, str, str, str], int] = field(default_factory=dict)

    def record(
        self,
        api: str,
        operation: str,
        check: str,
        status: str,
        *,
        source: str,
        rule: str = "",
        message: str = "",
        request: RequestRecord | None = None,
        code: str | None = None,
    ) -> None:
        self.counts.setdefault((api, operation, check, source), Counter())[status] += 1
        if status == PASSED:
            return
        key = (operation, check, status, message.split("\n", 1)[0])
        if key in self._index:
            index = self._index[key]
            old = self.findings[index]
            self.findings[index] = Finding(**{**old.__dict__, "repeats": old.repeats + 1})
            return
        self._index[key] = len(self.findings)
        self.findings.append(Finding(api, operation, check, status, source, rule, message, request, code))

    def has_seen(self, api: str, check: str) -> bool:
        return any(key[0] == api and key[2] == check for key in self.counts)

    def rows(self) -> list[Row]:
        """Per API in audit order: scenario checks, then per-response checks, then Schemathesis's."""
        apis = list(dict.fromkeys(key[0] for key in self.counts))

        def order(key: tuple[str, str, str, str]) -> tuple[int, str, int, str]:
            api, operation, check, source = key
            return apis.index(api), operation, _SOURCE_ORDER.get(source, 9), check

        return [
            Row(api, operation, check, source, c[PASSED], c[FAILED], c[SKIPPED])
            for (api, operation, check, source), c in sorted(self.counts.items(), key=lambda item: order(item[0]))
        ]

    @property
    def failures(self) -> list[Finding]:
        return [f for f in self.findings if f.status == FAILED]

    @property
    def skips(self) -> list[Finding]:
        return [f for f in self.findings if f.status == SKIPPED]

    def totals(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for row in self.rows():
            total[row.status] += 1
        return total

    @property
    def conforms(self) -> bool:
        return not self.failures
