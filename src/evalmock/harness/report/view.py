"""One view of an audit's results, which every output shows alike: the headline, each API's line,
the sections.

Every output says each check's level and source. Findings come in the order of what needs doing:
failures, then warnings (inferred rules), then what was not checked (skipped, with why), then what
passed.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

from evalmock.harness.checks.open_answers import carries_a_cursor
from evalmock.harness.checks.policy import FAILED, PASSED, SKIPPED, WARNED
from evalmock.harness.results.audit_results import Results
from evalmock.harness.results.findings import RequestRecord
from evalmock.harness.results.tally import OFF, Tally
from evalmock.harness.results.verdict import Verdict
from evalmock.harness.secrets.redactor import Redactor
from evalmock.nouns import counted

if TYPE_CHECKING:
    pass

KIND_WORDS = {"schemathesis": "Schemathesis", "response": "every response", "scenario": "scenario"}
OUTCOME_ORDER = {FAILED: 0, WARNED: 1, SKIPPED: 2, PASSED: 3, OFF: 4}
MAX_JUNIT_TEXT = 4000  # characters of one JUnit failure body, whatever the number of responses
MAX_EXAMPLE_TEXT = 700
UNWRAPPED_WIDTH = (
    100_000  # columns of the summary when it goes to a file or pipe: wide enough never to wrap
)


def headline(results: Results) -> str:
    """The verdict and how many checks ended each way; failed and warned with their findings, in the
    very words of the sections' titles, so that the two always agree."""
    counts = results.counts()
    return (
        f"{results.verdict.name}: {counts[FAILED]} checks failed{_findings(results, FAILED)}, "
        f"{counts[WARNED]} warned{_findings(results, WARNED)}, {counts[PASSED]} passed, "
        f"{counts[SKIPPED]} skipped, "
        f"{counts[OFF]} off in this profile"
    )


def section_count(results: Results, outcome: str) -> str:
    """ "2 checks, 3 findings": a finding is one broken rule on one kind of request, so a check may
    have several."""
    findings = results.findings_of(outcome)
    checks = len({(f.api, f.check.name) for f in findings})
    return f"{counted(checks, 'check')}, {counted(len(findings), 'finding')}"


def _findings(results: Results, outcome: str) -> str:
    count = len(results.findings_of(outcome))
    return f" ({counted(count, 'finding')})" if count else ""


# The test-set page, cursor: why a curl command that sends a cursor may not replay its page later.
SEALED_CURSOR_NOTE = (
    "a curl command that sends a cursor replays its page only while the service still takes that "
    'cursor: "A '
    "runtime that seals cursors takes one only for the same list, filters and caller, within a "
    "day; otherwise 400 "
    'bad-input, and the list starts again without it." (the test-set page, cursor). Later, walk '
    "from the first "
    "page again to reach it"
)


def replay_notes(results: Results, redactor: Redactor) -> list[str]:
    """What a reader needs to run the findings' curl commands: the variables that stand for secrets,
    and, when one sends a cursor, how long a cursor may be taken."""
    shown = results.shown_requests()
    notes = (
        [legend]
        if (legend := redactor.legend("\n".join(request.curl for request in shown)))
        else []
    )
    if any(
        carries_a_cursor(parse_qs(urlsplit(request.url).query, keep_blank_values=True))
        for request in shown
    ):
        notes.append(SEALED_CURSOR_NOTE)
    return notes


def throttling_text(results: Results) -> str | None:
    """The service's throttling, reported once (None when the service never throttled)."""
    report = results.throttling
    return report.text() if report.met else None


def throttling_intro(results: Results) -> str:
    """What the reports say before the throttling paragraph: of an audit, or of traffic."""
    return RECORDED_THROTTLING_INTRO if results.throttling.recorded else THROTTLING_INTRO


def api_line(results: Results, api: str) -> str:
    rows = results.rows(api)
    count = {outcome: sum(t.outcome == outcome for t in rows) for outcome in OUTCOME_ORDER}
    state = (
        "failed"
        if count[FAILED]
        else "incomplete"
        if api in results.incomplete_apis()
        else "conforms"
    )
    return (
        f"{api}: {state} — {count[FAILED]} failed, {count[WARNED]} warned, {count[PASSED]} passed, "
        f"{count[SKIPPED]} skipped, {count[OFF]} off"
    )


def policy_line(results: Results) -> str:
    return (
        f"profile {results.policy.profile}, "
        f"{'strict' if results.policy.strict else 'inferred rules as warnings'}"
    )


def ordered_rows(results: Results, api: str) -> list[Tally]:
    return sorted(results.rows(api), key=lambda t: OUTCOME_ORDER[t.outcome])


# -- Markdown and HTML
# --------------------------------------------------------------------------------------
SECTIONS = (
    (
        FAILED,
        "Failures",
        "Rules the target breaks. Each is a page rule (or, with --strict, an inferred one).",
    ),
    (
        WARNED,
        "Warnings",
        "Inferred rules the target breaks: conventions the pages imply but do not state. They fail "
        "only with --strict.",
    ),
)

THROTTLING_INTRO = (
    "The service's throttling (429, or 503 with Retry-After): not a rule of the pages, so never a "
    "failure. Each throttled answer was waited out and its request sent again; an answer still "
    "throttled when the retries or the wait budget ran out was judged by no check, and leaves the "
    "audit incomplete."
)
RECORDED_THROTTLING_INTRO = (
    "The service's throttling (429, or 503 with Retry-After): not a rule of the pages, so never a "
    "failure. The traffic was not the audit's to send again: each throttled answer was counted and "
    "judged by no check; a request the client sent again counts as a try after a wait."
)


def incomplete_intro(results: Results) -> str:
    if results.verdict is Verdict.INCOMPLETE:
        return "Nothing failed, but the audit cannot say the target conforms:"
    return "Besides what failed, these parts of the audit are incomplete:"


def shown_url(url: str) -> str:
    """A request's URL as a finding's "Request:" line shows it: a query value longer than LONG_VALUE
    characters (a walk's fortieth cursor runs to kilobytes) shortened to its start and its length;
    the curl command keeps it whole."""
    return _LONG_QUERY_VALUE.sub(
        lambda m: f"{m[1]}{m[2][:SHOWN_START]}…({len(m[2])} characters)", url
    )


def shown_request(request: RequestRecord, *, with_curl: bool = True) -> str:
    """A request as a finding's "Request:" line shows it: its method, its URL (see shown_url) and,
    where its curl command is shown (`with_curl`), every header that command sends, read from it, so
    that the line and the command are one request (a `Prefer: code=503` the line left out would
    reproduce another answer)."""
    if not with_curl:
        return f"{request.method} {shown_url(request.url)}"
    try:
        words = shlex.split(request.curl)
    except ValueError:  # not a command we wrote
        words = []
    headers = [words[n + 1] for n, word in enumerate(words[:-1]) if word == "-H"]
    said = f"{request.method} {shown_url(request.url)}"
    if headers:
        said += " with " + "; ".join(headers)
    if "--data-binary" in words:
        said += " and a body"
    return said


LONG_VALUE, SHOWN_START = 120, 40
_LONG_QUERY_VALUE = re.compile(rf"([?&][^=&#]*=)([^&#]{{{LONG_VALUE + 1},}})")


UNFINISHED_TITLE = "evalmock contract: the audit did not finish"
UNFINISHED_TEXT = (
    "An internal error stopped evalmock before the audit finished. This file is not a verdict on "
    "the service and holds no finding; it replaces any report an earlier run left here. Run the "
    "audit again; if it stops the same way, report the line below to evalmock's maintainers."
)
