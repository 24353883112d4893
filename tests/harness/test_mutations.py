"""The mutation suite: each realistic defect planted in our own server makes the harness fail, and the check
that is meant to catch it is among the failures (docs/mutations.md maps each defect to its check)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalmock.harness.audit import Audit, run_audit
from evalmock.harness.checks import find_check
from evalmock.harness.results import Results

from .conftest import MutableServer
from .mutants import MUTATIONS, Mutation


def lean_audit(server: MutableServer, api: str, scenarios: set[str] | tuple[str, ...]) -> Results:
    """Only the named scenario checks (each response they get still goes through every response check)."""
    audit = Audit(
        base_url=server.base_url, targets=server.targets, apis=(api,), token=server.targets.token,
        second_token=server.targets.second_token, fuzz=False, only=frozenset(scenarios),
    )
    return run_audit(audit)


def test_every_mutation_names_registered_checks() -> None:
    for mutation in MUTATIONS:
        assert find_check(mutation.caught_by).api == mutation.api
        for name in mutation.scenarios:
            assert find_check(name).kind == "scenario"
    assert len(MUTATIONS) >= 25
    assert len({m.name for m in MUTATIONS}) == len(MUTATIONS)


@pytest.mark.parametrize("api", ["test-set", "gradient"])
def test_the_unmutated_server_passes_the_lean_audits(mutable_server: MutableServer, api: str) -> None:
    scenarios = {name for m in MUTATIONS if m.api == api for name in m.scenarios}
    results = lean_audit(mutable_server, api, scenarios)
    assert results.conforms, [f"{f.check}: {f.message}" for f in results.failures]
    ran = {row.check for row in results.rows() if row.source == "scenario" and row.passed}
    assert ran == scenarios  # none skipped, so every mutation below is tested against a working scenario


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_the_harness_catches_the_planted_defect(
    mutable_server: MutableServer, mutation: Mutation, monkeypatch: pytest.MonkeyPatch
) -> None:
    if mutation.patch is not None:
        mutation.patch(monkeypatch, mutable_server.world)
    mutable_server.switch.mutation = mutation
    try:
        results = lean_audit(mutable_server, mutation.api, mutation.scenarios)
    finally:
        mutable_server.switch.mutation = None
    caught = {finding.check for finding in results.failures}
    assert mutation.caught_by in caught, f"{mutation.name} ({mutation.defect}) was caught only by {sorted(caught)}"


# Defects that Schemathesis's own checks also see, on a lean run (two phases, three examples).
SCHEMATHESIS_CATCHES = {
    "v2-uint64-as-integer": {"response_schema_conformance"},
    "problem-json-errors": {"content_type_conformance", "response_schema_conformance"},
    "v2-no-ratelimit-headers": {"response_headers_conformance"},
}


@pytest.mark.parametrize("name", sorted(SCHEMATHESIS_CATCHES))
def test_schemathesis_catches_schema_level_defects(
    mutable_server: MutableServer, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    mutation = next(m for m in MUTATIONS if m.name == name)
    audit = Audit(base_url=mutable_server.base_url, targets=mutable_server.targets, apis=(mutation.api,),
                  token=mutable_server.targets.token, max_examples=3, phases=("examples", "coverage"),
                  only=frozenset())
    mutable_server.switch.mutation = mutation
    try:
        results = run_audit(audit)
    finally:
        mutable_server.switch.mutation = None
    caught = {f.check for f in results.failures if f.source == "schemathesis"}
    assert caught & SCHEMATHESIS_CATCHES[name], f"Schemathesis caught only {sorted(caught)}"


def test_docs_map_every_mutation_to_its_check() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "mutations.md").read_text(encoding="utf-8")
    for mutation in MUTATIONS:
        assert f"`{mutation.name}`" in text and f"`{mutation.caught_by}`" in text, mutation.name
