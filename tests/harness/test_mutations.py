"""The mutation suite: each realistic defect planted in our own server makes the harness fail, and
the check that is meant to catch it is among the failures, at its level
(docs/maintainers/mutations.md maps each defect to its check).

A defect that breaks only an inferred rule is a warning by default and a failure with --strict; one
that breaks a live rule is caught only in the live profile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalmock.contract.sources import Level
from evalmock.harness.checks import CHECKS, find_check
from evalmock.harness.checks.policy import LIVE_PROFILE, Policy
from evalmock.harness.results.audit_results import Results
from evalmock.harness.run.engine import run_audit
from evalmock.harness.run.options import Audit
from revised_documents import run_under, with_a_run_id_filter

from .conftest import MutableServer
from .mutants import MUTATIONS, Mutation

EVERYTHING = Policy(strict=True, profile=LIVE_PROFILE)


def lean_audit(
    server: MutableServer, api: str, scenarios: set[str] | tuple[str, ...], policy: Policy
) -> Results:
    """Only the named scenario checks (each response they get still goes through every response
    check)."""
    audit = Audit(
        base_url=server.base_url,
        targets=server.targets,
        apis=(api,),
        token=server.targets.token,
        second_token=server.targets.second_token,
        fuzz=False,
        only=frozenset(scenarios),
        policy=policy,
    )
    return run_audit(audit)


def test_every_mutation_names_registered_checks_at_the_policy_its_level_needs() -> None:
    for mutation in MUTATIONS:
        check = find_check(mutation.caught_by, mutation.api)
        assert mutation.policy.strict == (check.level is Level.INFERRED), mutation.name
        assert mutation.policy.live == (check.level is Level.LIVE), mutation.name
        for name in mutation.scenarios:
            assert find_check(name, mutation.api).kind == "scenario"
    assert len(MUTATIONS) >= 35
    assert len({m.name for m in MUTATIONS}) == len(MUTATIONS)


@pytest.mark.parametrize(
    "policy", [Policy(strict=True), EVERYTHING], ids=["strict", "strict-and-live"]
)
@pytest.mark.parametrize("api", ["test-set", "gradient"])
def test_the_unmutated_server_passes_the_lean_audits_even_strict_and_live(
    mutable_server: MutableServer, api: str, policy: Policy
) -> None:
    scenarios = {name for m in MUTATIONS if m.api == api for name in m.scenarios}
    results = lean_audit(mutable_server, api, scenarios, policy)
    assert results.conforms, [
        f"{f.check.name}: {f.title}" for f in results.failures + results.warnings
    ]
    ran = {t.check.name for t in results.rows() if t.check.kind == "scenario" and t.ran}
    # None skipped, so every mutation below is tested against a working scenario; between the two
    # policies every one runs (the live profile turns off the inferences DigitalOcean's spec
    # settles, and turns on their twins).
    assert ran == {name for name in scenarios if policy.runs(find_check(name, api).source)}


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_the_harness_catches_the_planted_defect(
    mutable_server: MutableServer, mutation: Mutation, monkeypatch: pytest.MonkeyPatch
) -> None:
    if mutation.patch is not None:
        mutation.patch(monkeypatch, mutable_server.world)
    mutable_server.switch.mutation = mutation
    try:
        results = lean_audit(mutable_server, mutation.api, mutation.scenarios, mutation.policy)
        default = (
            None
            if mutation.policy == Policy()
            else lean_audit(mutable_server, mutation.api, mutation.scenarios, Policy())
        )
    finally:
        mutable_server.switch.mutation = None
    caught = {finding.check.name for finding in results.failures}
    assert mutation.caught_by in caught, (
        f"{mutation.name} ({mutation.defect}) was caught only by {sorted(caught)}"
    )
    if default is not None and mutation.policy.strict:
        # By default the same defect is a warning, not a failure.
        assert mutation.caught_by in {f.check.name for f in default.warnings}
        assert mutation.caught_by not in {f.check.name for f in default.failures}
    if default is not None and mutation.policy.live:
        assert mutation.caught_by not in {f.check.name for f in default.findings}


def test_docs_map_every_mutation_to_its_check() -> None:
    text = (
        Path(__file__).resolve().parents[2] / "docs" / "maintainers" / "mutations.md"
    ).read_text(encoding="utf-8")
    for mutation in MUTATIONS:
        assert f"`{mutation.name}`" in text and f"`{mutation.caught_by}`" in text, mutation.name


def test_a_response_check_only_a_revised_document_registers_catches_its_planted_defect(
    tmp_path: Path,
) -> None:
    """With a filter declared without a rule of its own (the documents revised with runId), the
    generic filter check registers, and so does its planted defect: the unmutated server passes the
    lean audits with it, and the harness catches it."""
    documents = with_a_run_id_filter(tmp_path)
    script = (
        "import json, sys; sys.path.insert(0, 'tests'); "
        "from harness.mutants import MUTATIONS; from evalmock.harness.checks import CHECKS; "
        "print(json.dumps({'responses': sorted(c.name for c in CHECKS if c.kind == 'response'), "
        "'planted': {m.name: m.caught_by for m in MUTATIONS}}))"
    )
    done = run_under(documents, "-c", script)
    assert done.returncode == 0, done.stderr[-3000:]
    revised = json.loads(done.stdout)
    only_revised = set(revised["responses"]) - {c.name for c in CHECKS if c.kind == "response"}
    assert "cases_match_the_other_filters" in only_revised
    planted = [name for name, check in revised["planted"].items() if check in only_revised]
    assert {revised["planted"][name] for name in planted} == only_revised
    selected = " or ".join(
        [
            "test_every_mutation_names_registered_checks_at_the_policy_its_level_needs",
            "test_the_unmutated_server_passes_the_lean_audits_even_strict_and_live",
            "test_docs_map_every_mutation_to_its_check",
            *(f"test_the_harness_catches_the_planted_defect[{name}]" for name in planted),
        ]
    )
    here = str(Path(__file__).relative_to(Path(__file__).parents[2]))
    done = run_under(
        documents, "-m", "pytest", here, "-v", "-p", "no:cacheprovider", "-k", selected
    )
    assert done.returncode == 0, done.stdout[-3000:]
    for name in planted:
        assert f"test_the_harness_catches_the_planted_defect[{name}] PASSED" in done.stdout


# Defects that Schemathesis's own phases also see, on a lean run (two phases, three examples, no
# scenario).
SCHEMATHESIS_CATCHES = {
    "v2-uint64-as-integer": "response_schema_conformance",
    "problem-json-errors": "content_type_conformance",
    "made-up-token-accepted": "ignored_auth",
    "both-kinds-refused": "positive_data_acceptance",
}


@pytest.mark.parametrize("name", sorted(SCHEMATHESIS_CATCHES))
def test_schemathesis_catches_document_level_defects(
    mutable_server: MutableServer, name: str
) -> None:
    mutation = next(m for m in MUTATIONS if m.name == name)
    audit = Audit(
        base_url=mutable_server.base_url,
        targets=mutable_server.targets,
        apis=(mutation.api,),
        token=mutable_server.targets.token,
        max_examples=3,
        phases=("examples", "coverage"),
        only=frozenset(),
    )
    mutable_server.switch.mutation = mutation
    try:
        results = run_audit(audit)
    finally:
        mutable_server.switch.mutation = None
    caught = {f.check.name for f in results.failures if f.check.kind == "schemathesis"}
    assert SCHEMATHESIS_CATCHES[name] in caught, f"Schemathesis caught only {sorted(caught)}"


def test_one_defect_on_many_responses_is_one_finding_with_a_count(
    mutable_server: MutableServer, tmp_path: Path
) -> None:
    from evalmock.harness.report.junit import write_junit
    from evalmock.harness.report.view import MAX_JUNIT_TEXT
    from evalmock.harness.secrets.redactor import Redactor

    mutable_server.switch.mutation = next(m for m in MUTATIONS if m.name == "updated-at-moves")
    try:
        results = lean_audit(mutable_server, "test-set", ("walk_yields_every_case_once",), Policy())
    finally:
        mutable_server.switch.mutation = None
    [finding] = [
        f for f in results.failures if f.check.name == "updated_at_is_added_at_until_retired"
    ]
    # every page of both walks, one finding
    assert finding.count >= 5 and len(finding.examples) == 3
    assert all(
        example.pointer and example.pointer.endswith("/updatedAt") for example in finding.examples
    )
    junit = tmp_path / "junit.xml"
    write_junit(results, junit, Redactor())
    # every check's testcase, each failure body bounded
    assert len(junit.read_text()) < 40 * MAX_JUNIT_TEXT


# Defects of one fact that every error answer carries: each must fail its own rule and nothing else,
# however many scenario checks meet an error answer (one cause, one finding; the others judge only
# what they add).
ONE_FACT = {
    "request-id-mismatch": "request_id_header_is_the_envelope_s",
    "wrong-404-code": "error_code_is_the_page_s",
    "envelope-without-request-id": "response_schema_conformance",
}
ERROR_SCENARIOS = (
    "unknown_agent_is_agent_not_found",
    "missing_or_malformed_token_is_401",
    "expired_and_revoked_tokens_are_401",
    "cursor_is_bound_to_the_list",
    "cursor_is_bound_to_the_caller",
    "malformed_project_include_or_kind_is_bad_input",
    "junk_cursor_is_bad_input",
)


@pytest.mark.parametrize("name", sorted(ONE_FACT))
def test_one_fact_on_every_error_answer_is_one_failed_check(
    mutable_server: MutableServer, name: str
) -> None:
    mutable_server.switch.mutation = next(m for m in MUTATIONS if m.name == name)
    try:
        results = lean_audit(mutable_server, "test-set", ERROR_SCENARIOS, Policy())
    finally:
        mutable_server.switch.mutation = None
    assert {f.check.name for f in results.failures} == {ONE_FACT[name]}
    assert not results.warnings
    ran = {t.check.name for t in results.rows() if t.check.kind == "scenario" and t.passed}
    assert ran == set(ERROR_SCENARIOS)  # each scenario judged what it adds, and kept it
