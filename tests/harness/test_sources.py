"""Every rule says where it comes from, and says it truthfully: each quote is on its page, word for
word, and its line is found there by its words (lines inserted in a page move no source); each line
of both pages is enforced by a check or says why not; docs/rules.md shows exactly that."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from evalmock.contract import case_rules, client_rules
from evalmock.contract.pages import (
    DIGITALOCEAN_PAGE,
    PAGE_TITLES,
    PAGES_DIR_VARIABLE,
    TEST_SET_PAGE,
)
from evalmock.contract.sources import (
    PAGES,
    Level,
    Source,
    normalise,
    on_digitalocean_page,
    on_test_set_page,
    page,
)
from evalmock.harness.checks import CHECKS, find_check
from evalmock.harness.checks.schema_parts import schema_part_source
from evalmock.harness.report.page_coverage import BLOCKS, NOTES, counted, coverage_rows
from evalmock.harness.report.rule_tables import (
    CLIENT_BEGIN,
    CLIENT_END,
    COVERAGE_BEGIN,
    COVERAGE_END,
    RULES_BEGIN,
    RULES_DOC_COMMAND,
    RULES_END,
    between,
    print_rules,
    read_pages,
    render_client_rules,
    render_coverage,
    render_rules,
    rules_document,
    write_rules_document,
)

ROOT = Path(__file__).resolve().parents[2]
# The pages are beside the checkout (there in CI), not in the repository; EVALMOCK_PAGES_DIR points
# elsewhere.
PAGES_DIR = Path(os.environ.get("EVALMOCK_PAGES_DIR", ROOT.parent / "shared" / "seeds"))
RULES_DOC = ROOT / "docs" / "rules.md"
SOURCES = (
    [(check.name, check.source) for check in CHECKS]
    + [(rule.name, rule.source) for rule in case_rules.RULES]
    + [(rule.name, rule.source) for rule in client_rules.RULES]
)
# The words a schema finding quotes for the part of the schema it broke (schema_parts.py).
PART_SOURCES = dict.fromkeys(
    source
    for api in ("test-set", "gradient")
    for keyword in (
        "required",
        "enum",
        "minLength",
        "maxProperties",
        "pattern",
        "format",
        "minimum",
    )
    for place in (
        ["data", 0, "kind"],
        ["data", 0, "addedBy", "kind"],
        ["data", 0, "expect", "answer", "verdict"],
        ["data", 0, "expect", "decisions", "shouldCall", 0, "tool"],
        ["data", 0, "expect", "items", 0, "key"],
        ["data", 0, "expect", "items", 0, "pointer"],
        ["data", 0, "projectId"],
        ["star_metric", "success_threshold_pct"],
    )
    for status in (200, 400)
    if (source := schema_part_source(api, [keyword], place, status)) is not None
)
SOURCES += [(f"schema part {number}", source) for number, source in enumerate(PART_SOURCES)]


@pytest.fixture(scope="module")
def pages() -> dict[str, list[str]]:
    if not all((PAGES_DIR / page).is_file() for page in PAGES):
        pytest.skip(
            f"the reference pages are not at {PAGES_DIR} (set EVALMOCK_PAGES_DIR to the folder "
            "holding "
            f"{', '.join(PAGES)})"
        )
    return read_pages(PAGES_DIR)


def _lines_holding(
    pages: dict[str, list[str]], words: str, page_name: str = TEST_SET_PAGE
) -> list[int]:
    """The lines (from 1) of a page that hold `words`, found by the test itself: a revision of the
    page that moves them moves what the test expects."""
    wanted = normalise(words)
    return [n for n, line in enumerate(pages[page_name], 1) if wanted in normalise(line)]


def _first_line_holding(
    pages: dict[str, list[str]], words: str, page_name: str = TEST_SET_PAGE
) -> int:
    found = _lines_holding(pages, words, page_name)
    assert found, f"{page_name} no longer holds {words!r}"
    return found[0]


def _not_on_the_page(name: str, source: Source) -> list[str]:
    """What a rule quotes that its page (in EVALMOCK_PAGES_DIR or ../shared/seeds) no longer says,
    naming the rule and the quote."""
    return [
        f"{name}: “{quote.text}” is not on {PAGE_TITLES[quote.page]} ({quote.page})"
        for quote in source.quotes
        if not quote.lines
    ]


@pytest.mark.parametrize(("name", "source"), SOURCES, ids=[name for name, _ in SOURCES])
def test_every_quote_is_on_its_page_word_for_word(
    pages: dict[str, list[str]], name: str, source: Source
) -> None:
    assert not _not_on_the_page(name, source)
    for quote in source.quotes:
        # the line a report cites holds the words
        for number in quote.lines or ():
            assert normalise(quote.text) in normalise(pages[quote.page][number - 1]), (name, quote)


def test_a_quote_no_longer_on_the_page_fails_naming_its_rule_and_its_words(
    pages: dict[str, list[str]],
) -> None:
    check = find_check("page_is_newest_first", "test-set")
    [quote] = check.source.quotes
    planted = replace(
        check.source, quotes=(replace(quote, text="Cursor-paginated, oldest first."),)
    )
    assert not _not_on_the_page(check.name, check.source)
    assert _not_on_the_page(check.name, planted) == [
        "page_is_newest_first: “Cursor-paginated, oldest first.” is not on "
        "List a project's cases of an agent's test set (000_f4434837f5b13534.txt)"
    ]
    assert "(List a project's cases of an agent's test set, not found on the page)" in str(
        planted.quotes[0]
    )


def _with_forty_lines_on_top(tmp_path: Path) -> Path:
    moved = tmp_path / "pages"
    moved.mkdir()
    block = "".join(f"A new section, line {n}: words no rule quotes.\n" for n in range(1, 41))
    for name in PAGES:
        text = (PAGES_DIR / name).read_text(encoding="utf-8")
        (moved / name).write_text(block + text, encoding="utf-8")
    return moved


def test_forty_lines_inserted_on_top_of_the_pages_move_every_cited_line_by_forty(
    pages: dict[str, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = {(name, quote): quote.lines for name, source in SOURCES for quote in source.quotes}
    monkeypatch.setenv(PAGES_DIR_VARIABLE, str(_with_forty_lines_on_top(tmp_path)))
    after = {(name, quote): quote.lines for name, source in SOURCES for quote in source.quotes}
    assert all(before.values()), "every quote is found on the pages as they are"
    assert after == {key: tuple(n + 40 for n in lines) for key, lines in before.items()}
    moved = _first_line_holding(pages, "database-busy") + 40
    assert f"(List a project's cases of an agent's test set, line {moved})" in render_rules()


def test_forty_lines_inserted_on_top_of_the_pages_move_their_coverage_by_forty(
    pages: dict[str, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moved = _with_forty_lines_on_top(tmp_path)
    monkeypatch.setenv(PAGES_DIR_VARIABLE, str(moved))
    rows = coverage_rows(read_pages(moved), CHECKS)
    # the new lines say something no check quotes and no note explains: the test above says so
    assert [row.text for row in rows if row.first <= 40] == [
        f"A new section, line {n}: words no rule quotes." for n in range(1, 41)
    ] * len(PAGES)
    shifted = [
        replace(row, first=row.first + 40, last=row.last + 40)
        for row in coverage_rows(pages, CHECKS)
    ]
    assert [row for row in rows if row.first > 40] == shifted


def test_every_coverage_note_names_words_its_page_still_says(pages: dict[str, list[str]]) -> None:
    # A note keyed by words the page no longer has would explain nothing, silently.
    said = {name: {normalise(line) for line in lines} for name, lines in pages.items()}
    stale = [
        f"{PAGE_TITLES[name]}: {words!r}"
        for name, words in [*NOTES, *BLOCKS]
        if normalise(words) not in said[name]
    ]
    assert not stale, stale


def test_each_page_s_title_is_its_heading_line(pages: dict[str, list[str]]) -> None:
    # the first line that says something (the test-set page opens with its site's navigation)
    for name, lines in pages.items():
        heading = next(line.strip() for line in lines if counted(line))
        assert heading == PAGE_TITLES[name], name


def test_every_page_rule_quotes_and_every_other_rule_says_why() -> None:
    for name, source in SOURCES:
        if source.level is Level.PAGE:
            assert source.quotes, name
        else:
            assert len(source.reason) > 30, name


def test_our_own_words_quote_nothing() -> None:
    # A check's rule is in our words; quotation marks there would pass our words off as the page's.
    for check in CHECKS:
        assert '"' not in check.rule and "“" not in check.rule, check.name


def test_every_line_of_both_pages_is_enforced_or_says_why_not(pages: dict[str, list[str]]) -> None:
    rows = coverage_rows(pages, CHECKS)
    unexplained = [
        f"{row.page}:{row.lines} {row.text}" for row in rows if not row.checks and not row.note
    ]
    assert not unexplained, unexplained
    # the checks quote the page; the notes are the rest
    assert sum(bool(row.checks) for row in rows) >= 50


def test_the_docs_show_every_rule_with_its_level_and_source(pages: dict[str, list[str]]) -> None:
    text = RULES_DOC.read_text(encoding="utf-8")
    assert between(text, RULES_BEGIN, RULES_END) == render_rules(), (
        f"docs/rules.md is out of date: run `{RULES_DOC_COMMAND}`"
    )


def test_the_docs_and_the_command_show_every_client_rule_with_its_level_and_source(
    pages: dict[str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    text = RULES_DOC.read_text(encoding="utf-8")
    table = between(text, CLIENT_BEGIN, CLIENT_END)
    assert table == render_client_rules(), (
        f"docs/rules.md is out of date: run `{RULES_DOC_COMMAND}`"
    )
    for rule in client_rules.RULES:
        assert f"| `{rule.name}` | {rule.level} | {rule.rule} |" in table
    assert "“Treat as opaque on the client.”" not in table  # a quote is the page's whole sentence
    assert "“Opaque cursor. Treat as opaque on the client.” (List a project's cases" in table
    assert print_rules(None) == 0
    printed = capsys.readouterr().out
    assert render_rules() in printed and printed.endswith(render_client_rules())


def test_the_docs_walk_both_pages_line_by_line(pages: dict[str, list[str]]) -> None:
    text = RULES_DOC.read_text(encoding="utf-8")
    assert between(text, COVERAGE_BEGIN, COVERAGE_END) == render_coverage(pages), (
        f"docs/rules.md is out of date: run `{RULES_DOC_COMMAND}`"
    )


def test_docs_rules_md_is_exactly_what_the_command_writes(pages: dict[str, list[str]]) -> None:
    assert RULES_DOC.read_text(encoding="utf-8") == rules_document(pages), (
        f"docs/rules.md is out of date: run `{RULES_DOC_COMMAND}`"
    )


def test_the_command_writes_docs_rules_md(pages: dict[str, list[str]], tmp_path: Path) -> None:
    # dev.py rules-doc runs write_rules_document on the pages folder and docs/rules.md.
    written = tmp_path / "rules.md"
    assert write_rules_document([str(PAGES_DIR), str(written)]) == 0
    assert written.read_text(encoding="utf-8") == RULES_DOC.read_text(encoding="utf-8"), (
        f"docs/rules.md is out of date: run `{RULES_DOC_COMMAND}`"
    )


def test_the_command_refuses_a_folder_without_the_pages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert write_rules_document([str(tmp_path), str(tmp_path / "rules.md")]) == 2
    assert not (tmp_path / "rules.md").exists()
    assert "cannot read the reference pages" in capsys.readouterr().err


def test_the_coverage_says_which_quoting_checks_hold_a_line_only_as_an_inference(
    pages: dict[str, list[str]],
) -> None:
    text = render_coverage(pages)
    assert "`project_id_is_case_insensitive` (inferred)" in text  # RFC 4122's, not the page's
    assert "`upper_case_project_id_is_accepted`," in text  # the page's own request: a page rule
    assert (
        "`bad_input_is_every_400_s_code` (inferred)" in text
        and "`error_code_is_the_page_s`," in text
    )


def test_a_quote_is_cited_by_its_page_s_title_and_the_line_its_words_stand_on(
    pages: dict[str, list[str]],
) -> None:
    listing = str(on_test_set_page("database-busy"))
    line = _first_line_holding(pages, "database-busy")
    title = "List a project's cases of an agent's test set"
    assert listing == f"“database-busy” ({title}, line {line})"
    source = page(on_digitalocean_page("get/v2/gen-ai"))
    line = _first_line_holding(pages, "get/v2/gen-ai", DIGITALOCEAN_PAGE)
    assert (
        f"(Retrieve Information About an Existing Evaluation Test Case, line {line})"
        in source.describe()
    )
    tables = render_rules()
    assert (
        ".txt" not in tables and "(List a project's cases of an agent's test set, line " in tables
    )


def test_without_the_pages_a_quote_is_cited_by_its_page_s_title_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PAGES_DIR_VARIABLE, str(tmp_path))
    quote = on_test_set_page("database-busy")
    assert quote.lines is None
    assert str(quote) == "“database-busy” (List a project's cases of an agent's test set)"
    assert ".txt" not in render_rules()


def test_words_the_page_repeats_in_each_errors_block_are_cited_at_every_line(
    pages: dict[str, list[str]],
) -> None:
    # A 404's X-Request-Id rule stands on the 404 block's copy of the sentence as much as on the 400
    # block's.
    [quote] = find_check("request_id_header_is_the_envelope_s", "test-set").source.quotes
    first, *again = _lines_holding(pages, quote.text)
    assert len(again) >= 2, "the page repeats these words in each error's block"
    assert quote.lines == (first, *again)
    later = ", ".join(str(line) for line in again[:-1]) + f" and {again[-1]}"
    assert f"line {first} (again at lines {later})" in quote.citation
