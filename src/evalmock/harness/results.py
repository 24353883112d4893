"""What an audit found: per check, how many responses kept or broke it; per broken rule and request shape, one
finding with a count and the first few examples; and the verdict, which a run that checked nothing never passes."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum

from evalmock.harness.checks.registry import SCENARIO, Check, checks
from evalmock.harness.outcomes import NO_TOKEN
from evalmock.harness.policy import FAILED, PASSED, SKIPPED, WARNED, Policy
from evalmock.harness.throttle import ThrottleReport

OFF = "off"  # a check whose level this profile does not apply
UNSEEN_SKIP = "no response this check speaks about was seen"  # why a check that never applied is skipped
MAX_EXAMPLES = 3  # examples kept per finding; the rest are counted
GAPS_SHOWN = 3  # gaps of the audit named in its incomplete reason; the rest are counted
COUNT = "{count}"  # where a counted note says its total


class Verdict(Enum):
    """The audit's answer and its exit code."""

    CONFORMS = 0
    VIOLATIONS = 1
    INCOMPLETE = 4

    @property
    def exit_code(self) -> int:
        return self.value


@dataclass(frozen=True)
class RequestRecord:
    """A request that shows a finding, already redacted, with its answer's status and a reproducing curl."""

    method: str
    url: str
    headers: dict[str, str]
    status: int | None
    curl: str


@dataclass(frozen=True)
class Example:
    """One response that broke a rule: what was expected and received, where (a JSON pointer), the request."""

    message: str
    request: RequestRecord | None = None
    pointer: str | None = None
    value: str | None = None  # the offending value, as JSON text, shortened


def breach_kind(message: str) -> str:
    """What kind of breach a message states: its first line without the values in it (quoted text, numbers)."""
    title = message.split("\n", 1)[0]
    return _DIGITS.sub("#", _QUOTED.sub("''", title))


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_DIGITS = re.compile(r"\d+")


@dataclass
class Finding:
    """One broken (or skipped) rule for one request shape: how often, and the first few examples."""

    check: Check
    outcome: str  # FAILED, WARNED or SKIPPED
    shape: str  # "GET /v1/agents/{agentId}/test-set/cases ?limit&projectId -> 200"; "" for a skip
    title: str  # the first example's first line
    code: str | None = None  # Schemathesis's failure code (ST108, ...)
    count: int = 0
    examples: list[Example] = field(default_factory=list)

    @property
    def api(self) -> str:
        return self.check.api


@dataclass
class Tally:
    """How one check did over the whole audit."""

    check: Check
    passed: int = 0
    failed: int = 0
    warned: int = 0
    skipped: int = 0
    off: bool = False
    # Responses a response check spoke about but did not judge, by the reason it gave (see ResponseJudge.judge).
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


@dataclass(frozen=True)
class Gap:
    """Work an audit could not do: its API, what it was (a request, said as sent), and what would let it be done
    (said once for every gap alike; empty when nothing the audit can change would)."""

    api: str
    what: str
    remedy: str = ""


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
        self.notes: list[str] = []  # run-level remarks (Schemathesis stopping early, requests not judged)
        self.counted_notes: Counter[str] = Counter()  # see count_note
        # Per API, the scenario checks this audit chose to run (an API left out: all of them; empty: none, as in an
        # audit of recorded traffic, which has no service to send their requests to).
        self.selected: dict[str, set[str]] = {}
        # The service's throttling: not a rule of the pages, so never a finding; what it left unjudged makes the
        # audit incomplete.
        self.throttling = ThrottleReport()
        # Work the audit could not do (a request that got no answer, an operation Schemathesis could not test):
        # never a rule's failure, but the audit cannot then say the service conforms.
        self.gaps: list[Gap] = []

    # -- recording ---------------------------------------------------------------------------------------
    def tally(self, check: Check) -> Tally:
        key = (check.api, check.name)
        found = self.tallies.get(key)  # every check of every exchange asks: a Tally is built only when missing
        if found is None:
            found = self.tallies[key] = Tally(check)
        return found

    def passed(self, check: Check) -> None:
        tally = self.tally(check)
        if not tally.off:
            tally.passed += 1

    def breach(self, check: Check, example: Example, *, shape: str, code: str | None = None) -> str | None:
        """Record a response that broke `check`; returns what it counts as under the policy (failed or warned),
        or None for a check this profile does not apply (nothing is recorded)."""
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

    def skipped(self, check: Check, reason: str) -> None:
        self.tally(check).skipped += 1
        self._add(check, SKIPPED, "", Example(reason), None)

    def not_judged(self, check: Check, reason: str) -> None:
        """A response `check` speaks about but did not judge, and why (said if the check never judged one)."""
        tally = self.tally(check)
        if not tally.off:
            tally.not_judged[reason] += 1

    def gap(self, gap: Gap) -> None:
        """Record work the audit could not do."""
        self.gaps.append(gap)

    def skip_unexercised(self, api: str, reason: Callable[[Check], str | None]) -> None:
        """Record each check of `api` that met nothing it speaks about as skipped, saying `reason(check)` (a check for
        which it gives None is left alone): a check that never ran is never passed."""
        for tally in self.rows(api):
            if not (tally.ran or tally.off or tally.skipped):
                why = reason(tally.check)
                if why is not None and tally.not_judged:  # it met responses, and said why it judged none
                    why = "; ".join(f"{count} response(s) not judged: {said}"
                                    for said, count in tally.not_judged.most_common())
                if why is not None:
                    self.skipped(tally.check, why)

    def shown_requests(self) -> list[RequestRecord]:
        """The requests whose curl command the outputs show: each finding's first example's, where it names one."""
        return [finding.examples[0].request for finding in self._findings.values()
                if finding.examples and finding.examples[0].request is not None]

    def count_note(self, note: str, count: int = 1) -> None:
        """A note said once with the total of its COUNT however often (and by however many workers) it is counted."""
        self.counted_notes[note] += count

    def remarks(self) -> list[str]:
        """Every note of the run, each counted one once, with its total."""
        return [*self.notes, *(note.replace(COUNT, str(count)) for note, count in self.counted_notes.items())]

    def copy(self) -> Results:
        """The outcomes so far, apart from these (to finish and report while more are still being recorded)."""
        other = Results(self.policy, ())
        other.apis = self.apis
        other.tallies = {key: dataclasses.replace(tally, not_judged=tally.not_judged.copy())
                         for key, tally in self.tallies.items()}
        other._findings = {key: dataclasses.replace(finding, examples=list(finding.examples))
                           for key, finding in self._findings.items()}
        other.notes = list(self.notes)
        other.counted_notes = self.counted_notes.copy()
        other.selected = {api: set(names) for api, names in self.selected.items()}
        other.throttling = dataclasses.replace(self.throttling, reasons=self.throttling.reasons.copy())
        other.gaps = list(self.gaps)
        return other

    def _add(self, check: Check, outcome: str, shape: str, example: Example, code: str | None) -> None:
        key = (check.api, check.name, outcome, shape)
        finding = self._findings.get(key)
        if finding is None:
            title = example.message.split("\n", 1)[0]
            finding = self._findings[key] = Finding(check, outcome, shape, title, code)
        finding.count += 1
        # A reason to skip given again (by each project's run of a check run once a project) is said once.
        said = outcome == SKIPPED and any(e.message == example.message for e in finding.examples)
        if said:
            return
        if len(finding.examples) < MAX_EXAMPLES:
            finding.examples.append(example)
            return
        # A rule broken in two ways (a walk that repeats cases and also skips some) shows each way: a new kind of
        # breach takes the place of the last example of a kind already shown twice.
        kinds = [breach_kind(e.message) for e in finding.examples]
        if breach_kind(example.message) not in kinds:
            repeated = [n for n, kind in enumerate(kinds) if kinds.count(kind) > 1]
            if repeated:
                finding.examples[repeated[-1]] = example

    # -- reading -----------------------------------------------------------------------------------------
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

    def incomplete_reasons(self) -> list[str]:
        """Why the audit cannot say a target conforms, though nothing failed: per API, no deciding rule (a page
        rule; a live one in the live profile) was checked at all, or every chosen scenario check was skipped, or
        those that need a token were (the audit had none), or part of the audit could not be done; over all, the
        service's throttling left requests unjudged."""
        reasons = []
        for api in self.apis:
            rows = self.rows(api)
            if not any(t.ran for t in rows if self.policy.decides(t.check.level)):
                reasons.append(f"{api}: no page rule was checked")
            names = self.selected.get(api)  # None: every scenario check was chosen
            chosen = [t for t in rows if t.check.kind == SCENARIO and not t.off
                      and (names is None or t.check.name in names)]
            if chosen and not any(t.ran for t in chosen):
                needs = sorted({f.examples[0].message for f in self.skips if f.api == api
                                and f.check.kind == SCENARIO and f.examples})
                reasons.append(f"{api}: every scenario check was skipped ({'; '.join(needs)})")
            elif tokenless := {f.check.name for f in self.skips if f.api == api and f.check.kind == SCENARIO
                               and f.examples and f.examples[0].message.startswith(NO_TOKEN)}:
                # Without a token, only the answers to requests without one were judged: never the data.
                reasons.append(f"{api}: {len(tokenless)} scenario check(s) that need a token were skipped "
                               f"({NO_TOKEN})")
            gaps = [gap for gap in self.gaps if gap.api == api]
            if gaps:
                said = list(dict.fromkeys(gap.what for gap in gaps))  # many requests may be turned away alike
                shown = "; ".join(said[:GAPS_SHOWN])
                shown += f"; and {len(said) - GAPS_SHOWN} more" if len(said) > GAPS_SHOWN else ""
                remedies = "".join(f". {remedy}" for remedy in dict.fromkeys(g.remedy for g in gaps if g.remedy))
                reasons.append(f"{api}: {len(gaps)} part(s) of the audit could not be done, and no check judged "
                               f"them ({shown}){remedies}")
        if self.throttling.given_up:
            reasons.append(f"{self.throttling.given_up} request(s) were still throttled after waiting, and no check "
                           "judged them (see Throttling)")
        return reasons

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


class Ledger:
    """Outcomes recorded apart, by one worker, then replayed into the audit's Results in a fixed order, so that
    the findings, their counts and their examples do not depend on which worker finished first."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.notes: list[str] = []
        self.counted_notes: Counter[str] = Counter()
        self._entries: list[tuple[str, tuple[object, ...], dict[str, object]]] = []

    def count_note(self, note: str, count: int = 1) -> None:
        self.counted_notes[note] += count

    def passed(self, check: Check) -> None:
        self._entries.append(("passed", (check,), {}))

    def breach(self, check: Check, example: Example, *, shape: str, code: str | None = None) -> str | None:
        if not self.policy.runs(check.source):
            return None
        self._entries.append(("breach", (check, example), {"shape": shape, "code": code}))
        return self.policy.breach(check.level)

    def skipped(self, check: Check, reason: str) -> None:
        self._entries.append(("skipped", (check, reason), {}))

    def not_judged(self, check: Check, reason: str) -> None:
        self._entries.append(("not_judged", (check, reason), {}))

    def gap(self, gap: Gap) -> None:
        self._entries.append(("gap", (gap,), {}))

    def replay(self, results: Results) -> None:
        for name, args, kwargs in self._entries:
            getattr(results, name)(*args, **kwargs)
        results.notes += [note for note in self.notes if note not in results.notes]
        results.counted_notes.update(self.counted_notes)


Recorder = Results | Ledger  # where checks record their outcomes


def request_shape(method: str, operation_path: str, status: int | None) -> str:
    """What makes two requests "the same kind" for a finding: the method, the operation and the status answered
    (the parameters sent vary with every request of a walk or a fuzzer, and rarely change what a defect is)."""
    return f"{method.upper()} {operation_path} -> {status}"
