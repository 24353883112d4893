"""The import's summary: a short table of the lists and test cases written, complete or partial,
what other hosts and paths were counted, and each answer left out with why."""

from __future__ import annotations

from collections.abc import Iterable

from evalmock.harness.excerpts import printable
from evalmock.harness.secrets.redactor import Redactor
from evalmock.recording.accumulator import MAX_NAMED, Recording
from evalmock.recording.output import Written

MAX_SHOWN = MAX_NAMED  # answers left out, named one by one; more are counted
MAX_URL = 400  # characters of an answer's URL the summary names


def _table(header: tuple[str, ...], rows: Iterable[tuple[str, ...]]) -> list[str]:
    rows = [header, *rows]
    widths = [max(len(row[n]) for row in rows) for n in range(len(header))]
    return [
        "  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def _shortened(text: str) -> str:
    """A recorded URL as the summary names it: a hostile one may be a megabyte long."""
    return text if len(text) <= MAX_URL else text[: MAX_URL - 1] + "…"


def summary(recording: Recording, written: Written, path: str, redactor: Redactor) -> str:
    """What was written to `path` and what the recording lacks, every value redacted and printable
    (a recorded id or URL is the service's, and hostile)."""
    counts = (
        (len(written.lists), "list"),
        (sum(written.lists.values()), "case"),
        (len(written.versions), "test case"),
    )
    said = ", ".join(f"{count} {noun}{'' if count == 1 else 's'}" for count, noun in counts)
    lines = [f"wrote {path}: {said}"]
    if recording.lists:
        lines += _table(
            ("agent", "project", "cases", "list"),
            (
                (
                    recorded.agent_id,
                    recorded.project_id,
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
                    uuid,
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
        lines += [f"  {_shortened(str(item.source))}: {item.reason}" for item in refused]
        if count > len(refused):
            lines.append(f"  and {count - len(refused)} more")
    return "\n".join(printable(redactor.text(line)) for line in lines)
