"""Both reference pages line by line: the checks that quote each line, or what else enforces it, or
why nothing can.

A line counts when it says something: a description, a constraint, an allowed-values list, a format
or a type (not a bare field name, a bare type word or a `required` mark: the document carries those,
and response_schema_conformance enforces them). Examples and the SDK's sample code are one row each.
Which checks quote a line comes from their sources; everything else a counted line needs is written
here, and a test fails when a counted line of the pages has neither.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from evalmock.contract.sources import DIGITALOCEAN_PAGE, PAGE_TITLES, TEST_SET_PAGE, normalise
from evalmock.harness.checks.registry import Check

SCHEMA = "the document's schema (`response_schema_conformance`, on every response)"
UNSEEN = "not observable over HTTP"
_T, _D = TEST_SET_PAGE, DIGITALOCEAN_PAGE

# Lines that are markup, not statements.
_MARKUP = {
    "object",
    "string",
    "integer",
    "boolean",
    "required",
    "Array<object>",
    "Array<string>",
    "key",
    "additional properties",
    "any",
    "Skip to content",
    "View as Markdown",
    "GET",
    "See also",
    "Example",
    "Examplegenerated",
    "ParametersExpand Collapse",
    "ReturnsExpand Collapse",
}

# Examples and sample code, found by their shape: a block opens on a line that is `{` or `package
# main` and closes where its braces balance. Each is explained by the line heading it (the nearest
# counted line above, outside any block): (page, heading) -> what the blocks under it are to the
# audit, the first block first (the last note holds for any further ones).
BLOCKS: dict[tuple[str, str], tuple[str, ...]] = {
    (_T, "Example"): (
        "the page's 200 example: partial (it lacks required fields), so it is no rule; "
        "docs/contract.md",
    ),
    (_T, "Examplegenerated"): (
        "the page's generated error example (code `example`): it shows the envelope's shape, "
        "which the document carries; it names no code",
    ),
    (_D, PAGE_TITLES[_D]): (
        "the Go SDK's sample call: it passes an access token (ignored_auth, live) and no version",
        "the page's example test case; the document's example is the same, but with "
        "success_threshold_pct 80, since the page's 123 breaks its own 0..100 "
        "(success_threshold_pct)",
    ),
    (_D, "Returns Examples"): ("the same example again ('Returns Examples')",),
}
_BLOCK_OPENS = ("{", "package main")

# What enforces a counted line that no check quotes, or why nothing can.
NOTES: dict[tuple[str, str], str] = {
    (
        _T,
        "List a project's cases of an agent's test set",
    ): "the operation's title (the document's summary); nothing to check",
    (
        _T,
        "/v1/agents/{agentId}/test-set/cases",
    ): "the operation's path: the document's, requested by every check",
    (
        _T,
        "curl --request GET \\",
    ): "GET, the document's one operation; other methods are unsupported_method's (inferred, "
    "HTTP's rule)",
    (
        _T,
        "AgentId — dotted namespace (acme.drafting).",
    ): "the agent's id is the service's to choose; an unknown one is "
    "unknown_agent_is_agent_not_found's",
    (
        _T,
        "correction: a correction of the run. hand: added by hand.",
    ): f"what each kind means: {UNSEEN}; the allowed values (the next lines) are the schema's",
    (_T, "string format: uuid"): SCHEMA,
    (_T, "The agent version the run ran."): f"which agent version ran: {UNSEEN} (any string)",
    (_T, "Allowed values: right wrong"): SCHEMA,
    (
        _T,
        "A ranked answer’s items, scored as weightedPrecisionAtK.",
    ): f"how items are scored: {UNSEEN}",
    (
        _T,
        "The caller’s stable id for the item, such as a matched case’s id, "
        "never the item’s own text.",
    ): f"what a key stands for: {UNSEEN}; that it has a character is the schema's (its bounds)",
    (_T, ">= 1 characters"): SCHEMA,
    (
        _T,
        "Who made the correction, or added the case.",
    ): f"who acted: {UNSEEN}; the actor's shape is the schema's",
    (_T, "Allowed values: user service"): SCHEMA,
    (
        _T,
        "A user id, or for a service token its token or session id.",
    ): f"what an actor's id is: {UNSEEN}",
    (_T, "string format: date-time"): SCHEMA + " (format date-time)",
    (
        _T,
        "Who asserted a correction: the authenticated caller, never a typed name.",
    ): f"that the retiring caller was authenticated: {UNSEEN}",
    (
        _T,
        "Opaque cursor. Treat as opaque on the client.",
    ): "a rule for clients (treat the cursor as opaque): the client rule "
    "`client_sends_the_cursor_as_it_came`; nothing to check of the service",
    (_T, "Optional, kind-specific."): SCHEMA + " (details, when present, is an object)",
    (
        _D,
        "Retrieve Information About an Existing Evaluation Test Case",
    ): "the call's title (the SDK sample's too); nothing to check",
    (
        _D,
        "client.Agents.EvaluationTestCases.Get(ctx, testCaseUuid, query) "
        "(*AgentEvaluationTestCaseGetResponse, error)",
    ): "the Go SDK's signature; nothing to check over HTTP",
    (
        _D,
        "get/v2/gen-ai/evaluation_test_cases/{test_case_uuid}",
    ): "the operation's path: the document's (the page's next sentence spells it "
    "evaluation_test_case, singular: the page contradicts itself; the document follows this line)",
    (
        _D,
        "query AgentEvaluationTestCaseGetParams",
    ): "the SDK's parameter type; the version in it is the query's own line",
    (_D, "EvaluationTestCase APIEvaluationTestCaseoptional"): SCHEMA,
    (_D, "Time created at."): f"a field's meaning: {UNSEEN}",
    (_D, "Name of the dataset."): f"a field's meaning: {UNSEEN}",
    (_D, "UUID of the dataset."): f"a field's meaning: {UNSEEN}",
    (_D, "The size of the dataset uploaded file in bytes."): f"a field's meaning: {UNSEEN}",
    (_D, "Does the dataset have a ground truth column?"): f"a field's meaning: {UNSEEN}",
    (_D, "Number of rows in the dataset."): f"a field's meaning: {UNSEEN}",
    (_D, "Accepts one of the following:"): "the enum below",
    (
        _D,
        "If true, the metric is inverted, meaning that a lower value is better.",
    ): f"a field's meaning: {UNSEEN}",
    (
        _D,
        "The success threshold for the star metric. This is a value that the metric must reach to "
        "be considered successful.",
    ): f"a field's meaning: {UNSEEN}",
}
# Field and format lines of the DigitalOcean page ("ArchivedAt Timeoptional", "formatdate-time", the
# enum constants): the document's types, formats and enums.
_DO_SCHEMA_LINE = re.compile(
    r"\w+ (\[\])?\w+optional|format\w[\w-]*|const \w+ \w+ = \"[A-Z_]+\"|Accepts one of the "
    r"following:"
)
_DO_INTEGER_FORMAT = re.compile(r"formatint(32|64)")
# The metrics' enum constants: their values are judged by the metric_enum_values rules, not the
# schema (a value none lists is inferred: DigitalOcean adds values).
_DO_ENUM_VALUE = re.compile(r"const APIEvaluationMetric\w+ \w+ = \"[A-Z_]+\"")
ENUM_VALUE_NOTE = (
    "a listed value (`metric_enum_values_are_their_own_field_s`; one no enum lists: "
    "`metric_enum_values_are_listed`, inferred)"
)


@dataclass(frozen=True)
class CoverageRow:
    page: str
    first: int
    last: int
    text: str
    checks: tuple[str, ...]
    note: str

    @property
    def lines(self) -> str:
        return str(self.first) if self.first == self.last else f"{self.first}–{self.last}"


def counted(text: str) -> bool:
    """Whether a page line says something a rule could rest on."""
    stripped = text.strip()
    return bool(stripped) and stripped not in _MARKUP and not re.fullmatch(r"[A-Za-z_]+", stripped)


def coverage_rows(pages: Mapping[str, list[str]], checks: Iterable[Check]) -> list[CoverageRow]:
    """One row per counted line of each page (one per example block), in page order."""
    quoting: dict[
        tuple[str, str], list[str]
    ] = {}  # (page, normalised line text) -> checks quoting it
    for check in checks:
        for quote in check.source.quotes:
            for number in quoted_lines(pages[quote.page], quote.text):
                line = pages[quote.page][number - 1]
                names = quoting.setdefault((quote.page, normalise(line)), [])
                if check.name not in names:
                    names.append(check.name)
    # A note on a line also covers the same words repeated further down the page (the four error
    # responses).
    noted = {(page, normalise(words)): note for (page, words), note in NOTES.items()}
    rows = []
    for page, lines in pages.items():
        blocks = example_blocks(page, lines)
        number = 1
        while number <= len(lines):
            if number in blocks:
                last, note = blocks[number]
                rows.append(CoverageRow(page, number, last, "(example)", (), note))
                number = last + 1
                continue
            text = lines[number - 1].strip()
            if counted(text):
                names = tuple(quoting.get((page, normalise(text)), ()))
                note = noted.get((page, normalise(text))) or _note(page, text, names)
                rows.append(CoverageRow(page, number, number, text, names, note))
            number += 1
    return rows


def quoted_lines(lines: list[str], words: str, *, every: bool = False) -> tuple[int, ...]:
    """The lines (from 1) that hold a quote's words, compared normalised: the first, or `every`
    one."""
    wanted = normalise(words)
    found = tuple(n for n, line in enumerate(lines, 1) if wanted in normalise(line))
    return found if every else found[:1]


def example_blocks(page: str, lines: list[str]) -> dict[int, tuple[int, str]]:
    """The page's examples and sample code: first line -> (last line, BLOCKS' note, or "" when
    BLOCKS has none for its heading)."""
    blocks: dict[int, tuple[int, str]] = {}
    heading, under, number = "", 0, 1
    while number <= len(lines):
        text = lines[number - 1].strip()
        if text not in _BLOCK_OPENS:
            if counted(text) or text in _MARKUP:
                heading, under = text, 0
            number += 1
            continue
        last, depth = number, 0
        for last in range(number, len(lines) + 1):
            depth += lines[last - 1].count("{") - lines[last - 1].count("}")
            if depth <= 0 and "}" in lines[last - 1]:
                break
        notes = BLOCKS.get((page, heading), ("",))
        blocks[number] = (last, notes[min(under, len(notes) - 1)])
        under += 1
        number = last + 1
    return blocks


def _note(page: str, text: str, names: tuple[str, ...]) -> str:
    if page == DIGITALOCEAN_PAGE and _DO_INTEGER_FORMAT.fullmatch(text):
        return (
            SCHEMA
            + " (the type integer; Schemathesis does not check int32/int64 ranges in responses)"
        )
    if page == DIGITALOCEAN_PAGE and _DO_ENUM_VALUE.fullmatch(text) and not names:
        return ENUM_VALUE_NOTE
    if page == DIGITALOCEAN_PAGE and text == "Accepts one of the following:" and not names:
        return "the enum below"
    if page == DIGITALOCEAN_PAGE and _DO_SCHEMA_LINE.fullmatch(text) and not names:
        return SCHEMA
    return ""
