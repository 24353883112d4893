"""Planning an audit from options, as the command line, the pytest plugin and `audit_url` all do:
the targets file read, tokens taken from the option, else the environment, else the targets' [auth];
bad options refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalmock.contract.targets import ProjectTarget, Targets, dump_targets
from evalmock.exits import UNREACHABLE as EXIT_UNREACHABLE
from evalmock.exits import USAGE as EXIT_USAGE
from evalmock.harness.checks import find_check
from evalmock.harness.checks.moving import listed_count
from evalmock.harness.checks.pagination import walk_limits
from evalmock.harness.checks.policy import LIVE_PROFILE, Policy
from evalmock.harness.checks.scenario import Scenario
from evalmock.harness.results.audit_results import COUNT, Results, counted_word
from evalmock.harness.results.findings import RequestRecord
from evalmock.harness.results.incomplete import Shortfall
from evalmock.harness.results.ledger import Ledger
from evalmock.harness.results.verdict import Verdict
from evalmock.harness.run import fuzz_outcomes, fuzzing
from evalmock.harness.run.answer_limits import AnswerLimits
from evalmock.harness.run.engine import (
    SHARD_ATTEMPTS,
    _plan_api,
    audit_url,
    run_audit,
    run_scenario,
    run_shard,
)
from evalmock.harness.run.fuzzing import Shard
from evalmock.harness.run.options import Audit, AuditError, plan_audit
from evalmock.harness.run.preflight import turned_away_targets
from evalmock.harness.run.throttle import Throttle

from .conftest import MutableServer
from .serving import free_port, serving

URL = "http://127.0.0.1:8080"


def test_the_option_wins_then_the_environment_then_the_targets(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "targets.toml"
    dump_targets(Targets(token="from-file", second_token="second-from-file"), path)
    monkeypatch.setenv("EVALMOCK_TOKEN", "from-env")
    monkeypatch.setenv("EVALMOCK_SECOND_TOKEN", "second-from-env")
    flagged = plan_audit(URL, targets=path, token="from-flag", second_token="second-from-flag")
    assert (flagged.token, flagged.second_token) == ("from-flag", "second-from-flag")
    environment = plan_audit(URL, targets=path)
    assert (environment.token, environment.second_token) == ("from-env", "second-from-env")
    monkeypatch.delenv("EVALMOCK_TOKEN")
    monkeypatch.delenv("EVALMOCK_SECOND_TOKEN")
    from_file = plan_audit(URL, targets=path)
    assert (from_file.token, from_file.second_token) == ("from-file", "second-from-file")
    assert plan_audit(URL).token is None


def test_the_policy_comes_from_the_options() -> None:
    audit = plan_audit(URL + "/", strict=True, profile=LIVE_PROFILE)
    assert audit.policy.strict and audit.policy.live and audit.base_url == URL


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"base_url": "ftp://example.com"}, "http"),
        ({"base_url": URL + "?x=1"}, "query"),
        ({"base_url": URL, "profile": "prod"}, "unknown profile"),
    ],
)
def test_bad_options_are_usage_errors(options: dict, words: str) -> None:
    with pytest.raises(AuditError, match=words) as caught:
        plan_audit(**options)
    assert caught.value.exit_code == EXIT_USAGE


def test_a_bad_targets_file_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[auth\n")
    with pytest.raises(AuditError, match=r"bad\.toml") as caught:
        plan_audit(URL, targets=bad)
    assert caught.value.exit_code == EXIT_USAGE


def test_audit_url_says_when_the_target_is_unreachable() -> None:
    with pytest.raises(AuditError, match="unreachable") as caught:
        audit_url(f"http://127.0.0.1:{free_port()}")
    assert caught.value.exit_code == EXIT_UNREACHABLE


def test_throttling_timeout_and_worker_options_are_planned_and_bad_ones_refused() -> None:
    audit = plan_audit(
        URL, workers=8, rate_limit="10/s", retries=1, max_wait=5, wait_budget=60, request_timeout=40
    )
    assert audit.workers == 8 and audit.request_timeout == 40
    assert plan_audit(URL).request_timeout == 15
    # each answer: 16 MiB of body, within the timeout
    assert plan_audit(URL).limits == AnswerLimits(16 * 2**20, 15)
    assert plan_audit(URL, max_answer_bytes=1000, request_timeout=40).limits == AnswerLimits(
        1000, 40
    )
    assert (
        audit.throttle.rate,
        audit.throttle.retries,
        audit.throttle.max_wait,
        audit.throttle.budget,
    ) == ("10/s", 1, 5, 60)
    assert plan_audit(URL).throttle.budget > 0  # waiting out throttling is on by default
    for bad in (
        {"workers": 0},
        {"rate_limit": "fast"},
        {"wait_budget": -1},
        {"request_timeout": 0},
        {"request_timeout": 7200},
        {"max_answer_bytes": 0},
    ):
        with pytest.raises(AuditError) as raised:
            plan_audit(URL, **bad)  # type: ignore[arg-type]
        assert raised.value.exit_code == EXIT_USAGE


class _NothingSent:
    """A Schemathesis run whose engine sends nothing: what the interpreter's thread race can leave
    of a shard."""

    def __init__(self, schema: object) -> None:
        self.schema = schema

    def execute(self) -> list[object]:
        return []


@pytest.mark.parametrize(("api", "noted"), [("test-set", True), ("gradient", False)])
def test_a_stateful_shard_that_sends_nothing_is_run_again_then_a_gap_never_silent(
    monkeypatch: pytest.MonkeyPatch, api: str, noted: bool
) -> None:
    runs: list[object] = []
    monkeypatch.setattr(
        fuzzing, "from_schema", lambda schema: runs.append(schema) or _NothingSent(schema)
    )
    ledger = run_shard(
        api, Audit(base_url="http://127.0.0.1:9"), Throttle(), Shard("stateful", 0, 4)
    )
    # The test-set document links a page to the next (nextCursor -> cursor): a stateful phase always
    # sends something. DigitalOcean's has no link, so its stateful phase rightly sends nothing.
    assert len(runs) == (SHARD_ATTEMPTS if noted else 1)
    results = Results(Policy(), (api,))
    ledger.replay(results)
    assert (
        any("sent no request" in gap.what and "--workers 1" in gap.remedy for gap in results.gaps)
        is noted
    )
    assert (
        any(
            r.shortfall is Shortfall.UNDONE and " of the audit could not be done" in str(r)
            for r in results.incomplete_reasons()
        )
        is noted
    )


def test_a_note_counted_by_several_shards_is_said_once_with_their_total() -> None:
    results = Results(Policy(), ("test-set",))
    note = (
        f"test-set: {COUNT} Schemathesis finding(s) about what the pages leave open were not judged"
    )
    for count in (2, 3):  # two shards of one phase, each counting its own
        ledger = Ledger(Policy())
        ledger.count_note(note, count)
        ledger.notes.append("a note said by both shards")
        ledger.replay(results)
    copied = results.copy()
    results.count_note(note)  # after the copy: the copy keeps its own total
    assert copied.remarks() == [
        "a note said by both shards",
        "test-set: 5 Schemathesis finding(s) about what the pages leave open were not judged",
    ]
    assert results.remarks()[-1].startswith("test-set: 6 Schemathesis")


def planned(projects: int) -> list[tuple[str, str | None]]:
    """The test-set API's tasks for targets listing `projects` projects: (label, the task's
    project)."""
    targets = Targets(
        projects=tuple(ProjectTarget(f"agent-{n}", f"project-{n}") for n in range(projects))
    )
    audit = Audit(base_url=URL, targets=targets, token="t", fuzz=False)
    tasks = _plan_api("test-set", audit, Results(audit.policy, audit.apis))
    return [(task.label, task.project and task.project.project_id) for task in tasks]


def test_a_check_that_judges_each_project_apart_is_one_task_a_project_in_the_targets_order() -> (
    None
):
    """So that a slow service's walks run side by side with --workers (14 projects walked in turn
    took 8 min)."""
    walks = [task for task in planned(3) if task[0].startswith("walk_yields_every_case_once")]
    assert walks == [
        (f"walk_yields_every_case_once agent-{n}/project-{n}", f"project-{n}") for n in range(3)
    ]
    others = [task for task in planned(3) if not task[0].startswith("walk_yields_every_case_once")]
    assert others and all(project is None for _, project in others)
    assert ("walk_yields_every_case_once", None) in planned(1)
    # run once, to say why it cannot judge
    assert ("walk_yields_every_case_once", None) in planned(0)


def test_a_check_run_for_one_project_judges_that_project_alone(
    mutable_server: MutableServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    targets = mutable_server.targets
    assert len(targets.projects) > 1, "the served world lists one project: the test proves nothing"
    walked: list[str] = []
    first: list[Any] = []  # the first walk, whose count sets the walks that follow
    walk = Scenario.walk

    def recorded(self: Scenario, project: ProjectTarget, **options: Any) -> Any:
        walked.append(project.project_id)
        done = walk(self, project, **options)
        first[:] = first or [done]
        return done

    monkeypatch.setattr(Scenario, "walk", recorded)
    audit = Audit(
        base_url=mutable_server.base_url, targets=targets, token=targets.token, fuzz=False
    )
    second = targets.projects[1]
    check = find_check("walk_yields_every_case_once", "test-set")
    results = Results(audit.policy, audit.apis)
    run_scenario(check, "test-set", audit, Throttle(), second).replay(results)
    # at the largest limit, then at each of walk_limits' (the largest remembered), and at the
    # largest again after the others
    expected = len(walk_limits(second, listed_count(first[0]))) + 2
    assert set(walked) == {second.project_id} and len(walked) == expected
    assert (results.tally(check).passed, results.tally(check).failed) == (1, 0)


def test_a_reason_to_skip_given_by_every_project_s_run_is_said_once() -> None:
    check = find_check("walk_yields_every_case_once", "test-set")
    results = Results(Policy(), ("test-set",))
    for _ in range(3):
        results.skipped(check, "no token: pass --token")
    results.skipped(check, "another reason")
    [finding] = results.skips
    assert finding.count == 4 and [e.message for e in finding.examples] == [
        "no token: pass --token",
        "another reason",
    ]


def test_schemathesis_findings_left_unjudged_are_one_note_per_reason_with_a_few_shown() -> None:
    # The count of findings about what the pages leave open is not taken on trust: a few are shown;
    # and many answers left unjudged for one reason are one line, not one each.
    results = Results(Policy(), ("test-set",))
    for number in range(5):
        url = f"http://svc.test/v1/agents/a/test-set/cases?projectId=p&include=&n={number}"
        record = RequestRecord("GET", url, {}, 200, f"curl '{url}'")
        fuzz_outcomes.show_unjudged("test-set", "negative_data_rejection", record, results)
    for method in ("PUT", "DELETE"):
        url = "http://svc.test/v1/agents/a/test-set/cases?projectId=p"
        record = RequestRecord(method, url, {}, 501, f"curl -X {method} '{url}'")
        fuzz_outcomes.show_unjudged("test-set", "unsupported_method", record, results)
    shown = [note for note in results.remarks() if "not judged, as the pages leave it open" in note]
    assert len(shown) == 2, shown
    assert shown[0].startswith(
        "test-set: 5 findings of Schemathesis's negative_data_rejection on answers of 200 not "
        "judged, as the pages leave it open ("
    )
    assert shown[0].endswith(
        "): GET http://svc.test/v1/agents/a/test-set/cases?projectId=p&include=&n=0; "
        "GET http://svc.test/v1/agents/a/test-set/cases?projectId=p&include=&n=1; "
        "GET http://svc.test/v1/agents/a/test-set/cases?projectId=p&include=&n=2; and 2 more"
    )
    assert "2 findings of Schemathesis's unsupported_method on answers of 501" in shown[1]
    assert shown[1].endswith(
        "PUT http://svc.test/v1/agents/a/test-set/cases?projectId=p; DELETE "
        "http://svc.test/v1/agents/a/test-set/cases?projectId=p"
    )


def test_notes_folded_in_each_worker_s_ledger_are_one_note_with_the_total() -> None:
    results = Results(Policy(), ("test-set",))
    for worker in range(4):
        ledger = Ledger(Policy())
        for number in range(3):
            ledger.fold_note(f"{COUNT} answers of 501 not judged", f"PUT /x?w={worker}&n={number}")
        ledger.replay(results)
    assert results.remarks() == [
        "12 answers of 501 not judged: PUT /x?w=0&n=0; PUT /x?w=0&n=1; PUT /x?w=0&n=2; and 9 more"
    ]


class RefusingGateway:
    """An ASGI gateway before the mock that answers 403 (its own body) to every request for one
    project."""

    def __init__(self, app: Any, project_id: str) -> None:
        self.app, self.project_id = app, project_id.lower()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if (
            scope["type"] == "http"
            and self.project_id in scope["query_string"].decode("latin-1").lower()
        ):
            body = b'{"message":"Forbidden"}'
            await send(
                {
                    "type": "http.response.start",
                    "status": 403,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", b"%d" % len(body)),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


def test_behind_a_gateway_that_refuses_one_project_the_audit_is_incomplete_not_failed(
    mutable_server: MutableServer,
) -> None:
    # Everything asked of the refused project with the audit's token (a reused cursor, a generated
    # request that Schemathesis expects a page or a 400 for) gets the gateway's 403: none of it is
    # judged, each is a gap, and a page-faithful service behind the gateway is not failed for it.
    targets = mutable_server.targets
    refused = targets.projects[1]
    with serving(RefusingGateway(mutable_server.switch, refused.project_id)) as base_url:
        audit = Audit(
            base_url=base_url,
            targets=targets,
            token=targets.token,
            apis=("test-set",),
            max_examples=8,
        )
        assert turned_away_targets(audit) == {
            ("test-set", refused.agent_id, refused.project_id.lower())
        }
        results = run_audit(audit)
    assert not results.failures, [(f.check.name, f.examples[0].message) for f in results.failures]
    assert results.verdict is Verdict.INCOMPLETE
    assert results.gaps and all(
        "answered 403" in gap.what and "turned the audit's token away" in gap.what
        for gap in results.gaps
    )


def test_a_counted_note_says_its_words_in_agreement_with_its_total() -> None:
    note = f"test-set: {COUNT} {counted_word('answer')} {counted_word('was', 'were')} not judged"
    for total, said in ((1, "1 answer was"), (3, "3 answers were")):
        results = Results(Policy(), ("test-set",))
        results.count_note(note, total)
        assert results.remarks() == [f"test-set: {said} not judged"]
