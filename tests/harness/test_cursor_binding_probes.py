"""Each binding of a sealed cursor is probed alone: the cursor goes back with one thing changed
(the agent, the project, a filter), everything else as it was; a runtime that takes it fails."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalmock.contract.filters import narrowing
from evalmock.contract.targets import ProjectTarget, Targets
from evalmock.harness.checks.policy import FAILED, PASSED
from revised_documents import run_under, with_a_run_id_filter

from .builders import hand_case
from .test_scenario_skips import outcome

PROJECT = ProjectTarget(
    "acme.drafting", "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0", has_corrections=True
)
# the same project under another agent that serves it, and another project of the same agent
UNDER_ANOTHER_AGENT = ProjectTarget("globex.search", PROJECT.project_id)
OTHER_PROJECT = ProjectTarget("acme.drafting", "a60767bc-f81b-4009-86cc-372b632c4c53")
TARGETS = Targets(projects=(PROJECT, OTHER_PROJECT, UNDER_ANOTHER_AGENT), sealed_cursors=True)


@dataclasses.dataclass
class Service:
    """Pages of one case with a cursor naming the request that got it; a cursor is taken or
    refused."""

    takes_cursors: bool
    sent: list[httpx.Request] = dataclasses.field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        headers = {"x-request-id": "r"}
        if "cursor" in request.url.params and not self.takes_cursors:
            envelope = {"code": "bad-input", "message": "Not this list's.", "requestId": "r"}
            return httpx.Response(400, json={"error": envelope}, headers=headers)
        cursor = f"c{len(self.sent) - 1}"
        body = {"data": [listed_case()], "hasMore": True, "nextCursor": cursor}
        return httpx.Response(200, json=body, headers=headers)

    def changes(self) -> list[set[str]]:
        """For each request sent with a cursor, what differs from the request that got it."""
        found = []
        for replay in self.sent:
            cursor = replay.url.params.get("cursor")
            if cursor is None:
                continue
            origin = self.sent[int(cursor[1:])]
            asked = [
                {"agent": r.url.path.split("/")[3], **dict(r.url.params)} for r in (origin, replay)
            ]
            asked[1].pop("cursor")
            keys = asked[0].keys() | asked[1].keys()
            found.append({k for k in keys if asked[0].get(k) != asked[1].get(k)})
        return found


def listed_case() -> dict[str, Any]:
    """A hand case holding a value for each declared filter that is matched by the value a case
    holds (no set, no `present-only-with`), so that each can be probed with it."""
    held = {
        f.field: f"{f.name}-held"
        for f in narrowing()
        if f.members is None and f.present_only_with is None
    }
    return hand_case(id="case-1", **held)


def filter_probes() -> list[set[str]]:
    """What the filters' probes change, from the document's declarations: each filter a cursor
    binds, once; then each set filter again (a narrower set's cursor reused without it)."""
    bound = [f for f in narrowing() if f.binds]
    return [{f.name} for f in bound] + [{f.name} for f in bound if f.members is not None]


def probes_against_a_refusing_service() -> dict[str, Any]:
    """The filters check run against a service refusing every reused cursor: its outcome, what
    each probe changed, and what the declarations say the probes change."""
    refusing = Service(takes_cursors=False)
    status = outcome("cursor_is_bound_to_the_filters", TARGETS, handler=refusing)[0]
    changes = [sorted(change) for change in refusing.changes()]
    return {"status": status, "changes": changes, "declared": [sorted(p) for p in filter_probes()]}


@pytest.mark.parametrize(
    ("check", "changed"),
    [
        ("cursor_is_bound_to_the_agent", [{"agent"}]),
        ("cursor_is_bound_to_the_list", [{"projectId"}]),
        ("cursor_is_bound_to_the_filters", filter_probes()),
    ],
)
def test_each_binding_changes_one_thing_and_fails_a_runtime_that_takes_the_cursor(
    check: str, changed: list[set[str]]
) -> None:
    assert changed, "expected at least one probe"
    refusing = Service(takes_cursors=False)
    assert outcome(check, TARGETS, handler=refusing)[0] == PASSED
    assert refusing.changes() == changed
    taking = Service(takes_cursors=True)
    status, message = outcome(check, TARGETS, handler=taking)
    assert status == FAILED and "was not refused with 400 bad-input" in message


def test_a_filter_the_document_gains_is_probed_with_no_change_to_the_harness(
    tmp_path: Path,
) -> None:
    """The documents revised with a runId filter: its probe joins the others, each changing it
    alone, with the value the listed case holds."""
    script = (
        "import json, sys; sys.path.insert(0, 'tests'); "
        "from harness.test_cursor_binding_probes import probes_against_a_refusing_service as p; "
        "print(json.dumps(p()))"
    )
    done = run_under(with_a_run_id_filter(tmp_path), "-c", script)
    assert done.returncode == 0, done.stderr[-3000:]
    revised = json.loads(done.stdout)
    assert ["runId"] in revised["declared"]
    assert revised["changes"] == revised["declared"]
    assert revised["status"] == PASSED


def test_the_agent_is_probed_on_the_project_as_the_cursor_s_request_spelled_it() -> None:
    service = Service(takes_cursors=False)
    outcome("cursor_is_bound_to_the_agent", TARGETS, handler=service)
    first, replay = service.sent
    assert first.url.path == "/v1/agents/acme.drafting/test-set/cases"
    assert replay.url.path == "/v1/agents/globex.search/test-set/cases"
    assert replay.url.params["projectId"] == first.url.params["projectId"] == PROJECT.project_id


def test_the_agent_is_probed_the_other_way_round_when_the_first_list_has_no_second_page() -> None:
    sent: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        headers = {"x-request-id": "r"}
        if "cursor" in request.url.params:
            envelope = {"code": "bad-input", "message": "Not this list's.", "requestId": "r"}
            return httpx.Response(400, json={"error": envelope}, headers=headers)
        if "/acme.drafting/" in request.url.path:
            return httpx.Response(200, json={"data": [], "hasMore": False}, headers=headers)
        body = {"data": [hand_case(id="case-1")], "hasMore": True, "nextCursor": "c1"}
        return httpx.Response(200, json=body, headers=headers)

    assert outcome("cursor_is_bound_to_the_agent", TARGETS, handler=handle)[0] == PASSED
    replay = sent[-1]
    assert replay.url.path == "/v1/agents/acme.drafting/test-set/cases"
    assert replay.url.params["cursor"] == "c1"
