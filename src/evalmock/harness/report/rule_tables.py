"""The rules as Markdown tables: every check with its level and source, and every client rule
(`evalmock rules`), and each line of the reference pages with what enforces it (`evalmock rules
--coverage DIR`); docs/rules.md holds them all (`rules_document`, written by `python3.11 dev.py
rules-doc`)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from evalmock import environment
from evalmock.contract.client_outcomes import ClientRule
from evalmock.contract.client_rules import RULES as CLIENT_RULES
from evalmock.contract.pages import pages_at
from evalmock.contract.sources import PAGES, Source, page_name
from evalmock.exits import OK, USAGE
from evalmock.harness.checks import CHECKS, Check
from evalmock.harness.report.page_coverage import coverage_rows
from evalmock.harness.report.view import KIND_WORDS
from evalmock.whole_file import write_whole

RULES_BEGIN, RULES_END = "<!-- evalmock rules: begin -->", "<!-- evalmock rules: end -->"
COVERAGE_BEGIN, COVERAGE_END = (
    "<!-- evalmock coverage: begin -->",
    "<!-- evalmock coverage: end -->",
)
CLIENT_BEGIN, CLIENT_END = (
    "<!-- evalmock client rules: begin -->",
    "<!-- evalmock client rules: end -->",
)
RULES_DOC_COMMAND = "python3.11 dev.py rules-doc"

_RULES_INTRO = f"""\
# Every rule, and the pages line by line

This page is generated: `{RULES_DOC_COMMAND}` writes it from the code. Do not edit it by hand.
How the harness applies these rules: [harness.md](harness.md).
What it leaves alone: [fairness.md](fairness.md).

## Every rule

`evalmock rules` prints these tables.
"What it checks" is in our words.
The source quotes the page verbatim.
It cites the page by its title and the line that holds the words,
found in the page by those words
(the pages in `{environment.PAGES_DIR}`, or `../shared/seeds` beside the checkout;
without them, by its title alone).
Then it gives our reading, the inference or the live fact.
Reports, JUnit files and `evalmock rules` cite the same way.
What each level does to the verdict:
[harness.md](harness.md#levels-what-a-broken-rule-does-to-the-verdict).

"""

_CLIENT_INTRO = """\
## What an app must send

`evalmock rules` prints this table after the checks.
These rules judge a client, not a service: what an app sent, in order.
A mock session's verdict (`GET /__evalmock/sessions/{id}/verdict`) and `evalmock proxy` apply them
([proxy.md](proxy.md#the-app-judged-by-the-page)).
Levels as above: a page rule's finding fails the verdict; an inferred one warns.

"""

_COVERAGE_INTRO = """\
## The pages, line by line

`evalmock rules --coverage DIR` prints these tables.
`DIR` holds the two reference pages.
Each row is a line of a page that says something:
a description, a constraint, an allowed-values list, a format or a type.
The row names the checks that quote the line, or what else enforces it,
or why nothing can from outside.
Bare field names, bare type words and `required` marks are left out.
The document carries them all, and `response_schema_conformance` enforces them.

"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def source_cell(source: Source) -> str:
    """The page's words in quotation marks (“…”), cited by the page's title and line (the line found
    by the words, when the pages are at hand); then, for a reading, an inference or a live fact,
    the reason in our words."""
    # “words” (citation): curly marks pair unambiguously
    quotes = "; ".join(str(quote) for quote in source.quotes)
    reason = {"page": "reading", "inferred": "inferred", "live": "live"}[source.level.value]
    parts = [quotes] if quotes else []
    if source.reason:
        parts.append(f"*{reason}:* {source.reason}")
    return _cell(" — ".join(parts))


def render_rules(checks: Iterable[Check] = CHECKS) -> str:
    """Per API, a table of every check: level, kind, what it checks (our words) and its source."""
    by_api: dict[str, list[Check]] = {}
    for check in checks:
        by_api.setdefault(check.api, []).append(check)
    lines = []
    for api, found in by_api.items():
        lines += [
            f"#### {api}",
            "",
            "| check | level | kind | what it checks | source |",
            "|---|---|---|---|---|",
        ]
        for check in sorted(
            found, key=lambda c: (c.level.value != "page", c.level.value, c.kind, c.name)
        ):
            formerly = "".join(f" (formerly `{name}`)" for name in check.formerly)
            lines.append(
                f"| `{check.name}`{formerly} | {check.level} | {KIND_WORDS[check.kind]} | "
                f"{_cell(check.rule)} "
                f"| {source_cell(check.source)} |"
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def render_client_rules(rules: Iterable[ClientRule] = CLIENT_RULES) -> str:
    """A table of every client rule: level, what it asks of the app (our words) and its source."""
    lines = [
        "#### what an app sends",
        "",
        "| rule | level | what it asks of the app | source |",
        "|---|---|---|---|",
    ]
    for rule in sorted(rules, key=lambda r: (r.level.value != "page", r.level.value, r.name)):
        lines.append(
            f"| `{rule.name}` | {rule.level} | {_cell(rule.rule)} | {source_cell(rule.source)} |"
        )
    return "\n".join(lines) + "\n"


def read_pages(directory: str | Path) -> dict[str, list[str]]:
    """The reference pages' lines, from the folder that holds them (the seeds)."""
    return {
        page: (Path(directory) / page).read_text(encoding="utf-8").splitlines() for page in PAGES
    }


def render_coverage(pages: dict[str, list[str]], checks: Iterable[Check] = CHECKS) -> str:
    """Per page, each counted line and the checks that quote it, or what else enforces it, or why
    nothing can."""
    checks = list(checks)
    rows = coverage_rows(pages, checks)
    # A check that quotes a line but holds it only as an inference (or a live fact) says so: the
    # line's words are then the basis of a convention, not a rule the page states.
    levels = {
        (check.source.quotes[0].page, check.name): check.level
        for check in checks
        if check.source.quotes
    }
    lines = []
    for page in pages:
        mine = [row for row in rows if row.page == page]
        quoted = sum(bool(row.checks) for row in mine)
        lines += [
            f"#### {page_name(page)}",
            "",
            f"{quoted} of {len(mine)} rows quoted by a check.",
            "",
            "| line | the page says | enforced by |",
            "|--:|---|---|",
        ]
        for row in mine:
            enforced = ", ".join(
                f"`{name}`"
                + (
                    ""
                    if levels.get((page, name), "page") == "page"
                    else f" ({levels[(page, name)]})"
                )
                for name in row.checks
            )
            if row.note:
                enforced = f"{enforced}; {row.note}" if enforced else row.note
            lines.append(
                f"| {row.lines} | {_cell(row.text)} | {_cell(enforced) or '**nothing**'} |"
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def print_rules(pages_dir: str | None) -> int:
    """`evalmock rules [--coverage DIR]`: the rule table, or the pages' coverage (exit 2 when they
    are missing)."""
    if pages_dir is None:
        print(render_rules(), render_client_rules(), sep="\n", end="")
        return OK
    try:
        pages = read_pages(pages_dir)
    except OSError as exc:
        print(f"evalmock rules: cannot read the reference pages: {exc}", file=sys.stderr)
        return USAGE
    with pages_at(pages_dir):
        print(render_coverage(pages), end="")
    return OK


def rules_document(pages: dict[str, list[str]], checks: Iterable[Check] = CHECKS) -> str:
    """docs/rules.md: the rule tables of `evalmock rules` (the checks, then the client rules) and
    the pages' coverage of `evalmock rules --coverage`, each between its marker lines."""
    checks = list(checks)
    return (
        f"{_RULES_INTRO}{RULES_BEGIN}\n{render_rules(checks)}{RULES_END}\n\n"
        f"{_CLIENT_INTRO}{CLIENT_BEGIN}\n{render_client_rules()}{CLIENT_END}\n\n"
        f"{_COVERAGE_INTRO}{COVERAGE_BEGIN}\n{render_coverage(pages, checks)}{COVERAGE_END}\n"
    )


def write_rules_document(argv: list[str]) -> int:
    """`python3.11 dev.py rules-doc`: `PAGES_DIR OUTPUT`; writes `rules_document` of the pages to
    OUTPUT (exit 2 when the pages are missing)."""
    if len(argv) != 2:
        print("usage: write_rules_document PAGES_DIR OUTPUT", file=sys.stderr)
        return USAGE
    pages_dir, output = argv
    try:
        pages = read_pages(pages_dir)
    except OSError as exc:
        print(
            f"{RULES_DOC_COMMAND}: cannot read the reference pages: {exc} (set "
            f"{environment.PAGES_DIR} to the folder holding {', '.join(PAGES)})",
            file=sys.stderr,
        )
        return USAGE
    with pages_at(pages_dir):
        document = rules_document(pages)
    write_whole(output, document)
    print(f"{RULES_DOC_COMMAND}: wrote {output}", file=sys.stderr)
    return OK


def between(text: str, begin: str, end: str) -> str:
    """The part of a document between two marker lines."""
    return text.split(begin, 1)[1].split(end, 1)[0].strip("\n") + "\n"
