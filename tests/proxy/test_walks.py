"""A browser app's "Load more" walk through the proxy: a service that repeats, skips, restarts or
reorders across pages gets the evalmock-violations header on the page that shows it, and the proxy's
verdict is 1; a correct one gets none. The proxy's HAR audited offline, and `evalmock contract`
against the same service, find the same rule."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from browser import launched_chromium
from evalmock.cli import main
from evalmock.contract.operations import operation
from evalmock.contract.targets import ProjectTarget, Targets, dump_targets, load_targets
from evalmock.harness.checks.policy import Policy
from evalmock.harness.checks.registry import find_check
from evalmock.harness.results.audit_results import Results
from evalmock.harness.results.verdict import Verdict
from evalmock.harness.run.engine import run_audit
from evalmock.harness.run.options import Audit
from evalmock.harness.traffic.audit import TrafficAudit
from evalmock.harness.traffic.har import audit_har
from evalmock.proxy.violations import HEADER
from harness.builders import PROJECT
from harness.serving import serving

from .conftest import ProxyFactory, RecordedServe, RunningProxy
from .walking import AGENTS, CASES, CORRECT, DEFECTS, browser_app, walking_upstream

TOKEN = "w4lk-S3cret-Token-0017"
LIMIT = 25
WALK_RULE = "walk_yields_every_case_once;level=page;outcome=failed"
# The page (from 0) of a 25-case walk that shows each defect: the second page repeats or reorders,
# the third is the first again, and a skip is known when the walk ends with fewer cases than the
# targets say the project has.
OFFENDING_PAGE = {"repeats-last": 1, "reorders": 1, "restarts": 2, "skips-one": 3}


@dataclass(frozen=True)
class Walked:
    proxy: RunningProxy
    pages: dict[str, list[dict[str, Any]]]  # per agent, what the app saw of each page
    folder: Path


def _targets(folder: Path) -> Path:
    path = folder / "targets.toml"
    projects = tuple(ProjectTarget(agent, PROJECT, active_cases=CASES) for agent in AGENTS)
    dump_targets(Targets(projects=projects), path)
    return path


def _walk(chromium: Any, app: str, proxy: str, agent: str) -> list[dict[str, Any]]:
    """Open the list page and press "Load more" until the list ends (bounded: a restarting service
    ends too)."""
    query = urlencode(
        {"api": proxy, "agent": agent, "project": PROJECT, "token": TOKEN, "limit": LIMIT}
    )
    page = chromium.new_page()
    page.goto(f"{app}/?{query}")
    for loaded in range(1, 12):
        page.click("#more")
        page.wait_for_function(f"window.pages.length === {loaded}")
        if page.evaluate("window.done"):
            break
    pages = page.evaluate("window.pages")
    page.close()
    return pages


@pytest.fixture(scope="module")
def walked(proxy_for: ProxyFactory, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Walked]:
    folder = tmp_path_factory.mktemp("walks")
    targets = _targets(folder)
    with (
        serving(walking_upstream()) as upstream,
        serving(browser_app()) as app,
        proxy_for(
            upstream,
            "--api",
            "test-set",
            "--targets",
            str(targets),
            "--har",
            str(folder / "walks.har"),
        ) as proxy,
        launched_chromium() as chromium,
    ):
        pages = {agent: _walk(chromium, app, proxy.base_url, agent) for agent in AGENTS}
        proxy.session.write_outputs()
        yield Walked(proxy, pages, folder)


def test_a_correct_service_walked_by_the_app_gets_no_header(walked: Walked) -> None:
    pages = walked.pages[CORRECT]
    assert [len(page["ids"]) for page in pages] == [25, 25, 25, 15]
    assert [page["violations"] for page in pages] == [None] * len(pages)


@pytest.mark.parametrize("defect", DEFECTS)
def test_each_walk_defect_gets_the_header_on_the_page_that_shows_it(
    walked: Walked, defect: str
) -> None:
    pages = walked.pages[defect]
    offending = OFFENDING_PAGE[defect]
    assert all(page["status"] == 200 for page in pages)
    assert [page["violations"] is not None for page in pages[: offending + 1]] == [
        False
    ] * offending + [True]
    assert WALK_RULE in pages[offending]["violations"]
    [line] = [
        line for line in walked.proxy.lines() if f"/agents/{defect}/" in line and "FAILED" in line
    ][:1]
    assert "FAILED walk_yields_every_case_once [page]" in line


def test_the_proxy_exits_1_on_the_walks_and_keeps_the_token_out(walked: Walked) -> None:
    results = walked.proxy.session.results()
    assert results.verdict is Verdict.VIOLATIONS and results.verdict.exit_code == 1
    assert {f.check.name for f in results.failures} == {"walk_yields_every_case_once"}
    assert TOKEN not in walked.proxy.stream.getvalue()
    assert TOKEN not in (walked.folder / "walks.har").read_text()


def test_the_proxy_s_recording_audits_offline_to_the_same_findings(walked: Walked) -> None:
    offline = TrafficAudit(
        Policy(), apis=("test-set",), targets=load_targets(walked.folder / "targets.toml")
    )
    audit_har(walked.folder / "walks.har", offline)
    assert _findings(offline.snapshot()) == _findings(walked.proxy.session.results())

    summary = io.StringIO()
    with contextlib.redirect_stdout(summary):
        code = main(
            [
                "contract",
                "--har",
                str(walked.folder / "walks.har"),
                "--api",
                "test-set",
                "--targets",
                str(walked.folder / "targets.toml"),
            ]
        )
    assert code == 1 and "walk_yields_every_case_once" in summary.getvalue()


def _findings(results: Results) -> set[tuple[str, str, str, int]]:
    return {
        (f.check.name, f.outcome, f.shape, f.count) for f in [*results.failures, *results.warnings]
    }


@pytest.mark.parametrize("agent", AGENTS)
def test_evalmock_contract_against_the_service_finds_the_same_rule(agent: str) -> None:
    with serving(walking_upstream()) as upstream:
        audit = Audit(
            upstream,
            Targets(projects=(ProjectTarget(agent, PROJECT, active_cases=CASES),)),
            apis=("test-set",),
            token=TOKEN,
            fuzz=False,
            only=frozenset({"walk_yields_every_case_once"}),
        )
        results = run_audit(audit)
    rule = find_check("walk_yields_every_case_once", "test-set")
    failed = [f.check for f in results.failures]
    # the same check: its name, level and source
    assert failed == ([] if agent == CORRECT else [rule])


def test_a_walk_continued_with_its_kinds_reordered_is_no_breach_and_other_kinds_are_refused(
    recorded_serve: RecordedServe, proxy_for: ProxyFactory
) -> None:
    """The mock seals cursors and binds the kinds as a set: a cursor sent back with the same kinds
    in another order continues the walk (no header), one sent back with other kinds is refused,
    as the filters' binding rule wants."""
    targets = load_targets(recorded_serve.targets_path)
    project = next(p for p in targets.projects if (p.active_cases or 0) > 6)
    path = operation("test-set").url_path(agentId=project.agent_id)
    asked = {"projectId": project.project_id, "limit": 2}
    with (
        proxy_for(
            recorded_serve.base_url,
            "--api",
            "test-set",
            "--targets",
            str(recorded_serve.targets_path),
        ) as proxy,
        httpx.Client(base_url=proxy.base_url, headers={"Authorization": "Bearer demo-user"}) as app,
    ):
        first = app.get(path, params={**asked, "kind": "correction,hand"})
        reordered = app.get(
            path, params={**asked, "kind": "hand,correction", "cursor": first.json()["nextCursor"]}
        )
        other = app.get(
            path, params={**asked, "kind": "hand", "cursor": reordered.json()["nextCursor"]}
        )
    assert [first.status_code, reordered.status_code, other.status_code] == [200, 200, 400]
    assert [HEADER in answer.headers for answer in (first, reordered, other)] == [False] * 3
    results = proxy.session.results()
    assert results.failures == []
    filters = results.tally(find_check("cursor_is_bound_to_the_filters", "test-set"))
    assert (filters.passed, filters.failed) == (1, 0)
    walked = results.tally(find_check("walk_yields_every_case_once", "test-set"))
    assert walked.passed == 1  # the reordered page, judged as the walk's second
