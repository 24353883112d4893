"""Settings from the command line and the environment, the banner, the targets file and the ASGI
module."""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evalmock.cli import build_parser
from evalmock.contract.targets import dump_targets, load_targets
from evalmock.paths import CACHE_ENV
from evalmock.server.app import create_app
from evalmock.server.banner import banner
from evalmock.server.settings import (
    CURSOR_KEY_ENV,
    SETTINGS_ENV,
    ServerSettings,
    default_cursor_key,
)
from evalmock.server.targets_file import targets_for
from evalmock.world import World


def settings_from(*argv: str) -> ServerSettings:
    return ServerSettings.from_args(build_parser().parse_args(["serve", *argv]))


def test_settings_from_the_command_line() -> None:
    settings = settings_from(
        "--port",
        "9000",
        "--seed",
        "7",
        "--cases",
        "50",
        "--workers",
        "2",
        "--latency",
        "10-20",
        "--error-rate",
        "0.5",
        "--validate-responses",
        "--access-log",
        "--no-cors",
        "--cursor-key",
        "k",
        "--allow-unknown-params",
    )
    assert settings == ServerSettings(
        port=9000,
        seed=7,
        cases=50,
        workers=2,
        latency_ms=(10, 20),
        error_rate=0.5,
        validate_responses=True,
        access_log=True,
        cors=False,
        cursor_key="k",
        strict_validation=False,
    )


def test_unknown_query_parameters_are_bad_input_unless_allowed(make_client: Any) -> None:
    url = "/v1/agents/example/test-set/cases?projectId=2489E9AD-2EE2-8E00-8EC9-32D5F69181C0&limt=10"
    auth = {"Authorization": "Bearer demo-user"}
    strict = make_client().get(url, headers=auth)
    assert strict.status_code == 400 and strict.json()["error"]["details"]["parameter"] == "limt"
    assert make_client(strict_validation=False).get(url, headers=auth).status_code == 200


def test_default_cursor_key_is_derived_from_the_seed() -> None:
    assert (
        settings_from("--seed", "7").cursor_key
        == default_cursor_key(7)
        == ServerSettings(seed=7).cursor_key
    )
    assert default_cursor_key(7) != default_cursor_key(8)


def test_cursor_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CURSOR_KEY_ENV, "from-env")
    assert settings_from().cursor_key == "from-env"
    assert ServerSettings.from_env({CURSOR_KEY_ENV: "from-env"}).cursor_key == "from-env"


def test_settings_travel_to_workers_through_the_environment() -> None:
    settings = ServerSettings(
        port=9001, seed=3, cases=20, workers=3, latency_ms=(5, 9), cursor_key="shared"
    )
    assert ServerSettings.from_env(settings.to_env()) == settings
    assert ServerSettings.from_env({}) == ServerSettings()


def test_asgi_module_builds_its_app_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SETTINGS_ENV, ServerSettings(seed=5, cases=10).to_env()[SETTINGS_ENV])
    import evalmock.server.asgi as asgi

    module = importlib.reload(asgi)
    with module.app.test_client() as client:
        assert client.get("/v1/openapi.json").status_code == 200


# Runs `evalmock serve` up to the point where the server would listen, then prints what was
# imported.
SERVE_IMPORTS = """
import json, sys
from evalmock.server import http_server
http_server.serve_app = lambda app, name, options: print(json.dumps(sorted(sys.modules))) or 0
from evalmock.cli import main
main(["serve", "--port", "0", "--cases", "5"])
"""
WORKER_IMPORTS = (
    "import json, sys; import evalmock.server.asgi; print(json.dumps(sorted(sys.modules)))"
)
# What only the audit, the proxy or another command needs: a server process never pays for it. Rich
# and Pygments would come with httpx's command-line client (see
# evalmock/server/deferred_imports.py).
NOT_FOR_SERVING = (
    "evalmock.harness",
    "evalmock.proxy",
    "schemathesis",
    "hypothesis",
    "rich",
    "pygments",
)


def modules_imported_by(code: str, cache: Path) -> list[str]:
    env = {**os.environ, CACHE_ENV: str(cache)}
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=env,
    )
    return json.loads(run.stdout.splitlines()[-1])


@pytest.mark.parametrize(
    "code", [SERVE_IMPORTS, WORKER_IMPORTS], ids=["evalmock serve", "a --workers process"]
)
def test_a_server_process_imports_neither_the_harness_nor_schemathesis(
    code: str, tmp_path: Path
) -> None:
    imported = modules_imported_by(code, tmp_path)
    assert "evalmock.server.app" in imported  # the app was built
    unwanted = [
        name
        for name in imported
        if name.split(".")[0] in NOT_FOR_SERVING or name.startswith(NOT_FOR_SERVING)
    ]
    assert unwanted == []


@pytest.mark.parametrize(
    "code", [SERVE_IMPORTS, WORKER_IMPORTS], ids=["evalmock serve", "a --workers process"]
)
def test_a_second_start_needs_neither_faker_nor_the_fixture_checks(
    code: str, tmp_path: Path
) -> None:
    # draws the pools and checks the fixtures, and keeps both
    first = modules_imported_by(code, tmp_path)
    assert "faker" in first and "openapi_schema_validator" in first
    imported = modules_imported_by(code, tmp_path)
    assert "evalmock.server.app" in imported
    assert [
        name for name in ("faker", "openapi_schema_validator", "pydantic") if name in imported
    ] == []


@pytest.mark.parametrize(
    "code", [SERVE_IMPORTS, WORKER_IMPORTS], ids=["evalmock serve", "a --workers process"]
)
def test_a_server_without_data_files_does_not_import_the_file_watcher(
    code: str, tmp_path: Path
) -> None:
    imported = modules_imported_by(code, tmp_path)
    assert "evalmock.server.data_watcher" in imported and "watchfiles" not in imported


@pytest.mark.parametrize(
    "code", [SERVE_IMPORTS, WORKER_IMPORTS], ids=["evalmock serve", "a --workers process"]
)
def test_a_server_process_never_runs_requests_which_connexion_imports(
    code: str, tmp_path: Path
) -> None:
    imported = modules_imported_by(code, tmp_path)
    # imported, as Connexion asks ...
    assert "connexion.json_schema" in imported and "requests" in imported
    assert [
        name for name in ("requests.api", "urllib3", "charset_normalizer") if name in imported
    ] == []  # not run


def test_a_workers_process_imports_the_app_with_the_collector_paused_and_serves_with_it_on() -> (
    None
):
    code = """
import gc, importlib.abc, sys
during = []

class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "evalmock.server.app":
            during.append(gc.isenabled())
        return None

sys.meta_path.insert(0, Watch())
import evalmock.server.asgi
print(during, gc.isenabled())
"""
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert run.stdout.splitlines()[-1] == "[False] True"


def test_requests_runs_when_connexion_first_uses_it() -> None:
    code = (
        "import sys; from evalmock.server.deferred_imports import defer_unused; defer_unused(); "
        "import evalmock.server.app, connexion.json_schema as schema; ran = 'urllib3' in "
        "sys.modules; "
        "get = schema.requests.get; "
        "print(ran, get.__module__, 'urllib3' in sys.modules, "
        "[type(f).__name__ for f in sys.meta_path if type(f).__name__ == 'DeferringFinder'])"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    # Not run at import; whole on the first attribute read (a remote $ref's fetch); the finder gone
    # from the path.
    assert run.stdout.split() == ["False", "requests.api", "True", "[]"]


def test_other_processes_import_requests_as_always() -> None:
    code = (
        "import sys, evalmock.server.app; from requests.structures import CaseInsensitiveDict; "
        "import requests.utils; print(requests.utils.CaseInsensitiveDict is CaseInsensitiveDict)"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    # a deferred requests would have run requests.structures twice
    assert run.stdout.split() == ["True"]


def test_httpx_works_without_its_command_line_client_in_a_server_process() -> None:
    code = (
        "import evalmock.server, httpx; "
        "print(httpx.Response(200, json={'a': 1}).json()['a'], httpx.main.__module__ == 'httpx')"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    # httpx's own stand-in for its command line, the rest as always
    assert run.stdout.split() == [
        "1",
        "True",
    ]


def test_banner_says_where_everything_is() -> None:
    world = World(seed=42, cases=10)
    text = banner(ServerSettings(port=8123, write_targets="t.toml"), world)
    for expected in (
        "http://127.0.0.1:8123/v1/ui/",
        "http://127.0.0.1:8123/v2/ui/",
        "demo-user",
        "demo-expired",
        "demo-revoked",
        "acme.drafting",
        "123e4567-e89b-12d3-a456-426614174000",
        "t.toml",
        "curl 'http://127.0.0.1:8123/v1/agents/example/test-set/cases?projectId=2489E9AD-2EE2-8E00-8EC9-32D5F69181C0"
        "&include=retired&limit=25' -H 'Authorization: Bearer demo-user'",
    ):
        assert expected in text


def test_banner_never_shows_a_registered_token_whole() -> None:
    long, short = "sk-staging-0123456789abcdef", "t0ken"
    text = banner(
        ServerSettings(tokens=((long, "user"), (short, "service"))), World(seed=42, cases=10)
    )
    assert long not in text and short not in text
    assert f"a user         registered token …cdef ({len(long)} characters)" in text
    assert "a service      registered token of 5 characters" in text


def test_banner_says_cors_is_on_with_a_fetch_that_a_page_on_another_origin_can_run() -> None:
    text = banner(ServerSettings(port=8123), World(seed=42, cases=10))
    assert "CORS is on: a page on any origin may call both APIs (--no-cors turns it off)." in text
    (fetch,) = [line.strip() for line in text.splitlines() if line.strip().startswith("fetch(")]
    url = re.fullmatch(
        r"fetch\('(http://127\.0\.0\.1:8123(/[^']+))', \{headers: \{Authorization: 'Bearer "
        r"demo-user'\}\}\)\.then\(r => r\.json\(\)\)\.then\(console\.log\)",
        fetch,
    )
    assert url is not None, fetch
    with create_app(ServerSettings(cases=10)).test_client() as client:
        answer = client.get(
            url.group(2),
            headers={"Authorization": "Bearer demo-user", "Origin": "http://localhost:5173"},
        )
    assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == "*"
    assert answer.json()["data"]


def test_banner_says_cors_is_off_and_offers_no_fetch() -> None:
    text = banner(ServerSettings(cors=False), World(seed=42, cases=10))
    assert "CORS is off (--no-cors): a page on another origin cannot call these APIs." in text
    assert "fetch(" not in text


def test_targets_file_round_trips_through_load_targets(tmp_path: Path) -> None:
    world = World(seed=42, cases=10)
    path = tmp_path / "targets.toml"
    dump_targets(targets_for(world), path)
    targets = load_targets(path)
    assert targets.token == "demo-user" and targets.second_token == "demo-other"
    assert {(p.agent_id, p.project_id) for p in targets.projects} == {
        (agent, project) for agent in world.agent_ids() for project in world.project_ids(agent)
    }
    assert {t.uuid: t.versions for t in targets.test_cases} == world.evaluation_test_case_versions()


def test_banner_names_the_http_server_that_runs() -> None:
    world = World(seed=42, cases=10)
    assert (
        banner(ServerSettings(), world, "granian").splitlines()[0].endswith(", 1 worker on Granian")
    )
    assert (
        banner(ServerSettings(workers=2), world, "uvicorn")
        .splitlines()[0]
        .endswith(", 2 workers on uvicorn")
    )
