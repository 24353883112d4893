"""Outcomes one worker recorded apart, replayed into the audit's Results in a fixed order."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from evalmock.harness.checks.outcomes import SkipKind
from evalmock.harness.checks.policy import Policy
from evalmock.harness.checks.registry import Check
from evalmock.harness.results.audit_results import Folded, Results
from evalmock.harness.results.findings import Example, Gap


@dataclass(frozen=True)
class Passed:
    check: Check

    def replay(self, results: Results) -> None:
        results.passed(self.check)


@dataclass(frozen=True)
class Breach:
    check: Check
    example: Example
    shape: str
    code: str | None

    def replay(self, results: Results) -> None:
        results.breach(self.check, self.example, shape=self.shape, code=self.code)


@dataclass(frozen=True)
class Skipped:
    check: Check
    reason: str
    kind: SkipKind

    def replay(self, results: Results) -> None:
        results.skipped(self.check, self.reason, self.kind)


@dataclass(frozen=True)
class NotJudged:
    check: Check
    reason: str

    def replay(self, results: Results) -> None:
        results.not_judged(self.check, self.reason)


@dataclass(frozen=True)
class Undoable:
    gap: Gap

    def replay(self, results: Results) -> None:
        results.gap(self.gap)


Entry = Passed | Breach | Skipped | NotJudged | Undoable


class Ledger:
    """Outcomes recorded apart, by one worker, then replayed into the audit's Results in a fixed
    order, so that the findings, their counts and their examples do not depend on which worker
    finished first."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.notes: list[str] = []
        self.counted_notes: Counter[str] = Counter()
        self.folded_notes: dict[str, Folded] = {}
        self._entries: list[Entry] = []

    def count_note(self, note: str, count: int = 1) -> None:
        self.counted_notes[note] += count

    def fold_note(self, note: str, instance: str) -> None:
        self.folded_notes.setdefault(note, Folded()).add(instance)

    def passed(self, check: Check) -> None:
        self._entries.append(Passed(check))

    def breach(
        self, check: Check, example: Example, *, shape: str, code: str | None = None
    ) -> str | None:
        if not self.policy.runs(check.source):
            return None
        self._entries.append(Breach(check, example, shape, code))
        return self.policy.breach(check.level)

    def skipped(self, check: Check, reason: str, kind: SkipKind = SkipKind.MISSING) -> None:
        self._entries.append(Skipped(check, reason, kind))

    def not_judged(self, check: Check, reason: str) -> None:
        self._entries.append(NotJudged(check, reason))

    def gap(self, gap: Gap) -> None:
        self._entries.append(Undoable(gap))

    def replay(self, results: Results) -> None:
        for entry in self._entries:
            entry.replay(results)
        results.notes += [note for note in self.notes if note not in results.notes]
        results.counted_notes.update(self.counted_notes)
        for note, folded in self.folded_notes.items():
            results.folded_notes.setdefault(note, Folded()).merge(folded)


Recorder = Results | Ledger  # where checks record their outcomes
