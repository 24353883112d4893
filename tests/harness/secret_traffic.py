"""Traffic full of secrets, as a browser app sends it: our server behind a gateway that wants a
session cookie, an X-Api-Key header and an api_key query value, serving a small page that calls the
test-set API from headless Chromium; the gateway plants one breach that echoes the secrets back (the
error envelope's requestId is the session cookie, its message quotes the API key)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest

from browser import launched_chromium
from evalmock.contract.targets import dump_targets
from evalmock.server.app import create_app
from evalmock.server.settings import ServerSettings
from evalmock.server.targets_file import targets_for
from evalmock.world import World

CASES = 30
TOKEN = "br0wser-Bearer-Token-5150"
SESSION = "sess-4c1d9e7a2b8f6e30"  # a cookie the browser holds
CSRF = "csrf-9a8b7c6d5e4f3a2b"  # a cookie the page's answer sets
ROTATED = "rot-77e1c0ffee42d00d"  # a cookie each API answer sets
API_KEY = "xak-live-2f9e8d7c6b5a"  # the X-Api-Key header
QUERY_KEY = "qak-live-1a2b3c4d5e6f"  # the api_key query value
PASSWORD = "hunter2"  # what the page signs in with (a JSON request body)
# what the sign-in answers (a JSON field), echoed later by the gateway
ACCESS_TOKEN = "acc-9d8c7b6a5f4e3d2c1b0a"
SIGN_IN_ID = "s7x2q"  # a short secret-named field of the same answer
SECRETS = {
    "token": TOKEN,
    "session cookie": SESSION,
    "csrf cookie": CSRF,
    "rotated cookie": ROTATED,
    "X-Api-Key": API_KEY,
    "api_key query": QUERY_KEY,
    "password": PASSWORD,
    "access token": ACCESS_TOKEN,
    "sign-in sid": SIGN_IN_ID,
}
BREACH = "request_id_header_is_the_envelope_s"  # what the gateway's echo breaks, at page level

PAGE = """<!doctype html><title>test set</title><script>
async function run(agent, project, token, apiKey, queryKey, password) {
  const signIn = await fetch("/session", {method: "POST",
                                          headers: {"Content-Type": "application/json"},
                                          body: JSON.stringify({user: "ada", password: password})});
  if (signIn.status !== 200) throw new Error(`sign-in answered ${signIn.status}`);
  // read whole, as an app reads it: an answer never read may be missing from the HAR
  await signIn.json();
  const answers = [];
  for (const extra of ["&limit=5", "&limit=0"]) {
    const url = `/v1/agents/${agent}/test-set/cases` +
                `?projectId=${project}&api_key=${queryKey}${extra}`;
    const response = await fetch(url, {headers: {"Authorization": `Bearer ${token}`,
                                                  "X-Api-Key": apiKey}});
    answers.push([response.status, await response.text()]);
  }
  return answers;
}
</script>"""


class Gateway:
    """Pure ASGI: `/app` is the page (setting the csrf cookie); `POST /session` signs in with the
    password and answers an access token; an API call without the session cookie, the API key header
    and the api_key query value gets 401, else goes to `app` without the api_key, and its answer
    comes back with a rotated cookie and, for an error, the secrets echoed in the envelope."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"] == "/app":
            await _send(
                send,
                200,
                [
                    (b"content-type", b"text/html"),
                    (b"set-cookie", f"csrf={CSRF}; Path=/; SameSite=Strict".encode()),
                ],
                PAGE.encode(),
            )
            return
        if scope["path"] == "/session":
            request = await _body(receive)
            if (
                scope["method"] != "POST"
                or json.loads(request or b"{}").get("password") != PASSWORD
            ):
                await _send(
                    send, 403, [(b"content-type", b"text/plain")], b"sign in with the password"
                )
                return
            answer = {
                "access_token": ACCESS_TOKEN,
                "tokenType": "Bearer",
                "sid": SIGN_IN_ID,
                "expiresIn": 3600,
            }
            await _send(
                send, 200, [(b"content-type", b"application/json")], json.dumps(answer).encode()
            )
            return
        headers = {name.decode().lower(): value.decode() for name, value in scope["headers"]}
        query = parse_qsl(scope["query_string"].decode(), keep_blank_values=True)
        cookie = SimpleCookie(headers.get("cookie", ""))
        session = cookie["session"].value if "session" in cookie else None
        if (session, headers.get("x-api-key"), dict(query).get("api_key")) != (
            SESSION,
            API_KEY,
            QUERY_KEY,
        ):
            await _send(
                send, 401, [(b"content-type", b"text/plain")], b"the gateway wants its keys"
            )
            return
        scope = {
            **scope,
            "query_string": urlencode([(k, v) for k, v in query if k != "api_key"]).encode(),
        }
        answer: dict[str, Any] = {"body": b""}

        async def keep(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                answer.update(status=message["status"], headers=list(message.get("headers", [])))
            elif message["type"] == "http.response.body":
                answer["body"] += message.get("body", b"")

        await self.app(scope, receive, keep)
        body = answer["body"]
        if answer["status"] >= 400:  # the planted breach: the secrets echoed back
            envelope = json.loads(body)
            envelope["error"]["requestId"] = SESSION
            envelope["error"]["message"] += (
                f" (caller key {API_KEY}, signed in with {ACCESS_TOKEN})"
            )
            body = json.dumps(envelope).encode()
        kept = [
            (name, value) for name, value in answer["headers"] if name.lower() != b"content-length"
        ]
        await _send(
            send,
            answer["status"],
            [*kept, (b"set-cookie", f"rotated={ROTATED}; Path=/; HttpOnly".encode())],
            body,
        )


async def _body(receive: Any) -> bytes:
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return body


async def _send(send: Any, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@dataclass(frozen=True)
class SecretService:
    app: Gateway
    targets_path: Path
    agent: str
    project: str


def secret_service(folder: Path) -> SecretService:
    """The gateway around our server (registering TOKEN), and its targets file (naming TOKEN as the
    token)."""
    world = World(seed=42, cases=CASES)
    targets = dataclasses.replace(targets_for(world), token=TOKEN)
    dump_targets(targets, folder / "targets.toml")
    settings = ServerSettings(cases=CASES, tokens=((TOKEN, "user"),))
    project = targets.projects[0]
    return SecretService(
        Gateway(create_app(settings, world=world)),
        folder / "targets.toml",
        project.agent_id,
        project.project_id,
    )


def record_in_chromium(origin: str, service: SecretService, har: Path) -> list[list[Any]]:
    """Open the page at `origin` in headless Chromium holding the session cookie, let it sign in and
    call the API twice (a page, then a refused limit), record the HAR; returns the API's answers the
    page got."""
    with launched_chromium() as chromium:
        context = chromium.new_context(record_har_path=str(har))
        context.add_cookies([{"name": "session", "value": SESSION, "url": origin}])
        page = context.new_page()
        page.goto(origin + "/app")
        answers = page.evaluate(
            "([a, p, t, k, q, w]) => run(a, p, t, k, q, w)",
            [service.agent, service.project, TOKEN, API_KEY, QUERY_KEY, PASSWORD],
        )
        context.close()
    return answers


def leaked(text: str) -> list[str]:
    """Which secrets appear in `text`."""
    return [what for what, secret in SECRETS.items() if secret in text]


# What a reader sets to run the curl commands (the variables the outputs' note names).
VARIABLES = {
    "EVALMOCK_TOKEN": TOKEN,
    "EVALMOCK_COOKIE_SESSION": SESSION,
    "EVALMOCK_COOKIE_CSRF": CSRF,
    "EVALMOCK_COOKIE_ROTATED": ROTATED,
    "EVALMOCK_X_API_KEY": API_KEY,
    "EVALMOCK_API_KEY": QUERY_KEY,
}


def run_curl(command: str, variables: dict[str, str]) -> tuple[int, bytes]:
    """Run a report's curl command in a shell with these variables set; the answer's status and
    body."""
    if shutil.which("curl") is None:
        message = "curl is not installed: apt-get install curl (.ci/run installs it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **variables}
    output = subprocess.run(
        ["sh", "-c", command], env=environment, capture_output=True, check=True, timeout=30
    ).stdout
    head, _, body = output.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def curl_lines(markdown: str) -> list[str]:
    """The curl commands of a Markdown report (each alone in a sh block)."""
    return [line for line in markdown.splitlines() if line.startswith("curl ")]
