"""The import's summary: a short table of the lists and test cases written, complete or partial,
what other hosts and paths were counted, and each answer left out with why."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from evalmock.harness.excerpts import printable
from evalmock.harness.secrets.redactor import Redactor
from evalmock.nouns import counted
from evalmock.recording.accumulator import MAX_NAMED, Recording
from evalmock.recording.answers import Source
from evalmock.recording.output import Written
from evalmock.recording.screening import Secrets

MAX_SHOWN = MAX_NAMED  # answers left out, named one by one; more are counted
MAX_URL = 400  # characters of an answer's URL the summary names


def _table(header: tuple[str, ...], rows: Iterable[tuple[str, ...]]) -> list[str]:
    rows = [header, *rows]
    widths = [max(len(row[n]) for row in rows) for n in range(len(header))]
    return [
        "  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def _named(source: Source, secrets: Secrets) -> str:
    """An answer as the summary names it: its URL cut short (a hostile one may be a megabyte long),
    and its path and query left out when they hold a secret in a form the redactor does not replace
    (the token upper-cased as an agent id)."""
    url = source.url
    if secrets.held(url):
        parts = urlsplit(url)
        url = f"{parts.scheme}://{parts.netloc}/(a path or query that holds a secret)"
    if len(url) > MAX_URL:
        url = url[: MAX_URL - 1] + "…"
    return str(Source(source.where, source.method, url))


def _reason(reason: str, secrets: Secrets) -> str:
    """Why an answer was left out, unless it quotes a secret in a form the redactor does not
    replace (a key of the case that is the token, upper-cased): then only that it does."""
    return "left out; why quotes a secret of the traffic" if secrets.held(reason) else reason


def _ids(ids: tuple[str, ...], written: Written) -> tuple[str, ...]:
    """A list's or test case's ids as the summary shows them: never ids that hold a secret."""
    key = ids if len(ids) > 1 else ids[0]
    return tuple("(holds a secret)" for _ in ids) if key in written.hidden else ids


def summary(recording: Recording, written: Written, path: str, redactor: Redactor) -> str:
    """What was written to `path` and what the recording lacks, every value redacted and printable
    (a recorded id or URL is the service's, and hostile)."""
    counts = (
        (len(written.lists), "list"),
        (sum(written.lists.values()), "case"),
        (len(written.versions), "test case"),
    )
    said = ", ".join(counted(count, noun) for count, noun in counts)
    lines = [f"wrote {path}: {said}"]
    if recording.lists:
        lines += _table(
            ("agent", "project", "cases", "list"),
            (
                (
                    *_ids((recorded.agent_id, recorded.project_id), written),
                    str(written.lists.get((recorded.agent_id, recorded.project_id), 0)),
                    recorded.completeness(),
                )
                for recorded in recording.lists.values()
            ),
        )
    if recording.test_cases:
        lines += _table(
            ("test case", "versions", "versions seen"),
            (
                (
                    *_ids((uuid,), written),
                    ", ".join(map(str, written.versions.get(uuid, []))) or "none",
                    recorded.completeness(),
                )
                for uuid, recorded in recording.test_cases.items()
            ),
        )
    other = sum(recording.other.values())
    if other:
        hosts = ", ".join(f"{host}: {count}" for host, count in recording.other.most_common(5))
        lines.append(f"entries of other hosts and paths, counted, not read: {other} ({hosts})")
    if recording.not_success:
        lines.append(f"answers of the APIs that were not 2xx, not read: {recording.not_success}")
    refused = [*recording.refused, *written.refused][:MAX_SHOWN]
    count = len(recording.refused) + len(written.refused)
    if count:
        lines.append(f"left out ({count}):")
        secrets = Secrets(redactor)
        lines += [
            f"  {_named(item.source, secrets)}: {_reason(item.reason, secrets)}" for item in refused
        ]
        if count > len(refused):
            lines.append(f"  and {count - len(refused)} more")
    return "\n".join(printable(redactor.text(line)) for line in lines)
