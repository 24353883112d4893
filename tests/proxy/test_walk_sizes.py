"""An app that walks one list at two page sizes through the proxy (a page-size selector, a list
and an export) gives the evidence the live audit compares: the service that skips a case between
pages fails the walk rule, naming the case and both walks, with no targets' count to lean on; a
correct service gets no finding. The proxy's HAR audited offline finds the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from evalmock.contract.operations import operation
from evalmock.harness.checks.policy import Policy
from evalmock.harness.results.audit_results import Results
from evalmock.harness.traffic.audit import TrafficAudit
from evalmock.harness.traffic.har import audit_har
from evalmock.proxy.violations import HEADER
from harness.builders import PROJECT
from harness.serving import serving

from .conftest import ProxyFactory
from .walking import CORRECT, walking_upstream

TOKEN = "s1zes-Proxy-Token-0017"
SIZES = (25, 10)  # the list's page, then its export
RULE = "walk_yields_every_case_once"


def _walk(proxy: str, agent: str, limit: int) -> list[httpx.Response]:
    """One whole walk, as the app's list does (bounded)."""
    query: dict[str, Any] = {"projectId": PROJECT, "limit": limit}
    path = operation("test-set").url_path(agentId=agent)
    answers = []
    with httpx.Client(base_url=proxy, headers={"Authorization": f"Bearer {TOKEN}"}) as app:
        for _page in range(20):
            answer = app.get(path, params=query)
            answers.append(answer)
            body = answer.json()
            if not body["hasMore"]:
                return answers
            query["cursor"] = body["nextCursor"]
    raise AssertionError("the walk did not end")


def _skips(results: Results) -> list[str]:
    return [
        example.message
        for finding in results.failures
        if finding.check.name == RULE
        for example in finding.examples
    ]


@pytest.mark.parametrize("agent", ["skips-one", CORRECT])
def test_a_list_walked_at_two_page_sizes_through_the_proxy_fails_a_skip_naming_the_case(
    proxy_for: ProxyFactory, tmp_path: Path, agent: str
) -> None:
    har = tmp_path / "sizes.har"
    with (
        serving(walking_upstream()) as upstream,
        proxy_for(upstream, "--api", "test-set", "--har", str(har)) as proxy,
    ):
        first = _walk(proxy.base_url, agent, SIZES[0])
        second = _walk(proxy.base_url, agent, SIZES[1])
        results = proxy.session.results()
        proxy.session.write_outputs()
    assert all(HEADER not in answer.headers for answer in first)  # one walk alone conforms
    said = _skips(results)
    if agent == CORRECT:
        assert said == [] and all(HEADER not in answer.headers for answer in second)
        return
    # at limit=25 the service leaves out cases 25, 51 and 77 of the 90; at limit=10 it lists 25
    skipped = first[1].json()["data"][0]["id"]  # the case after the one left out at the boundary
    [message] = said
    assert "the whole walk at limit=25" in message and "the later whole walk at limit=10" in (
        message
    )
    assert "did not list case 'case-0064'" in message and skipped == "case-0063"
    assert f"{RULE};level=page;outcome=failed" in second[-1].headers[HEADER]
    offline = TrafficAudit(Policy(), apis=("test-set",))
    audit_har(har, offline)
    assert _skips(offline.snapshot()) == said
