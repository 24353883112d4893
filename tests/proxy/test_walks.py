"""A browser app's "Load more" walk through the proxy: a service that repeats, skips, restarts or
reorders across pages gets the evalmock-violations header on the page that shows it, and the proxy's
verdict is 1; a correct one gets none. A skip shows only in the count, judged when a second walk
lists the same cases; a list that moves between walks leaves the targets' count not judged. The
proxy's HAR audited offline, and `evalmock contract` against the same service, find the same
rule. The targets' count is dated (as `evalmock serve --write-targets` writes it), and the app's
"show retired" view walks each list with include=retired once: the cases' own dates then explain
the count or fail it, as `evalmock contract` would."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from browser import launched_chromium
from evalmock.cli import main
from evalmock.contract.operations import operation
from evalmock.contract.targets import ProjectTarget, Targets, dump_targets, load_targets
from evalmock.harness.checks.outcomes import MOVED_PREFIX, SkipKind
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
from .walking import AGENTS, CASES, CORRECT, DEFECTS, MOVING, browser_app, walking_upstream

TOKEN = "w4lk-S3cret-Token-0017"
LIMIT = 25
WALK_RULE = "walk_yields_every_case_once;level=page;outcome=failed"
# The page (from 0) of a 25-case walk that shows each defect: the second page repeats or reorders,
# the third is the first again, and a skip is known when the walk ends with fewer cases than the
# targets say the project has: at the end of the second walk, which lists the same cases as the
# first (one walk cannot tell a skip from a list that moved since the targets were written).
OFFENDING_PAGE = {"repeats-last": 1, "reorders": 1, "restarts": 2, "skips-one": 3}
COUNTED = "skips-one"  # the defect only the count shows
WALKS = 2  # the app walks each list twice, as a user who opens the page again


@dataclass(frozen=True)
class Walked:
    proxy: RunningProxy
    walks: dict[
        str, list[list[dict[str, Any]]]
    ]  # per agent, per walk, what the app saw of each page
    after_one_walk: Results  # the proxy's results when each list was walked once
    folder: Path


# When the targets counted the cases: after every case of the walking service was added
COUNTED_AT = datetime(2026, 11, 21, tzinfo=UTC)


def _targets(folder: Path) -> Path:
    path = folder / "targets.toml"
    projects = tuple(
        ProjectTarget(agent, PROJECT, active_cases=CASES, active_cases_at=COUNTED_AT)
        for agent in AGENTS
    )
    dump_targets(Targets(projects=projects), path)
    return path


def _walk_with_retired(proxy: str, agent: str) -> None:
    """The app's "show retired" view: one whole walk with include=retired (bounded: a restarting
    service ends too)."""
    query: dict[str, Any] = {"projectId": PROJECT, "limit": LIMIT, "include": "retired"}
    path = operation("test-set").url_path(agentId=agent)
    with httpx.Client(base_url=proxy, headers={"Authorization": f"Bearer {TOKEN}"}) as app:
        for _page in range(12):
            body = app.get(path, params=query).json()
            if not body["hasMore"]:
                return
            query["cursor"] = body["nextCursor"]


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
        walks: dict[str, list[list[dict[str, Any]]]] = {agent: [] for agent in AGENTS}
        for agent in AGENTS:
            _walk_with_retired(proxy.base_url, agent)
        after_one_walk = None
        for _ in range(WALKS):
            for agent in AGENTS:
                walks[agent].append(_walk(chromium, app, proxy.base_url, agent))
            after_one_walk = after_one_walk or proxy.session.results()
        proxy.session.write_outputs()
        assert after_one_walk is not None
        yield Walked(proxy, walks, after_one_walk, folder)


def test_a_correct_service_walked_by_the_app_gets_no_header(walked: Walked) -> None:
    for pages in walked.walks[CORRECT]:
        assert [len(page["ids"]) for page in pages] == [25, 25, 25, 15]
        assert [page["violations"] for page in pages] == [None] * len(pages)


@pytest.mark.parametrize("defect", DEFECTS)
def test_each_walk_defect_gets_the_header_on_the_page_that_shows_it(
    walked: Walked, defect: str
) -> None:
    offending = OFFENDING_PAGE[defect]
    for number, pages in enumerate(walked.walks[defect]):
        assert all(page["status"] == 200 for page in pages)
        if defect == COUNTED and number == 0:
            assert [page["violations"] for page in pages] == [None] * len(pages)
            continue
        assert [page["violations"] is not None for page in pages[: offending + 1]] == [
            False
        ] * offending + [True]
        assert WALK_RULE in pages[offending]["violations"]
    [line] = [
        line for line in walked.proxy.lines() if f"/agents/{defect}/" in line and "FAILED" in line
    ][:1]
    assert "FAILED walk_yields_every_case_once [page]" in line


def _count_skips(results: Results) -> dict[str, tuple[str, SkipKind | None]]:
    """The not-judged counts of the walk rule, by the agent of the list."""
    return {
        agent: (example.message, example.skip)
        for finding in results.skips
        if finding.check.name == "walk_yields_every_case_once"
        for example in finding.examples
        for agent in (*AGENTS, MOVING)
        if f" {agent}/" in example.message
    }


def test_after_one_walk_the_skip_is_not_judged_and_said_and_two_walks_that_agree_fail_it(
    walked: Walked,
) -> None:
    """One walk of each list: the count is not judged (a skip, not a failure, not a pass), and the
    reason says so; the second walks list the same cases, so every count is judged, and the
    skipping service's fails."""
    early = walked.after_one_walk
    assert "the walk did not list every active case" not in {f.title for f in early.failures}
    said = _count_skips(early)
    for agent, cases in ((CORRECT, CASES), (COUNTED, CASES - 3)):  # a case skipped at each boundary
        message, kind = said[agent]
        assert kind is SkipKind.MISSING
        assert message.startswith(
            f"not judged: {agent}/{PROJECT.lower()} was walked whole once ({cases} cases): whether "
            "the list moved since the targets were written cannot be told"
        )
    results = walked.proxy.session.results()
    assert _count_skips(results) == {}
    counted = [
        example.request.url if example.request else ""
        for finding in results.failures
        for example in finding.examples
        if example.message.startswith("the walk did not list every active case")
    ]
    assert len(counted) == 1 and f"/agents/{COUNTED}/" in counted[0]


def test_a_list_that_moves_between_walks_is_no_failure_and_its_count_is_not_judged(
    proxy_for: ProxyFactory, tmp_path: Path
) -> None:
    """A case arrives as each walk begins (a list in use), and the targets' count is stale: walked
    twice, right, through the proxy, no page gets the header and the count is said not judged."""
    targets = tmp_path / "targets.toml"
    dump_targets(Targets(projects=(ProjectTarget(MOVING, PROJECT, active_cases=CASES),)), targets)
    path = operation("test-set").url_path(agentId=MOVING)
    with (
        serving(walking_upstream()) as upstream,
        proxy_for(upstream, "--api", "test-set", "--targets", str(targets)) as proxy,
        httpx.Client(base_url=proxy.base_url, headers={"Authorization": f"Bearer {TOKEN}"}) as app,
    ):
        listed = []
        for _ in range(WALKS):
            query: dict[str, Any] = {"projectId": PROJECT, "limit": LIMIT}
            ids: list[str] = []
            for _page in range(10):
                answer = app.get(path, params=query)
                assert answer.status_code == 200 and HEADER not in answer.headers
                ids += [case["id"] for case in answer.json()["data"]]
                if not answer.json()["hasMore"]:
                    break
                query["cursor"] = answer.json()["nextCursor"]
            listed.append(len(set(ids)))
    assert listed == [CASES + 1, CASES + 2]
    results = proxy.session.results()
    assert results.failures == [] and results.verdict is not Verdict.VIOLATIONS
    [(message, kind)] = _count_skips(results).values()
    assert kind is SkipKind.MOVED and message.startswith(MOVED_PREFIX)
    assert f"whole walks of {MOVING}/{PROJECT.lower()} listed 91 cases and the latest 92" in message


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
