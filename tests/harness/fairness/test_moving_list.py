"""A list in use during the audit: cases arriving at its top and retired while it is read, a targets
file a day old, ties on addedAt ordered by id under a cursor on (addedAt, id). Such a service
conforms, at the default level and with --strict; the paging bugs that stay bugs on a moving list
are still caught; a walk ends on an exactly full page, so hasMore promising an empty page is
seen."""

from __future__ import annotations

import dataclasses

import pytest

from evalmock.harness.checks.policy import Policy
from evalmock.harness.results.audit_results import Results
from evalmock.harness.run.engine import run_audit
from evalmock.harness.run.options import Audit

from .conftest import Independent
from .service_data import MAIN_PROJECT, SIDE_PROJECT
from .test_fairness import VARIATION_PHASES, assert_checked_both_apis, audit, failures

MOVING = {
    "now and then": ("arrivals_now_and_then", "retirements", "stale_counts"),
    "on every request": ("arrivals_every_request", "retirements", "stale_counts"),
}
WALK = "walk_yields_every_case_once"


def moved_notes(results: Results) -> list[str]:
    return [note for note in results.remarks() if "moved during the audit" in note]


@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
@pytest.mark.parametrize("motions", sorted(MOVING), ids=str)
def test_a_list_in_use_during_the_audit_conforms(
    independent: Independent, motions: str, strict: bool
) -> None:
    with independent.moving(MOVING[motions]) as moving:
        results = audit(independent, phases=VARIATION_PHASES, policy=Policy(strict=strict))
    assert moving.arrived > 3 and moving.retired > 0  # it did move during the audit
    assert results.conforms, failures(results)
    assert not results.warnings, [f.check.name for f in results.warnings]
    assert_checked_both_apis(results)
    walked = next(t for t in results.rows("test-set") if t.check.name == WALK)
    assert walked.passed and not walked.skipped
    # said, never a silent pass: the walks saw it move, and the targets' stale count was set aside
    notes = moved_notes(results)
    assert notes and any("the targets' active_cases (100) was not compared" in n for n in notes)


def lean(independent: Independent, scenarios: set[str], policy: Policy | None = None) -> Results:
    """The named scenario checks of the test-set API on the main project alone, the one that
    moves (every answer judged by every response check too), without Schemathesis."""
    targets = independent.targets()
    main = tuple(p for p in targets.projects if p.project_id == MAIN_PROJECT)
    targets = dataclasses.replace(targets, projects=main)
    return run_audit(
        Audit(
            base_url=independent.base_url,
            targets=targets,
            apis=("test-set",),
            token=targets.token,
            second_token=targets.second_token,
            fuzz=False,
            only=frozenset(scenarios),
            policy=policy or Policy(),
        )
    )


SKIPPED, TWICE = "left out a case listed before", "came back twice"


@pytest.mark.parametrize(
    ("defect", "motions", "said"),
    [
        # tied neighbours of a page's last case skipped: a case listed throughout is missing
        ("cursor_on_added_at_alone", MOVING["now and then"], (SKIPPED,)),
        # a tie cut by a page's end skipped or repeated
        ("ties_in_new_order", MOVING["now and then"], (SKIPPED, TWICE)),
        # a case twice in one walk, the list moving under an offset
        ("offset_cursor", MOVING["on every request"], (TWICE,)),
    ],
)
def test_a_paging_bug_that_stays_a_bug_on_a_moving_list_still_fails(
    independent: Independent, defect: str, motions: tuple[str, ...], said: tuple[str, ...]
) -> None:
    with independent.moving(motions, (defect,)) as moving:
        results = lean(independent, {WALK})
    assert moving.arrived > 3
    assert [f.check.name for f in results.failures] == [WALK], failures(results)
    [finding] = results.failures
    message = finding.examples[0].message
    assert any(words in message for words in said), message


def test_the_moving_service_without_its_defects_passes_the_same_lean_audit(
    independent: Independent,
) -> None:
    """The control of the defects above: the same motions, no defect, the same audit."""
    for motions in MOVING.values():
        with independent.moving(motions):
            results = lean(independent, {WALK})
        assert results.conforms and not results.warnings, failures(results)


def side_project_only(independent: Independent) -> Results:
    """An audit of the side project alone: 10 active cases, which neither 25, the small limit (3)
    nor 100 divides."""
    targets = independent.targets()
    side = tuple(p for p in targets.projects if p.project_id == SIDE_PROJECT)
    return dataclasses.replace(targets, projects=side)  # type: ignore[return-value]


@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
def test_has_more_on_an_exactly_full_last_page_is_seen_at_its_level(
    independent: Independent, strict: bool
) -> None:
    targets = side_project_only(independent)
    with independent.varied({"lazy_has_more"}) as service:
        results = run_audit(
            Audit(
                base_url=independent.base_url,
                targets=targets,  # type: ignore[arg-type]
                apis=("test-set",),
                token=targets.token,  # type: ignore[attr-defined]
                fuzz=False,
                only=frozenset({"page_after_has_more_is_not_empty", WALK}),
                policy=Policy(strict=strict),
            )
        )
        assert service.met["lazy_has_more"]
    found = results.failures if strict else results.warnings
    assert [f.check.name for f in found] == ["page_after_has_more_is_not_empty"], failures(results)
    assert "said hasMore, but the next page is empty" in found[0].title
