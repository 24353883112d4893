"""The two reference pages: their titles, and their text when it is at hand, where a quote's line
is found by its words.

The pages are not part of the repository or the package. They are read from EVALMOCK_PAGES_DIR, or
else from `../shared/seeds` beside the checkout; where neither holds them, a quote is cited by its
page's title alone.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from evalmock import environment

# The two reference pages, by their file names (the product's source of truth).
TEST_SET_PAGE = "000_f4434837f5b13534.txt"  # GET /v1/agents/{agentId}/test-set/cases
DIGITALOCEAN_PAGE = (
    "004_ad1dfd63bbdc293b.txt"  # GET /v2/gen-ai/evaluation_test_cases/{test_case_uuid}
)
PAGES = (TEST_SET_PAGE, DIGITALOCEAN_PAGE)
# Each page's own title (its heading line, word for word): what a reader without the page files
# can look up. A test holds each to its page.
PAGE_TITLES = {
    TEST_SET_PAGE: "List a project's cases of an agent's test set",
    DIGITALOCEAN_PAGE: "Retrieve Information About an Existing Evaluation Test Case",
}
PAGES_DIR_VARIABLE = environment.PAGES_DIR
_CHECKOUT = Path(__file__).resolve().parents[3]


def normalise(text: str) -> str:
    """Text as quotes are compared with the pages: typographic quotes made plain, white space
    collapsed."""
    for fancy, plain in (("\u2019", "'"), ("\u2018", "'"), ("\u201c", '"'), ("\u201d", '"')):
        text = text.replace(fancy, plain)
    return re.sub(r"\s+", " ", text).strip()


def pages_dir() -> Path:
    """Where the pages are read from: EVALMOCK_PAGES_DIR, or `../shared/seeds` beside the
    checkout."""
    return Path(os.environ.get(PAGES_DIR_VARIABLE) or _CHECKOUT.parent / "shared" / "seeds")


@contextmanager
def pages_at(directory: str | Path) -> Iterator[None]:
    """Within the block, quotes' lines are found in the pages of `directory` (a command given the
    pages' folder cites the lines of the pages it was given)."""
    before = os.environ.get(PAGES_DIR_VARIABLE)
    os.environ[PAGES_DIR_VARIABLE] = str(directory)
    try:
        yield
    finally:
        if before is None:
            del os.environ[PAGES_DIR_VARIABLE]
        else:
            os.environ[PAGES_DIR_VARIABLE] = before


@lru_cache(maxsize=8)
def _normalised_lines(directory: str, page: str) -> tuple[str, ...] | None:
    try:
        text = (Path(directory) / page).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return tuple(normalise(line) for line in text.splitlines())


def lines_holding(page: str, words: str) -> tuple[int, ...] | None:
    """The lines (from 1) of `page` that hold `words`, compared normalised; None when the page is
    not at hand, () when it does not hold them."""
    lines = _normalised_lines(str(pages_dir()), page)
    if lines is None:
        return None
    wanted = normalise(words)
    return tuple(number for number, line in enumerate(lines, 1) if wanted in line)
