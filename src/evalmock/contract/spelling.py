"""The known key a misspelled one most likely meant, for the messages that refuse an unknown key."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def _folded(word: str) -> str:
    """A key without the differences a typo of letter case or separator makes (projectId,
    project_id, project-id)."""
    return word.lower().replace("_", "").replace("-", "")


def closest(word: str, known: Iterable[str]) -> str | None:
    """The known key `word` most likely meant, or None when none is close."""
    known = list(known)
    same = [key for key in known if _folded(key) == _folded(word)]
    if same:
        return same[0]
    by_fold = {_folded(key): key for key in known}
    match = difflib.get_close_matches(_folded(word), list(by_fold), n=1, cutoff=0.6)
    return by_fold[match[0]] if match else None


def unknown_key(word: str, known: Iterable[str], quote: str = "") -> str:
    """`unknown key retierd; did you mean retired?`, or with no close key every known one; keys
    between `quote`s."""
    known = list(known)
    guess = closest(word, known)
    if guess:
        return f"unknown key {quote}{word}{quote}; did you mean {quote}{guess}{quote}?"
    listed = ", ".join(f"{quote}{key}{quote}" for key in known)
    return f"unknown key {quote}{word}{quote}; remove it, or write one of {listed}"
