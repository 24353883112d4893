"""A recording written as a data file (YAML, or JSON for a `.json` path, as `serve --data` reads
them): secrets and what the rules refuse left out, people anonymized on request, written whole and
then moved into place."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from evalmock.harness.secrets.redactor import Redactor
from evalmock.recording.accumulator import Recording, Refused
from evalmock.recording.screening import Draft, within_the_rules, without_secrets
from evalmock.whole_file import staged


@dataclass(frozen=True)
class WriteOptions:
    anonymize_seed: int | None = None  # None: people's ids, e-mails and names as recorded


@dataclass
class Written:
    """What one write left out (on top of what the recording refused), and how much it wrote."""

    refused: list[Refused] = field(default_factory=list)
    lists: dict[tuple[str, str], int] = field(default_factory=dict)  # cases written per list
    versions: dict[str, list[int]] = field(default_factory=dict)  # versions written per uuid


def draft_of(recording: Recording) -> Draft:
    lists = [
        (recorded.agent_id, recorded.project_id, [(s.case, s.source) for s in recorded.ordered()])
        for recorded in recording.lists.values()
    ]
    test_cases = [(recorded.uuid, recorded.ordered()) for recorded in recording.test_cases.values()]
    return Draft(lists, test_cases)


def render(data: Mapping[str, Any], path: Path) -> str:
    if path.suffix.lower() == ".json":
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    return yaml.safe_dump(
        dict(data), sort_keys=False, allow_unicode=True, width=2**31, default_flow_style=False
    )


def anonymized(data: dict[str, Any], seed: int) -> dict[str, Any]:
    # imported here: only a recording asked to anonymize pays for Faker
    from evalmock.world.anonymize import anonymize

    return anonymize(data, seed=seed)


def write_recording(
    recording: Recording, path: str | Path, redactor: Redactor, options: WriteOptions
) -> Written:
    """Write what the recording saw to `path`; every case or version left out is in `refused`."""
    path = Path(path)
    written = Written()
    draft = without_secrets(draft_of(recording), redactor, written.refused)

    def text_of(kept: Draft) -> str:
        data = kept.data()
        if options.anonymize_seed is not None:
            data = anonymized(data, options.anonymize_seed)
        written.lists = {(a, p): len(items) for a, p, items in kept.lists}
        written.versions = {u: [v["version"] for v, _ in items] for u, items in kept.test_cases}
        return render(data, path)

    text = within_the_rules(draft, text_of, path.suffix.lower() or ".yaml", written.refused)
    with staged(path) as out:
        out.write(text)
    return written
