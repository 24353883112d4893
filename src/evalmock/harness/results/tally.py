"""How one check did over the whole audit: responses or runs passed, failed, warned, skipped; off or
not."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from evalmock.harness.checks.policy import FAILED, PASSED, SKIPPED, WARNED
from evalmock.harness.checks.registry import Check

OFF = "off"  # a check whose level this profile does not apply


@dataclass
class Tally:
    """How one check did over the whole audit."""

    check: Check
    passed: int = 0
    failed: int = 0
    warned: int = 0
    skipped: int = 0
    off: bool = False
    # Responses a response check spoke about but did not judge, by the reason it gave (see
    # ResponseJudge.judge).
    not_judged: Counter[str] = field(default_factory=Counter)

    @property
    def outcome(self) -> str:
        if self.off:
            return OFF
        if self.failed:
            return FAILED
        if self.warned:
            return WARNED
        return PASSED if self.passed else SKIPPED

    @property
    def ran(self) -> bool:
        return bool(self.passed or self.failed or self.warned)
