"""What a report says about the run that made it: when, which evalmock, against what, with which
options and targets."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from evalmock import __version__
from evalmock.harness.results.audit_results import Results

DIGEST_CHARS = 16  # of the SHA-256 hex digest: enough to tell two targets files apart


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def file_digest(path: str | Path) -> str:
    """`sha256:` and the first hex digits of the file's SHA-256 (what a reader compares, not a
    secret)."""
    return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()[:DIGEST_CHARS]


@dataclass(frozen=True)
class RunInfo:
    """The run's metadata; `target_kind` names what `target` is (base URL, HAR file or upstream)."""

    target: str
    target_kind: str = "base URL"
    started: datetime = field(default_factory=_now)
    version: str = __version__
    seed: int | None = None  # None: nothing was generated (a HAR audit, the proxy)
    max_examples: int | None = None
    fuzz: bool | None = None
    targets_name: str | None = None
    targets_digest: str | None = None

    @classmethod
    def of(
        cls,
        target: str,
        *,
        target_kind: str = "base URL",
        targets: str | Path | None = None,
        seed: int | None = None,
        max_examples: int | None = None,
        fuzz: bool | None = None,
    ) -> RunInfo:
        """The metadata of a run against `target`, with the targets file's name and digest when
        there is one."""
        name = digest = None
        if targets:
            name = Path(targets).name
            try:
                digest = file_digest(targets)
            except OSError:
                digest = "(unreadable)"
        return cls(
            target,
            target_kind,
            seed=seed,
            max_examples=max_examples,
            fuzz=fuzz,
            targets_name=name,
            targets_digest=digest,
        )

    def rows(self, results: Results) -> list[tuple[str, str]]:
        """(label, value) pairs, in the order a reader asks: when, what, how, with which known
        ids."""
        policy = results.policy
        rows = [
            ("started", self.started.isoformat().replace("+00:00", "Z")),
            ("evalmock", self.version),
            (self.target_kind, self.target),
            ("APIs", ", ".join(results.apis)),
            ("profile", policy.profile),
            (
                "level",
                "strict: inferred rules fail"
                if policy.strict
                else "inferred rules warn (not --strict)",
            ),
        ]
        if self.seed is not None:
            rows.append(("seed", str(self.seed)))
        if self.fuzz is not None:
            rows.append(
                (
                    "Schemathesis",
                    f"{self.max_examples} examples per phase" if self.fuzz else "off (--no-fuzz)",
                )
            )
        rows.append(
            (
                "targets",
                f"{self.targets_name} ({self.targets_digest})" if self.targets_name else "none",
            )
        )
        return rows
