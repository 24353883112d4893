"""`evalmock fixtures import`: no secret of the recording reaches the data file, what the data-file
rules refuse is left out and named with its HAR entry, what the recording lacks is said in the
summary, and `--anonymize` with one seed writes the same bytes every time."""

from __future__ import annotations

from pathlib import Path

import pytest

from data_builders import AGENT, PROJECT, TEST_CASE, case, version
from evalmock.cli import main
from evalmock.world import World
from evalmock.world.data_files import load_data

from .har_files import entry, evaluation_url, har, list_url, page

BEARER = "bearer-token-0123456789"
COOKIE = "cookie-value-0123456789"
HEADER_KEY = "header-key-0123456789"
QUERY_KEY = "query-key-0123456789"
SECRETS = (BEARER, COOKIE, HEADER_KEY, QUERY_KEY)
CREDENTIALS = {
    "Authorization": f"Bearer {BEARER}",
    "Cookie": f"session={COOKIE}; theme=dark",
    "X-Api-Key": HEADER_KEY,
}


def imported(tmp_path: Path, entries: list, capsys: pytest.CaptureFixture[str], *more: str) -> str:
    """Import a HAR of `entries` into tmp_path/data.yaml; the summary printed."""
    path = har(tmp_path / "staging.har", entries)
    out = tmp_path / "data.yaml"
    assert main(["fixtures", "import", "--har", str(path), "-o", str(out), *more]) == 0
    return capsys.readouterr().out


def test_no_token_cookie_or_key_of_the_recording_reaches_the_data_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = case("case-plain", "2026-10-05T12:00:00Z")
    echoes_token = case(
        "case-echo",
        "2026-10-04T12:00:00Z",
        expect={"answer": {"verdict": "wrong", "shouldSay": BEARER}},
    )
    echoes_cookie = case("corr-cookie", "2026-10-03T12:00:00Z", runId=f"run-{COOKIE}")
    secret_field = case(
        "corr-field",
        "2026-10-02T12:00:00Z",
        expect={
            "decisions": {
                "verdict": "wrong",
                "shouldCall": [{"tool": "t", "args": {"password": "hunter2"}}],
            }
        },
    )
    keyed = version(1, description=f"made with {HEADER_KEY}")
    summary = imported(
        tmp_path,
        [
            entry(
                list_url(AGENT, PROJECT, f"&api_key={QUERY_KEY}"),
                200,
                page([plain, echoes_token, echoes_cookie, secret_field]),
                headers=CREDENTIALS,
                response_headers={"Set-Cookie": f"session={COOKIE}; HttpOnly"},
            ),
            entry(
                evaluation_url(TEST_CASE), 200, {"evaluation_test_case": keyed}, headers=CREDENTIALS
            ),
            entry("https://cdn.example.com/app.js", 200, "console.log(1)", headers=CREDENTIALS),
        ],
        capsys,
    )
    written = (tmp_path / "data.yaml").read_bytes()
    for secret in (*SECRETS, "hunter2"):
        assert secret.encode() not in written
        assert secret not in summary
    assert b"case-plain" in written
    for left_out in ("case-echo", "corr-cookie", "corr-field"):
        assert left_out.encode() not in written
    assert summary.count("it holds a secret of the traffic; left out") == 4
    assert "api_key=$EVALMOCK_API_KEY" in summary  # the entry named, its key redacted
    assert "entries of other hosts and paths, counted, not read: 1 (cdn.example.com: 1)" in summary


def test_what_the_rules_refuse_is_left_out_with_its_entry_and_the_file_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = case("case-good", "2026-10-05T12:00:00Z")
    bad = case("case-bad", "2026-10-04T12:00:00Z", updatedAt="2026-10-06T12:00:00Z")
    summary = imported(
        tmp_path,
        [
            entry(list_url(AGENT, PROJECT), 200, page([good, bad])),
            entry(
                evaluation_url(TEST_CASE), 200, {"evaluation_test_case": version(1, total_runs="x")}
            ),
            entry(list_url(AGENT, PROJECT, "&kind=hand"), 200, "<html>not json</html>"),
        ],
        capsys,
    )
    data = load_data([tmp_path / "data.yaml"], World(generated=False))
    assert [c["id"] for user_list in data.lists for c in user_list.cases] == ["case-good"]
    assert data.test_cases == ()
    lines = summary.splitlines()
    assert any(
        line.startswith(f"  staging.har entry 0 (GET {list_url(AGENT, PROJECT)}): /updatedAt: ")
        for line in lines
    ), summary
    assert any(
        line.startswith(f"  staging.har entry 1 (GET {evaluation_url(TEST_CASE)}): /total_runs: ")
        for line in lines
    ), summary
    assert (
        f"  staging.har entry 2 (GET {list_url(AGENT, PROJECT, '&kind=hand')}): "
        "the answer's body is not JSON" in lines
    )


def test_a_list_and_a_test_case_seen_in_part_are_named_in_the_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other_project = "0a9b8c7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d"
    summary = imported(
        tmp_path,
        [
            entry(
                list_url(AGENT, PROJECT, "&limit=1"),
                200,
                page([case("case-2", "2026-10-02T12:00:00Z")], "next-1"),
            ),
            entry(
                list_url(AGENT, other_project),
                200,
                page([case("case-9", "2026-10-09T12:00:00Z", project=other_project)]),
            ),
            entry(evaluation_url(TEST_CASE, 2), 200, {"evaluation_test_case": version(2)}),
            entry(evaluation_url(TEST_CASE, 3), 200, {"evaluation_test_case": version(3)}),
        ],
        capsys,
    )
    assert (
        f"{AGENT}  {PROJECT}  1      partial: a walk (no filter) stopped after 1 page with "
        "hasMore true" in summary
    )
    assert f"{AGENT}  {other_project}  1      complete (retired cases not walked)" in summary
    assert (
        f"{TEST_CASE}  2, 3      partial: version 1 not seen; the latest version unknown"
        " (never asked for without a version)" in summary
    )


def test_the_same_walk_in_two_har_files_is_said_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = [
        entry(
            list_url(AGENT, PROJECT, "&limit=1"),
            200,
            page([case("case-2", "2026-10-02T12:00:00Z")], "next-1"),
        )
    ]
    monday, tuesday = har(tmp_path / "monday.har", entries), har(tmp_path / "tuesday.har", entries)
    out = tmp_path / "data.yaml"
    assert main(["fixtures", "import", "--har", str(monday), str(tuesday), "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert said.count("stopped after 1 page with hasMore true") == 1, said


def test_a_list_walked_to_its_end_and_the_latest_version_known_are_complete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = case("case-2", "2026-10-02T12:00:00Z"), case("case-1", "2026-10-01T12:00:00Z")
    summary = imported(
        tmp_path,
        [
            entry(
                list_url(AGENT, PROJECT, "&include=retired&limit=1"), 200, page([first], "next-1")
            ),
            entry(
                list_url(AGENT, PROJECT, "&include=retired&limit=1&cursor=next-1"),
                200,
                page([second]),
            ),
            entry(evaluation_url(TEST_CASE, 1), 200, {"evaluation_test_case": version(1)}),
            entry(evaluation_url(TEST_CASE), 200, {"evaluation_test_case": version(2)}),
        ],
        capsys,
    )
    assert f"{AGENT}  {PROJECT}  2      complete\n" in summary
    assert f"{TEST_CASE}  1, 2      complete" in summary


def test_anonymize_twice_with_the_same_seed_writes_the_same_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = [
        entry(list_url(AGENT, PROJECT), 200, page([case("case-1", "2026-10-01T12:00:00Z")])),
        entry(
            evaluation_url(TEST_CASE),
            200,
            {"evaluation_test_case": version(1, created_by_user_email="ada@example.com")},
        ),
    ]
    path = har(tmp_path / "staging.har", entries)
    written = []
    for name in ("one.yaml", "two.yaml"):
        out = tmp_path / name
        assert (
            main(
                [
                    "fixtures",
                    "import",
                    "--har",
                    str(path),
                    "-o",
                    str(out),
                    "--anonymize",
                    "--seed",
                    "7",
                ]
            )
            == 0
        )
        written.append(out.read_bytes())
    assert written[0] == written[1]
    assert b"ada@example.com" not in written[0]


def test_a_version_numbered_past_any_range_is_counted_not_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    huge = 10**18
    summary = imported(
        tmp_path,
        [entry(evaluation_url(TEST_CASE), 200, {"evaluation_test_case": version(huge)})],
        capsys,
    )
    assert f"partial: {huge - 1} versions below {huge} not seen" in summary


def test_a_har_file_that_is_no_har_exits_2_saying_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "broken.har"
    path.write_text("{not json", encoding="utf-8")
    out = tmp_path / "data.yaml"
    assert main(["fixtures", "import", "--har", str(path), "-o", str(out)]) == 2
    assert capsys.readouterr().err.startswith(f"evalmock fixtures import: {path} is not JSON: ")
    assert not out.exists()


def test_answers_left_out_past_twenty_are_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = [entry(list_url(AGENT, PROJECT), 200, "not json") for _ in range(25)]
    summary = imported(tmp_path, entries, capsys)
    assert "left out (25):" in summary
    assert summary.count("the answer's body is not JSON") == 20
    assert summary.endswith("  and 5 more\n")
