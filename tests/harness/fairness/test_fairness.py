"""The fairness suite, twin of the mutation suite: an independent implementation that follows the
two pages passes the default audit, with each variation the pages allow on its own and with all of
them together; --strict and --profile digitalocean-live add exactly their rules."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import httpx
import pytest

from evalmock.harness.checks.policy import LIVE_PROFILE, Policy
from evalmock.harness.results.audit_results import Results
from evalmock.harness.run.engine import run_audit
from evalmock.harness.run.options import Audit
from evalmock.harness.run.schemathesis_schema import PHASES

from .conftest import NO_READ_TOKEN, SECOND_TOKEN, TOKEN, Independent
from .independent_service import DEFECTS, VARIATIONS
from .service_data import CASES, DRAFTING, MAIN_PROJECT, PROJECTS, SEARCH_PROJECT, TEST_CASES

# Schemathesis's deterministic phase: other methods, boundary and near-miss values, repeated
# parameters.
VARIATION_PHASES = ("coverage",)
# Variations no request of today's audit meets (none sends a bad token, or an unknown agent,
# together with a bad parameter): their tests show only that everything else still conforms; the
# probe test shows they work.
UNMET = {"validate_before_auth", "agent_before_validation"}
# Variations only the live profile meets: the default audit never asks what only DigitalOcean's
# service answers (a test case without a version, a malformed id).
MET_ONLY_LIVE = {"do_400_malformed_id", "do_first_version_by_default"}
AUTH = {"Authorization": f"Bearer {TOKEN}"}
LIST = f"/v1/agents/{DRAFTING}/test-set/cases"
POINTER = re.compile(r"(/([^~/]|~[01])*)*")  # RFC 6901
UINT64 = re.compile(r"[0-9]{1,20}")


# Variations that break a rule the pages only imply: a warning by default, a failure with --strict.
INFERRED = {
    "clamped_limit": {"limit_outside_its_bounds_is_bad_input"},
    "cursor_on_last_page": {"last_page_has_no_next_cursor"},
    "lazy_has_more": {"page_after_has_more_is_not_empty"},
    "do_ignores_a_malformed_version": {"version_that_is_no_integer_is_400"},
    "do_unlisted_metric_category": {"metric_enum_values_are_listed"},
    "single_use_cursors": {"same_cursor_twice_gets_a_page_twice"},
}
# Each defect, and the rules an audit fails it by (at the default level).
FAILS = {
    "cursor_not_bound_to_the_agent": {"cursor_is_bound_to_the_agent"},
    # every walk that outlives a key fails; which ones those are, the order of requests says
    "rotation_refuses_older_cursors": {
        "walk_yields_every_case_once",
        "two_walks_at_once_each_reach_the_end",
    },
    "latest_cursor_only": {
        "two_walks_at_once_each_reach_the_end",
        "two_callers_walking_at_once_each_reach_the_end",
    },
}
# Variations that differ from DigitalOcean's live service: failures only in the live profile.
LIVE = {
    "do_400_malformed_id": {"unknown_test_case_is_404"},
    "do_problem_json_errors": {"conforms_to_digitalocean_s_spec"},
    "do_bare_401": {"conforms_to_digitalocean_s_spec"},
    "do_first_version_by_default": {"no_version_is_the_latest"},
}


def audit(
    independent: Independent,
    *,
    phases: tuple[str, ...] = (),
    max_examples: int = 3,
    policy: Policy | None = None,
) -> Results:
    """An audit of both APIs (the default policy unless told): scenario and per-response checks,
    then Schemathesis's `phases`."""
    targets = independent.targets()
    return run_audit(
        Audit(
            base_url=independent.base_url,
            targets=targets,
            token=targets.token,
            second_token=targets.second_token,
            fuzz=bool(phases),
            phases=phases or PHASES,
            max_examples=max_examples,
            policy=policy or Policy(),
        )
    )


def failures(results: Results) -> list[str]:
    return [f"{f.api} {f.check.name} [{f.check.kind}]: {f.title}" for f in results.failures]


def assert_checked_both_apis(results: Results) -> None:
    """Not a pass by having checked nothing: scenario and per-response checks passed on both
    APIs."""
    passed = {(t.check.api, t.check.kind) for t in results.rows() if t.passed}
    for api in ("test-set", "gradient"):
        assert {(api, "scenario"), (api, "response")} <= passed, (
            f"nothing of {api} was checked: {passed}"
        )


@pytest.mark.parametrize("variation", sorted(VARIATIONS))
def test_the_default_audit_passes_the_variation(independent: Independent, variation: str) -> None:
    with independent.varied({variation}) as service:
        results = audit(independent, phases=VARIATION_PHASES)
        met = service.met[variation]
    assert results.conforms, f"{variation} ({VARIATIONS[variation]}) failed: {failures(results)}"
    assert {f.check.name for f in results.warnings} == INFERRED.get(variation, set())
    assert_checked_both_apis(results)
    if variation not in UNMET | MET_ONLY_LIVE:
        assert met, f"the audit never met {variation}, so its verdict says nothing about it"


@pytest.mark.parametrize("variation", sorted(INFERRED))
def test_strict_fails_exactly_the_inferred_rule_a_variation_breaks(
    independent: Independent, variation: str
) -> None:
    with independent.varied({variation}):
        results = audit(independent, phases=VARIATION_PHASES, policy=Policy(strict=True))
    assert {f.check.name for f in results.failures} == INFERRED[variation], failures(results)


def test_strict_does_not_fail_http_s_501_to_a_method_the_service_does_not_implement(
    independent: Independent,
) -> None:
    with independent.varied({"not_implemented_501"}) as service:
        results = audit(independent, phases=VARIATION_PHASES, policy=Policy(strict=True))
        assert service.met["not_implemented_501"]
    assert results.conforms, failures(results)


@pytest.mark.parametrize("variation", sorted(LIVE))
def test_the_live_profile_fails_exactly_the_live_rule_a_variation_breaks(
    independent: Independent, variation: str
) -> None:
    with independent.varied({variation}) as service:
        results = audit(independent, phases=VARIATION_PHASES, policy=Policy(profile=LIVE_PROFILE))
        assert service.met[variation]
    assert {f.check.name for f in results.failures} == LIVE[variation], failures(results)


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_the_default_audit_fails_a_defect_by_its_rule(
    independent: Independent, defect: str
) -> None:
    assert FAILS.keys() == DEFECTS.keys()
    with independent.varied({defect}) as service:
        results = audit(independent)
        assert service.met[defect], f"the audit never met {defect}"
    assert {f.check.name for f in results.failures} == FAILS[defect], failures(results)


@pytest.mark.parametrize(
    "policy",
    [
        Policy(),
        Policy(strict=True),
        Policy(profile=LIVE_PROFILE),
        Policy(strict=True, profile=LIVE_PROFILE),
    ],
    ids=["default", "strict", "live", "strict-live"],
)
def test_a_version_below_1_answered_with_the_latest_conforms_at_every_level(
    independent: Independent, policy: Policy
) -> None:
    with independent.varied({"do_below_1_is_the_latest"}) as service:
        results = audit(independent, phases=VARIATION_PHASES, policy=policy)
        assert service.met["do_below_1_is_the_latest"], "the audit sent no version below 1"
    assert results.conforms and not results.warnings, failures(results)


def test_the_plain_service_passes_the_default_audit(independent: Independent) -> None:
    """The control: without variations, the service conforms, so each failure above is its
    variation's."""
    results = audit(independent, phases=PHASES)
    assert results.conforms, failures(results)
    assert_checked_both_apis(results)


def test_the_default_audit_passes_all_variations_together(independent: Independent) -> None:
    with independent.varied(VARIATIONS):
        results = audit(independent, phases=PHASES, max_examples=5)
    assert results.conforms, failures(results)
    assert {f.check.name for f in results.warnings} <= set().union(*INFERRED.values())
    assert_checked_both_apis(results)


# -- the independent service follows the pages
# -----------------------------------------------------------
def get(
    client: httpx.Client, path: str, params: dict[str, Any] | None = None, **headers: str
) -> httpx.Response:
    """GET, trying again when the page's 503 database-busy says so (at most three times)."""
    for _ in range(3):
        response = client.get(path, params=params, headers={**AUTH, **headers})
        if response.status_code != 503:
            return response
        time.sleep(int(response.headers["retry-after"]))
    return response


def walk(client: httpx.Client, project: str, **params: Any) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    cursor = None
    for _ in range(200):
        page = get(
            client, LIST, {"projectId": project, **params, **({"cursor": cursor} if cursor else {})}
        )
        assert page.status_code == 200, page.text
        body = page.json()
        cases += body["data"]
        cursor = body.get("nextCursor")
        if not body["hasMore"]:
            return cases
    raise AssertionError("the walk did not end")


def instant(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    assert moment.tzinfo is not None, text
    return moment


def assert_case_follows_the_page(case: dict[str, Any]) -> None:
    assert case["kind"] in ("correction", "hand")
    if case["kind"] == "hand":
        assert case["id"].startswith("case-")
    assert case["projectId"].lower() in {project for _, project in PROJECTS}
    if "retired" not in case:
        assert instant(case["updatedAt"]) == instant(case["addedAt"])
    else:
        assert (
            instant(case["updatedAt"]) >= instant(case["retired"]["at"]) >= instant(case["addedAt"])
        )
    expect = case["expect"]
    assert {"decisions", "answer", "items"} & expect.keys()
    for call in expect.get("decisions", {}).get("shouldCall", []):
        assert 1 <= len(call["tool"]) <= 200
        assert len(call["args"]) <= 100
        assert len(json.dumps(call["args"], sort_keys=True, separators=(",", ":"))) <= 4000
    items = expect.get("items", [])
    ranks = [item["rank"] for item in items if "rank" in item]
    assert all(isinstance(rank, int) and rank >= 0 for rank in ranks) and len(set(ranks)) == len(
        ranks
    )
    for item in items:
        assert item["key"] and item["verdict"] in ("right", "wrong")
        assert POINTER.fullmatch(item.get("pointer", "")), item
    assert case.get("expert", True) is True


def assert_envelope(response: httpx.Response, status: int, code: str | None) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert code is None or error["code"] == code
    assert isinstance(error["message"], str) and isinstance(error.get("details", {}), dict)
    assert error["requestId"] and error["requestId"] == response.headers["x-request-id"]


@pytest.mark.parametrize("variations", [(), tuple(VARIATIONS)], ids=["plain", "all-variations"])
def test_the_independent_service_follows_the_test_set_page(
    independent: Independent, variations: Iterable[str]
) -> None:
    with independent.varied(variations), httpx.Client(base_url=independent.base_url) as client:
        active = [c for c in CASES if c.project == MAIN_PROJECT and c.retired is None]
        for limit in (7, 25, 100):
            cases = walk(client, MAIN_PROJECT, limit=limit)
            assert len({c["id"] for c in cases}) == len(cases) == len(active)  # each case once
            added = [instant(c["addedAt"]) for c in cases]
            assert added == sorted(added, reverse=True)  # "newest added first"
            assert not any("retired" in c for c in cases)
        everything = walk(client, MAIN_PROJECT, include="retired", limit=50)
        assert {c["id"] for c in cases} < {c["id"] for c in everything}
        assert any("retired" in c for c in everything)
        for case in everything:
            assert_case_follows_the_page(case)
        # any letter case of a UUID
        hand = walk(client, MAIN_PROJECT.upper(), kind="hand", limit=100)
        assert hand and {c["kind"] for c in hand} == {"hand"}
        # "Absent from older servers"; else on every hand case
        if any("expert" in c for c in everything):
            assert all(c.get("expert") is True for c in everything if c["kind"] == "hand")
        foreign = get(client, LIST, {"projectId": SEARCH_PROJECT})  # another agent's project: open
        if "foreign_project_404" in variations:
            assert_envelope(foreign, 404, "agent-not-found")
        else:
            assert foreign.json()["data"] == [] and foreign.json()["hasMore"] is False
        for params in (
            {},
            {"projectId": "not-a-uuid"},
            {"projectId": MAIN_PROJECT, "include": "RETIRED"},
            {"projectId": MAIN_PROJECT, "kind": "correction,"},
            {"projectId": MAIN_PROJECT, "cursor": "not-a-cursor"},
        ):
            assert_envelope(get(client, LIST, params), 400, "bad-input")
        for authorization in (
            "",
            "Basic ZGVtbzpkZW1v",
            "Bearer made-up",
            "Bearer fair-expired",
            "Bearer fair-revoked",
        ):
            assert_envelope(
                get(client, LIST, {"projectId": MAIN_PROJECT}, Authorization=authorization),
                401,
                None,
            )
        assert_envelope(
            get(client, "/v1/agents/nobody/test-set/cases", {"projectId": MAIN_PROJECT}),
            404,
            "agent-not-found",
        )
        second = get(
            client,
            LIST,
            {"projectId": MAIN_PROJECT, "limit": 1},
            Authorization=f"Bearer {SECOND_TOKEN}",
        )
        assert second.status_code == 200  # the second caller reads the project too
        no_read = get(
            client, LIST, {"projectId": MAIN_PROJECT}, Authorization=f"Bearer {NO_READ_TOKEN}"
        )
        # "Needs read on the project."
        assert 400 <= no_read.status_code < 500 and "data" not in no_read.json()
        for empty in ({"include": ""}, {"kind": ""}):  # open: read as left out, or refused with 400
            answer = get(client, LIST, {"projectId": MAIN_PROJECT, **empty})
            if "empty_params_left_out" in variations:
                assert (
                    answer.json()["data"]
                    == get(client, LIST, {"projectId": MAIN_PROJECT}).json()["data"]
                )
            else:
                assert_envelope(answer, 400, "bad-input")


@pytest.mark.parametrize("variations", [(), tuple(VARIATIONS)], ids=["plain", "all-variations"])
def test_the_independent_service_follows_the_digitalocean_page(
    independent: Independent, variations: Iterable[str]
) -> None:
    with independent.varied(variations), httpx.Client(base_url=independent.base_url) as client:
        for uuid, versions in TEST_CASES.items():
            for version in versions:
                response = get(
                    client,
                    f"/v2/gen-ai/evaluation_test_cases/{uuid}",
                    {"evaluation_test_case_version": version},
                )
                assert response.status_code == 200, response.text
                test_case = response.json()["evaluation_test_case"]
                assert test_case["version"] == version and test_case["test_case_uuid"] == uuid
                for value in (
                    test_case.get("created_by_user_id"),
                    test_case.get("updated_by_user_id"),
                    test_case.get("dataset", {}).get("file_size"),
                ):
                    assert value is None or (isinstance(value, str) and UINT64.fullmatch(value))
                for metric in test_case.get("metrics", []):
                    assert metric["category"].startswith("METRIC_CATEGORY_")
                    assert metric["metric_type"].startswith("METRIC_TYPE_")
                    assert metric["metric_value_type"].startswith("METRIC_VALUE_TYPE_")
                for stamp in ("created_at", "updated_at", "archived_at"):
                    assert stamp not in test_case or instant(test_case[stamp])


PROBES: list[tuple[str, str, dict[str, Any], dict[str, str]]] = [
    # method, path, query, headers: with a walk of the main project, they meet every variation
    ("GET", LIST, {"projectId": MAIN_PROJECT, "limit": 500}, AUTH),
    ("GET", LIST, {"projectId": MAIN_PROJECT, "limit": 0}, {}),  # a bad parameter and no token
    # an unknown agent, a bad parameter
    (
        "GET",
        "/v1/agents/nobody/test-set/cases",
        {"projectId": "x"},
        AUTH,
    ),
    ("GET", LIST, {"projectId": MAIN_PROJECT, "limt": 5}, AUTH),
    ("GET", f"{LIST}?projectId={MAIN_PROJECT}&limit=3&limit=4", {}, AUTH),
    ("GET", LIST, {"projectId": SEARCH_PROJECT}, AUTH),
    ("GET", LIST, {"projectId": MAIN_PROJECT}, {"Authorization": f"Bearer {NO_READ_TOKEN}"}),
    ("GET", LIST, {"projectId": MAIN_PROJECT, "include": "", "kind": ""}, AUTH),
    ("GET", LIST, {"projectId": MAIN_PROJECT}, {"Authorization": "Bearer made-up"}),
    ("POST", LIST, {"projectId": MAIN_PROJECT}, AUTH),
    ("GET", "/v2/gen-ai/evaluation_test_cases/5f0c8a0e-3a51-4c7e-9d7b-2f1e0c9a6b11", {}, AUTH),
    ("GET", "/v2/gen-ai/evaluation_test_cases/not-a-uuid", {}, AUTH),
    (
        "GET",
        "/v2/gen-ai/evaluation_test_cases/5f0c8a0e-3a51-4c7e-9d7b-2f1e0c9a6b11",
        {"evaluation_test_case_version": "x"},
        AUTH,
    ),
    (
        "GET",
        "/v2/gen-ai/evaluation_test_cases/5f0c8a0e-3a51-4c7e-9d7b-2f1e0c9a6b11",
        {"evaluation_test_case_version": 0},
        AUTH,
    ),
    ("GET", "/v2/gen-ai/evaluation_test_cases/5f0c8a0e-3a51-4c7e-9d7b-2f1e0c9a6b11", {}, {}),
]


@pytest.mark.parametrize("variation", sorted(VARIATIONS))
def test_each_variation_changes_an_answer(independent: Independent, variation: str) -> None:
    """So that an audit passing a variation passes something real, and none of them is dead code."""
    with (
        independent.varied({variation}) as service,
        httpx.Client(base_url=independent.base_url) as client,
    ):
        # twenty pages and a last one: cursors, page ends, busy answers
        walk(client, MAIN_PROJECT, limit=5)
        # a page asked twice with its cursor, as a client retrying after a network error
        cursor = get(client, LIST, {"projectId": MAIN_PROJECT, "limit": 5}).json()["nextCursor"]
        for _ in range(2):
            get(client, LIST, {"projectId": MAIN_PROJECT, "limit": 5, "cursor": cursor})
        for method, path, query, headers in PROBES:
            client.request(method, path, params=query or None, headers=headers)
        assert service.met[variation], f"no probe met {variation}"
