"""What the harness makes of the document's filters, as one JSON object on stdout: run as a script,
with EVALMOCK_OPENAPI_DIR naming the documents to read (test_declared_filters)."""

from __future__ import annotations

import json
import sys
from typing import Any
from urllib.parse import urlencode

from evalmock.harness.checks import checks
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.traffic.walks import list_key

AGENT, PROJECT = "acme.drafting", "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0"


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


if __name__ == "__main__":
    json.dump(what_the_harness_reads(), sys.stdout)
