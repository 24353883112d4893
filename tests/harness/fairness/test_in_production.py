"""The independent service as auditors' services run in production, one behaviour at a time: cases
retired while the audit runs, a targets count a day old, a gateway's one-off 502 or 504, cursors
kept in one server-side slot, a gateway that puts the caller's X-Request-Id on the answer, a cursor
refused when sent twice, a cache in front (per caller, or one that ignores the caller or drops
`include`), cursor keys that rotate, a gateway's own 401. What conforms passes at the default level
and with --strict, dated counts or not; each defect fails at its level, by the rule that catches
it, and passes without it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from starlette.middleware.gzip import GZipMiddleware

from evalmock.contract.targets import Targets
from evalmock.harness.checks import scenario_checks
from evalmock.harness.checks.policy import Policy
from evalmock.harness.results.audit_results import Results
from evalmock.harness.run.engine import run_audit
from evalmock.harness.run.options import Audit
from evalmock.harness.run.throttle import GATEWAY_WAIT
from shared import Waits

from ..serving import serving
from .conftest import Independent, fairness_targets
from .gateway import (
    BlipGateway,
    CacheHeadersGateway,
    CachingGateway,
    OwnAuthGateway,
    RequestIdGateway,
)
from .independent_service import Service
from .moving_list import COUNTED_AT, RETIRED_EARLY
from .service_data import MAIN_PROJECT
from .test_fairness import VARIATION_PHASES, assert_checked_both_apis, failures

WALK = "walk_yields_every_case_once"
GATEWAY_ERROR = "gateway_error_is_cleared_by_no_retry"
AT_ONCE = {"two_walks_at_once_each_reach_the_end", "two_callers_walking_at_once_each_reach_the_end"}


def audit_of(
    base_url: str,
    targets: Targets,
    *,
    phases: tuple[str, ...] = VARIATION_PHASES,
    policy: Policy | None = None,
    only: frozenset[str] | None = None,
    throttle: Any = None,
) -> Results:
    """An audit at `base_url` (Schemathesis's `phases`; none: without it), of both APIs unless
    `only` names the checks: then of the test-set API."""
    audit = Audit(
        base_url=base_url,
        apis=("test-set",) if only is not None else ("test-set", "gradient"),
        targets=targets,
        token=targets.token,
        second_token=targets.second_token,
        fuzz=bool(phases),
        phases=phases or VARIATION_PHASES,
        max_examples=3,
        policy=policy or Policy(),
        only=only,
    )
    return run_audit(audit, throttle=throttle) if throttle is not None else run_audit(audit)


def main_project_only(targets: Targets) -> Targets:
    return dataclasses.replace(
        targets, projects=tuple(p for p in targets.projects if p.project_id == MAIN_PROJECT)
    )


# -- counts that carry their date
# -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dated", [False, True], ids=["undated", "dated"])
@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
def test_cases_retired_while_schemathesis_runs_before_the_first_walk_conform(
    independent: Independent, strict: bool, dated: bool
) -> None:
    with independent.moving(("retired_early",)) as moving:
        results = audit_of(
            independent.base_url,
            independent.targets(dated=dated),
            policy=Policy(strict=strict),
        )
    assert moving.retired == RETIRED_EARLY
    assert results.conforms, failures(results)
    assert not results.warnings, [f.check.name for f in results.warnings]
    assert_checked_both_apis(results)
    walked = next(t for t in results.rows("test-set") if t.check.name == WALK)
    assert walked.passed and not walked.skipped
    said = " ".join(results.remarks())
    if dated:  # explained by the dates, or set aside as a list seen to move: never a failure
        assert "the cases' own dates explain it" in said or "moved" in said, said
    else:
        assert "it may be stale" in said or "moved during the audit" in said, said


@pytest.mark.parametrize("dated", [False, True], ids=["undated", "dated"])
@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
def test_a_count_a_day_old_with_cases_added_since_conforms(
    independent: Independent, strict: bool, dated: bool
) -> None:
    with independent.moving(("stale_counts",)) as moving:
        results = audit_of(
            independent.base_url,
            main_project_only(independent.targets(dated=dated)),
            phases=(),
            policy=Policy(strict=strict),
        )
    assert moving.arrived == 3 and moving.retired == 0  # the list stood still during the audit
    assert results.conforms and not results.warnings, failures(results)
    said = " ".join(results.remarks())
    if dated:
        assert "0 retired since, 3 added since; listed 103: as the dates say" in said, said
    else:
        assert "agree on 103 active cases; the targets' active_cases (100) was not compared" in said
        assert "active_cases_at" in said


def test_a_case_no_walk_lists_fails_a_dated_count_with_its_arithmetic(
    independent: Independent,
) -> None:
    with independent.moving((), ("loses_a_case",)):
        results = audit_of(
            independent.base_url,
            main_project_only(independent.targets(dated=True)),
            phases=(),
            only=frozenset({WALK}),
        )
    assert [f.check.name for f in results.failures] == [WALK], failures(results)
    [finding] = results.failures
    assert finding.check.level == "page"
    stamp = COUNTED_AT.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert (
        f"the walk did not list every active case: 100 active at {stamp}; 0 retired since, "
        "0 added since; listed 99: one missing"
    ) in finding.title


@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
def test_an_undated_count_walks_that_agree_disagree_with_is_no_finding(
    independent: Independent, strict: bool
) -> None:
    # the same lost case: every walk agrees, and the count says when it held nothing
    with independent.moving((), ("loses_a_case",)):
        results = audit_of(
            independent.base_url,
            main_project_only(independent.targets()),
            phases=(),
            only=frozenset({WALK}),
            policy=Policy(strict=strict),
        )
    assert results.conforms and not results.warnings, failures(results)
    [note] = [n for n in results.remarks() if "may be stale" in n]
    assert "agree on 99 active cases; the targets' active_cases (100) was not compared" in note


# -- two walks at once
# -------------------------------------------------------------------------------------------


def test_cursors_in_one_server_side_slot_fail_the_walks_at_once_only(
    independent: Independent,
) -> None:
    with independent.varied({"latest_cursor_only"}) as service:
        results = audit_of(independent.base_url, independent.targets(), phases=())
        assert service.met["latest_cursor_only"]
    assert {f.check.name for f in results.failures} == AT_ONCE, failures(results)
    assert all(f.check.level == "page" for f in results.failures)
    assert "was refused its page 2" in results.failures[0].title
    # without the walks at once, the slot passes every other check: they are what catch it
    others = frozenset(c.name for api in ("test-set", "gradient") for c in scenario_checks(api))
    with independent.varied({"latest_cursor_only"}):
        results = audit_of(
            independent.base_url,
            independent.targets(),
            phases=(),
            only=others - AT_ONCE,
        )
    assert results.conforms, failures(results)
    # the same cursor asked twice meets it too: the page's next cursor took the slot meanwhile
    assert {f.check.name for f in results.warnings} == {"same_cursor_twice_gets_a_page_twice"}


# -- gateways
# -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Behind:
    base_url: str
    gateway: Any


@pytest.fixture(scope="module")
def blips() -> Iterator[Behind]:
    gateway = BlipGateway(Service().app)
    with serving(gateway) as base_url:
        yield Behind(base_url, gateway)


@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
def test_a_gateway_s_one_off_502_or_504_is_named_and_its_request_judged_by_the_retry(
    blips: Behind, strict: bool
) -> None:
    gateway, waits = blips.gateway, Waits()
    gateway.persist, before = False, len(gateway.blips)
    results = audit_of(
        blips.base_url,
        fairness_targets(sealed_cursors=True),
        policy=Policy(strict=strict),
        throttle=waits.throttle(),
    )
    met = gateway.blips[before:]
    assert {502, 504} <= {status for status, _ in met}, "the gateway never blipped: proves nothing"
    assert any("/v2/" in path for _, path in met) and any("/v1/" in path for _, path in met)
    found = results.failures if strict else results.warnings
    # each asked again once, after the wait, but one that Schemathesis's ignored_auth sent from
    # inside itself, past every hook: that one is said not judged
    unhooked = sum(
        int(n.split(": ", 1)[1].split(" ", 1)[0])
        for n in results.remarks()
        if "(ignored_auth) sent from inside itself" in n
    )
    assert waits.asked.count(GATEWAY_WAIT) + unhooked == len(met)
    assert {f.check.name for f in found} == {GATEWAY_ERROR}, failures(results)
    assert (results.conforms, {f.check.name for f in results.failures}) == (
        (False, {GATEWAY_ERROR}) if strict else (True, set())
    )
    named = [f for f in found if f.check.name == GATEWAY_ERROR]
    assert sum(f.count for f in named) == len(met) - unhooked  # counted, named by its request
    assert all(f.check.level == "inferred" for f in named)
    assert "a gateway answered" in named[0].title
    assert_checked_both_apis(results)


def test_a_502_that_comes_again_is_the_api_s_answer(blips: Behind) -> None:
    gateway = blips.gateway
    gateway.persist, before = True, len(gateway.blips)
    try:
        results = audit_of(
            blips.base_url, fairness_targets(sealed_cursors=True), throttle=Waits().throttle()
        )
    finally:
        gateway.persist = False
    assert len(gateway.blips) > before
    assert not results.conforms
    found = {f.check.name for f in results.failures + results.warnings}
    assert GATEWAY_ERROR not in found, failures(results)
    assert found & {"status_code_conformance", "not_a_server_error", WALK}, failures(results)


def test_the_pre_flight_names_a_gateway_s_one_off_502_or_504_as_the_audit_does() -> None:
    """No scenario and no Schemathesis: only the pre-flight's requests (one a target project or
    test case), each met by a one-off 502 or 504, then asked again."""
    gateway, waits = BlipGateway(Service().app, every=1), Waits()
    targets = fairness_targets(sealed_cursors=True)
    with serving(gateway) as base_url:
        audit = Audit(
            base_url=base_url,
            targets=targets,
            token=targets.token,
            fuzz=False,
            only=frozenset(),
        )
        results = run_audit(audit, throttle=waits.throttle())
    asked = {"test-set": len(targets.projects), "gradient": len(targets.test_cases)}
    assert len(gateway.blips) == waits.asked.count(GATEWAY_WAIT) == sum(asked.values())
    assert not results.failures, failures(results)
    assert {f.check.name for f in results.warnings} == {GATEWAY_ERROR}
    # one finding a status (502, 504) and API, counting each request
    named = {api: sum(f.count for f in results.warnings if f.api == api) for api in asked}
    assert named == asked
    assert all(f.check.level == "inferred" for f in results.warnings)


@pytest.fixture(scope="module")
def request_ids() -> Iterator[Behind]:
    gateway = RequestIdGateway(Service().app)
    with serving(gateway) as base_url:
        yield Behind(base_url, gateway)


def test_a_gateway_that_puts_the_caller_s_request_id_on_the_answer_fails_at_page_level(
    request_ids: Behind,
) -> None:
    targets = fairness_targets(sealed_cursors=True)
    results = audit_of(request_ids.base_url, targets, phases=())
    assert request_ids.gateway.swapped
    assert {f.check.name for f in results.failures} == {"request_id_header_is_the_envelope_s"}, (
        failures(results)
    )
    assert all(f.check.level == "page" for f in results.failures)
    # the header is the caller's id
    assert "evalmock-audit-" in results.failures[0].examples[0].message
    # the errors of requests that carry no id of the audit's own pass: those ids are what catch it
    results = audit_of(
        request_ids.base_url,
        targets,
        phases=(),
        only=frozenset({"made_up_token_is_refused", "expired_and_revoked_tokens_are_401"}),
    )
    assert results.conforms, failures(results)
    assert any(t.passed for t in results.rows() if t.check.name.startswith("request_id_header"))


@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
def test_gzip_and_a_cdn_s_headers_on_every_answer_conform(strict: bool) -> None:
    # verified before this suite held it: answers compressed, Via, X-Cache, Age, Connection: close
    gateway = CacheHeadersGateway(GZipMiddleware(Service().app, minimum_size=0))
    with serving(gateway) as base_url:
        results = audit_of(
            base_url, fairness_targets(sealed_cursors=True), policy=Policy(strict=strict)
        )
    assert gateway.answers > 100
    assert results.conforms and not results.warnings, failures(results)
    assert_checked_both_apis(results)


# -- caches, rotated keys, a gateway's own 401
# -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
def test_a_per_caller_cache_with_etags_conforms(strict: bool) -> None:
    gateway = CachingGateway(Service().app, key="caller")
    with serving(gateway) as base_url:
        results = audit_of(
            base_url, fairness_targets(sealed_cursors=True), policy=Policy(strict=strict)
        )
    assert gateway.hits > 10, "the cache served nothing again: proves nothing"
    assert results.conforms and not results.warnings, failures(results)
    assert_checked_both_apis(results)


# What an audit fails each cache defect by: a page of the audit's caller served to a caller the
# page refuses (an expired, revoked or made-up token; one without read) or to the second caller
# with the first's cursor; the first page without retired cases served for include=retired.
CACHE_DEFECTS = {
    "url": {
        "expired_and_revoked_tokens_are_401",
        "made_up_token_is_refused",
        "caller_without_read_gets_no_cases",
        "cursor_is_bound_to_the_caller",
    },
    "caller_without_include": {"include_retired_adds_the_retired_cases"},
}


@pytest.mark.parametrize("key", sorted(CACHE_DEFECTS))
def test_a_cache_whose_key_leaves_out_what_the_page_binds_fails_at_page_level(key: str) -> None:
    gateway = CachingGateway(Service().app, key=key)
    with serving(gateway) as base_url:
        results = audit_of(base_url, fairness_targets(sealed_cursors=True), phases=())
    assert gateway.hits
    assert CACHE_DEFECTS[key] <= {f.check.name for f in results.failures}, failures(results)
    assert all(f.check.level == "page" for f in results.failures), failures(results)


@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
def test_cursor_keys_that_rotate_with_their_id_in_the_cursor_conform(
    independent: Independent, strict: bool
) -> None:
    with independent.varied({"rotating_cursor_keys"}) as service:
        results = audit_of(
            independent.base_url, independent.targets(), policy=Policy(strict=strict)
        )
        assert service.met["rotating_cursor_keys"], "no cursor outlived its key: proves nothing"
    assert results.conforms and not results.warnings, failures(results)
    assert_checked_both_apis(results)


def test_keys_rotated_so_a_fresh_cursor_is_refused_fail_the_walks_at_page_level(
    independent: Independent,
) -> None:
    with independent.varied({"rotation_refuses_older_cursors"}) as service:
        results = audit_of(independent.base_url, independent.targets(), phases=())
        assert service.met["rotation_refuses_older_cursors"]
    names = {f.check.name for f in results.failures}
    assert WALK in names, failures(results)
    assert all(f.check.level == "page" for f in results.failures), failures(results)
    # a refused cursor is no empty page: the emptiness rule files nothing for it
    assert not results.warnings, [f"{f.check.name}: {f.title}" for f in results.warnings]


def test_a_gateway_s_own_401_without_the_envelope_fails_at_page_level() -> None:
    gateway = OwnAuthGateway(Service().app)
    with serving(gateway) as base_url:
        results = audit_of(base_url, fairness_targets(sealed_cursors=True), phases=())
    assert gateway.refused
    failed = {(f.api, f.check.name) for f in results.failures}
    assert ("test-set", "response_schema_conformance") in failed, failures(results)
    # DigitalOcean's page states no 401 at all: its bare 401 is no finding of that API
    assert all(f.api == "test-set" for f in results.failures), failures(results)
    assert all(f.check.level == "page" for f in results.failures), failures(results)
