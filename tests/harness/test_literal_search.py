"""The redactor's search for its secrets: what one alternation, longest literal first, would find,
whatever how the literals were added (indexed in levels or still pending) and however they share
their ends, and secrets learned by the thousand stay cheap to find."""

from __future__ import annotations

import random
import re

import pytest

from evalmock.harness.secrets import literal_search
from evalmock.harness.secrets.literal_search import PENDING, TAIL, LiteralSearch
from evalmock.harness.secrets.redactor import Redactor


def one_alternation(literals: set[str], text: str) -> str:
    pattern = re.compile("|".join(map(re.escape, sorted(literals, key=len, reverse=True))))
    return pattern.sub(lambda match: f"<{match.group()}>", text)


def test_it_finds_what_one_alternation_finds_longest_first() -> None:
    rng = random.Random(5)
    for round_ in range(40):
        # A small alphabet, so that literals overlap, nest and share starts.
        literals = {
            "".join(rng.choice("abc") for _ in range(rng.randint(1, 6)))
            for _ in range(rng.randint(1, 150))
        }
        search = LiteralSearch()
        ordered = sorted(literals)
        rng.shuffle(ordered)
        # added in batches: levels and pending both
        for index in range(0, len(ordered), rng.randint(1, 40)):
            search.add(ordered[index : index + 40])
            search.sub(str, "")
            if rng.random() < 0.1:
                search.compact()  # as before a HAR file is written: every level in one
        text = "".join(rng.choice("abcd") for _ in range(300))
        assert search.sub(lambda found: f"<{found}>", text) == one_alternation(literals, text), (
            round_
        )


def test_long_literals_sharing_their_tails_are_told_apart_across_capped_levels(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Literals longer than the tail that indexes them, many ending alike (one tail, several
    literals to check), in more levels than merging would leave (a small cap), in a text that is not
    ASCII (offsets in characters)."""
    monkeypatch.setattr(literal_search, "LEVEL_MAX", 100)
    rng = random.Random(11)
    for round_ in range(25):
        ends = ["".join(rng.choice("ab") for _ in range(TAIL)) for _ in range(6)]
        literals = {
            "".join(rng.choice("aé") for _ in range(rng.randint(0, 6))) + rng.choice(ends)
            for _ in range(rng.randint(50, 400))
        }
        search = LiteralSearch()
        ordered = sorted(literals)
        rng.shuffle(ordered)
        for index in range(0, len(ordered), 70):
            search.add(ordered[index : index + 70])
            search.sub(str, "")
            if rng.random() < 0.3:
                search.compact()  # as before a HAR file is written: every level in one
        pieces = [
            rng.choice(
                [
                    word,
                    word[: rng.randint(1, len(word))],
                    word[rng.randint(0, len(word) - 1) :],
                    rng.choice("abé "),
                ]
            )
            for word in rng.choices(ordered, k=60)
        ]
        text = "".join(pieces)  # whole literals, their starts and ends, run together
        assert search.sub(lambda found: f"<{found}>", text) == one_alternation(literals, text), (
            round_
        )


def test_a_secret_inside_another_is_never_half_replaced_across_levels() -> None:
    search = LiteralSearch()
    search.add(["token-123456"])
    search.add(f"filler-{n:04d}" for n in range(PENDING))  # compiles a level holding the first
    search.sub(str, "")
    search.add(["xtoken-123456x"])  # pending: found by str.find
    assert search.sub(lambda found: f"<{found}>", "a xtoken-123456x b token-123456") == (
        "a <xtoken-123456x> b <token-123456>"
    )


def test_rotating_cookies_by_the_thousand_are_all_hidden() -> None:
    """A gateway that sets a new cookie on every answer (AWS ALB's AWSALB): each value is hidden
    wherever it is echoed, the first and the last."""
    redactor = Redactor()
    values = [f"alb{n:06d}{'f' * 10}" for n in range(3000)]
    for value in values:
        redactor.header("set-cookie", f"AWSALB={value}; Path=/")
        redactor.text("next request")  # as an audit does between the answers
    shown = redactor.text(f"echoed {values[0]} and {values[1500]} and {values[-1]}")
    assert not any(value in shown for value in values)
    assert shown.startswith("echoed $EVALMOCK_COOKIE_AWSALB")
