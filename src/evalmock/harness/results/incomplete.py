"""Why an audit cannot say a service conforms, as typed reasons the reports read."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Shortfall(Enum):
    """What the audit lacked."""

    NO_DECIDING_RULE = "no deciding rule was checked"
    ALL_SKIPPED = "every chosen scenario check was skipped"
    NO_TOKEN = "the scenario checks that need a token were skipped"
    UNDONE = "part of the audit could not be done"
    THROTTLED = "answers were still throttled after waiting"


@dataclass(frozen=True)
class Incomplete:
    """One reason an audit is incomplete: what it lacked, for which API (None: the whole audit), and
    the text."""

    shortfall: Shortfall
    api: str | None
    detail: str

    def __str__(self) -> str:
        return self.detail if self.api is None else f"{self.api}: {self.detail}"
