"""The docs state limit's bounds and default as the OpenAPI document has them: a revision of the
page's numbers, made in the document, points at each doc line still stating the old ones."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import NamedTuple

import pytest

from evalmock.contract.operations import operation
from revised_documents import run_under, with_a_revised_limit

ROOT = Path(__file__).resolve().parent.parent
# Records of what a run measured (pages of 25 cases, walks at 100) and the generated rule list
# (made from the rules' texts, which read the document): not statements of the page's numbers.
RECORDS = {"docs/rules.md", "docs/maintainers/benchmarks.md", "docs/maintainers/performance.md"}
NUMBERS = ("minimum", "maximum", "default")

# A line speaks of the limit when it, or a line beside it in the same paragraph, names it. A query
# in an example (`limit=25`) and an option's value (`--limit 25`) are requests, not statements of
# the numbers.
EXAMPLE = re.compile(r"\blimit=\d+|--[\w-]+[ =]\d+")
NAMES_LIMIT = re.compile(r"(?<![\w-])limits?\b|\bpage size\b", re.I)
# The forms a statement of the numbers takes; each number a statement names is checked.
STATEMENTS = {
    re.compile(r"(?<![\w.])(\d+) ?\.\. ?(\d+)(?![\w.])"): ("minimum", "maximum"),
    re.compile(r"`?\b(minimum|maximum|default)`?: ?`?(\d+)"): (),  # the schema's own words
    re.compile(r"\bdefault(?: limit)? (\d+)\b", re.I): ("default",),
    re.compile(r"\blargest(?: limit)? \(?(\d+)\b", re.I): ("maximum",),
}
# What else a number the document holds would be in such a line, unrecognised: a count of cases
# ("at most 100 cases", "two 25-case pages"), or a page size said in passing ("at 100", "limits 100
# and 37", "none of 25, ..."); not a status ("-> 200:", "a 200") or a count of something else.
BARE = (
    r"(?<![\w.,/=-]){n}(?= cases?\b|-case\b)",
    r"\b(?:at|limits?|of|or|always|not|is|to|most) {n}(?![\w-]|[.,]\d)"
    r"(?! (?!and\b|or\b|again\b|at\b)[A-Za-z])",
)


class Statement(NamedTuple):
    page: str
    line: int
    number: str  # minimum, maximum or default; "unrecognised" for a number said another way
    value: int
    text: str


def limit_schema(documents: Path | None = None) -> dict[str, int]:
    """limit's bounds and default, as the package reads them from the documents (`documents`, or
    the shipped ones)."""
    if documents is None:
        schema = operation("test-set").parameters["limit"]["schema"]
        return {number: schema[number] for number in NUMBERS}
    script = "import sys; sys.path.insert(0, 'tests'); import test_docs_limit as t; t.show()"
    done = run_under(documents, "-c", script)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def show() -> None:
    print(json.dumps(limit_schema()))


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def statements(name: str, text: str, schema: dict[str, int]) -> list[Statement]:
    """What the lines of a page speaking of the limit state of its numbers: each number in a form
    of STATEMENTS, and each of the schema's default and maximum said in no such form."""
    lines = [EXAMPLE.sub("", line) for line in text.splitlines()]
    found: list[Statement] = []
    for index, line in enumerate(lines):
        beside = [
            lines[other]
            for other in (index - 1, index + 1)
            if 0 <= other < len(lines) and lines[other].strip() and not line.startswith("|")
        ]
        if not any(NAMES_LIMIT.search(one) for one in [line, *beside]):
            continue
        rest = line
        for form, numbers in STATEMENTS.items():
            for match in form.finditer(line):
                named = numbers or (match.group(1).lower(),)
                values = match.groups()[-len(named) :]
                found += [
                    Statement(name, index + 1, number, int(value), line.strip())
                    for number, value in zip(named, values, strict=True)
                ]
                rest = rest.replace(match.group(0), " ")
        for number in ("maximum", "default"):
            if any(re.search(form.format(n=schema[number]), rest) for form in BARE):
                found.append(
                    Statement(name, index + 1, "unrecognised", schema[number], line.strip())
                )
    return found


def stale(schema: dict[str, int]) -> list[str]:
    """Each doc line stating limit's numbers otherwise than `schema`, or stating one of them in a
    form this test cannot check, with what it states and what the document says."""
    found = []
    for path in pages():
        name = path.relative_to(ROOT).as_posix()
        if name in RECORDS:
            continue
        for said in statements(name, path.read_text(encoding="utf-8"), schema):
            if said.number == "unrecognised":
                found.append(
                    f"{said.page}:{said.line}: states {said.value} in no form this test reads; "
                    f"say 'default N', 'largest limit (N)' or 'MIN..MAX': {said.text}"
                )
            elif said.value != schema[said.number]:
                found.append(
                    f"{said.page}:{said.line}: states limit's {said.number} {said.value}; the "
                    f"document says {schema[said.number]}: {said.text}"
                )
    return list(dict.fromkeys(found))  # a line stating a number twice is said once


def stating_lines(schema: dict[str, int]) -> set[tuple[str, int]]:
    return {
        (said.page, said.line)
        for path in pages()
        if (name := path.relative_to(ROOT).as_posix()) not in RECORDS
        for said in statements(name, path.read_text(encoding="utf-8"), schema)
    }


def test_the_docs_state_limit_s_bounds_and_default_as_the_document_has_them() -> None:
    assert stale(limit_schema()) == []


def test_the_user_guides_state_the_numbers_where_a_reader_looks_for_them() -> None:
    stating = {page for page, _ in stating_lines(limit_schema())}
    assert {"docs/server.md", "docs/contract.md", "docs/harness.md"} <= stating, stating


@pytest.fixture(scope="module")
def revised(tmp_path_factory: pytest.TempPathFactory) -> dict[str, int]:
    return limit_schema(with_a_revised_limit(tmp_path_factory.mktemp("documents")))


def test_a_revised_limit_points_at_every_doc_line_stating_the_old_numbers(
    revised: dict[str, int],
) -> None:
    assert revised == {"minimum": 1, "maximum": 200, "default": 50}
    stated = stating_lines(limit_schema())
    pointed = {tuple(where.split(":")[:2]) for where in stale(revised)}
    assert {(page, int(line)) for page, line in pointed} == stated


# An example schema for the forms below, whatever the document's numbers.
EXAMPLE_SCHEMA = {"minimum": 1, "maximum": 100, "default": 25}
ALL_THREE = [("minimum", 1), ("maximum", 100), ("default", 25)]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("`limit` is 1..100, default 25.", ALL_THREE),
        ("| `limit` | `minimum: 1`, `maximum: 100`, `default: 25` |", ALL_THREE),
        ("A walk at the largest limit (100).", [("maximum", 100)]),
        ("A walk at limit 100.", [("unrecognised", 100)]),
        ("The limit: two 25-case pages, 100 cases.", [("unrecognised", 100), ("unrecognised", 25)]),
        ("Over the limit -> 200: a 200, on 200; 100 KB, 100 MiB.", []),
        (
            "Walk at each page size:\nat 100, then the default limit,\nif at most 100 cases.",
            [("unrecognised", 100), ("unrecognised", 100)],
        ),
        ("`limit=25&limit=100` twice, 100 parameters, `--limit 25`.", []),
        ("The open-file limit; Granian's default (128), a `rate-limit` of `q=100`.", []),
        ("Tools have 1..200 characters, and 100 properties.", []),
    ],
)
def test_a_statement_of_the_numbers_is_found_in_each_form_and_an_example_is_not(
    text: str, found: list[tuple[str, int]]
) -> None:
    said = statements("a.md", text, EXAMPLE_SCHEMA)
    assert [(one.number, one.value) for one in said] == found
