"""The audit's answer and its exit code."""

from __future__ import annotations

from enum import Enum


class Verdict(Enum):
    """The audit's answer and its exit code."""

    CONFORMS = 0
    VIOLATIONS = 1
    INCOMPLETE = 4

    @property
    def exit_code(self) -> int:
        return self.value
