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

from evalmock.contract.sources import DIGITALOCEAN_PAGE, TEST_SET_PAGE, normalise
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

# Examples and sample code: (page, first line, last line) -> what they are to the audit.
BLOCKS: dict[tuple[str, int, int], str] = {
    (
        _T,
        222,
        250,
    ): "the page's 200 example: partial (it lacks required fields), so it is no rule; "
    "docs/contract.md",
    **{
        (
            _T,
            first,
            first + 7,
        ): "the page's generated error example (code `example`): it shows the envelope's shape, "
        "which the document carries; it names no code"
        for first in (283, 323, 363, 403)
    },
    (
        _D,
        191,
        216,
    ): "the Go SDK's sample call: it passes an access token (ignored_auth, live) and no version",
    (
        _D,
        218,
        265,
    ): "the page's example test case; the document's example is the same, but with "
    "success_threshold_pct "
    "80, since the page's 123 breaks its own 0..100 (line 165)",
    (_D, 269, 316): "the same example again ('Returns Examples')",
}

# What enforces a counted line that no check quotes, or why nothing can.
NOTES: dict[tuple[str, int], str] = {
    (_T, 3): "the operation's title (the document's summary); nothing to check",
    (_T, 7): "the operation's path: the document's, requested by every check",
    (
        _T,
        8,
    ): "GET, the document's one operation; other methods are unsupported_method's (inferred, "
    "HTTP's rule)",
    (
        _T,
        18,
    ): "the agent's id is the service's to choose; an unknown one is "
    "unknown_agent_is_agent_not_found's",
    (_T, 66): f"what each kind means: {UNSEEN}; the allowed values (line 69) are the schema's",
    (_T, 75): SCHEMA,
    (_T, 82): f"which agent version ran: {UNSEEN} (any string)",
    (_T, 99): SCHEMA,
    (_T, 124): SCHEMA,
    (_T, 131): f"how items are scored: {UNSEEN}",
    (
        _T,
        138,
    ): f"what a key stands for: {UNSEEN}; that it has a character is the schema's (line 141)",
    (_T, 141): SCHEMA,
    (_T, 155): SCHEMA,
    (_T, 159): f"who acted: {UNSEEN}; the actor's shape is the schema's",
    (_T, 165): SCHEMA,
    (_T, 169): f"what an actor's id is: {UNSEEN}",
    (_T, 174): SCHEMA + " (format date-time)",
    (_T, 180): SCHEMA + " (format date-time)",
    (_T, 192): f"that the retiring caller was authenticated: {UNSEEN}",
    (_T, 198): SCHEMA,
    (_T, 202): f"what an actor's id is: {UNSEEN}",
    (_T, 207): SCHEMA + " (format date-time)",
    (_T, 215): "a rule for clients (treat the cursor as opaque); nothing to check of the service",
    (_T, 270): SCHEMA + " (details, when present, is an object)",
    (_D, 1): "the call's title; nothing to check",
    (_D, 3): "the Go SDK's signature; nothing to check over HTTP",
    (
        _D,
        5,
    ): "the operation's path: the document's (line 7 spells it evaluation_test_case, singular: the "
    "page "
    "contradicts itself; the document follows line 5)",
    (_D, 13): "the SDK's parameter type; the version in it is line 15's",
    (_D, 23): SCHEMA,
    (_D, 43): f"a field's meaning: {UNSEEN}",
    (_D, 49): f"a field's meaning: {UNSEEN}",
    (_D, 53): f"a field's meaning: {UNSEEN}",
    (_D, 57): f"a field's meaning: {UNSEEN}",
    (_D, 63): f"a field's meaning: {UNSEEN}",
    (_D, 67): f"a field's meaning: {UNSEEN}",
    (_D, 85): "the enum below",
    (_D, 103): f"a field's meaning: {UNSEEN}",
    (_D, 159): f"a field's meaning: {UNSEEN}",
    (_D, 189): "the sample's title; nothing to check",
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
            line = pages[quote.page][quote.line - 1]
            names = quoting.setdefault((quote.page, normalise(line)), [])
            if check.name not in names:
                names.append(check.name)
    # A note on a line also covers the same words repeated further down the page (the four error
    # responses).
    noted = {
        (page, normalise(pages[page][number - 1])): note for (page, number), note in NOTES.items()
    }
    rows = []
    for page, lines in pages.items():
        blocks = {first: (last, note) for (p, first, last), note in BLOCKS.items() if p == page}
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
