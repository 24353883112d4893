"""Values as findings show them: JSON text, shortened between words so that no secret is cut in
part."""

from __future__ import annotations

import json
import re
from typing import Any

from evalmock.nouns import counted

# What ends a word, where a shortened text may end: never inside a word, which may be a secret (a
# token, a cookie's value) that only its whole is redacted by. The redactor reads a cut word by the
# same class.
WORD_BREAK = r"\s\"',;:{}\[\]()<>&?#|"
_BETWEEN_WORDS = re.compile(f"[{WORD_BREAK}]")
ELLIPSIS = "…"  # what a shortened text ends with
# characters of a value from the service or the traffic (a URL, an error's text) a message quotes: a
# HAR's URL may be tens of MiB, and a message is one line of a console or a report
MAX_QUOTED = 2048


def show(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return clip(text, 600)


def as_json(value: Any, limit: int = 300) -> str:
    """A value as JSON text (so that "12345" and 12345 read differently), shortened to `limit`
    characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return clip(text, limit)


def clip(text: str, limit: int, ellipsis: str = ELLIPSIS) -> str:
    """`text` in at most `limit` characters, shortened with `ellipsis` where a word ends, so that no
    short word is cut: a secret shown in part would escape a redactor that knows the whole. A word
    longer than half the room is cut (the start of a long value says what it was); the redactor
    knows a cut secret by its start (`Redactor.text`)."""
    if len(text) <= limit:
        return text
    room = text[: limit - len(ellipsis)]
    if _BETWEEN_WORDS.match(text, len(room)):
        return room + ellipsis
    ends = [match.end() for match in _BETWEEN_WORDS.finditer(room)]
    cut = ends[-1] if ends else 0
    return (room[:cut] if cut >= len(room) // 2 else room) + ellipsis


def quoted(text: str, limit: int = MAX_QUOTED) -> str:
    """`text` as a message quotes a value it did not write: whole up to `limit` characters, else its
    first `limit`, then `…` and how many more there were ("… (9,998,000 more characters)"). The cut
    word ends at the ellipsis, where the redactor knows a cut secret by its start."""
    if len(text) <= limit:
        return text
    more = counted(len(text) - limit, "more character", ",")
    return f"{text[:limit]}{ELLIPSIS} ({more})"


# C0 controls (a line break too: a console line is one line), DEL and C1 controls: what a terminal
# would obey (clear the screen, retitle the window, move the cursor back over a verdict), and a `\r`
# that would start a line of its own in a file or a browser's <pre>.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")
# the same but the line break: a report file's lines are its own
_CONTROLS_BUT_LINE_BREAK = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def escaped(text: str, characters: re.Pattern[str]) -> str:
    """`text` with each of `characters` shown as its Python escape (`\\x1b`, `\\ud800`)."""
    return characters.sub(
        lambda found: found.group().encode("unicode_escape").decode("ascii"), text
    )


def printable(text: str, *, lines: bool = False) -> str:
    """`text` for a console line, or with `lines` for a file of lines (a report): each control
    character shown as its escape (`\\x1b`, `\\r`), a line break kept only with `lines`. Every
    output of the audit and the proxy passes through here."""
    return escaped(text, _CONTROLS_BUT_LINE_BREAK if lines else _CONTROLS)
