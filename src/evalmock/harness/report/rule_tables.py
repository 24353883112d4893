"""The rules as Markdown tables: every check with its level and source (`evalmock rules`), and each line of the
reference pages with what enforces it (`evalmock rules --coverage DIR`); docs/harness.md holds both."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from evalmock.contract.sources import PAGES, Source, page_name
from evalmock.exits import OK, USAGE
from evalmock.harness.checks import CHECKS, Check
from evalmock.harness.report.page_coverage import coverage_rows
from evalmock.harness.report.view import KIND_WORDS

RULES_BEGIN, RULES_END = "<!-- evalmock rules: begin -->", "<!-- evalmock rules: end -->"
COVERAGE_BEGIN, COVERAGE_END = "<!-- evalmock coverage: begin -->", "<!-- evalmock coverage: end -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def source_cell(source: Source) -> str:
    """The page's words in quotation marks (“…”), cited by the page's title and line, then its file name; then, for a
    reading, an inference or a live fact, the reason in our words."""
    quotes = "; ".join(str(quote) for quote in source.quotes)  # “words” (citation): curly marks pair unambiguously
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
        lines += [f"#### {api}", "", "| check | level | kind | what it checks | source |", "|---|---|---|---|---|"]
        for check in sorted(found, key=lambda c: (c.level.value != "page", c.level.value, c.kind, c.name)):
            lines.append(f"| `{check.name}` | {check.level} | {KIND_WORDS[check.kind]} | {_cell(check.rule)} "
                         f"| {source_cell(check.source)} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def read_pages(directory: str | Path) -> dict[str, list[str]]:
    """The reference pages' lines, from the folder that holds them (the seeds)."""
    return {page: (Path(directory) / page).read_text(encoding="utf-8").splitlines() for page in PAGES}


def render_coverage(pages: dict[str, list[str]], checks: Iterable[Check] = CHECKS) -> str:
    """Per page, each counted line and the checks that quote it, or what else enforces it, or why nothing can."""
    checks = list(checks)
    rows = coverage_rows(pages, checks)
    # A check that quotes a line but holds it only as an inference (or a live fact) says so: the line's words are
    # then the basis of a convention, not a rule the page states.
    levels = {(check.source.quotes[0].page, check.name): check.level for check in checks if check.source.quotes}
    lines = []
    for page in pages:
        mine = [row for row in rows if row.page == page]
        quoted = sum(bool(row.checks) for row in mine)
        lines += [f"#### {page_name(page)}", "", f"{quoted} of {len(mine)} rows quoted by a check.", "",
                  "| line | the page says | enforced by |", "|--:|---|---|"]
        for row in mine:
            enforced = ", ".join(
                f"`{name}`" + ("" if levels.get((page, name), "page") == "page" else f" ({levels[(page, name)]})")
                for name in row.checks
            )
            if row.note:
                enforced = f"{enforced}; {row.note}" if enforced else row.note
            lines.append(f"| {row.lines} | {_cell(row.text)} | {_cell(enforced) or '**nothing**'} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def print_rules(pages_dir: str | None) -> int:
    """`evalmock rules [--coverage DIR]`: the rule table, or the pages' coverage (exit 2 when they are missing)."""
    if pages_dir is None:
        print(render_rules(), end="")
        return OK
    try:
        pages = read_pages(pages_dir)
    except OSError as exc:
        print(f"evalmock rules: cannot read the reference pages: {exc}", file=sys.stderr)
        return USAGE
    print(render_coverage(pages), end="")
    return OK


def between(text: str, begin: str, end: str) -> str:
    """The part of a document between two marker lines."""
    return text.split(begin, 1)[1].split(end, 1)[0].strip("\n") + "\n"
