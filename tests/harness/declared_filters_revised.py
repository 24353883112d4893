"""What the harness makes of the document's filters, as one JSON object on stdout: run as a script,
with EVALMOCK_OPENAPI_DIR naming the documents to read (test_declared_filters). With an argument,
it also audits the mock serving those documents with the generic filter rules alone: `plain`, or
behind a planted defect (`ignores-run-id`: the runId filter is dropped; `drops-corrections`: a
request with runId lists hand cases only)."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from evalmock.harness.checks import checks
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.run.engine import run_audit
from evalmock.harness.run.options import Audit
from evalmock.harness.traffic.walks import list_key
from evalmock.server.app import create_app
from evalmock.server.settings import ServerSettings
from evalmock.server.targets_file import targets_for
from evalmock.world import World

AGENT, PROJECT = "acme.drafting", "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0"
GENERIC = ("cases_match_the_other_filters", "other_filters_narrow_the_walk")


def _request(**query: str) -> Exchange:
    target = f"/v1/agents/{AGENT}/test-set/cases?{urlencode({'projectId': PROJECT, **query})}"
    return Exchange("GET", f"https://service.example{target}", 200)


def what_the_harness_reads() -> dict[str, Any]:
    """Which checks are registered for the test-set API, and whether the walks hold requests that
    differ in one filter's value (or only in how they spell it) for one list or for two."""
    keys = {
        name: [list_key(_request(**query)) for query in pair]
        for name, pair in {
            "kind": ({"kind": "hand"}, {"kind": "correction"}),
            "kind-spelling": ({"kind": "hand,correction"}, {"kind": "correction,hand"}),
            "runId": ({"runId": "run-5b1e0d7c"}, {"runId": "run-19ac03f2"}),
        }.items()
    }
    return {
        "checks": sorted(check.name for check in checks("test-set")),
        "one-list": {name: first == second for name, (first, second) in keys.items()},
    }


def planted(app: Any, defect: str) -> Any:
    """`app` with the defect planted in the query of each request that sends runId."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        query = scope.get("query_string", b"")
        if scope["type"] == "http" and b"runId=" in query:
            if defect == "ignores-run-id":
                kept = [p for p in query.split(b"&") if not p.startswith(b"runId=")]
                query = b"&".join(kept)
            elif defect == "drops-corrections":
                query += b"&kind=hand"
            scope = {**scope, "query_string": query}
        await app(scope, receive, send)

    return wrapped


def audit_of_the_mock(defect: str) -> dict[str, Any]:
    """The generic filter rules' outcomes, auditing the mock (with `defect` planted)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, as pytest has it
    from harness.serving import serving

    world = World(seed=42, cases=150)
    app = create_app(ServerSettings(cases=150), world=world)
    targets = dataclasses.replace(targets_for(world), sealed_cursors=True)
    targets = dataclasses.replace(targets, projects=targets.projects[:1])
    with serving(planted(app, defect)) as base_url:
        results = run_audit(
            Audit(
                base_url=base_url,
                targets=targets,
                apis=("test-set",),
                token="demo-user",
                fuzz=False,
                only=frozenset(GENERIC),
            )
        )
    return {
        name: results.tallies[("test-set", name)].outcome
        for name in GENERIC
        if ("test-set", name) in results.tallies
    }


if __name__ == "__main__":
    found = what_the_harness_reads()
    if len(sys.argv) > 1:
        found["audit"] = audit_of_the_mock(sys.argv[1])
    json.dump(found, sys.stdout)
