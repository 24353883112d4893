"""The harness reads each filter from its declaration: the generic check judges a filter no rule of
its own names, the binding probe reuses a cursor with it, and every rule the document names for a
filter or a malformed value is a registered one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evalmock.contract.documents import QUERY_FACTS
from evalmock.contract.filters import declared_filter, filters, narrowing
from evalmock.contract.operations import operation
from evalmock.harness.checks import cursor_binding, find_check
from evalmock.harness.checks.context import CheckContext
from evalmock.harness.checks.filters import UNRULED, judge_unruled, unmatched
from evalmock.harness.checks.outcomes import Violation
from evalmock.harness.checks.policy import Policy
from evalmock.paths import openapi_dir
from revised_documents import with_a_run_id_filter

from .builders import correction_case, hand_case, page

RUN_ID = declared_filter("runId", {"narrows": True, "case-field": "runId", "cursor-binds": True})


GENERIC, WALKED = "cases_match_the_other_filters", "other_filters_narrow_the_walk"
SCRIPT = Path(__file__).with_name("declared_filters_revised.py")


def what_the_harness_reads(documents: Path, *audit: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *audit],
        env={**os.environ, "EVALMOCK_OPENAPI_DIR": str(documents)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def shipped() -> dict[str, Any]:
    return what_the_harness_reads(openapi_dir())


@pytest.fixture(scope="module")
def revised_documents(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return with_a_run_id_filter(tmp_path_factory.mktemp("documents"))


@pytest.fixture(scope="module")
def revised(revised_documents: Path) -> dict[str, Any]:
    return what_the_harness_reads(revised_documents)


@pytest.mark.parametrize(
    ("service", "outcomes"),
    [
        ("plain", {GENERIC: "passed", WALKED: "passed"}),
        # every page of a runId walk lists other runs' cases
        ("ignores-run-id", {GENERIC: "warned", WALKED: "passed"}),
        # each listed case holds the runId, but the corrections that hold it are left out
        ("drops-corrections", {GENERIC: "passed", WALKED: "warned"}),
    ],
)
def test_a_filter_without_a_rule_is_walked_at_the_values_cases_hold_and_every_page_judged(
    revised_documents: Path, service: str, outcomes: dict[str, str]
) -> None:
    """The mock serving the revised documents, behind a planted defect or none, audited with the
    generic rules alone: each defect is caught by one of them, at the inferred level."""
    assert what_the_harness_reads(revised_documents, service)["audit"] == outcomes


def context(**query: Any) -> CheckContext:
    cases = [hand_case(), correction_case(runId="run-other")]
    return CheckContext(page(cases, **query), None, Policy())  # type: ignore[arg-type]


def test_the_generic_check_is_registered_exactly_while_a_filter_has_no_rule_of_its_own(
    shipped: dict[str, Any], revised: dict[str, Any]
) -> None:
    # the shipped document: the generic check is in the report exactly when one of its filters, as
    # declared, names no rule of its own (none as the page stands)
    facts = [p.get(QUERY_FACTS, {}) for p in operation("test-set").query_parameters().values()]
    unruled = [fact for fact in facts if fact.get("narrows") and "case-rule" not in fact]
    assert (GENERIC in shipped["checks"]) == bool(unruled)
    assert "cases_have_the_requested_kinds" in shipped["checks"]
    # a revision adding runId without a rule of its own, and dropping kind's: the generic check
    assert GENERIC in revised["checks"]
    assert all(one.case_rule is None for one in UNRULED)


def test_a_filter_without_a_rule_is_judged_by_the_generic_check_from_its_declaration() -> None:
    with pytest.raises(Violation) as raised:
        judge_unruled(context(runId="run-5b1e0d7c"), (RUN_ID,))
    assert raised.value.pointer == "/data/1/runId"
    assert raised.value.received == "run-other"
    only = CheckContext(page([hand_case()], runId="run-5b1e0d7c"), None, Policy())  # type: ignore[arg-type]
    assert judge_unruled(only, (RUN_ID,)) is True
    # left out: nothing to judge, never a pass
    assert judge_unruled(context(), (RUN_ID,)) is None


def test_each_declared_filter_judges_by_its_own_predicate() -> None:
    declared = filters()
    assert unmatched(context(kind="hand"), declared["kind"]) == (
        1,
        correction_case(runId="run-other"),
    )
    assert unmatched(context(kind="correction,hand"), declared["kind"]) is True
    assert unmatched(context(include="retired"), declared["include"]) is None
    assert unmatched(
        context(projectId="2489e9ad-2ee2-8e00-8ec9-32d5f69181c0"), declared["projectId"]
    )


def test_the_filters_probe_reuses_a_cursor_with_each_declared_filter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A filter holding a case's value (runId) is probed with the first listed case's value."""
    monkeypatch.setattr(cursor_binding, "narrowing", lambda: (*narrowing(), RUN_ID))
    asked: list[dict[str, Any]] = []

    class Probed:
        targets = type("T", (), {"sealed_cursors": True})()

        def project(self) -> str:
            return "p"

        def page(self, project: str, **params: Any) -> dict[str, Any]:
            return {"data": [hand_case()], "hasMore": True, "nextCursor": "c"}

        def list_cases(self, project: str, **params: Any) -> Any:
            asked.append(params)
            return page([], status=400)

    monkeypatch.setattr(cursor_binding, "assert_cursor_refused", lambda *_: None)
    cursor_binding.cursor_is_bound_to_the_filters(Probed())  # type: ignore[arg-type]
    assert {"limit": 1, "cursor": "c", "runId": "run-5b1e0d7c"} in asked
    assert {"limit": 1, "cursor": "c", "include": "retired"} in asked
    assert {"limit": 1, "cursor": "c", "kind": "hand"} in asked


def test_the_walks_key_a_list_by_the_declared_filters(
    shipped: dict[str, Any], revised: dict[str, Any]
) -> None:
    # two values of a filter are two lists; two spellings of one value are one list
    assert shipped["one-list"] == {"kind": False, "kind-spelling": True, "runId": True}
    # a filter the document gains keys the walks' lists with no change to the harness
    assert revised["one-list"] == {"kind": False, "kind-spelling": True, "runId": False}


def test_every_rule_the_document_names_for_a_parameter_is_registered() -> None:
    """A `case-rule` or `bad-value-rule` naming no check fails here, by name."""
    for name, parameter in operation("test-set").query_parameters().items():
        facts = parameter.get(QUERY_FACTS, {})
        for key in ("case-rule", "bad-value-rule"):
            if key in facts:
                assert find_check(facts[key], "test-set"), (name, key)
    assert (
        operation("test-set").bad_value_rule({"limit"}) == "limit_outside_its_bounds_is_bad_input"
    )
    assert operation("test-set").bad_value_rule({"kind"}) is None
