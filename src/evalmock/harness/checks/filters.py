"""Filters of the test-set API: projectId, include=retired and kind narrow the list as the pages say."""

from __future__ import annotations

from evalmock.harness.checks.base import Exchange, Skip, Violation
from evalmock.harness.checks.cases import page_cases
from evalmock.harness.checks.registry import response_check, scenario_check
from evalmock.harness.scenario import Scenario

KINDS = ("correction", "hand")


def _requested_kinds(exchange: Exchange) -> set[str]:
    raw = exchange.query.get("kind")
    return set(raw.split(",")) if raw else set(KINDS)


@response_check("test-set")
def cases_belong_to_the_project(exchange: Exchange) -> bool | None:
    """projectId: "the agent's set, narrowed to that project's cases" ("in either letter case"): every
    case's projectId equals the requested one, compared case-insensitively."""
    cases = page_cases(exchange)
    requested = exchange.query.get("projectId")
    if cases is None or not requested or exchange.ambiguous("projectId"):
        return None
    for case in cases:
        if str(case.get("projectId", "")).lower() != requested.lower():
            raise Violation(f"case {case.get('id')!r} belongs to another project", expected=requested,
                            received=case.get("projectId"))
    return True


@response_check("test-set")
def cases_have_the_requested_kinds(exchange: Exchange) -> bool | None:
    """kind: "Comma-separated `correction` and `hand`; only cases of the named kinds. Left out, both"."""
    cases = page_cases(exchange)
    if cases is None or exchange.ambiguous("kind"):
        return None
    kinds = _requested_kinds(exchange)
    for case in cases:
        if case.get("kind") not in kinds:
            raise Violation(f"case {case.get('id')!r} is of a kind not asked for", expected=sorted(kinds),
                            received=case.get("kind"))
    return True


@response_check("test-set")
def retired_cases_only_with_include_retired(exchange: Exchange) -> bool | None:
    """"A retired case comes back only with `include=retired`"; "Left out, active (not retired) cases
    only"."""
    cases = page_cases(exchange)
    if cases is None:
        return None
    if exchange.ambiguous("include"):
        return None
    if exchange.query.get("include") == "retired":
        return True
    for case in cases:
        if "retired" in case:
            raise Violation(f"retired case {case.get('id')!r} listed without include=retired",
                            expected="active cases only", received=case.get("retired"))
    return True


# -- scenarios --------------------------------------------------------------------------------------------
@scenario_check("test-set")
def include_retired_adds_the_retired_cases(s: Scenario) -> None:
    """include: "`retired`: retired cases too. Left out, active (not retired) cases only": the walk with
    include=retired holds every active case plus at least one retired case (the targets say there is one);
    the walk without it holds no retired case."""
    project = s.project("has_retired", "needed to see retired cases come back")
    active = s.walk(project, limit=100)
    everything = s.walk(project, limit=100, include="retired")
    leaked = [case.get("id") for case in active.cases if "retired" in case]
    if leaked:
        raise Violation("retired cases listed without include=retired", expected="no retired case",
                        received=leaked[:5], exchange=active.exchanges[0])
    retired = [case.get("id") for case in everything.cases if "retired" in case]
    if not retired:
        raise Violation("include=retired listed no retired case, though the target has some",
                        expected="at least one case with `retired`", received="none",
                        exchange=everything.exchanges[-1])
    if active.complete and everything.complete:
        missing = set(active.ids) - set(everything.ids)
        if missing:
            raise Violation("include=retired dropped active cases", expected="every active case too",
                            received=f"missing {sorted(map(str, missing))[:5]}", exchange=everything.exchanges[-1])


@scenario_check("test-set")
def kind_filter_selects_those_kinds(s: Scenario) -> None:
    """kind: "only cases of the named kinds. Left out, both": kind=hand lists hand cases (at least one, the
    targets say there are some), kind=correction lists corrections, and kind=correction,hand lists the same
    cases as no kind."""
    project = s.project()
    facts = {"hand": project.has_hand, "correction": project.has_corrections}
    if not any(facts.values()):
        project = s.project("has_hand", "needed to see the kind filter select cases")
        facts = {"hand": project.has_hand, "correction": project.has_corrections}
    for kind, present in facts.items():
        page = s.page(project, kind=kind, limit=100)
        wrong = [case.get("id") for case in page["data"] if case.get("kind") != kind]
        if wrong:
            raise Violation(f"kind={kind} listed other kinds", expected=f"only {kind} cases", received=wrong[:5])
        if present and not page["data"]:
            raise Violation(f"kind={kind} listed nothing, though the target has {kind} cases",
                            expected=f"at least one {kind} case", received="an empty page")
    both = s.page(project, kind="correction,hand", limit=50)
    plain = s.page(project, limit=50)
    if [c.get("id") for c in both["data"]] != [c.get("id") for c in plain["data"]]:
        raise Violation("kind=correction,hand lists other cases than no kind", expected="the same first page",
                        received="a different first page")


@scenario_check("test-set")
def project_id_is_case_insensitive(s: Scenario) -> None:
    """projectId: "A UUID in its textual form, in either letter case": the upper- and lower-case spellings
    select the same cases."""
    project = s.project()
    lower = s.page(project, project_id=project.project_id.lower(), limit=20)
    upper = s.page(project, project_id=project.project_id.upper(), limit=20)
    if not lower["data"]:
        raise Skip("the target project lists no active case, so there is nothing to compare")
    if [c.get("id") for c in lower["data"]] != [c.get("id") for c in upper["data"]]:
        raise Violation("the project id's letter case changed the list", expected="the same first page",
                        received="a different first page")
