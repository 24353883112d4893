"""How the proxy tells what a response broke: the `evalmock-violations` header on the response, and
one live line per broken rule.

The header is an RFC 8941 structured-field list, one member per broken rule, in the order the checks
ran:

    evalmock-violations: page_holds_at_most_limit;level=page;outcome=failed;at="/data/2",
                         not_a_server_error;level=inferred;outcome=warned

Each member is the check's name (`evalmock rules` lists them), `level` (page, inferred or live),
`outcome` (failed, or warned: an inferred rule without --strict) and, when the breach is a value in
the body, `at`: the JSON pointer to it (non-ASCII characters percent-encoded). The header is sent
only when some rule broke.
"""

from __future__ import annotations

from collections.abc import Iterable

from evalmock.harness.checks.policy import FAILED
from evalmock.harness.excerpts import clip, quoted
from evalmock.harness.run.judge import Breach
from evalmock.harness.secrets.redactor import Redactor

HEADER = "evalmock-violations"
MAX_LINE_VALUE = 120  # characters of the offending value on a live line
MAX_REASON = 100  # characters of the header's reason


def header_value(breaches: Iterable[Breach]) -> str:
    """The header's value: each broken check once, with its level, outcome and pointer."""
    members: dict[str, str] = {}
    for breach in breaches:
        name = breach.check.name
        if name in members:
            continue
        member = f"{name};level={breach.check.level.value};outcome={breach.outcome}"
        if breach.example.pointer is not None:
            member += f';at="{_sf_string(breach.example.pointer)}"'
        # Shortened with "...": a header's text is ASCII, where "…" would be percent-encoded.
        member += (
            f';reason="{_sf_string(clip(short_reason(breach.example.message), MAX_REASON, "..."))}"'
        )
        members[name] = member
    return ", ".join(members.values())


def _sf_string(text: str) -> str:
    """An RFC 8941 string's content: printable ASCII, `"` and `\\` escaped, anything else
    percent-encoded."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif " " <= char <= "~" and char != "%":
            out.append(char)
        else:
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8"))
    return "".join(out)


def why(message: str) -> tuple[str, str]:
    """A breach's message as its first line and the reason it gives: the detail a schema failure
    states (`"runId" is a required property`), else what was expected and received."""
    title, *rest = message.split("\n")
    labelled = [n for n, line in enumerate(rest) if line.startswith(("expected: ", "received: "))]
    details = [
        line.strip() for line in rest[: labelled[0] if labelled else len(rest)] if line.strip()
    ]
    if details:
        return title, details[0]
    # Only the labelled lines themselves: a received body may go on over several lines.
    return title, ", ".join(" ".join(rest[n].split(": ", 1)) for n in labelled)


def short_reason(message: str) -> str:
    """The header's reason: what broke and why, as the console line says it (shortened by the
    caller)."""
    title, reason = why(message)
    return f"{title}: {reason}" if reason else title


def live_line(breach: Breach, method: str, url: str, status: int, redactor: Redactor) -> str:
    """`FAILED page_holds_at_most_limit [page] GET URL -> 200: what broke: why (at /data/3)`,
    redacted; the offending value is shown only when the reason does not already say it."""
    word = "FAILED" if breach.outcome == FAILED else "WARNING"
    title, reason = why(breach.example.message)
    line = (
        f"{word} {breach.check.name} [{breach.check.level.value}] {method} {quoted(url)} -> "
        f"{status}: "
        f"{title}"
    )
    if reason:
        line += f": {clip(reason, MAX_LINE_VALUE * 2)}"
    if breach.example.pointer is not None:
        value = "" if reason else f": {clip(breach.example.value or '', MAX_LINE_VALUE)}"
        line += f" (at {breach.example.pointer or '/'}{value})"
    return redactor.text(line)


def request_line(method: str, url: str, status: int, off_document: Iterable[str]) -> str:
    """`REQUEST GET URL -> 200: leaves the document (limit); ...`: the app's request breaks the
    document, and the service either refused it, as it should, or answered it."""
    verdict = (
        "the service refused it"
        if status >= 400
        else "the service answered it, and should refuse it"
    )
    return (
        f"REQUEST {method} {quoted(url)} -> {status}: leaves the document "
        f"({', '.join(off_document)}); "
        f"{verdict}"
    )


def throttled_line(method: str, url: str, status: int, retry_after: str | None) -> str:
    """`THROTTLED GET URL -> 429: the service's throttling, not judged (Retry-After: 2)`: a gateway
    in front of the service (or the service) asked the app to slow down; no rule judges that
    answer."""
    asked = f"Retry-After: {quoted(retry_after)}" if retry_after else "no Retry-After"
    return (
        f"THROTTLED {method} {quoted(url)} -> {status}: the service's throttling, not judged "
        f"({asked})"
    )


def unjudged_line(method: str, url: str, status: int, why: str) -> str:
    """`UNJUDGED GET URL -> 200: nested deeper than 256 levels (passed through unjudged)`: an answer
    of an audited operation that the proxy does not read, sent on as it came."""
    return f"UNJUDGED {method} {quoted(url)} -> {status}: {why}"
