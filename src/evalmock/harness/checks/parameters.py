"""Parameters of the test-set API just outside the document: each near miss is refused with 400
bad-input."""

from __future__ import annotations

from collections.abc import Iterable

from evalmock.contract.documents import api as api_document
from evalmock.contract.operations import operation
from evalmock.contract.sources import inferred, on_test_set_page, page
from evalmock.harness.checks.error_answers import expect_error
from evalmock.harness.checks.open_answers import inferred_400, page_400
from evalmock.harness.checks.pagination import LIMIT
from evalmock.harness.checks.probes import Probe, near_misses
from evalmock.harness.checks.registry import scenario_check, stating
from evalmock.harness.checks.scenario import Scenario

_THE_400 = on_test_set_page(
    "projectId is missing or not a project id (a UUID), or include or kind names something else.",
)
_BAD_INPUT = on_test_set_page(
    "A runtime that seals cursors takes one only for the same list, filters and caller, "
    "within a day; otherwise 400 bad-input, and the list starts again without it.",
)


def probes(api: str, names: Iterable[str]) -> list[Probe]:
    """The near misses of the named query parameters, from the API's document."""
    declared = operation(api).parameters
    return [
        probe for name in names for probe in near_misses(api_document(api).spec, declared[name])
    ]


def _refused(s: Scenario, found: list[Probe], code: str | None) -> None:
    project = s.project()
    for probe in found:
        query: dict[str, str | None] = {
            "projectId": project.project_id,
            probe.parameter: probe.value,
        }
        path = operation("test-set").url_path(agentId=project.agent_id)
        exchange = s.get("test-set", path, query, own_request_id=True)
        expect_error(
            exchange, 400, code, f"{probe.parameter} {probe.what} ({probe.value!r}) was not refused"
        )


@scenario_check(
    "test-set",
    page(
        _THE_400,
        _BAD_INPUT,
        on_test_set_page("string format: uuid"),
        on_test_set_page("Allowed values: retired"),
        on_test_set_page("/^(correction|hand)(,(correction|hand))*$/"),
        reading="The page names this operation's 400; a value outside a parameter's stated form "
        "(its allowed values, "
        "its pattern, format uuid, required) is one that names something else, in the page's "
        "words. An empty "
        "include= or kind= is left open (read as left out, or refused), so it is not among the "
        "near misses.",
    ),
)
def malformed_project_include_or_kind_is_bad_input(s: Scenario) -> None:
    """Every near miss of projectId, include and kind that the document yields (left out; letter
    case; a trailing, leading or doubled separator; a character short, long or stray; an unknown
    word) gets 400 in the envelope, with X-Request-Id equal to requestId (that its code is bad-input
    is bad_input_is_every_400_s_code's rule, inferred: the page names the code only for a refused
    cursor)."""
    _refused(s, probes("test-set", page_400("test-set")), None)


_BOUNDS = f"{LIMIT['minimum']}..{LIMIT['maximum']}"


@scenario_check(
    "test-set",
    inferred(
        f"The page bounds limit ({_BOUNDS}) but its 400 sentence names only projectId, include "
        "and kind; refusing a limit out of bounds, rather than clamping it, is the usual reading.",
        *(on_test_set_page(words) for words in operation("test-set").page_words("limit")),
    ),
)
@stating(f"A limit just outside {_BOUNDS}, a word, or not a whole number gets 400 bad-input.")
def limit_outside_its_bounds_is_bad_input(s: Scenario) -> None:
    _refused(s, probes("test-set", inferred_400("test-set")), "bad-input")
