"""Where a rule comes from: the reference page's own words, an inference from them, or
DigitalOcean's live service.

Every rule the harness applies (and every per-case rule the world keeps) carries a Source. Its level
decides what breaking the rule does to a verdict:

- `page`: the page states it; `quotes` hold the page's words, verbatim, with the page file and line.
  An audit fails on it.
- `inferred`: a convention the page implies but does not state; `reason` says from what and why. A
  warning, a failure only with `--strict`.
- `live`: a fact of DigitalOcean's running service or its public spec, not of its reference page.
  Checked only with `--profile digitalocean-live`, where it fails like a page rule.

The pages themselves are not part of the package: a test compares every quote with them, word for
word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

# The two reference pages, by their file names (the product's source of truth).
TEST_SET_PAGE = "000_f4434837f5b13534.txt"  # GET /v1/agents/{agentId}/test-set/cases
DIGITALOCEAN_PAGE = (
    "004_ad1dfd63bbdc293b.txt"  # GET /v2/gen-ai/evaluation_test_cases/{test_case_uuid}
)
PAGES = (TEST_SET_PAGE, DIGITALOCEAN_PAGE)
# Each page's own title (its heading, word for word): what a reader without the page files can look
# up.
PAGE_TITLES = {
    TEST_SET_PAGE: "List a project's cases of an agent's test set",
    DIGITALOCEAN_PAGE: "Retrieve Information About an Existing Evaluation Test Case",
}


def page_name(page: str) -> str:
    """A page as a reader knows it: its title, then its file name."""
    return f"{PAGE_TITLES[page]} ({page})"


class Level(StrEnum):
    PAGE = "page"
    INFERRED = "inferred"
    LIVE = "live"


@dataclass(frozen=True)
class Quote:
    """Words of a reference page, verbatim, and the line of the page file they stand on."""

    page: str
    line: int
    text: str
    also: tuple[
        int, ...
    ] = ()  # further lines where the page says the same words (each error's block repeats some)

    def __post_init__(self) -> None:
        if self.page not in PAGES:
            raise ValueError(f"unknown page {self.page!r}")
        if not self.text.strip() or self.line < 1 or any(line < 1 for line in self.also):
            raise ValueError("a quote needs words and a line number")

    @property
    def lines(self) -> tuple[int, ...]:
        return (self.line, *self.also)

    @property
    def citation(self) -> str:
        """Where the words stand: the page's title and line (or lines), then its file name."""
        where = f"line {self.line}"
        if self.also:
            *rest, last = self.also
            where += (
                f" (again at lines {', '.join(map(str, rest))} and {last})"
                if rest
                else f" (again at line {last})"
            )
        return f"{PAGE_TITLES[self.page]}, {where}; {self.page}"

    def __str__(self) -> str:
        return f"“{self.text}” ({self.citation})"


def on_test_set_page(line: int, text: str, *, also: tuple[int, ...] = ()) -> Quote:
    return Quote(TEST_SET_PAGE, line, text, also)


def on_digitalocean_page(line: int, text: str) -> Quote:
    return Quote(DIGITALOCEAN_PAGE, line, text)


@dataclass(frozen=True)
class Source:
    """A rule's origin: its level, the page's words it rests on, and (unless it is the page's) why
    it holds."""

    level: Level
    quotes: tuple[Quote, ...] = ()
    reason: str = ""
    # An inferred rule whose premise DigitalOcean's public spec states: in the live profile a live
    # twin, quoting the spec, judges the same answers instead, so the rule is off there (one fact,
    # one finding).
    settled_live_by: str = ""

    def __post_init__(self) -> None:
        if self.level is Level.PAGE and not self.quotes:
            raise ValueError("a page rule quotes the page")
        if self.level is not Level.PAGE and not self.reason:
            raise ValueError(f"an {self.level} rule says why it holds")
        if self.settled_live_by and self.level is not Level.INFERRED:
            raise ValueError("only an inferred rule is settled by the live spec")

    def describe(self) -> str:
        """One paragraph for reports: the level, the quotes and the reason."""
        parts = [f"{self.level}:"]
        parts += [str(quote) for quote in self.quotes]
        if self.reason:
            parts.append(("— " if self.quotes else "") + self.reason)
        return " ".join(parts)


def page(*quotes: Quote, reading: str = "") -> Source:
    """A rule the page states in `quotes`; `reading` says, in our words, how a check reads them."""
    return Source(Level.PAGE, quotes, reading)


def inferred(reason: str, *basis: Quote, settled_live_by: str = "") -> Source:
    """A rule the page implies: `reason` says what it is inferred from and why; `basis` quotes the
    page; `settled_live_by` names the live check that judges the same answers in the live profile,
    where this one is off."""
    return Source(Level.INFERRED, basis, reason, settled_live_by)


def live(fact: str, *basis: Quote) -> Source:
    """A fact of DigitalOcean's running service or public spec that its reference page does not
    state."""
    return Source(Level.LIVE, basis, fact)


def normalise(text: str) -> str:
    """Text as quotes are compared with the pages: typographic quotes made plain, white space
    collapsed."""
    for fancy, plain in (("\u2019", "'"), ("\u2018", "'"), ("\u201c", '"'), ("\u201d", '"')):
        text = text.replace(fancy, plain)
    return re.sub(r"\s+", " ", text).strip()
