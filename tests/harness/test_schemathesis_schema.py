"""How Schemathesis is driven and judged: which checks run under which policy, the statuses the
pages allow, which rule (at which level) each of its outcomes counts for, and where Hypothesis keeps
its files."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis.configuration import set_hypothesis_home_dir, storage_directory

from evalmock.contract.sources import Level
from evalmock.contract.statuses import statuses
from evalmock.contract.targets import ProjectTarget, Targets
from evalmock.harness.checks import find_check
from evalmock.harness.checks.attribution import attribute
from evalmock.harness.checks.builtins import LIVE_SPEC
from evalmock.harness.checks.open_answers import OPEN_STATUSES, broken_parameters, refusal_left_open
from evalmock.harness.checks.policy import LIVE_PROFILE, Policy
from evalmock.harness.run.schemathesis_schema import config_dict, place_hypothesis_files
from evalmock.paths import CACHE_ENV

PAGES, LIVE = Policy(), Policy(profile=LIVE_PROFILE)
PROJECT = "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0"


def enabled(api: str, policy: Policy) -> dict[str, dict]:
    checks = config_dict(api, policy, seed=42, max_examples=5)["checks"]
    assert checks["enabled"] is False  # everything not named is off
    return {name: value for name, value in checks.items() if isinstance(value, dict)}


LISTED = Targets(
    projects=(ProjectTarget("acme.drafting", PROJECT),), expired_token="old", sealed_cursors=True
)
AGENT = {"agentId": "acme.drafting"}
# Statuses the pages leave open for a request, those the documents do not list (a 403 for a caller
# without read, until a page documents it).
UNDOCUMENTED = [s for s in (403, 405, 413, 429) if s not in statuses("test-set", live=True)]


def test_a_valid_request_for_a_listed_project_without_a_cursor_must_get_its_page() -> None:
    accepted = set(enabled("test-set", PAGES)["positive_data_acceptance"]["expected-statuses"])
    # its page, or an error status the page documents other than a refusal (400, 404)
    assert {"2xx", "401", "503"} <= accepted
    assert accepted - {"2xx"} <= {str(s) for s in statuses("test-set")} - {"400", "404"}
    for status in (400, 404):
        assert not refusal_left_open(
            "test-set",
            status,
            {"projectId": PROJECT.upper(), "kind": "hand,correction"},
            AGENT,
            LISTED,
        )


def test_a_400_for_a_cursor_and_a_404_for_an_unlisted_project_are_left_open() -> None:
    assert refusal_left_open(
        "test-set", 400, {"projectId": PROJECT, "cursor": "made-up"}, AGENT, LISTED
    )
    other = "00000000-0000-4000-8000-000000000001"
    assert refusal_left_open("test-set", 404, {"projectId": other}, AGENT, LISTED)
    assert refusal_left_open("test-set", 404, {"projectId": PROJECT}, {"agentId": "nobody"}, LISTED)
    # nothing listed
    assert refusal_left_open("test-set", 400, {"projectId": PROJECT}, AGENT, Targets())


@pytest.mark.parametrize("status", [403, 405, 409, 418, 500])
def test_an_undocumented_status_breaks_the_page_where_it_names_the_answer(status: int) -> None:
    valid = {"projectId": PROJECT}
    bearer = {"authorization": "Bearer someone"}
    named = [
        (valid, {}),  # no token: 401
        (valid, {"authorization": "Basic ZGVtbzpkZW1v"}),  # not a bearer token: 401
        (valid, {"authorization": "Bearer old"}),  # expired, as the targets say: 401
        ({"projectId": "nope"}, bearer),  # malformed projectId: 400
        ({"projectId": PROJECT, "kind": "hand,"}, bearer),  # kind outside its pattern: 400
        # a cursor to a sealing runtime: a page or 400
        (
            {"projectId": PROJECT, "cursor": "abc"},
            bearer,
        ),
    ]
    for query, headers in named:
        check = attribute(
            "test-set",
            "status_code_conformance",
            status=status,
            query=query,
            headers=headers,
            targets=LISTED,
        )
        assert (
            check is find_check("status_code_conformance", "test-set") and check.level is Level.PAGE
        ), query


@pytest.mark.parametrize("status", UNDOCUMENTED)
def test_an_undocumented_status_the_pages_leave_open_is_not_judged(status: int) -> None:
    bearer = {"authorization": "Bearer someone"}
    open_requests = [
        ("GET", {"projectId": PROJECT}, bearer),  # a caller who may lack read
        ("GET", {"projectId": PROJECT, "include": ""}, bearer),  # an empty include=: open
        # a cursor, to a runtime that does not seal
        (
            "GET",
            {"projectId": PROJECT, "cursor": "abc"},
            bearer,
        ),
        ("POST", {"projectId": PROJECT}, {}),  # another method than the documented GET
    ]
    for method, query, headers in open_requests:
        targets = Targets(sealed_cursors=False)
        assert (
            attribute(
                "test-set",
                "status_code_conformance",
                status=status,
                query=query,
                method=method,
                headers=headers,
                targets=targets,
            )
            is None
        ), (method, query)
    if status in OPEN_STATUSES:  # answered before the request is read: open whatever it is
        assert (
            attribute(
                "test-set",
                "status_code_conformance",
                status=status,
                query={"projectId": "nope"},
                headers={},
                targets=LISTED,
            )
            is None
        )


def test_an_empty_include_or_kind_is_not_judged_by_negative_data_rejection() -> None:
    for name in ("include", "kind"):
        assert (
            attribute(
                "test-set",
                "negative_data_rejection",
                status=200,
                query={"projectId": PROJECT, name: ""},
            )
            is None
        )
    check = attribute(
        "test-set", "negative_data_rejection", status=200, query={"projectId": "x", "include": ""}
    )
    # projectId is still malformed
    assert check is find_check("negative_data_rejection", "test-set")


def test_negative_data_must_get_what_the_pages_say() -> None:
    assert enabled("test-set", PAGES)["negative_data_rejection"]["expected-statuses"] == [
        "400",
        "401",
    ]
    assert enabled("gradient", PAGES)["negative_data_rejection"]["expected-statuses"] == ["4xx"]


def test_the_documented_503_is_not_a_server_error_on_the_test_set_api() -> None:
    assert "503" in enabled("test-set", PAGES)["not_a_server_error"]["expected-statuses"]


def test_made_up_tokens_are_probed_on_the_test_set_api() -> None:
    assert "ignored_auth" in enabled("test-set", PAGES)


def test_live_rules_run_only_in_the_live_profile() -> None:
    for name in ("ignored_auth", "positive_data_acceptance", "response_headers_conformance"):
        assert name not in enabled("gradient", PAGES)
        assert name in enabled("gradient", LIVE)


def test_checks_with_nothing_to_act_on_do_not_run() -> None:
    for api in ("test-set", "gradient"):
        for policy in (PAGES, LIVE):
            assert not {
                "use_after_free",
                "ensure_resource_availability",
                "object_level_authorization",
                "missing_required_header",
            } & set(enabled(api, policy))


@pytest.mark.parametrize("policy", [PAGES, LIVE])
def test_the_configuration_is_valid_for_schemathesis(policy: Policy) -> None:
    for api in ("test-set", "gradient"):
        schemathesis.Config.from_dict(
            config_dict(api, policy, seed=1, max_examples=3, phases=("examples",))
        )


def test_a_negative_request_breaking_a_page_parameter_counts_for_the_page_rule() -> None:
    check = attribute(
        "test-set", "negative_data_rejection", status=200, query={"projectId": "nope"}
    )
    assert check is find_check("negative_data_rejection", "test-set") and check.level is Level.PAGE
    missing = attribute("test-set", "negative_data_rejection", status=200, query={"limit": 5})
    assert missing is check  # projectId left out


def test_a_negative_request_breaking_only_limit_counts_for_the_inferred_limit_rule() -> None:
    check = attribute(
        "test-set", "negative_data_rejection", status=200, query={"projectId": PROJECT, "limit": 0}
    )
    assert check is not None and check.name == "limit_outside_its_bounds_is_bad_input"
    assert check.level is Level.INFERRED


def test_a_negative_request_breaking_no_stated_rule_is_not_judged() -> None:
    unknown = {"projectId": PROJECT, "x-schemathesis-unknown-property": "1"}
    assert attribute("test-set", "negative_data_rejection", status=200, query=unknown) is None
    repeated = {"projectId": [PROJECT, PROJECT]}
    assert attribute("test-set", "negative_data_rejection", status=200, query=repeated) is None


def test_digitaloceans_error_bodies_and_headers_count_for_the_live_spec() -> None:
    for name in ("response_schema_conformance", "content_type_conformance"):
        assert attribute("gradient", name, status=404, query={}) is LIVE_SPEC
        assert attribute("gradient", name, status=200, query={}) is find_check(name, "gradient")
    assert attribute("gradient", "response_headers_conformance", status=200, query={}) is LIVE_SPEC


def test_broken_parameters_reads_values_as_sent() -> None:
    assert broken_parameters(
        "test-set", {"projectId": PROJECT, "limit": "ten", "kind": "hand,"}
    ) == {"limit", "kind"}
    assert (
        broken_parameters(
            "test-set", {"projectId": PROJECT.upper(), "limit": "100", "include": "retired"}
        )
        == set()
    )
    assert broken_parameters("gradient", {"evaluation_test_case_version": "2.5"}) == {
        "evaluation_test_case_version"
    }


def test_a_value_judged_before_is_judged_alike_and_true_is_not_taken_for_one() -> None:
    # Each value's verdict is remembered: a boolean must not be answered with the verdict of the
    # equal integer.
    for _ in range(2):
        assert broken_parameters("test-set", {"projectId": PROJECT, "limit": 1}) == set()
        assert broken_parameters("test-set", {"projectId": PROJECT, "limit": True}) == {"limit"}
        assert broken_parameters("test-set", {"projectId": PROJECT, "limit": [10, "ten"]}) == {
            "limit"
        }
        assert broken_parameters("test-set", {"projectId": PROJECT, "limit": {"a": 1}}) == {"limit"}


@pytest.fixture
def hypothesis_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    yield
    set_hypothesis_home_dir(None)  # back to Hypothesis's own choice for the rest of the session


def test_hypothesis_files_go_to_evalmock_s_cache_folder(
    hypothesis_home: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    assert place_hypothesis_files() == tmp_path / "cache" / "hypothesis"
    assert (
        storage_directory("unicode_data").path == tmp_path / "cache" / "hypothesis" / "unicode_data"
    )


def test_with_keeping_off_hypothesis_files_go_to_a_temporary_folder(
    hypothesis_home: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, "off")
    folder = place_hypothesis_files()
    assert folder is not None and folder.is_dir()
    assert folder.is_relative_to(tempfile.gettempdir()) and not folder.is_relative_to(Path.cwd())


def test_a_cache_folder_that_cannot_be_written_sends_hypothesis_files_to_a_temporary_folder(
    hypothesis_home: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As in the image, whose cache is read-only to its user (here a file stands where the folder
    # would go).
    (tmp_path / "cache").write_text("not a folder")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    folder = place_hypothesis_files()
    assert folder is not None and folder.is_dir() and folder.is_relative_to(tempfile.gettempdir())


def test_hypothesis_s_own_storage_variable_wins(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp_path / "theirs"))
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    assert place_hypothesis_files() is None


def test_a_501_to_a_method_other_than_get_and_head_is_http_s_answer_not_a_breach() -> None:
    for name in ("unsupported_method", "not_a_server_error"):
        for method in ("QUERY", "POST", "TRACE"):
            assert attribute("test-set", name, status=501, query={}, method=method) is None
        # HEAD is GET's
        assert attribute("test-set", name, status=501, query={}, method="HEAD") is not None
        assert attribute("gradient", name, status=501, query={}, method="GET") is not None
    assert (
        attribute("test-set", "unsupported_method", status=500, query={}, method="QUERY")
        is not None
    )
