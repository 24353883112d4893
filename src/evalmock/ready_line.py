"""The line `evalmock serve` prints on standard output once it listens, and reading it back."""

from __future__ import annotations

PREFIX = "EVALMOCK_LISTENING"


def ready_line(url: str) -> str:
    """`EVALMOCK_LISTENING http://127.0.0.1:PORT`: the prefix, one space, the URL."""
    return f"{PREFIX} {url}"


def url_of(line: str) -> str | None:
    """The URL a ready line names, or None when `line` is not one (any other output line)."""
    head, _, url = line.rstrip("\r\n").partition(" ")
    return url if head == PREFIX and url.startswith(("http://", "https://")) else None
