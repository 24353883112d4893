"""The three enums of a DigitalOcean metric: a value one of them lists belongs to its own field (the
page's); a value none lists is a warning, since DigitalOcean adds values to its enums (inferred)."""

from __future__ import annotations

import functools
from collections.abc import Iterator

from evalmock.contract.documents import GRADIENT
from evalmock.contract.sources import inferred, on_digitalocean_page, page
from evalmock.harness.checks.context import CheckContext
from evalmock.harness.checks.digitalocean_versions import evaluation_test_case
from evalmock.harness.checks.outcomes import Violation
from evalmock.harness.checks.registry import response_check

_METRIC = "apiEvaluationMetric"
_ENUMS = (
    on_digitalocean_page("Category APIEvaluationMetricCategoryoptional"),
    on_digitalocean_page("MetricType APIEvaluationMetricMetricTypeoptional"),
    on_digitalocean_page("MetricValueType APIEvaluationMetricMetricValueTypeoptional"),
)


@functools.cache
def metric_enums() -> dict[str, tuple[str, ...]]:
    """Each field of a metric typed by an open enum of the document, and the values that enum
    lists."""
    enums = GRADIENT.open_enums()
    fields = GRADIENT.spec["components"]["schemas"][_METRIC]["properties"]
    found = {}
    for field, schema in fields.items():
        name = str(schema.get("$ref", "")).rsplit("/", 1)[-1]
        if name in enums:
            found[field] = enums[name]
    return found


def _metric_values(context: CheckContext) -> Iterator[tuple[str, str, str]] | None:
    """(field, value, JSON pointer) of every enum-typed string of the 200's metrics; None when the
    exchange has no metrics."""
    test_case = evaluation_test_case(context.exchange)
    metrics = test_case.get("metrics") if test_case is not None else None
    if not isinstance(metrics, list):
        return None
    return (
        (field, metric[field], f"/evaluation_test_case/metrics/{index}/{field}")
        for index, metric in enumerate(metrics)
        if isinstance(metric, dict)
        for field in metric_enums()
        if isinstance(metric.get(field), str)
    )


@response_check(
    "gradient",
    page(
        *_ENUMS,
        reading="Each of the three fields has its own enum; a value the page lists for one of "
        "them is that enum's, so it is never another field's value.",
    ),
)
def metric_enum_values_are_their_own_field_s(context: CheckContext) -> bool | None:
    """A metric's category, metric_type and metric_value_type, when one of the three enums lists
    the value, is a value of the field's own enum."""
    values = _metric_values(context)
    if values is None:
        return None
    enums = metric_enums()
    for field, value, pointer in values:
        owner = next((f for f, listed in enums.items() if value in listed), field)
        if owner != field:
            raise Violation(
                f"a metric's {field} is a value the page lists for {owner}",
                expected=f"one of {', '.join(enums[field])}",
                received=value,
                pointer=pointer,
            )
    return True


@response_check(
    "gradient",
    inferred(
        "The page lists the values its SDK knew; DigitalOcean's public description, which the "
        "SDKs are generated from, has since added values (METRIC_CATEGORY_CONVERSATIONAL), so a "
        "value none of the three enums lists may be a newer one rather than a wrong one.",
        *_ENUMS,
    ),
)
def metric_enum_values_are_listed(context: CheckContext) -> bool | None:
    """A metric's category, metric_type and metric_value_type is a value one of the three enums
    lists (a warning by default: a service may know values the page does not)."""
    values = _metric_values(context)
    if values is None:
        return None
    listed = {value for values_of in metric_enums().values() for value in values_of}
    for field, value, pointer in values:
        if value not in listed:
            raise Violation(
                f"a metric's {field} is a value none of the page's three enums lists",
                expected=f"one of {', '.join(metric_enums()[field])}",
                received=value,
                pointer=pointer,
            )
    return True
