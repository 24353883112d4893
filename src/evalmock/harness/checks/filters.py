"""Filters of the test-set API: projectId, include=retired and kind narrow the list as the page
says."""

from __future__ import annotations

from typing import Any

from evalmock.contract.filters import Filter, filters, narrowing
from evalmock.contract.sources import inferred, on_test_set_page, page
from evalmock.contract.targets import ProjectTarget
from evalmock.harness.checks.case_invariants import page_cases
from evalmock.harness.checks.context import CheckContext
from evalmock.harness.checks.moving import Readings
from evalmock.harness.checks.outcomes import Moved, Skip, Violation
from evalmock.harness.checks.pagination import FULL_LIMIT
from evalmock.harness.checks.registry import response_check, scenario_check
from evalmock.harness.checks.scenario import Scenario, expect_page

# The page size of a second walk, whose page boundaries fall elsewhere than the largest limit's for
# any list of fewer than 47 times that limit (47, a prime, divides no page size below it).
OTHER_PAGE_SIZE = min(47, FULL_LIMIT - 1)

_PROJECT = on_test_set_page(
    "The project whose cases to read: the agent’s set, narrowed to that project’s cases."
)
_UUID = on_test_set_page("string format: uuid")
_KIND = on_test_set_page("Comma-separated correction and hand. Left out, both.")
_RETIRED_ONLY_WITH = on_test_set_page("A retired case comes back only with include=retired.")
_INCLUDE = on_test_set_page("retired: retired cases too. Left out, active ones only.")
_UUID_READING = (
    "A UUID names the same project in either letter case (RFC 4122: its hex digits are "
    "case-insensitive "
    "on input); the page's own request writes one in upper case."
)


def unmatched(context: CheckContext, declared: Filter) -> tuple[int, dict[str, Any]] | bool | None:
    """The first case on a page that a declared filter does not let through, as (its index, the
    case); True when every case matches; None when there is nothing to judge: no page, the parameter
    sent twice, or a value that lets every case through (left out, empty, or `include=retired`)."""
    exchange = context.exchange
    cases = page_cases(exchange)
    if cases is None or exchange.ambiguous(declared.name):
        return None
    value = declared.read(exchange.query.get(declared.name))
    if value is None or value is True or value == "":
        return None
    for index, case in enumerate(cases):
        if not declared.admits(case, value):
            return index, case
    return True


@response_check(
    "test-set",
    page(_PROJECT, on_test_set_page("The run’s project."), _UUID, reading=_UUID_READING),
)
def cases_belong_to_the_project(context: CheckContext) -> bool | None:
    """Every case's projectId is the requested one, compared without regard to letter case."""
    found = unmatched(context, filters()["projectId"])
    if not isinstance(found, tuple):
        return found
    index, case = found
    raise Violation(
        f"case {case.get('id')!r} belongs to another project",
        expected=context.exchange.query.get("projectId"),
        received=case.get("projectId"),
        pointer=f"/data/{index}/projectId",
    )


@response_check("test-set", page(_KIND))
def cases_have_the_requested_kinds(context: CheckContext) -> bool | None:
    """Every case is of a kind the request named (both kinds when kind is left out)."""
    declared = filters()["kind"]
    found = unmatched(context, declared)
    if not isinstance(found, tuple):
        return found
    index, case = found
    raise Violation(
        f"case {case.get('id')!r} is of a kind not asked for",
        expected=sorted(declared.read(context.exchange.query.get("kind"))),
        received=case.get("kind"),
        pointer=f"/data/{index}/kind",
    )


@response_check("test-set", page(_RETIRED_ONLY_WITH, _INCLUDE))
def retired_cases_only_with_include_retired(context: CheckContext) -> bool | None:
    """Without include=retired, no case on the page carries `retired`."""
    found = unmatched(context, filters()["include"])
    if not isinstance(found, tuple):
        return found
    index, case = found
    raise Violation(
        f"retired case {case.get('id')!r} listed without include=retired",
        expected="active cases only",
        received=case.get("retired"),
        pointer=f"/data/{index}/retired",
    )


def judge_unruled(context: CheckContext, declared: tuple[Filter, ...]) -> bool | None:
    """Each case on the page matches each of `declared` (the filters no rule of their own
    judges)."""
    judged = [unmatched(context, one) for one in declared]
    for one, found in zip(declared, judged, strict=True):
        if isinstance(found, tuple):
            index, case = found
            raise Violation(
                f"case {case.get('id')!r} does not match {one.name}",
                expected=f"{one.field}: {one.read(context.exchange.query.get(one.name))!r}",
                received=case.get(one.field),
                pointer=f"/data/{index}/{one.field}",
            )
    return True if any(found is True for found in judged) else None


# A filter the document declares without naming a rule of its own (`case-rule`) is judged by this
# one rule, registered only while there is such a filter.
UNRULED = tuple(one for one in narrowing() if one.case_rule is None)
_OTHER_FILTERS = inferred(
    "The document declares the case field each filter compares (x-evalmock-query "
    "`case-field`); a filter narrows the list, so a listed case holds the value asked "
    "for. The page names the filters a cursor is bound to.",
    on_test_set_page(
        "A runtime that seals cursors takes one only for the same list, filters and "
        "caller, within a day; otherwise 400 bad-input, and the list starts again "
        "without it.",
    ),
)
if UNRULED:

    @response_check("test-set", _OTHER_FILTERS)
    def cases_match_the_other_filters(context: CheckContext) -> bool | None:
        """Every case on a page matches each filter of the request that no rule of its own
        judges, as the document declares the filter."""
        return judge_unruled(context, UNRULED)

    @scenario_check("test-set", _OTHER_FILTERS)
    def other_filters_narrow_the_walk(s: Scenario) -> None:
        """For each filter no rule of its own judges, the list is walked at up to three values its
        cases hold (from a whole walk without it): every page is judged by
        cases_match_the_other_filters, and on a list that stood still the filtered walk lists
        every case of that value."""
        project = s.project()
        first = s.walk(project, limit=FULL_LIMIT)
        for declared in UNRULED:
            for value in values_held(first.cases, declared.field):
                narrowed = s.walk(project, limit=FULL_LIMIT, **{declared.name: value})
                readings = Readings(first, s.walk(project, limit=FULL_LIMIT, again=True))
                if not (readings.judgeable and narrowed.complete) or readings.moved:
                    continue  # the pages were judged; which cases belong is not known
                wanted = {
                    case.get("id")
                    for case in first.cases
                    if declared.admits(case, declared.read(value))
                }
                missing = sorted(map(str, wanted - set(narrowed.ids)))
                if missing:
                    raise Violation(
                        f"{declared.name}={value} left out cases that hold that value",
                        expected=f"{len(wanted)} cases with {declared.field}: {value!r}",
                        received=f"{len(set(narrowed.ids))}; missing {missing[:5]}",
                        exchange=narrowed.exchanges[-1],
                    )


def values_held(cases: list[dict[str, Any]], field: str, most: int = 3) -> list[str]:
    """Up to `most` values of `field` that `cases` hold as strings, the most held first (then in
    the cases' order): the values a filter of that field is walked at."""
    counted: dict[str, int] = {}
    for case in cases:
        value = case.get(field)
        if isinstance(value, str) and value:
            counted[value] = counted.get(value, 0) + 1
    return sorted(counted, key=lambda value: -counted[value])[:most]


# -- scenarios
# --------------------------------------------------------------------------------------------
def _ids(cases: list[dict[str, Any]]) -> list[Any]:
    return [case.get("id") for case in cases]


def same_first_cases(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    """Whether two first pages of one list hold the same cases: cases added at the same instant as a
    page's last case may fall on either side of the cut, so only those added strictly later are
    compared."""
    if len(a) != len(b):
        return False
    if not a:
        return True
    last = {a[-1].get("addedAt"), b[-1].get("addedAt")}
    kept_a = {case.get("id") for case in a if case.get("addedAt") not in last}
    kept_b = {case.get("id") for case in b if case.get("addedAt") not in last}
    return kept_a == kept_b


def empty_is_left_out_or_refused(s: Scenario, project: ProjectTarget, parameter: str) -> None:
    """An empty `parameter=` is read as left out (the same first page as without it) or refused with
    400: the pages leave open which ("Left out, ..." for a value that is not there; "Allowed values"
    for one that is)."""
    exchange = s.list_cases(project, limit=50, **{parameter: ""})
    if exchange.status == 400:
        return
    plain = s.page(project, limit=50)
    body = expect_page(exchange)
    if lists_other_cases(s, project, body, plain, variant={parameter: ""}):
        raise Violation(
            f"an empty {parameter}= was neither read as left out nor refused",
            expected=f"400, or the cases listed without {parameter}: {_ids(plain['data'])[:5]}",
            received=_ids(body["data"])[:5],
            exchange=exchange,
        )


def lists_other_cases(
    s: Scenario,
    project: ProjectTarget,
    body: dict[str, Any],
    plain: dict[str, Any],
    *,
    variant: dict[str, Any],
    plain_params: dict[str, Any] | None = None,
    limit: int = 50,
) -> bool:
    """Whether first page `body`, asked with `variant` where the plain request (`plain_params`) gave
    `plain`, lists other cases than the list does. Pages that differ are told from a list that
    moved between them by asking the variant again, then the plain page again: the plain page the
    same on both sides of the variant's, the list stood still across it, which decides. Else whole
    walks judge (each case the plain walks before and after list must be in the variant's walk);
    Moved when they cannot."""
    if same_first_cases(body["data"], plain["data"]):
        return False
    params = plain_params or {}
    # `body` may have been asked before `plain`: only a variant page between two equal plain pages
    # was asked of a list that stood still
    varied_again = s.page(project, limit=limit, **variant)
    again = s.page(project, limit=limit, **params)
    if same_first_cases(again["data"], plain["data"]):
        return not same_first_cases(varied_again["data"], plain["data"])
    first = s.walk(project, limit=FULL_LIMIT, **params)
    varied = s.walk(project, limit=FULL_LIMIT, **variant)
    readings = Readings(first, s.walk(project, limit=FULL_LIMIT, again=True, **params))
    if not (readings.judgeable and varied.complete):
        raise Moved("two first pages differ, and its walks stopped before the end")
    if readings.moved:
        return bool(readings.unlisted(varied))
    if set(readings.before.ids) == set(readings.after.ids):
        return set(varied.ids) != readings.stable
    raise Moved(
        f"two first pages differ, and so do two walks ({readings.movement()}); "
        "walk_yields_every_case_once judges walks that part"
    )


@scenario_check(
    "test-set",
    page(
        _INCLUDE,
        _RETIRED_ONLY_WITH,
        on_test_set_page("Present on a retired case: it stays listed, and no test run checks it."),
    ),
)
def include_retired_adds_the_retired_cases(s: Scenario) -> None:
    """With include=retired the walk lists every active case and at least one retired case (the
    targets say there is one); without it, no retired case; an empty include= is read as left out or
    refused with 400. An active case missing is looked for in a second walk at another page size:
    one lost between two pages only is the walk's (walk_yields_every_case_once), not the
    filter's; and it must still be listed in a last walk without include: one gone from the list
    meanwhile proves nothing."""
    project = s.project("has_retired", "needed to see retired cases come back")
    active = s.walk(project, limit=FULL_LIMIT)
    everything = s.walk(project, limit=FULL_LIMIT, include="retired")
    leaked = [case.get("id") for case in active.cases if "retired" in case]
    if leaked:
        raise Violation(
            "retired cases listed without include=retired",
            expected="no retired case",
            received=leaked[:5],
            exchange=active.exchanges[0],
        )
    retired = [case.get("id") for case in everything.cases if "retired" in case]
    if not retired:
        raise Violation(
            "include=retired listed no retired case, though the target has some",
            expected="at least one case with `retired`",
            received="none",
            exchange=everything.exchanges[-1],
        )
    if active.complete and everything.complete:
        missing = set(active.ids) - set(everything.ids)
        if missing:
            # A walk that loses cases between its pages (a "Load more" bug,
            # walk_yields_every_case_once's to find) loses other cases at other page boundaries:
            # only a case no walk of the list lists is one it dropped.
            again = s.walk(project, limit=OTHER_PAGE_SIZE, include="retired")
            missing -= set(again.ids)
        if missing:
            # On a list in use, only a case still listed after those walks was listed throughout.
            missing &= set(s.walk(project, limit=FULL_LIMIT, again=True).ids)
        if missing:
            raise Violation(
                "include=retired dropped active cases",
                expected="every active case too",
                received=f"missing {sorted(map(str, missing))[:5]} (from its walks at "
                f"limit={FULL_LIMIT} and limit={OTHER_PAGE_SIZE})",
                exchange=everything.exchanges[-1],
            )
    empty_is_left_out_or_refused(s, project, "include")


@scenario_check("test-set", page(_KIND))
def kind_filter_selects_those_kinds(s: Scenario) -> None:
    """kind=hand lists only hand cases and kind=correction only corrections (at least one each where
    the targets say there are some), and kind=correction,hand lists the same cases as no kind; an
    empty kind= is read as left out or refused with 400. First pages that differ on a list seen to
    move are judged by whole walks (lists_other_cases), or not judged when those cannot."""
    project = s.project()
    facts = {"hand": project.has_hand, "correction": project.has_corrections}
    if not any(facts.values()):
        project = s.project("has_hand", "needed to see the kind filter select cases")
        facts = {"hand": project.has_hand, "correction": project.has_corrections}
    for kind, present in facts.items():
        body = s.page(project, kind=kind, limit=FULL_LIMIT)
        wrong = [case.get("id") for case in body["data"] if case.get("kind") != kind]
        if wrong:
            raise Violation(
                f"kind={kind} listed other kinds", expected=f"only {kind} cases", received=wrong[:5]
            )
        if present and not body["data"]:
            raise Violation(
                f"kind={kind} listed nothing, though the target has {kind} cases",
                expected=f"at least one {kind} case",
                received="an empty page",
            )
    both = s.page(project, kind="correction,hand", limit=50)
    plain = s.page(project, limit=50)
    if lists_other_cases(s, project, both, plain, variant={"kind": "correction,hand"}):
        raise Violation(
            "kind=correction,hand lists other cases than no kind",
            expected=_ids(plain["data"])[:10],
            received=_ids(both["data"])[:10],
        )
    empty_is_left_out_or_refused(s, project, "kind")


_PAGE_S_OWN_REQUEST = on_test_set_page(
    "--url 'https://example.com/v1/agents/example/test-set/cases?"
    "projectId=2489E9AD-2EE2-8E00-8EC9-32D5F69181C0&include=retired&limit=25' \\",
)


@scenario_check(
    "test-set",
    page(
        _PAGE_S_OWN_REQUEST,
        _UUID,
        reading="The page's own request spells the project id in "
        "upper case, so an upper-case UUID is a well-formed projectId: a page, never a 400.",
    ),
)
def upper_case_project_id_is_accepted(s: Scenario) -> None:
    """A project id in upper case is answered with a page, never refused as malformed."""
    project = s.project()
    s.page(project, project_id=project.project_id.upper(), limit=1)


@scenario_check(
    "test-set",
    inferred(
        "RFC 4122, not the page: a UUID's hex digits are case-insensitive on input, so both "
        "spellings name one project. "
        "The page accepts an upper-case id (its own request has one) but does not say it names "
        "the same project.",
        _PAGE_S_OWN_REQUEST,
        _UUID,
    ),
)
def project_id_is_case_insensitive(s: Scenario) -> None:
    """The upper- and lower-case spellings of a project id list the same cases (on a list seen to
    move, judged as lists_other_cases says)."""
    project = s.project()
    lower = s.page(project, project_id=project.project_id.lower(), limit=20)
    upper = s.page(project, project_id=project.project_id.upper(), limit=20)
    if not lower["data"]:
        raise Skip("the target project lists no active case, so there is nothing to compare")
    spelt = {"project_id": project.project_id.lower()}
    variant = {"project_id": project.project_id.upper()}
    if lists_other_cases(s, project, upper, lower, variant=variant, plain_params=spelt, limit=20):
        raise Violation(
            "the project id's letter case changed the list",
            expected=_ids(lower["data"])[:10],
            received=_ids(upper["data"])[:10],
        )
