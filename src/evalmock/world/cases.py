"""One generated TestSetCase, composed from the vocabulary by hashing (seed, agent, project,
rank)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from evalmock.world.catalog import Agent, Tool
from evalmock.world.hashing import MASK48, Stream, mix48, splitmix64, stable_hash, unmix48
from evalmock.world.layout import (
    CORRECTION_ACTIVE,
    HAND_ACTIVE,
    category_at,
    is_retired,
    kind_of,
)
from evalmock.world.timeline import NEWEST, added_at, rfc3339
from evalmock.world.vocabulary import Vocabulary

# Which parts `expect` holds, as a bit mask (decisions 1, answer 2, items 4), weighted towards one
# or two parts.
_EXPECT_MASKS = (1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 5, 6, 7)
_ITEM_ROOTS = ("matches", "results", "hits", "candidates")
_TEMPLATES = ("nda", "msa", "dpa", "sow", "order-form")
_TEAMS = ("billing", "tier-2", "legal", "onboarding", "security")
_PRIORITIES = ("low", "normal", "high", "urgent")
_STATUSES = ("open", "pending", "resolved", "failed", "paid")
_DAY = 86_400
_RETIREMENTS = 0x5EC0_4D1F_E7A1  # parts the draws of `--churn`'s retirements from the cases'
# The first rank of a data file's short-form cases: far above any generated rank and far below the
# arrivals' (which count down from the top), so their ids are neither's.
_SHORT_FORM = 1 << 47


class CaseFactory:
    """Builds the generated cases of one list (agent and project); every draw is a pure function of
    the rank."""

    def __init__(self, seed: int, agent: Agent, project_id: str, vocabulary: Vocabulary) -> None:
        self.agent = agent
        self.project_id = project_id
        self.vocabulary = vocabulary
        self.tools: tuple[Tool, ...] = agent.tools + tuple(
            Tool(name, ("query", "limit")) for name in vocabulary.extra_tools[:2]
        )
        self.block_base = stable_hash(seed, agent.id, project_id, "layout")
        self.time_base = stable_hash(seed, agent.id, project_id, "timeline")
        self._case_base = stable_hash(seed, agent.id, project_id, "case")
        self._id_salt = stable_hash(seed, agent.id, project_id, "ids")

    def category(self, rank: int) -> int:
        return category_at(self.block_base, rank)

    def added_at(self, rank: int) -> int:
        return added_at(self.time_base, rank)

    def case_id(self, rank: int, category: int | None = None) -> str:
        """Unique within the list: a bijection of the rank, prefixed by kind (the rank's category's,
        unless `category` says it)."""
        kind = kind_of(self.category(rank) if category is None else category)
        prefix = "case-" if kind == "hand" else "corr-"
        return f"{prefix}{mix48(self._id_salt + rank):012x}"

    def rank_of(self, case_id: str) -> int | None:
        """The rank whose id `case_id` is, in a list of any size (the inverse of `case_id`); None if
        none is."""
        prefix, _, digits = case_id.partition("-")
        if prefix not in ("case", "corr") or len(digits) != 12 or digits.strip("0123456789abcdef"):
            return None
        rank = (unmix48(int(digits, 16)) - self._id_salt) & MASK48
        return rank if self.case_id(rank) == case_id else None

    def case(self, rank: int) -> dict[str, Any]:
        return self._composed(rank, self.category(rank), self.added_at(rank), rank + 1)

    def field(self, rank: int, name: str) -> Any:
        """One field of the case of `rank` (None where it has none): what an index of that field
        reads of every case. The fields drawn without the rest of the case are drawn alone; any
        other is read from the whole case (about twenty times the cost)."""
        if name == "runId":  # the case's first draw
            return _run_id(Stream(splitmix64(self._case_base ^ rank)))
        if name == "projectId":
            return self.project_id
        return self.case(rank).get(name)

    def arrival(self, number: int, category: int, added: int) -> dict[str, Any]:
        """The `number`-th case (from 0) to arrive in this list under `--churn`, added at `added`.

        Its rank counts down from the top of the ids' 48 bits, so its id is no generated rank's;
        its items key the newest generated cases.
        """
        return self._composed(MASK48 - number, category, added, 0)

    def short_form(self, place: int, category: int | None, added: int) -> dict[str, Any]:
        """A whole case for the `place`-th case (from 0) of a data file's list, added at `added`:
        what a short-form case leaves out is taken from it. Of `category`, or of one drawn by its
        place (active either way: only a case that says so is retired)."""
        rank = _SHORT_FORM + place
        drawn = self.category(rank) if category is None else category
        active = HAND_ACTIVE if kind_of(drawn) == "hand" else CORRECTION_ACTIVE
        return self._composed(rank, active, added, 0)

    def retirement(self, place: int) -> dict[str, Any]:
        """The reason and actor of the `place`-th short-form case of a data file's list, retired."""
        stream = Stream(splitmix64(self._case_base ^ _RETIREMENTS ^ (_SHORT_FORM + place)))
        return {
            "reason": stream.choice(self.vocabulary.retirement_reasons),
            "by": self._actor(stream, user_percent=80),
        }

    def retired(self, case: dict[str, Any], at: int, number: int) -> dict[str, Any]:
        """`case` as the `number`-th retirement (from 0) of this list under `--churn` leaves it:
        retired at `at`, which must be later than its addedAt, and updated then."""
        stream = Stream(splitmix64(self._case_base ^ _RETIREMENTS ^ number))
        retired = {
            "reason": stream.choice(self.vocabulary.retirement_reasons),
            "by": self._actor(stream, user_percent=80),
            "at": rfc3339(at),
        }
        changed: dict[str, Any] = {}
        for key, value in case.items():  # the generated cases' key order: retired after updatedAt
            changed[key] = value
            if key == "updatedAt":
                changed["updatedAt"], changed["retired"] = retired["at"], retired
        return changed

    def _composed(self, rank: int, category: int, added: int, older: int) -> dict[str, Any]:
        """The case of `rank`, of `category`, added at `added`; its items key ranks from
        `older` on."""
        stream = Stream(splitmix64(self._case_base ^ rank))
        kind = kind_of(category)
        case: dict[str, Any] = {
            "id": self.case_id(rank, category),
            "kind": kind,
            "projectId": self.project_id,
            "runId": _run_id(stream),
            "madeOn": self._version(added - stream.between(3_600, 5 * _DAY)),
            "expect": self._expect(stream, older),
            "addedBy": self._actor(stream, user_percent=85 if kind == "hand" else 60),
            "addedAt": rfc3339(added),
            "updatedAt": rfc3339(added),
        }
        if is_retired(category):
            # Retired within 45 days, and no later than a day after the newest case (the world's
            # "now").
            retired_at = added + stream.between(
                600, max(600, min(45 * _DAY, NEWEST + _DAY - added))
            )
            case["updatedAt"] = rfc3339(retired_at)
            case["retired"] = {
                "reason": stream.choice(self.vocabulary.retirement_reasons),
                "by": self._actor(stream, user_percent=80),
                "at": rfc3339(retired_at),
            }
        # Every hand case is an expert's; a correction is when its group was restricted.
        if kind == "hand" or stream.chance(25):
            case["expert"] = True
        return case

    def _version(self, seconds: int) -> str:
        """Weekly releases named year.month.week, the version live when the run ran."""
        t = time.gmtime(seconds)
        return f"{self.agent.id}@{t.tm_year}.{t.tm_mon}.{(t.tm_mday - 1) // 7}"

    def _actor(self, stream: Stream, user_percent: int) -> dict[str, str]:
        if stream.chance(user_percent):
            return {"kind": "user", "id": stream.choice(self.vocabulary.people).actor_id}
        return {"kind": "service", "id": stream.choice(self.vocabulary.services)}

    def _expect(self, stream: Stream, older: int) -> dict[str, Any]:
        mask = stream.choice(_EXPECT_MASKS)
        expect: dict[str, Any] = {}
        if mask & 1:
            expect["decisions"] = self._decisions(stream)
        if mask & 2:
            expect["answer"] = self._answer(stream)
        if mask & 4:
            expect["items"] = self._items(stream, older)
        return expect

    def _decisions(self, stream: Stream) -> dict[str, Any]:
        if stream.chance(35):
            return {"verdict": "right"}
        calls = stream.sample(self.tools, stream.between(1, 3))
        decisions: dict[str, Any] = {
            "verdict": "wrong",
            "shouldCall": [{"tool": tool.name, "args": self._args(stream, tool)} for tool in calls],
        }
        if stream.chance(60):
            others = [tool.name for tool in self.tools if tool not in calls]
            decisions["mustNotCall"] = stream.sample(others, stream.between(0, 2))
        return decisions

    def _args(self, stream: Stream, tool: Tool) -> dict[str, Any]:
        keys = stream.sample(tool.args, stream.between(0, len(tool.args)))
        return {key: self._value(stream, key) for key in sorted(keys, key=tool.args.index)}

    def _value(self, stream: Stream, key: str) -> Any:
        draw = _ARG_VALUES.get(key)
        return (
            stream.choice(self.vocabulary.nouns) if draw is None else draw(stream, self.vocabulary)
        )

    def _answer(self, stream: Stream) -> dict[str, Any]:
        if stream.chance(40):
            return {"verdict": "right"}
        answer: dict[str, Any] = {"verdict": "wrong"}
        parts = stream.between(1, 3)  # shouldSay, why, or both
        if parts & 1:
            answer["shouldSay"] = stream.choice(self.vocabulary.should_say)
        if parts & 2:
            answer["why"] = stream.choice(self.vocabulary.why)
        return answer

    def _items(self, stream: Stream, older: int) -> list[dict[str, Any]]:
        """A ranked answer whose items are older cases of the same list (ranks from `older` on),
        keyed by their ids."""
        root = stream.choice(_ITEM_ROOTS)
        offsets = sorted(stream.sample(range(1, 400), stream.between(1, 5)))
        return [
            {
                "key": self.case_id(older + offset - 1),
                "pointer": f"/{root}/{position}",
                "rank": position,
                "verdict": "right" if stream.chance(60) else "wrong",
            }
            for position, offset in enumerate(offsets)
        ]


def _run_id(stream: Stream) -> str:
    return f"run-{stream.hex(8)}"


# How each tool argument's value is drawn; any other argument is a noun.
_ARG_VALUES: dict[str, Callable[[Stream, Vocabulary], Any]] = {
    "jurisdiction": lambda stream, words: stream.choice(words.countries),
    "query": lambda stream, words: stream.choice(words.phrases),
    "counterparty": lambda stream, words: stream.choice(words.companies),
    "clause": lambda stream, words: stream.choice(words.nouns),
    "template": lambda stream, words: stream.choice(_TEMPLATES),
    "language": lambda stream, words: stream.choice(words.languages),
    "to": lambda stream, words: stream.choice(words.people).email,
    "subject": lambda stream, words: f"Your {stream.choice(words.nouns)} question",
    "team": lambda stream, words: stream.choice(_TEAMS),
    "priority": lambda stream, words: stream.choice(_PRIORITIES),
    "status": lambda stream, words: stream.choice(_STATUSES),
    "currency": lambda stream, words: stream.choice(words.currencies),
    "limit": lambda stream, words: stream.between(5, 50),
    "amount": lambda stream, words: stream.between(100, 250_000) / 100,
    "since": lambda stream, words: f"2026-{stream.between(1, 10):02d}-{stream.between(1, 28):02d}",
    "contract_id": lambda stream, words: f"ctr-{stream.hex(6)}",
    "ticket_id": lambda stream, words: f"T-{stream.between(100_000, 999_999)}",
    "invoice_id": lambda stream, words: f"INV-{stream.between(1_000_000, 9_999_999)}",
    "customer_id": lambda stream, words: f"cus_{stream.hex(10)}",
    "document_id": lambda stream, words: f"doc-{stream.hex(8)}",
}
