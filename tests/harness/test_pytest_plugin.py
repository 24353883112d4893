"""pytest as users expect: the plugin loads by its pytest11 entry point (no -p), runs one test per
check with clean node ids and JUnit classnames, fails an audit that checked too little, and
`audit_url` makes a five-line test."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from evalmock.contract.targets import dump_targets, load_targets
from evalmock.harness.checks import CHECKS

from .fairness.conftest import fairness_targets
from .fairness.gateway import ThrottlingGateway
from .serving import free_port, serving

FIVE_LINES = """from evalmock.harness import audit_url, summary_text

def test_the_service_conforms():
    results = audit_url("{base_url}", targets="{targets}", max_examples=3)
    assert results.conforms, summary_text(results)
"""


def run_pytest(
    project: Path, *arguments: str, cache: bool = False
) -> subprocess.CompletedProcess[str]:
    """pytest in a temporary project with no conftest.py and no -p: only the installed entry point
    loads us."""
    verbosity = [] if "-v" in arguments else ["-q"]
    caching = ["-o", f"cache_dir={project / '.cache'}"] if cache else ["-p", "no:cacheprovider"]
    # --rootdir: else pytest roots the session at the common folder of every path-like argument (the
    # server's targets file among them), and prints node ids relative to it
    command = [
        sys.executable,
        "-m",
        "pytest",
        *caching,
        *verbosity,
        "-rs",
        "-W",
        "ignore::DeprecationWarning",
        f"--rootdir={project}",
        *arguments,
    ]
    return subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=600)


def audit_options(server: Any, *more: str) -> list[str]:
    return [
        "--evalmock-base-url",
        server.base_url,
        "--evalmock-targets",
        str(server.targets_path),
        *more,
    ]


def ran(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The node ids of the tests that ran, from -v output."""
    return [
        line.split(" ")[0]
        for line in done.stdout.splitlines()
        if line.startswith("evalmock::")
        and line.split(" ")[1:2] in (["PASSED"], ["FAILED"], ["SKIPPED"])
    ]


def test_the_entry_point_runs_a_test_per_check_against_our_server(
    live_server: Any, tmp_path: Path
) -> None:
    junit = tmp_path / "junit.xml"
    done = run_pytest(
        tmp_path,
        "--evalmock-base-url",
        live_server.base_url,
        "--evalmock-targets",
        str(live_server.targets_path),
        "--evalmock-max-examples",
        "3",
        f"--junitxml={junit}",
        "-v",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert not list(tmp_path.glob("conftest.py"))
    cases = list(ET.parse(junit).getroot().iter("testcase"))
    assert len(cases) == len(CHECKS) + 4  # and, per API, Schemathesis's run and completeness
    names = {(case.get("classname"), case.get("name")) for case in cases}
    assert ("evalmock.test-set", "walk_yields_every_case_once") in names
    assert ("evalmock.gradient", "audit_is_complete") in names
    assert "evalmock::test-set::walk_yields_every_case_once PASSED" in done.stdout
    assert "::evalmock" not in done.stdout
    assert "pytest_plugin.py" not in done.stdout  # skips are located at their check's node id
    assert "SKIPPED [1] evalmock::gradient::" in done.stdout
    # Schemathesis's time is its own test case's, not spread over (or piled onto) the checks
    times = {
        case.get("name"): float(case.get("time", "0"))
        for case in cases
        if case.get("classname") == "evalmock.test-set"
    }
    assert times["schemathesis"] == max(times.values())


def test_a_five_line_test_file_audits_a_url_with_the_targets_auth(
    live_server: Any, tmp_path: Path
) -> None:
    targets = load_targets(live_server.targets_path)
    assert targets.token  # the [auth] token is the only token this audit gets
    (tmp_path / "test_service.py").write_text(
        FIVE_LINES.format(base_url=live_server.base_url, targets=live_server.targets_path)
    )
    done = run_pytest(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_without_a_token_the_five_line_test_fails_as_incomplete(
    live_server: Any, tmp_path: Path
) -> None:
    targets = load_targets(live_server.targets_path)
    tokenless = tmp_path / "tokenless.toml"
    dump_targets(type(targets)(projects=targets.projects, test_cases=targets.test_cases), tokenless)
    (tmp_path / "test_service.py").write_text(
        FIVE_LINES.format(base_url=live_server.base_url, targets=tokenless)
    )
    done = run_pytest(tmp_path)
    assert done.returncode == 1
    assert "INCOMPLETE" in done.stdout and "every scenario check was skipped" in done.stdout


def test_an_audit_that_checked_nothing_fails_its_completeness_test(
    live_server: Any, tmp_path: Path
) -> None:
    done = run_pytest(
        tmp_path,
        "--evalmock-base-url",
        live_server.base_url,
        "--evalmock-no-fuzz",
        "--evalmock-api",
        "test-set",
    )
    assert done.returncode == 1
    assert "evalmock::test-set::audit_is_complete" in done.stdout and "incomplete" in done.stdout


def test_the_plugin_reports_a_bad_targets_file_as_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[auth\n")
    done = run_pytest(
        tmp_path, "--evalmock-base-url", "http://127.0.0.1:9", "--evalmock-targets", str(bad)
    )
    assert done.returncode == 4  # pytest's usage error
    assert "bad.toml" in done.stderr


def test_without_a_base_url_the_plugin_adds_nothing(tmp_path: Path) -> None:
    done = run_pytest(tmp_path)
    assert done.returncode == 5  # no tests collected


def test_an_unreachable_target_ends_the_session_in_one_line_with_a_usage_error(
    tmp_path: Path,
) -> None:
    port = free_port()
    done = run_pytest(tmp_path, "--evalmock-base-url", f"http://127.0.0.1:{port}")
    assert done.returncode == 4  # pytest's usage error, before any test
    errors = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert errors == [
        f"ERROR: evalmock: http://127.0.0.1:{port} is unreachable "
        f"(ConnectError: [Errno 111] Connection refused); no audit test ran"
    ], errors


def test_a_printed_node_id_runs_that_check_alone(live_server: Any, tmp_path: Path) -> None:
    (tmp_path / "test_other.py").write_text("def test_other():\n    pass\n")
    done = run_pytest(
        tmp_path,
        *audit_options(live_server, "--evalmock-no-fuzz"),
        "-v",
        "evalmock::test-set::walk_yields_every_case_once",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert ran(done) == ["evalmock::test-set::walk_yields_every_case_once"], done.stdout
    assert "1 passed" in done.stdout and "test_other" not in done.stdout


def test_a_node_id_that_names_no_check_is_a_usage_error(live_server: Any, tmp_path: Path) -> None:
    done = run_pytest(tmp_path, *audit_options(live_server), "evalmock::test-set::no_such_check")
    assert done.returncode == 4
    assert "no audit test evalmock::test-set::no_such_check" in done.stderr


def test_k_selects_checks_and_an_api_runs_by_its_prefix(live_server: Any, tmp_path: Path) -> None:
    done = run_pytest(
        tmp_path,
        *audit_options(live_server, "--evalmock-no-fuzz"),
        "-v",
        "-k",
        "walk_yields_every_case_once or default_limit_fills_a_first_page",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(ran(done)) == [
        "evalmock::test-set::default_limit_fills_a_first_page",
        "evalmock::test-set::walk_yields_every_case_once",
    ]
    gradient = run_pytest(
        tmp_path, *audit_options(live_server, "--evalmock-no-fuzz"), "-v", "evalmock::gradient"
    )
    assert gradient.returncode == 0, gradient.stdout + gradient.stderr
    assert ran(gradient) and all(node.startswith("evalmock::gradient::") for node in ran(gradient))


def test_a_rule_s_former_name_still_selects_it_by_k_and_by_node_id(
    live_server: Any, tmp_path: Path
) -> None:
    options = audit_options(live_server, "--evalmock-no-fuzz")
    by_k = run_pytest(tmp_path, *options, "-v", "-k", "default_limit_is_25")
    by_id = run_pytest(tmp_path, *options, "-v", "evalmock::test-set::default_limit_is_25")
    for done in (by_k, by_id):
        assert done.returncode == 0, done.stdout + done.stderr
        assert ran(done) == ["evalmock::test-set::default_limit_fills_a_first_page"]


def test_lf_reruns_only_the_failed_checks_and_ff_runs_them_first(
    live_server: Any, tmp_path: Path
) -> None:
    tokenless = [
        "--evalmock-base-url",
        live_server.base_url,
        "--evalmock-no-fuzz",
        "--evalmock-api",
        "test-set",
    ]
    first = run_pytest(tmp_path, *tokenless, "-v", cache=True)
    assert first.returncode == 1
    assert "evalmock::test-set::audit_is_complete FAILED" in first.stdout
    again = run_pytest(tmp_path, *tokenless, "-v", "--lf", cache=True)
    assert ran(again) == ["evalmock::test-set::audit_is_complete"], again.stdout
    assert "rerun previous 1 failure" in again.stdout
    first_first = run_pytest(tmp_path, *tokenless, "-v", "--ff", cache=True)
    assert ran(first_first)[0] == "evalmock::test-set::audit_is_complete"
    assert len(ran(first_first)) > 10


# Each request to the slow server takes at least this long: a check's time has a floor that no load
# lowers, where a comparison of two checks' times would be raced by the machine's load.
LATENCY_MS = 5


def test_junit_times_are_each_check_s_own(live_server_factory: Any, tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    with live_server_factory("--latency", str(LATENCY_MS)) as slow_server:
        done = run_pytest(
            tmp_path,
            *audit_options(slow_server, "--evalmock-no-fuzz", "--evalmock-api", "test-set"),
            f"--junitxml={junit}",
        )
    assert done.returncode == 0, done.stdout + done.stderr
    times = {
        case.get("name"): float(case.get("time", "0"))
        for case in ET.parse(junit).getroot().iter("testcase")
    }
    latency = LATENCY_MS / 1000
    # a check reading one page took that request's time, not nothing (the audit's time is not
    # piled onto the first test case) ...
    assert times["default_limit_fills_a_first_page"] >= latency, times
    # ... and the walk (every page of every case, 300 cases 25 a page) at least its pages' time
    assert times["walk_yields_every_case_once"] >= 12 * latency, times


def test_a_failed_check_is_reported_at_its_node_id_without_the_plugin_s_traceback(
    live_server: Any, tmp_path: Path
) -> None:
    done = run_pytest(
        tmp_path,
        "--evalmock-base-url",
        live_server.base_url,
        "--evalmock-no-fuzz",
        "--evalmock-api",
        "test-set",
    )
    assert done.returncode == 1
    assert "_ evalmock::test-set::audit_is_complete _" in done.stdout
    # the reason, no traceback
    assert "\nthe audit is incomplete: test-set: no page rule was checked" in done.stdout
    assert "pytest_plugin.py" not in done.stdout and "Traceback" not in done.stdout


def outcomes(done: subprocess.CompletedProcess[str]) -> list[tuple[str, str]]:
    """Each audit test that ran, with PASSED, FAILED or SKIPPED, from -v output."""
    return [
        (line.split(" ")[0], line.split(" ")[1])
        for line in done.stdout.splitlines()
        if line.startswith("evalmock::")
        and line.split(" ")[1:2] in (["PASSED"], ["FAILED"], ["SKIPPED"])
    ]


def test_workers_and_a_rate_limit_run_the_same_tests_to_the_same_outcomes(
    live_server: Any, tmp_path: Path
) -> None:
    common = audit_options(
        live_server, "--evalmock-api", "gradient", "--evalmock-max-examples", "3", "-v"
    )
    one = run_pytest(tmp_path, *common)
    three = run_pytest(
        tmp_path, *common, "--evalmock-workers", "3", "--evalmock-rate-limit", "500/s"
    )
    assert one.returncode == three.returncode == 0, three.stdout + three.stderr
    assert outcomes(three) == outcomes(one)
    assert ("evalmock::gradient::schemathesis", "PASSED") in outcomes(three)


def test_bad_workers_or_rate_limit_options_are_usage_errors_naming_the_option(
    tmp_path: Path,
) -> None:
    base = ["--evalmock-base-url", "http://127.0.0.1:9"]
    slow = run_pytest(tmp_path, *base, "--evalmock-rate-limit", "fast")
    assert slow.returncode == 4
    assert "a rate is N/s, N/m or N/h (such as 10/s), got 'fast'" in slow.stderr
    none = run_pytest(tmp_path, *base, "--evalmock-workers", "0")
    assert none.returncode == 4
    assert "argument --evalmock-workers: must be at least 1" in none.stderr
    empty = run_pytest(tmp_path, *base, "--evalmock-max-answer-bytes", "0")
    assert empty.returncode == 4
    assert "argument --evalmock-max-answer-bytes: must be at least 1" in empty.stderr


def test_behind_a_gateway_throttling_everything_only_completeness_fails_and_says_why(
    tmp_path: Path,
) -> None:
    targets = tmp_path / "targets.toml"
    dump_targets(fairness_targets(sealed_cursors=True), targets)
    # answers every request itself: the service is never reached
    gateway = ThrottlingGateway(None, every=1)
    with serving(gateway) as base_url:
        done = run_pytest(
            tmp_path,
            "--evalmock-base-url",
            base_url,
            "--evalmock-targets",
            str(targets),
            "--evalmock-api",
            "test-set",
            "--evalmock-no-fuzz",
            "--evalmock-throttle-max-wait",
            "0.5",
            "-v",
        )
    assert gateway.throttled > 0
    assert done.returncode == 1, done.stdout + done.stderr
    failed = [node for node, outcome in outcomes(done) if outcome == "FAILED"]
    # throttling blames no rule
    assert failed == ["evalmock::test-set::audit_is_complete"], done.stdout
    # the gateway asks for 1 s, longer than the longest wait allowed: nothing is waited out
    assert "still throttled after waiting (longest wait asked: 1 s; " in done.stdout
    assert (
        "asked to wait longer than the longest wait allowed (allow a longer one: "
        "--throttle-max-wait "
        "SECONDS)); no check judged them. 0 throttled answers"
    ) in done.stdout
