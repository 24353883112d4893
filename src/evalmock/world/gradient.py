"""DigitalOcean GenAI evaluation test cases, each with versions 1..n, built once from the seed."""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from typing import Any

from evalmock.world.hashing import Stream, stable_hash, uuid_from
from evalmock.world.timeline import rfc3339
from evalmock.world.vocabulary import Person, Vocabulary

# The DigitalOcean reference page's own example id: it always exists.
EXAMPLE_TEST_CASE = "123e4567-e89b-12d3-a456-426614174000"
EXAMPLE_VERSIONS = 3
TEST_CASES = 12
_DAY = 86_400
_FIRST_CREATED = calendar.timegm((2025, 3, 1, 0, 0, 0))


@dataclass(frozen=True)
class Metric:
    name: str
    description: str
    category: str
    metric_type: str
    value_type: str
    inverted: bool
    range_min: float
    range_max: float


METRICS: tuple[Metric, ...] = (
    Metric(
        "Correctness (general hallucinations)",
        "Whether the response states only facts supported by the input.",
        "METRIC_CATEGORY_CORRECTNESS",
        "METRIC_TYPE_GENERAL_QUALITY",
        "METRIC_VALUE_TYPE_PERCENTAGE",
        False,
        0,
        100,
    ),
    Metric(
        "Instruction adherence",
        "Whether the response follows the agent's instructions.",
        "METRIC_CATEGORY_CORRECTNESS",
        "METRIC_TYPE_GENERAL_QUALITY",
        "METRIC_VALUE_TYPE_PERCENTAGE",
        False,
        0,
        100,
    ),
    Metric(
        "Tool call accuracy",
        "Whether the agent called the right tools with the right arguments.",
        "METRIC_CATEGORY_CORRECTNESS",
        "METRIC_TYPE_RAG_AND_TOOL",
        "METRIC_VALUE_TYPE_PERCENTAGE",
        False,
        0,
        100,
    ),
    Metric(
        "Retrieved context relevance",
        "How relevant the retrieved chunks are to the question.",
        "METRIC_CATEGORY_CONTEXT_QUALITY",
        "METRIC_TYPE_RAG_AND_TOOL",
        "METRIC_VALUE_TYPE_NUMBER",
        False,
        0,
        1,
    ),
    Metric(
        "Context adherence",
        "Whether the response stays within the retrieved context.",
        "METRIC_CATEGORY_CONTEXT_QUALITY",
        "METRIC_TYPE_RAG_AND_TOOL",
        "METRIC_VALUE_TYPE_PERCENTAGE",
        False,
        0,
        100,
    ),
    Metric(
        "Toxicity",
        "Share of responses with abusive or hateful language.",
        "METRIC_CATEGORY_SAFETY_AND_SECURITY",
        "METRIC_TYPE_GENERAL_QUALITY",
        "METRIC_VALUE_TYPE_PERCENTAGE",
        True,
        0,
        100,
    ),
    Metric(
        "Prompt injection",
        "Share of prompts that overrode the agent's instructions.",
        "METRIC_CATEGORY_SAFETY_AND_SECURITY",
        "METRIC_TYPE_GENERAL_QUALITY",
        "METRIC_VALUE_TYPE_PERCENTAGE",
        True,
        0,
        100,
    ),
    Metric(
        "PII leakage",
        "Share of responses exposing personal data.",
        "METRIC_CATEGORY_SAFETY_AND_SECURITY",
        "METRIC_TYPE_GENERAL_QUALITY",
        "METRIC_VALUE_TYPE_PERCENTAGE",
        True,
        0,
        100,
    ),
    Metric(
        "User satisfaction",
        "Predicted rating the user would give, 1 to 5.",
        "METRIC_CATEGORY_USER_OUTCOMES",
        "METRIC_TYPE_GENERAL_QUALITY",
        "METRIC_VALUE_TYPE_NUMBER",
        False,
        1,
        5,
    ),
    Metric(
        "Task completion",
        "Whether the user's task was completed.",
        "METRIC_CATEGORY_USER_OUTCOMES",
        "METRIC_TYPE_GENERAL_QUALITY",
        "METRIC_VALUE_TYPE_PERCENTAGE",
        False,
        0,
        100,
    ),
    Metric(
        "Response length fit",
        "How well the response length fits the model's budget (lower is better).",
        "METRIC_CATEGORY_MODEL_FIT",
        "METRIC_TYPE_GENERAL_QUALITY",
        "METRIC_VALUE_TYPE_NUMBER",
        True,
        0,
        10,
    ),
    Metric(
        "Reviewer notes",
        "Free-text notes of a human reviewer.",
        "METRIC_CATEGORY_UNSPECIFIED",
        "METRIC_TYPE_UNSPECIFIED",
        "METRIC_VALUE_TYPE_STRING",
        False,
        0,
        0,
    ),
)
_SUBJECTS = (
    "Refund policy answers",
    "Contract clause retrieval",
    "Support tone and safety",
    "Invoice lookups",
    "Onboarding questions",
    "Search relevance",
    "Escalation triage",
    "Multilingual replies",
    "Data-retention requests",
    "Pricing questions",
    "Ticket summaries",
    "Prompt-injection probes",
)


def build_test_cases(seed: int, vocabulary: Vocabulary) -> dict[str, tuple[dict[str, Any], ...]]:
    """uuid -> its versions, oldest first (`versions[v - 1]` is version v)."""
    metric_ids = {metric.name: uuid_from(seed, "metric", metric.name) for metric in METRICS}
    world: dict[str, tuple[dict[str, Any], ...]] = {}
    for number in range(TEST_CASES):
        uuid = EXAMPLE_TEST_CASE if number == 0 else uuid_from(seed, "evaluation-test-case", number)
        stream = Stream(stable_hash(seed, "evaluation-test-case", number))
        count = EXAMPLE_VERSIONS if number == 0 else stream.between(1, 5)
        world[uuid] = _versions(uuid, number, count, stream, vocabulary, metric_ids, seed)
    return world


def _dataset(uuid: str, subject: str, created: int, stream: Stream, seed: int) -> dict[str, Any]:
    """The dataset a test case is built on (its name drawn first, as every version shows it)."""
    dataset_name = f"{subject.lower().replace(' ', '-')}-{stream.between(1, 9)}.csv"
    return {
        "created_at": rfc3339(created - stream.between(3_600, 20 * _DAY)),
        "dataset_name": dataset_name,
        "dataset_uuid": uuid_from(seed, "dataset", uuid),
        "file_size": str(stream.between(2_000, 80_000_000)),
        "has_ground_truth": stream.chance(70),
        "row_count": stream.between(10, 50_000),
    }


def _star_metric(star: Any, pct: int, metric_ids: dict[str, str]) -> dict[str, Any]:
    return {
        "metric_uuid": metric_ids[star.name],
        "name": star.name,
        "success_threshold": _threshold(star, pct),
        "success_threshold_pct": pct,
    }


def _versions(
    uuid: str,
    number: int,
    count: int,
    stream: Stream,
    vocabulary: Vocabulary,
    metric_ids: dict[str, str],
    seed: int,
) -> tuple[dict[str, Any], ...]:
    subject = _SUBJECTS[number % len(_SUBJECTS)]
    creator = stream.choice(vocabulary.people)
    created = _FIRST_CREATED + number * 9 * _DAY + stream.between(0, 8 * _DAY)
    dataset = _dataset(uuid, subject, created, stream, seed)
    metrics = stream.sample(METRICS, stream.between(2, 4))
    spare = [metric for metric in METRICS if metric not in metrics]
    # by construction, so every seed has some archived (never the page's example)
    archived = number % 4 == 3
    description = (
        f"{subject} for {stream.choice(vocabulary.companies)}: "
        f"{stream.choice(vocabulary.should_say)}"
    )

    origin = _Origin(uuid, subject, description, created, creator, dataset)
    versions: list[dict[str, Any]] = []
    updated, total_runs = created, 0
    for version in range(1, count + 1):
        if version > 1:
            updated += stream.between(_DAY // 2, 30 * _DAY)
            if spare and stream.chance(40):  # a later version may add a metric
                metrics = [*metrics, spare.pop(stream.below(len(spare)))]
        runs = stream.between(0, 40)
        total_runs += runs
        editor = creator if version == 1 else stream.choice(vocabulary.people)
        star = stream.choice(
            [metric for metric in metrics if metric.value_type != "METRIC_VALUE_TYPE_STRING"]
        )
        pct = stream.between(50, 95)
        versions.append(
            _version_body(
                origin, version, runs, total_runs, updated, editor, metrics, star, pct, metric_ids
            )
        )
    if archived:
        archived_at = rfc3339(updated + stream.between(_DAY, 60 * _DAY))
        for body in versions:  # archiving is of the test case, so every version shows it
            body["archived_at"] = archived_at
    return tuple(versions)


@dataclass(frozen=True)
class _Origin:
    """What every version of a test case shares: its id, subject, description, creation, dataset."""

    uuid: str
    subject: str
    description: str
    created: int
    creator: Person
    dataset: dict[str, Any]


def _version_body(
    origin: _Origin,
    version: int,
    runs: int,
    total_runs: int,
    updated: int,
    editor: Person,
    metrics: list[Metric],
    star: Metric,
    pct: int,
    metric_ids: dict[str, str],
) -> dict[str, Any]:
    """One version's body, its keys in the order the API answers them."""
    dataset = origin.dataset
    return {
        "created_at": rfc3339(origin.created),
        "created_by_user_email": origin.creator.email,
        "created_by_user_id": origin.creator.numeric_id,
        "dataset": dict(dataset),
        "dataset_name": dataset["dataset_name"],
        "dataset_uuid": dataset["dataset_uuid"],
        "description": origin.description,
        "latest_version_number_of_runs": runs,
        "metrics": [
            _metric(metric, rank, metric is star, metric_ids) for rank, metric in enumerate(metrics)
        ],
        "name": origin.subject,
        "star_metric": _star_metric(star, pct, metric_ids),
        "test_case_uuid": origin.uuid,
        "total_runs": total_runs,
        "updated_at": rfc3339(updated),
        "updated_by_user_email": editor.email,
        "updated_by_user_id": editor.numeric_id,
        "version": version,
    }


def _metric(metric: Metric, rank: int, is_goal: bool, metric_ids: dict[str, str]) -> dict[str, Any]:
    return {
        "category": metric.category,
        "description": metric.description,
        "inverted": metric.inverted,
        "is_metric_goal": is_goal,
        "metric_name": metric.name,
        "metric_rank": rank,
        "metric_type": metric.metric_type,
        "metric_uuid": metric_ids[metric.name],
        "metric_value_type": metric.value_type,
        "range_max": float(metric.range_max),
        "range_min": float(metric.range_min),
    }


def _threshold(metric: Metric, pct: int) -> float:
    """The percentage expressed on the metric's own scale (from the better end when inverted)."""
    span = metric.range_max - metric.range_min
    share = (100 - pct) / 100 if metric.inverted else pct / 100
    return round(metric.range_min + share * span, 4)
