"""Every rule says where it comes from, and says it truthfully: each quote is on its page, word for
word, at its line; each line of both pages is enforced by a check or says why not; docs/rules.md
shows exactly that."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalmock.contract import case_rules
from evalmock.contract.sources import PAGES, Level, normalise
from evalmock.harness.checks import CHECKS, find_check
from evalmock.harness.report.page_coverage import coverage_rows
from evalmock.harness.report.rule_tables import (
    COVERAGE_BEGIN,
    COVERAGE_END,
    RULES_BEGIN,
    RULES_DOC_COMMAND,
    RULES_END,
    between,
    read_pages,
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
SOURCES = [(check.name, check.source) for check in CHECKS] + [
    (rule.name, rule.source) for rule in case_rules.RULES
]


@pytest.fixture(scope="module")
def pages() -> dict[str, list[str]]:
    if not all((PAGES_DIR / page).is_file() for page in PAGES):
        pytest.skip(
            f"the reference pages are not at {PAGES_DIR} (set EVALMOCK_PAGES_DIR to the folder "
            "holding "
            f"{', '.join(PAGES)})"
        )
    return read_pages(PAGES_DIR)


@pytest.mark.parametrize(("name", "source"), SOURCES, ids=[name for name, _ in SOURCES])
def test_every_quote_is_on_its_page_word_for_word(
    pages: dict[str, list[str]], name: str, source
) -> None:
    for quote in source.quotes:
        for number in quote.lines:
            line = pages[quote.page][number - 1]
            assert normalise(quote.text) in normalise(line), (
                f"{name}: {quote} is not on {quote.page}:{number}"
            )


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


def test_the_docs_show_every_rule_with_its_level_and_source() -> None:
    text = RULES_DOC.read_text(encoding="utf-8")
    assert between(text, RULES_BEGIN, RULES_END) == render_rules(), (
        f"docs/rules.md is out of date: run `{RULES_DOC_COMMAND}`"
    )


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


def test_a_quote_is_cited_by_its_page_s_title_and_line_then_the_file() -> None:
    from evalmock.contract.sources import on_digitalocean_page, on_test_set_page, page

    listing = str(on_test_set_page(372, "database-busy"))
    assert listing == (
        "“database-busy” (List a project's cases of an agent's test set, line 372; "
        "000_f4434837f5b13534.txt)"
    )
    source = page(on_digitalocean_page(3, "get"))
    assert (
        "(Retrieve Information About an Existing Evaluation Test Case, line 3; "
        "004_ad1dfd63bbdc293b.txt)" in (source.describe())
    )
    tables = render_rules()
    assert (
        "txt:" not in tables and "(List a project's cases of an agent's test set, line " in tables
    )


def test_words_the_page_repeats_in_each_errors_block_are_cited_at_every_line() -> None:
    # A 404's X-Request-Id rule stands on the 404 block's copy of the sentence as much as on the 400
    # block's.
    [quote] = find_check("request_id_header_is_the_envelope_s", "test-set").source.quotes
    assert quote.lines == (279, 319, 359, 399)
    assert "line 279 (again at lines 319, 359 and 399)" in quote.citation
