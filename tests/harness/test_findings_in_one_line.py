"""What a CI engineer forwards to a service team, read from one line: a wrong-shape service's FAILED
line states the reason of its plainest example in every output, that example's curl is the request
shown, and its source quotes the part of the page it broke; a busy service's share of busy answers,
the requests they hit, and advice that follows what waiting did to it."""

from __future__ import annotations

import io
import json
import random
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from browser import launched_chromium
from evalmock.cli import main
from evalmock.contract.targets import dump_targets
from evalmock.server.app import create_app
from evalmock.server.settings import ServerSettings
from evalmock.server.targets_file import targets_for
from evalmock.world import World

from .mutants import Headers, Mutation, MutationSwitch, Scope, on_pages
from .serving import serving

CASES = 60  # per project: a few pages, quick walks
REASON = '"data" is a required property at /'
PAGE_WORDS = "“Page of cases.”"
UNRELATED = ("<= 100 properties", "Allowed values: correction hand")


@dataclass(frozen=True)
class Service:
    base_url: str
    targets: Path
    switch: MutationSwitch


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """The mock in this process, its world small, behind a switch that makes it another service."""
    world = World(seed=42, cases=CASES)
    targets = tmp_path_factory.mktemp("targets") / "targets.toml"
    dump_targets(targets_for(world), targets)
    switch = MutationSwitch(create_app(ServerSettings(cases=CASES), world=world))
    with serving(switch) as base_url:
        yield Service(base_url, targets, switch)


def _ignore_prefer(scope: Scope) -> Scope:
    # a real service: `Prefer: code=503` asks it for nothing
    scope["headers"] = [(k, v) for k, v in scope["headers"] if k.lower() != b"prefer"]
    return scope


def _other_shape(page: dict[str, Any], query: dict[str, str]) -> None:
    page["items"], page["has_more"] = page.pop("data"), page.pop("hasMore")
    page.pop("nextCursor", None)


WRONG_SHAPE = Mutation(
    "wrong_shape",
    "the list answers {items, has_more}, and a Prefer header changes nothing",
    "response_schema_conformance",
    (),
    request=_ignore_prefer,
    response=on_pages(_other_shape),
)


def audit(service: Service, mutation: Mutation, *options: str) -> tuple[int, str]:
    """`evalmock contract` of the test-set API of `service` with `mutation` planted; its exit code
    and console."""
    service.switch.mutation = mutation
    out = io.StringIO()
    try:
        with redirect_stdout(out):
            code = main(
                [
                    "contract",
                    "--base-url",
                    service.base_url,
                    "--targets",
                    str(service.targets),
                    "--api",
                    "test-set",
                    "--no-fuzz",
                    "--quiet",
                    *options,
                ]
            )
    finally:
        service.switch.mutation = None
    return code, out.getvalue()


@pytest.fixture(scope="module")
def wrong_shape(
    service: Service, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path, Path, Path]:
    """The console, JUnit, Markdown and HTML reports of an audit of the wrong-shape service."""
    folder = tmp_path_factory.mktemp("wrong-shape")
    junit, markdown, page = folder / "junit.xml", folder / "report.md", folder / "report.html"
    code, console = audit(service, WRONG_SHAPE, "--junit", str(junit), "--report", str(markdown))
    assert code == 1, console
    assert audit(service, WRONG_SHAPE, "--report", str(page))[0] == 1
    return console, junit, markdown, page


def test_the_failed_line_states_the_reason_and_how_many_more_in_the_console(
    wrong_shape: tuple[str, Path, Path, Path],
) -> None:
    console = wrong_shape[0]
    [line] = [ln for ln in console.splitlines() if ln.startswith("FAILED response_schema")]
    assert re.fullmatch(
        r"FAILED response_schema_conformance \[page\] \((\d+)× GET "
        r"/v1/agents/\{agentId\}/test-set/cases -> 200\): Response violates schema: "
        rf"{re.escape(REASON)} \(and (\d+) more\)",
        line,
    ), line
    count, more = re.findall(r"\d+", line.split("(", 1)[1])[0], line.rsplit("(and ", 1)[1]
    assert int(more.split()[0]) == int(count) - 1
    # a scenario's own failure says its expected and received in the line too
    walk = next(ln for ln in console.splitlines() if ln.startswith("FAILED walk_yields"))
    assert "expected {data: [...], hasMore}, received {" in walk


def test_the_junit_message_is_the_failed_line_s_reason(
    wrong_shape: tuple[str, Path, Path, Path],
) -> None:
    failure = ET.parse(wrong_shape[1]).find(
        ".//testcase[@name='response_schema_conformance']/failure"
    )
    assert failure is not None
    message = failure.get("message") or ""
    assert message.startswith(f"Response violates schema: {REASON} (and ")
    assert PAGE_WORDS in (failure.text or "")
    assert not any(words in (failure.text or "") for words in UNRELATED)


def test_the_report_s_example_is_a_plain_request_its_curl_the_request_shown_its_quote_the_rule(
    wrong_shape: tuple[str, Path, Path, Path],
) -> None:
    text = wrong_shape[2].read_text()
    section = text.split("### `response_schema_conformance`", 1)[1].split("\n### ", 1)[0]
    heading = section.splitlines()[0]
    assert heading == (
        f" (test-set, page): Response violates schema: {REASON} "
        f"(and {heading.rsplit('(and ', 1)[1]}"
    )
    source = next(line for line in section.splitlines() if line.startswith("Source: "))
    assert PAGE_WORDS in source and not any(words in source for words in UNRELATED)
    shown = next(line for line in section.splitlines() if line.startswith("Request: "))
    curl = section.split("```sh\n", 1)[1].split("\n```", 1)[0]
    # the plainest request that shows it: no `Prefer`, though the busy scenario's request (sent
    # with `Prefer: code=503`, which this service ignores) breaks the schema as well
    assert "Prefer" not in shown and "Prefer" not in curl
    sent = re.fullmatch(r"Request: `GET (\S+) with (.+)` answered 200\.", shown)
    assert sent is not None, shown
    assert curl == f"curl -sS -i '{sent[1]}' " + " ".join(
        f'-H "{header}"' for header in sent[2].split("; ")
    )


def test_the_html_report_shows_the_reason_at_the_top_of_its_finding_as_rendered(
    wrong_shape: tuple[str, Path, Path, Path], tmp_path: Path
) -> None:
    page, screenshot = wrong_shape[3], tmp_path / "wrong-shape.png"
    with launched_chromium() as chromium:
        tab = chromium.new_page(viewport={"width": 1280, "height": 900})
        tab.goto(page.as_uri())
        finding = tab.locator(".finding", has_text="response_schema_conformance").first
        finding.screenshot(path=str(screenshot))
        lines = [line for line in finding.inner_text().splitlines() if line.strip()]
    assert lines[0] == "response_schema_conformance test-set · page"
    assert lines[1].startswith(f"Response violates schema: {REASON} (and "), lines[:4]
    assert screenshot.read_bytes().startswith(b"\x89PNG")


# -- a busy service
# -------------------------------------------------------------------------------------------
BUSY_SHARE = 0.3


def busy(share: float, seed: int = 7) -> Mutation:
    """A service whose database is too busy for `share` of the requests, at random: 503
    database-busy, Retry-After: 0 (an answer a moment later is as likely busy)."""
    chance = random.Random(seed)

    def answer(scope: Scope, status: int, headers: Headers, body: bytes) -> Any:
        if not scope["path"].startswith("/v1/") or chance.random() >= share:
            return status, headers, body
        error = {"code": "database-busy", "message": "busy", "requestId": "req-busy"}
        return (
            503,
            [
                (b"content-type", b"application/json"),
                (b"retry-after", b"0"),
                (b"x-request-id", b"req-busy"),
            ],
            json.dumps({"error": error}).encode(),
        )

    return Mutation("busy", "a busy database", "", (), response=answer)


def test_a_busy_service_s_share_is_named_with_its_requests_and_no_slower_pace_is_advised(
    service: Service,
) -> None:
    code, console = audit(service, busy(BUSY_SHARE))
    assert code in (0, 4), console  # the service's throttling is never a rule's failure
    [line] = [ln for ln in console.splitlines() if ln.startswith("throttling (the service's")]
    found = re.search(
        r"(\d+) of (\d+) answers \((\d+)%\) were busy or throttled, to "
        r"GET /v1/agents/\{agentId\}/test-set/cases \((\d+)\)",
        line,
    )
    assert found is not None, line
    busy_answers, answers, percent, to_list = map(int, found.groups())
    assert busy_answers == to_list and 20 <= percent <= 40
    assert percent == round(100 * busy_answers / answers)
    assert "throttled about as often" in line
    assert "the share is the service's own, not the audit's pace" in line
    assert "--rate-limit" not in line
