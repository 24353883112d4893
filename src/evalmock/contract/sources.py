"""Where a rule comes from: the reference page's own words, an inference from them, or
DigitalOcean's live service.

Every rule the harness applies (and every per-case rule the world keeps) carries a Source. Its level
decides what breaking the rule does to a verdict:

- `page`: the page states it; `quotes` hold the page's words, verbatim; their line is found in the
  page by those words (evalmock.contract.pages).
  An audit fails on it.
- `inferred`: a convention the page implies but does not state; `reason` says from what and why. A
  warning, a failure only with `--strict`.
- `live`: a fact of DigitalOcean's running service or its public spec, not of its reference page.
  Checked only with `--profile digitalocean-live`, where it fails like a page rule.

The pages themselves are not part of the package: a test compares every quote with them, word for
word.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from evalmock.contract.pages import (
    DIGITALOCEAN_PAGE,
    PAGE_TITLES,
    PAGES,
    TEST_SET_PAGE,
    lines_holding,
)
from evalmock.contract.pages import normalise as normalise  # where callers have found it


def page_name(page: str) -> str:
    """A page as a reader knows it: its title."""
    return PAGE_TITLES[page]


class Level(StrEnum):
    PAGE = "page"
    INFERRED = "inferred"
    LIVE = "live"


@dataclass(frozen=True)
class Quote:
    """Words of a reference page, verbatim; the line they stand on is found in the page by them."""

    page: str
    text: str
    # The page says the same words again further down (each error's block repeats some): cite every
    # line that holds them, not only the first.
    every: bool = False

    def __post_init__(self) -> None:
        if self.page not in PAGES:
            raise ValueError(f"unknown page {self.page!r}")
        if not self.text.strip():
            raise ValueError("a quote needs words")

    @property
    def lines(self) -> tuple[int, ...] | None:
        """The lines that hold the words (the first only, unless `every`); None when the page is
        not at hand, () when it no longer holds them."""
        found = lines_holding(self.page, self.text)
        return found if found is None or self.every else found[:1]

    @property
    def citation(self) -> str:
        """Where the words stand: the page's title and line (or lines), when the page is at hand."""
        lines = self.lines
        if lines is None:
            return PAGE_TITLES[self.page]
        if not lines:
            return f"{PAGE_TITLES[self.page]}, not found on the page"
        first, *also = lines
        where = f"line {first}"
        if also:
            *rest, last = also
            where += (
                f" (again at lines {', '.join(map(str, rest))} and {last})"
                if rest
                else f" (again at line {last})"
            )
        return f"{PAGE_TITLES[self.page]}, {where}"

    def __str__(self) -> str:
        return f"“{self.text}” ({self.citation})"


def on_test_set_page(text: str, *, every: bool = False) -> Quote:
    return Quote(TEST_SET_PAGE, text, every)


def on_digitalocean_page(text: str) -> Quote:
    return Quote(DIGITALOCEAN_PAGE, text)


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
