"""`evalmock contract` end to end: it passes our live server, keeps tokens out of every output, and
exits with 4 when it checked too little to say, 3 for an unreachable target and 2 for a bad targets
file or bad arguments."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from evalmock import audit_options
from evalmock.audit_options import API_CHOICES
from evalmock.cli import main
from evalmock.contract.documents import APIS
from evalmock.contract.sources import Level
from evalmock.contract.targets import Targets, dump_targets, load_targets
from evalmock.harness.checks import CHECKS, policy
from evalmock.harness.report.run_info import file_digest
from evalmock.harness.run import throttle
from evalmock.harness.traffic import walks as traffic_walks
from evalmock.paths import CACHE_ENV
from evalmock.testing import start_mock

from .conftest import SECRET_TOKENS, MutableServer
from .mutants import MUTATIONS
from .serving import free_port, serving

FAST = ["--max-examples", "3", "--quiet"]


def test_contract_passes_against_the_live_server_and_leaves_its_working_folder_as_it_was(
    live_server: Any, tmp_path: Path
) -> None:
    """Run as a CI job runs it, in a checkout: nothing is written there but the outputs asked for
    (Hypothesis, left alone, keeps a `.hypothesis/` folder in the working folder; its files go to
    evalmock's cache)."""
    junit, report, workdir = tmp_path / "junit.xml", tmp_path / "report.md", tmp_path / "checkout"
    workdir.mkdir()
    env = {**os.environ, CACHE_ENV: str(tmp_path / "cache")}
    env.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "evalmock",
            "contract",
            "--base-url",
            live_server.base_url,
            "--targets",
            str(live_server.targets_path),
            "--junit",
            str(junit),
            "--report",
            str(report),
            *FAST,
        ],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    out = run.stdout
    assert run.returncode == 0, out + run.stderr
    assert "CONFORMS" in out
    assert "0 warned" in out  # our mock keeps the inferred rules too
    assert f"evalmock contract: wrote {junit}, {report}" in run.stderr
    assert list(workdir.iterdir()) == []
    assert (tmp_path / "cache" / "hypothesis").is_dir()
    root = ET.parse(junit).getroot()
    assert root.find("properties/property[@name='verdict']").get("value") == "CONFORMS"
    suites = root.findall("testsuite")
    assert {suite.get("name") for suite in suites} == {"test-set", "gradient"}
    assert all(suite.get("failures") == "0" for suite in suites)
    skipped = {
        case.get("name") for case in root.iter("testcase") if case.find("skipped") is not None
    }
    # The served targets state every fact, so no check may wait for one; only the live rules are
    # off.
    live = {c.name for c in CHECKS if c.level is Level.LIVE}
    assert skipped == live, skipped ^ live
    text = report.read_text()
    assert "walk_yields_every_case_once" in text
    digest = file_digest(live_server.targets_path)
    for row in (
        f"| base URL | `{live_server.base_url}` |",
        "| seed | `42` |",
        "| profile | `pages` |",
        f"| targets | `targets.toml ({digest})` |",
        "| Schemathesis | `3 examples per phase` |",
    ):
        assert row in text, row


def test_semantic_checks_alone_pass_against_the_live_server(
    live_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junit = tmp_path / "junit.xml"
    code = main(
        [
            "contract",
            "--base-url",
            live_server.base_url,
            "--targets",
            str(live_server.targets_path),
            "--no-fuzz",
            "--api",
            "test-set",
            "--quiet",
            "--junit",
            str(junit),
        ]
    )
    assert code == 0, capsys.readouterr().out
    cases = {case.get("name"): case for case in ET.parse(junit).getroot().iter("testcase")}
    # Schemathesis's own generation did not run, but its document checks judged every scenario
    # response.
    assert "Schemathesis did not run" in (
        cases["positive_data_acceptance"].find("skipped").get("message") or ""
    )
    assert cases["response_schema_conformance"].find("skipped") is None


def test_the_token_never_appears_in_any_output(
    mutable_server: MutableServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    token, second = SECRET_TOKENS
    targets = tmp_path / "targets.toml"
    dump_targets(
        Targets(
            projects=mutable_server.targets.projects,
            test_cases=mutable_server.targets.test_cases,
            sealed_cursors=True,
        ),
        targets,
    )
    junit, markdown, page = tmp_path / "junit.xml", tmp_path / "report.md", tmp_path / "report.html"
    mutable_server.switch.mutation = next(m for m in MUTATIONS if m.name == "problem-json-errors")
    # A second defect, which only a request with the second token shows (so that a finding carries
    # that token).
    unbound = next(m for m in MUTATIONS if m.name == "cursor-not-bound-to-caller")
    assert unbound.patch is not None
    unbound.patch(monkeypatch, mutable_server.world)
    try:
        codes = [
            main(
                [
                    "contract",
                    "--base-url",
                    mutable_server.base_url,
                    "--targets",
                    str(targets),
                    "--token",
                    token,
                    "--second-token",
                    second,
                    "--junit",
                    str(junit),
                    "--report",
                    str(report),
                    "--max-examples",
                    "3",
                ]
            )
            for report in (markdown, page)
        ]
    finally:
        mutable_server.switch.mutation = None
    captured = capsys.readouterr()
    assert codes == [1, 1]
    outputs = {
        "stdout": captured.out,
        "stderr": captured.err,
        "junit": junit.read_text(),
        "markdown": markdown.read_text(),
        "html": page.read_text(),
    }
    for name, text in outputs.items():
        assert token not in text and second not in text, f"a token leaked into {name}"
    assert (
        "curl -sS -i" in outputs["markdown"]
        and '"Authorization: Bearer $EVALMOCK_TOKEN"' in outputs["markdown"]
    )
    assert "$EVALMOCK_SECOND_TOKEN" in outputs["junit"] + outputs["markdown"]


def test_an_unreachable_target_exits_3_and_junit_says_why(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    junit, report = tmp_path / "reports" / "contract.xml", tmp_path / "report.html"
    code = main(
        [
            "contract",
            "--base-url",
            f"http://127.0.0.1:{free_port()}",
            "--junit",
            str(junit),
            "--report",
            str(report),
            *FAST,
        ]
    )
    assert code == 3
    err = capsys.readouterr().err
    assert "unreachable" in err
    assert f"no report written to {report}: the audit did not start" in err and not report.exists()
    root = ET.parse(junit).getroot()  # a CI's test report shows the error, not nothing
    assert root.find("properties/property[@name='verdict']").get("value") == "NOT_RUN"  # type: ignore[union-attr]
    [error] = root.findall("testsuite[@name='evalmock']/testcase[@name='audit_could_start']/error")
    assert "is unreachable" in (error.get("message") or "")


def _not_found(content_type: bytes, body: bytes) -> Any:
    """A server with no path of either API: what a base URL without a gateway's stage path
    reaches."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 404,
                "headers": [(b"content-type", content_type)],
            }
        )
        await send({"type": "http.response.body", "body": body})

    return app


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        (b"text/html", b"<html><body><h1>404 Not Found</h1><hr>nginx</body></html>"),
        (b"application/json", b'{"message":"Not Found"}'),  # an API gateway's own
        # a server whose every 404 is the test-set API's envelope, but not the page's
        # "agent-not-found"
        (
            b"application/json",
            b'{"error":{"code":"not-found","message":"No route","requestId":"r-1"}}',
        ),
    ],
)
def test_a_base_url_where_no_api_answers_exits_3_asking_whether_it_is_right(
    content_type: bytes, body: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    with serving(_not_found(content_type, body)) as base_url:
        assert main(["contract", "--base-url", base_url, "--token", "t0k-never-shown", *FAST]) == 3
    said = capsys.readouterr().err
    kind = content_type.decode()
    assert f"no audited API answers at {base_url}: GET /v1/agents/" in said
    assert (
        f"-> 404 ({kind}, not the test-set API's 404 body); GET /v2/gen-ai/evaluation_test_cases/"
        in said
    )
    assert (
        "Is --base-url right? A gateway's stage or prefix path (https://host/prod) belongs in it"
        in said
    )
    assert "t0k-never-shown" not in said


def test_a_base_url_with_a_path_too_many_exits_3(
    live_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # Our own server, whose 404 for a path it does not serve is the envelope (code not-found), under
    # /prod.
    code = main(
        [
            "contract",
            "--base-url",
            live_server.base_url + "/prod",
            "--targets",
            str(live_server.targets_path),
            *FAST,
        ]
    )
    assert code == 3
    assert f"no audited API answers at {live_server.base_url}/prod" in capsys.readouterr().err


def test_a_token_every_api_refuses_exits_2_saying_so(
    live_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "contract",
            "--base-url",
            live_server.base_url,
            "--targets",
            str(live_server.targets_path),
            "--token",
            "expired-ci-secret-0001",
            *FAST,
        ]
    )
    said = capsys.readouterr().err
    assert code == 2, said
    assert (
        "every audited API refused the token: GET /v1/agents/" in said
        and "-> 401; GET /v2/" in said
    )
    assert (
        "(--token, EVALMOCK_TOKEN or [auth].token)" in said and "expired-ci-secret-0001" not in said
    )


def _forbidding(status: int, body: bytes) -> Any:
    """A gateway that turns every caller away (an IP allowlist, a WAF) with `status`."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": body})

    return app


def test_a_gateway_that_turns_every_caller_away_exits_2_saying_so(
    live_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # AWS's words
    body = b'{"Message":"User: anonymous is not authorized to perform: execute-api:Invoke"}'
    with serving(_forbidding(403, body)) as base_url:
        code = main(
            [
                "contract",
                "--base-url",
                base_url,
                "--targets",
                str(live_server.targets_path),
                "--token",
                "valid-but-blocked-0001",
                *FAST,
            ]
        )
    said = capsys.readouterr().err
    assert code == 2, said
    assert (
        "every audited API refused the caller: GET /v1/agents/" in said
        and "-> 403; GET /v2/" in said
    )
    assert "IP allowlist" in said and "valid-but-blocked-0001" not in said


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("broken.toml", "[auth\ntoken = "),
        ("shape.toml", "test_set = 3\n"),
        ("types.toml", '[[test_set.projects]]\nagent_id = 1\nproject_id = "p"\n'),
        (
            "unknown-key.yaml",
            "test_set:\n  projects:\n    - {agent_id: a, project_id: p, colour: red}\n",
        ),
    ],
)
def test_a_bad_targets_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert (
        main(["contract", "--base-url", "http://127.0.0.1:9", "--targets", str(path), *FAST]) == 2
    )
    assert name in capsys.readouterr().err


def test_a_misspelled_targets_key_exits_2_naming_the_file_the_key_and_a_guess(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "targets.toml"
    path.write_text('[[test_set.projects]]\nagent_id = "a"\nprojectid = "p"\n', encoding="utf-8")
    assert (
        main(["contract", "--base-url", "http://127.0.0.1:9", "--targets", str(path), *FAST]) == 2
    )
    err = capsys.readouterr().err
    assert f"{path}: test_set.projects[0]: unknown key projectid; did you mean project_id?" in err
    assert "unexpected keyword argument" not in err


def test_without_base_url_the_audit_goes_where_the_mock_s_targets_file_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    targets = tmp_path / "targets.toml"
    with start_mock(["--cases", "30", "--write-targets", str(targets)]) as mock:
        assert load_targets(targets).base_url == mock.base_url
        code = main(["contract", "--targets", str(targets), "--no-fuzz", "--api", "test-set"])
    out = capsys.readouterr().out
    assert code == 0, out  # else 3: nothing answered where it looked
    assert "test-set: conforms" in out


def test_without_base_url_a_targets_file_without_one_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    targets = tmp_path / "targets.toml"
    dump_targets(Targets(token="demo-user"), targets)
    assert main(["contract", "--targets", str(targets), *FAST]) == 2
    assert "--base-url is required (or a --targets file with base_url" in capsys.readouterr().err


def test_a_missing_targets_file_exits_2(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.toml"
    assert (
        main(["contract", "--base-url", "http://127.0.0.1:9", "--targets", str(missing), *FAST])
        == 2
    )


@pytest.mark.parametrize(
    "arguments",
    [
        ["--base-url", "127.0.0.1:8080"],
        ["--base-url", "ftp://host"],
        ["--base-url", "http://h", "--report", "r.pdf"],
    ],
)
def test_bad_arguments_exit_2(arguments: list[str]) -> None:
    assert main(["contract", *arguments, *FAST]) == 2


def test_the_command_line_offers_every_api_of_the_registry() -> None:
    assert [*APIS, "all"] == API_CHOICES


def test_the_command_line_states_the_harness_defaults() -> None:
    assert (audit_options.DEFAULT_PROFILE, audit_options.LIVE_PROFILE, audit_options.PROFILES) == (
        policy.DEFAULT_PROFILE,
        policy.LIVE_PROFILE,
        policy.PROFILES,
    )
    assert (
        audit_options.DEFAULT_RETRIES,
        audit_options.DEFAULT_MAX_WAIT,
        audit_options.DEFAULT_BUDGET,
    ) == (
        throttle.DEFAULT_RETRIES,
        throttle.DEFAULT_MAX_WAIT,
        throttle.DEFAULT_BUDGET,
    )
    assert (audit_options.DEFAULT_MAX_WALKS, audit_options.DEFAULT_MAX_PAGES) == (
        traffic_walks.DEFAULT_MAX_WALKS,
        traffic_walks.DEFAULT_MAX_PAGES,
    )


def test_an_audit_without_token_or_targets_is_incomplete_not_a_pass(
    live_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["contract", "--base-url", live_server.base_url, "--no-fuzz", "--quiet"])
    out = capsys.readouterr().out
    assert code == 4, out
    assert "INCOMPLETE" in out and "every scenario check was skipped" in out and "--token" in out


def test_one_api_audited_without_a_token_is_incomplete_though_its_401s_conform(
    live_server: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Targets without [auth] and no EVALMOCK_TOKEN (a CI secret gone missing): the checks that send
    # no token pass, and the checks that read data are skipped; that is no pass.
    monkeypatch.delenv("EVALMOCK_TOKEN", raising=False)
    targets = tmp_path / "targets.toml"
    dump_targets(Targets(projects=load_targets(live_server.targets_path).projects), targets)
    code = main(
        [
            "contract",
            "--base-url",
            live_server.base_url,
            "--targets",
            str(targets),
            "--api",
            "test-set",
            "--no-fuzz",
            "--quiet",
        ]
    )
    out = capsys.readouterr().out
    assert code == 4, out
    assert "test-set: incomplete" in out
    said = r"\d+ scenario checks? that need a token (was|were) skipped \(no token: pass --token"
    assert re.search(said, out)


def test_strict_and_the_live_profile_pass_our_server(
    live_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "contract",
            "--base-url",
            live_server.base_url,
            "--targets",
            str(live_server.targets_path),
            "--strict",
            "--profile",
            "digitalocean-live",
            *FAST,
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    # Off: only the two inferences DigitalOcean's spec settles (their live twins judge the same
    # answers).
    assert "2 off in this profile" in out


def test_a_defect_of_an_inferred_rule_warns_by_default_and_fails_when_strict(
    mutable_server: MutableServer, tmp_path: Path
) -> None:
    targets = tmp_path / "targets.toml"
    dump_targets(mutable_server.targets, targets)
    mutable_server.switch.mutation = next(m for m in MUTATIONS if m.name == "cursor-on-last-page")
    try:
        lenient = main(
            [
                "contract",
                "--base-url",
                mutable_server.base_url,
                "--targets",
                str(targets),
                "--no-fuzz",
                "--api",
                "test-set",
                "--quiet",
            ]
        )
        strict = main(
            [
                "contract",
                "--base-url",
                mutable_server.base_url,
                "--targets",
                str(targets),
                "--no-fuzz",
                "--api",
                "test-set",
                "--quiet",
                "--strict",
            ]
        )
    finally:
        mutable_server.switch.mutation = None
    assert (lenient, strict) == (0, 1)


@pytest.mark.parametrize("option", ["--report", "--junit"])
def test_an_output_whose_directory_cannot_be_made_exits_2_before_the_audit(
    live_server: Any, tmp_path: Path, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    blocked = (
        tmp_path / "a-file" / "reports" / ("report.html" if option == "--report" else "junit.xml")
    )
    code = main(
        [
            "contract",
            "--base-url",
            live_server.base_url,
            "--targets",
            str(live_server.targets_path),
            option,
            str(blocked),
            *FAST,
        ]
    )
    captured = capsys.readouterr()
    assert code == 2
    assert (
        f"{option} '{blocked}': the directory '{blocked.parent}' cannot be made (Not a directory)"
        in captured.err
    )
    assert captured.out == ""  # no audit ran: no summary, no verdict


def test_an_output_s_missing_directory_is_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--junit reports/contract.xml` in a fresh checkout: the folder is made, as pytest's
    --junitxml makes it."""
    har = tmp_path / "empty.har"
    har.write_text(
        '{"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": []}}'
    )
    junit = tmp_path / "reports" / "ci" / "contract.xml"
    main(["contract", "--har", str(har), "--junit", str(junit), "--quiet"])
    assert junit.is_file()
    assert f"evalmock contract: wrote {junit}" in capsys.readouterr().err


def test_an_output_that_is_a_directory_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["contract", "--har", str(tmp_path / "none.har"), "--junit", str(tmp_path), *FAST])
        == 2
    )
    assert "is a directory; give a file name" in capsys.readouterr().err


@pytest.mark.parametrize(
    "inherited", [signal.SIG_DFL, signal.SIG_IGN], ids=["from-a-shell", "in-a-script-background"]
)
def test_ctrl_c_stops_an_audit_of_a_slow_service_at_once_with_exit_130_and_no_outputs(
    live_server_factory: Any, tmp_path: Path, inherited: signal.Handlers
) -> None:
    # A script's background job (`evalmock contract ... &`) starts with SIGINT ignored; SIGINT stops
    # it all the same.
    with live_server_factory("--latency", "300-400") as slow:
        junit, report = tmp_path / "junit.xml", tmp_path / "report.html"
        audit = subprocess.Popen(
            # faulthandler: an audit still running a minute after Ctrl-C is stopped with every
            # thread's stack shown
            [
                sys.executable,
                "-X",
                "faulthandler",
                "-m",
                "evalmock",
                "contract",
                "--base-url",
                slow.base_url,
                "--targets",
                str(slow.targets_path),
                "--workers",
                "4",
                "--junit",
                str(junit),
                "--report",
                str(report),
                "--quiet",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, inherited),
        )
        time.sleep(6)  # the workers are sending requests, each answered in a third of a second
        assert audit.poll() is None, audit.communicate()
        interrupted_at = time.monotonic()
        audit.send_signal(signal.SIGINT)
        try:
            _, err = audit.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            audit.send_signal(signal.SIGABRT)
            pytest.fail(
                "still running a minute after Ctrl-C; its "
                f"threads:\n{audit.communicate(timeout=30)[1]}"
            )
        stopped_in = time.monotonic() - interrupted_at
    assert audit.returncode == 130 and "evalmock: interrupted" in err, err
    # the audit alone takes minutes
    assert stopped_in < 5, f"stopped {stopped_in:.1f} s after Ctrl-C"
    assert "Traceback" not in err and not junit.exists() and not report.exists()
