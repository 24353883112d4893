"""What an audit found: per check, how many responses kept or broke it; per broken rule and request
shape, one finding with a count and the first few examples; and the verdict, which a run that
checked nothing never passes."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from evalmock.harness.checks.outcomes import NO_TOKEN, SkipKind
from evalmock.harness.checks.policy import FAILED, PASSED, SKIPPED, WARNED, Policy
from evalmock.harness.checks.registry import SCENARIO, Check, checks
from evalmock.harness.results.findings import (
    Example,
    Finding,
    Gap,
    RequestRecord,
    breach_kind,
    plainness,
)
from evalmock.harness.results.incomplete import Incomplete, Shortfall
from evalmock.harness.results.tally import OFF, Tally
from evalmock.harness.results.throttling import ThrottleReport
from evalmock.harness.results.verdict import Verdict
from evalmock.nouns import counted, noun_for

UNSEEN_SKIP = (
    "no response this check speaks about was seen"  # why a check that never applied is skipped
)
MAX_EXAMPLES = 3  # examples kept per finding; the rest are counted
GAPS_SHOWN = 3  # gaps of the audit named in its incomplete reason; the rest are counted
COUNT = "{count}"  # where a counted note says its total
_COUNTED_WORD = re.compile(r"\{count:([^|{}]+)\|([^|{}]+)\}")
FOLDED_SHOWN = 3  # instances a folded note names; the rest are counted


def counted_word(singular: str, plural: str | None = None) -> str:
    """Where a counted note says a word that agrees with its total (after COUNT): `answer`, or
    `answers`; `was`, or `were`."""
    return "{count:" + singular + "|" + (plural or singular + "s") + "}"


def with_count(note: str, count: int) -> str:
    """A counted note with its total at COUNT and each counted_word agreeing with it."""
    said = _COUNTED_WORD.sub(lambda word: noun_for(count, word[1], plural=word[2]), note)
    return said.replace(COUNT, str(count))


@dataclass
class Folded:
    """A note said once for many instances: how many, and the first few as they were met."""

    count: int = 0
    shown: list[str] = field(default_factory=list)

    def add(self, instance: str, count: int = 1) -> None:
        self.count += count
        if len(self.shown) < FOLDED_SHOWN and instance not in self.shown:
            self.shown.append(instance)

    def merge(self, other: Folded) -> None:
        self.count += other.count
        for instance in other.shown:
            if len(self.shown) < FOLDED_SHOWN and instance not in self.shown:
                self.shown.append(instance)

    def say(self, note: str) -> str:
        """The note with its total, then the instances it names and how many more."""
        more = self.count - len(self.shown)
        return f"{with_count(note, self.count)}: {'; '.join(self.shown)}" + (
            f"; and {more} more" if more > 0 else ""
        )


class Results:
    """Outcomes of every check of the audited APIs under one policy."""

    def __init__(self, policy: Policy, apis: Iterable[str]) -> None:
        self.policy = policy
        self.apis = tuple(apis)
        self.tallies: dict[tuple[str, str], Tally] = {
            (check.api, check.name): Tally(check, off=not policy.runs(check.source))
            for api in self.apis
            for check in checks(api)
        }
        self._findings: dict[tuple[str, str, str, str], Finding] = {}
        self.notes: list[
            str
        ] = []  # run-level remarks (Schemathesis stopping early, requests not judged)
        self.counted_notes: Counter[str] = Counter()  # see count_note
        self.folded_notes: dict[str, Folded] = {}  # see fold_note
        # Per API, the scenario checks this audit chose to run (an API left out: all of them; empty:
        # none, as in an audit of recorded traffic, which has no service to send their requests to).
        self.selected: dict[str, set[str]] = {}
        # The service's throttling: not a rule of the pages, so never a finding; what it left
        # unjudged makes the audit incomplete.
        self.throttling = ThrottleReport()
        # Work the audit could not do (a request that got no answer, an operation Schemathesis could
        # not test): never a rule's failure, but the audit cannot then say the service conforms.
        self.gaps: list[Gap] = []

    # -- recording
    # ---------------------------------------------------------------------------------------
    def tally(self, check: Check) -> Tally:
        key = (check.api, check.name)
        # every check of every exchange asks: a Tally is built only when missing
        found = self.tallies.get(key)
        if found is None:
            found = self.tallies[key] = Tally(check)
        return found

    def passed(self, check: Check) -> None:
        tally = self.tally(check)
        if not tally.off:
            tally.passed += 1

    def breach(
        self, check: Check, example: Example, *, shape: str, code: str | None = None
    ) -> str | None:
        """Record a response that broke `check`; returns what it counts as under the policy (failed
        or warned), or None for a check this profile does not apply (nothing is recorded)."""
        tally = self.tally(check)
        if tally.off:
            return None
        outcome = self.policy.breach(check.level)
        if outcome == FAILED:
            tally.failed += 1
        else:
            tally.warned += 1
        self._add(check, outcome, shape, example, code)
        return outcome

    def skipped(self, check: Check, reason: str, kind: SkipKind = SkipKind.MISSING) -> None:
        self.tally(check).skipped += 1
        self._add(check, SKIPPED, "", Example(reason, skip=kind), None)

    def not_judged(self, check: Check, reason: str) -> None:
        """A response `check` speaks about but did not judge, and why (said if the check never
        judged one)."""
        tally = self.tally(check)
        if not tally.off:
            tally.not_judged[reason] += 1

    def gap(self, gap: Gap) -> None:
        """Record work the audit could not do."""
        self.gaps.append(gap)

    def skip_unexercised(self, api: str, reason: Callable[[Check], str | None]) -> None:
        """Record each check of `api` that met nothing it speaks about as skipped, saying
        `reason(check)` (a check for which it gives None is left alone): a check that never ran is
        never passed."""
        for tally in self.rows(api):
            if not (tally.ran or tally.off or tally.skipped):
                why = reason(tally.check)
                # it met responses, and said why it judged none
                if why is not None and tally.not_judged:
                    why = "; ".join(
                        f"{counted(count, 'response')} not judged: {said}"
                        for said, count in tally.not_judged.most_common()
                    )
                if why is not None:
                    self.skipped(tally.check, why)

    def shown_requests(self) -> list[RequestRecord]:
        """The requests whose curl command the outputs show: each finding's first example's, where
        it names one."""
        return [
            finding.examples[0].request
            for finding in self._findings.values()
            if finding.examples and finding.examples[0].request is not None
        ]

    def count_note(self, note: str, count: int = 1) -> None:
        """A note said once with the total of its COUNT however often (and by however many workers)
        it is counted."""
        self.counted_notes[note] += count

    def fold_note(self, note: str, instance: str) -> None:
        """A note said once for every instance of it (each answer not judged for one reason): with
        its total at COUNT, and the first few instances named."""
        self.folded_notes.setdefault(note, Folded()).add(instance)

    def remarks(self) -> list[str]:
        """Every note of the run, each counted or folded one once, with its total."""
        return [
            *self.notes,
            *(with_count(note, count) for note, count in self.counted_notes.items()),
            *(folded.say(note) for note, folded in self.folded_notes.items()),
        ]

    def copy(self) -> Results:
        """The outcomes so far, apart from these (to finish and report while more are still being
        recorded)."""
        other = Results(self.policy, ())
        other.apis = self.apis
        other.tallies = {
            key: dataclasses.replace(tally, not_judged=tally.not_judged.copy())
            for key, tally in self.tallies.items()
        }
        other._findings = {
            key: dataclasses.replace(finding, examples=list(finding.examples))
            for key, finding in self._findings.items()
        }
        other.notes = list(self.notes)
        other.counted_notes = self.counted_notes.copy()
        other.folded_notes = {
            note: Folded(folded.count, list(folded.shown))
            for note, folded in self.folded_notes.items()
        }
        other.selected = {api: set(names) for api, names in self.selected.items()}
        other.throttling = dataclasses.replace(
            self.throttling,
            reasons=self.throttling.reasons.copy(),
            shares=self.throttling.shares.copy(),
        )
        other.gaps = list(self.gaps)
        return other

    def _add(
        self, check: Check, outcome: str, shape: str, example: Example, code: str | None
    ) -> None:
        key = (check.api, check.name, outcome, shape)
        finding = self._findings.get(key)
        if finding is None:
            title = example.message.split("\n", 1)[0]
            finding = self._findings[key] = Finding(check, outcome, shape, title, code)
        finding.count += 1
        # A reason to skip given again (by each project's run of a check run once a project) is said
        # once.
        said = outcome == SKIPPED and any(e.message == example.message for e in finding.examples)
        if said:
            return
        # The first example is the one the outputs lead with and give a curl command for: the
        # plainest request that shows the breach, not the first met (a scenario's `Prefer: code=503`
        # to a service that ignores it, when a plain request shows the same).
        first = finding.examples[0] if finding.examples else None
        if outcome != SKIPPED and first is not None and plainness(example) < plainness(first):
            finding.examples.insert(0, example)
            del finding.examples[MAX_EXAMPLES:]
            finding.title = example.message.split("\n", 1)[0]
            return
        if len(finding.examples) < MAX_EXAMPLES:
            finding.examples.append(example)
            return
        # A rule broken in two ways (a walk that repeats cases and also skips some) shows each way:
        # a new kind of breach takes the place of the last example of a kind already shown twice.
        kinds = [breach_kind(e.message) for e in finding.examples]
        if breach_kind(example.message) not in kinds:
            repeated = [n for n, kind in enumerate(kinds) if kinds.count(kind) > 1]
            if repeated:
                finding.examples[repeated[-1]] = example

    # -- reading
    # -----------------------------------------------------------------------------------------
    @property
    def findings(self) -> list[Finding]:
        return list(self._findings.values())

    def findings_of(self, outcome: str) -> list[Finding]:
        return [f for f in self._findings.values() if f.outcome == outcome]

    @property
    def failures(self) -> list[Finding]:
        return self.findings_of(FAILED)

    @property
    def warnings(self) -> list[Finding]:
        return self.findings_of(WARNED)

    @property
    def skips(self) -> list[Finding]:
        return self.findings_of(SKIPPED)

    def rows(self, api: str | None = None) -> list[Tally]:
        return [t for (row_api, _), t in self.tallies.items() if api is None or row_api == api]

    def incomplete_reasons(self) -> list[Incomplete]:
        """Why the audit cannot say a target conforms, though nothing failed: per API, no deciding
        rule (a page rule; a live one in the live profile) was checked at all, or every chosen
        scenario check was skipped, or those that need a token were (the audit had none), or part of
        the audit could not be done; over all, the service's throttling left requests unjudged."""
        reasons = [reason for api in self.apis for reason in self._incomplete(api)]
        if self.throttling.given_up:
            reasons.append(
                Incomplete(
                    Shortfall.THROTTLED,
                    None,
                    f"{counted(self.throttling.given_up, 'request')} "
                    f"{noun_for(self.throttling.given_up, 'was', plural='were')} still "
                    "throttled after waiting, and no check judged them (see Throttling)",
                )
            )
        return reasons

    def _incomplete(self, api: str) -> Iterator[Incomplete]:
        rows = self.rows(api)
        if not any(t.ran for t in rows if self.policy.decides(t.check.level)):
            yield Incomplete(Shortfall.NO_DECIDING_RULE, api, "no page rule was checked")
        if (skipped := self._scenarios_skipped(api, rows)) is not None:
            yield skipped
        if gaps := [gap for gap in self.gaps if gap.api == api]:
            yield Incomplete(Shortfall.UNDONE, api, _undone(gaps))

    def _scenarios_skipped(self, api: str, rows: list[Tally]) -> Incomplete | None:
        """Every chosen scenario check skipped, or those that need a token (the audit had none)."""
        names = self.selected.get(api)  # None: every scenario check was chosen
        chosen = [
            t
            for t in rows
            if t.check.kind == SCENARIO and not t.off and (names is None or t.check.name in names)
        ]
        skips = [f for f in self.skips if f.api == api and f.check.kind == SCENARIO and f.examples]
        if chosen and not any(t.ran for t in chosen):
            needs = sorted({f.examples[0].message for f in skips})
            return Incomplete(
                Shortfall.ALL_SKIPPED, api, f"every scenario check was skipped ({'; '.join(needs)})"
            )
        if tokenless := {f.check.name for f in skips if f.examples[0].skip is SkipKind.NO_TOKEN}:
            # Without a token, only the answers to requests without one were judged: never the data.
            return Incomplete(
                Shortfall.NO_TOKEN,
                api,
                f"{counted(len(tokenless), 'scenario check')} that need a token "
                f"{noun_for(len(tokenless), 'was', plural='were')} skipped ({NO_TOKEN})",
            )
        return None

    def incomplete_apis(self) -> set[str]:
        """The APIs this audit cannot say conform: for a reason of their own, or a check of theirs
        that could not judge an answer still throttled (the throttling is one reason of the whole
        audit, yet its unjudged checks are the API's)."""
        apis = {reason.api for reason in self.incomplete_reasons() if reason.api is not None}
        if self.throttling.given_up:
            apis |= {
                f.api for f in self.skips if f.examples and f.examples[0].skip is SkipKind.UNJUDGED
            }
        return apis

    @property
    def verdict(self) -> Verdict:
        if self.failures:
            return Verdict.VIOLATIONS
        return Verdict.INCOMPLETE if self.incomplete_reasons() else Verdict.CONFORMS

    @property
    def conforms(self) -> bool:
        """True only for a complete audit without failures (warnings allowed)."""
        return self.verdict is Verdict.CONFORMS

    def counts(self) -> dict[str, int]:
        """How many checks ended each way (one per check, by its tally's outcome)."""
        found: dict[str, int] = {FAILED: 0, WARNED: 0, PASSED: 0, SKIPPED: 0, OFF: 0}
        for tally in self.tallies.values():
            found[tally.outcome] += 1
        return found


def _undone(gaps: list[Gap]) -> str:
    said = list(dict.fromkeys(gap.what for gap in gaps))  # many requests may be turned away alike
    shown = "; ".join(said[:GAPS_SHOWN])
    shown += f"; and {len(said) - GAPS_SHOWN} more" if len(said) > GAPS_SHOWN else ""
    remedies = "".join(
        f". {remedy}" for remedy in dict.fromkeys(g.remedy for g in gaps if g.remedy)
    )
    return (
        f"{counted(len(gaps), 'part')} of the audit could not be done, and no check judged them "
        f"({shown}){remedies}"
    )
