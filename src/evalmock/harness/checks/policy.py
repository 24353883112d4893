"""What an audit holds a target to: page rules always, inferred ones as warnings (failures with
--strict), live ones only in DigitalOcean's live profile."""

from __future__ import annotations

from dataclasses import dataclass

from evalmock.contract.sources import Level, Source
from evalmock.defaults import DEFAULT_PROFILE, LIVE_PROFILE, PROFILES

FAILED, WARNED, PASSED, SKIPPED = "failed", "warned", "passed", "skipped"


@dataclass(frozen=True)
class Policy:
    """`strict`: inferred rules fail too. `profile`: `digitalocean-live` adds the live rules (and
    documents)."""

    strict: bool = False
    profile: str = DEFAULT_PROFILE

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise ValueError(f"unknown profile {self.profile!r}; choose from {', '.join(PROFILES)}")

    @property
    def live(self) -> bool:
        return self.profile == LIVE_PROFILE

    def runs(self, source: Source) -> bool:
        """Whether a rule from this source runs: a live one only in the live profile, and an
        inference DigitalOcean's spec settles only outside it (its live twin judges there)."""
        if self.live:
            return not source.settled_live_by
        return source.level is not Level.LIVE

    def why_off(self, source: Source) -> str:
        """Why a rule that does not run is off, for the reports."""
        if source.settled_live_by:
            return (
                f"off in profile {self.profile}: DigitalOcean's spec states what this rule infers, "
                "so "
                f"{source.settled_live_by} (live) judges the same answers"
            )
        return (
            f"a {source.level} rule, off in profile {self.profile} (--profile {LIVE_PROFILE} runs "
            "it)"
        )

    def breach(self, level: Level) -> str:
        """What breaking a rule of this level is: a failure, or only a warning."""
        return WARNED if level is Level.INFERRED and not self.strict else FAILED

    def decides(self, level: Level) -> bool:
        """Whether a rule of this level, having run, counts toward a complete audit."""
        return level is Level.PAGE or (level is Level.LIVE and self.live)
