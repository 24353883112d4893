"""The start-up text: where each API and its Swagger UI live, the demo tokens, known ids, a curl and
a fetch()."""

from __future__ import annotations

from evalmock import environment
from evalmock.contract.documents import ADMIN, GRADIENT, TEST_SET
from evalmock.defaults import CHURN_RETIRE_EVERY, DEFAULT_STORE, LOOPBACK_OF
from evalmock.nouns import counted
from evalmock.server.auth import DEMO_TOKENS, USER_TOKEN
from evalmock.server.http_server import SERVER_NAMES
from evalmock.server.sessions.admission import admin_api_off_reason
from evalmock.server.sessions.store_choice import shown as shown_store
from evalmock.server.settings import ServerSettings
from evalmock.world import World
from evalmock.world.catalog import EXAMPLE_AGENT, EXAMPLE_PROJECT
from evalmock.world.gradient import EXAMPLE_TEST_CASE

MAX_LISTED = 6
OTHER_TOKENS = {  # what any other token gets, by --any-token
    True: "non-empty token: a user of its own",
    False: "401 (register more with --token NAME[:user|service], or accept any with --any-token)",
}
MAX_USER_LISTED = 12
TOKEN_END_SHOWN = (
    4  # characters of a registered token the banner shows, and only of a token four times as long
)


def registered_token(token: str) -> str:
    """How the banner names a registered token (--token, EVALMOCK_ACCEPT_TOKENS): never whole, as it
    may be a real one and a banner ends up in CI and container logs; its last characters tell two
    registered tokens apart."""
    if len(token) < 4 * TOKEN_END_SHOWN:
        return f"registered token of {len(token)} characters"
    return f"registered token …{token[-TOKEN_END_SHOWN:]} ({len(token)} characters)"


def base_url(settings: ServerSettings) -> str:
    return public_url(settings.host, settings.port)


def public_url(host: str, port: int) -> str:
    """Where users reach a server listening on `host`:`port`: EVALMOCK_PUBLIC_URL when set, else
    `local_url`."""
    return (environment.read(environment.PUBLIC_URL) or "").rstrip("/") or local_url(host, port)


def local_url(host: str, port: int) -> str:
    """The URL a user on this machine opens for a server listening on `host`: a wildcard address
    (every interface) is not one a browser can open, so its loopback address stands for it."""
    host = LOOPBACK_OF.get(host, host)
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def _example_ids(world: World) -> tuple[str, str] | None:
    """The list the banner's curl reads: the user's first, else the reference page's, else any."""
    if world.data.lists:
        return world.data.lists[0].agent_id, world.data.lists[0].project_id
    if world.has_agent(EXAMPLE_AGENT) and EXAMPLE_PROJECT in world.project_ids(EXAMPLE_AGENT):
        return EXAMPLE_AGENT, EXAMPLE_PROJECT.upper()  # as the reference page writes it
    return next(
        (
            (agent, world.project_ids(agent)[0])
            for agent in world.agent_ids()
            if world.project_ids(agent)
        ),
        None,
    )


def _example_test_case(world: World) -> str | None:
    if world.data.test_cases:
        return world.data.test_cases[0].uuid
    versions = world.evaluation_test_case_versions()
    return EXAMPLE_TEST_CASE if EXAMPLE_TEST_CASE in versions else next(iter(versions), None)


def _headline(settings: ServerSettings, world: World, server: str | None) -> str:
    workers = counted(settings.workers, "worker")
    if server:  # which one runs depends on whether Granian is installed: a CI log should say
        workers += f" on {SERVER_NAMES.get(server, server)}"
    if not world.generated:
        return f"evalmock: only the data of {', '.join(world.data.files)}, {workers}"
    return (
        f"evalmock: seed {world.seed}, {world.cases} generated cases per agent and project, "
        f"{workers}"
    )


def _your_data(world: World) -> list[str]:
    """The user's lists with their case counts and test cases with their versions (reloads may
    change them)."""
    data = world.data
    lines = [f"Your data ({', '.join(data.files)}), reloaded when a file changes: {data.summary()}"]
    for user_list in data.lists[:MAX_USER_LISTED]:
        count = len(user_list.cases)
        lines.append(
            f"  {user_list.agent_id:<22} {user_list.project_id} ({counted(count, 'case')})"
        )
    numbers = world.evaluation_test_case_versions()
    for test_case in data.test_cases[:MAX_USER_LISTED]:
        lines.append(f"  {test_case.uuid}: versions {', '.join(map(str, numbers[test_case.uuid]))}")
    hidden = max(0, len(data.lists) - MAX_USER_LISTED) + max(
        0, len(data.test_cases) - MAX_USER_LISTED
    )
    if hidden:
        lines.append(f"  … {hidden} more (evalmock serve --write-targets FILE lists them all)")
    return lines


def _browser(settings: ServerSettings, root: str, example: tuple[str, str] | None) -> list[str]:
    """Whether a browser app on another origin may call the APIs, and a fetch() to paste into its
    console."""
    if not settings.cors:
        return ["CORS is off (--no-cors): a page on another origin cannot call these APIs."]
    lines = [
        "CORS is on: a page on any origin may call both APIs (--no-cors turns it off). In its "
        "console:"
    ]
    if example is not None:
        path = f"{TEST_SET.base_path}/agents/{example[0]}/test-set/cases"
        url = f"{root}{path}?projectId={example[1]}&limit=25"
        lines.append(
            f"  fetch('{url}', {{headers: {{Authorization: 'Bearer {USER_TOKEN}'}}}})"
            ".then(r => r.json()).then(console.log)"
        )
    return lines


def banner(settings: ServerSettings, world: World, server: str | None = None) -> str:
    root = base_url(settings)
    lines = [
        _headline(settings, world, server),
        "",
        f"  {TEST_SET.title}",
        f"    {root}{TEST_SET.base_path}/agents/{{agentId}}/test-set/cases",
        f"    Swagger UI {root}{TEST_SET.base_path}/ui/   document "
        f"{root}{TEST_SET.base_path}/openapi.json",
        f"  {GRADIENT.title}",
        f"    {root}{GRADIENT.base_path}/gen-ai/evaluation_test_cases/{{test_case_uuid}}",
        f"    Swagger UI {root}{GRADIENT.base_path}/ui/   document "
        f"{root}{GRADIENT.base_path}/openapi.json",
        *_admin_api(settings, root),
        "",
        "Demo tokens (Authorization: Bearer <token>):",
        *(f"  {token:<14} {meaning}" for token, meaning in DEMO_TOKENS.items()),
        *(f"  a {kind:<12} {registered_token(token)}" for token, kind in settings.tokens),
        f"  {'any other':<14} {OTHER_TOKENS[settings.any_token]}",
        "",
    ]
    if world.generated:
        lines += _generated(world)
    if world.data.files:
        lines += _your_data(world)
    lines += ["", "Try:"]
    lines += _tries(settings, world, root)
    return "\n".join(lines)


def _admin_api(settings: ServerSettings, root: str) -> list[str]:
    """Where the admin API lives (sessions: a world per test, faults, the journal), or why it is
    off."""
    off = admin_api_off_reason(
        settings.host,
        settings.admin_token,
        workers=settings.workers,
        shared_store=settings.store != DEFAULT_STORE,
    )
    if off is not None:
        return [f"  {ADMIN.title}: {off}"]
    base = f"{root}{ADMIN.base_path}"
    guard = "Bearer <--admin-token>" if settings.admin_token else "on loopback only"
    return [
        f"  {ADMIN.title}: sessions, a world per test ({guard})",
        f"    POST {base}/sessions   Swagger UI {base}/ui/",
    ]


def _generated(world: World) -> list[str]:
    """The generated world's first agents and projects, and its first evaluation test cases."""
    lines = ["Agents and projects:"]
    for agent_id in world.agent_ids()[:MAX_LISTED]:
        lines.append(f"  {agent_id:<22} {', '.join(world.project_ids(agent_id))}")
    versions = world.evaluation_test_case_versions()
    lines.append("Evaluation test cases (uuid: versions):")
    for uuid, numbers in list(versions.items())[:MAX_LISTED]:
        lines.append(f"  {uuid}: {', '.join(map(str, numbers))}")
    if len(versions) > MAX_LISTED:
        lines.append(
            f"  … {len(versions) - MAX_LISTED} more (evalmock serve --write-targets FILE lists "
            "them all)"
        )
    return lines


def _tries(settings: ServerSettings, world: World, root: str) -> list[str]:
    """What to try: a curl for each API, a fetch() from a browser, the Prefer header; then the added
    latency and errors, and where the targets were written."""
    lines: list[str] = []
    example = _example_ids(world)
    if example is not None:
        lines.append(
            f"  curl '{root}{TEST_SET.base_path}/agents/{example[0]}/test-set/cases"
            f"?projectId={example[1]}&include=retired&limit=25' -H 'Authorization: Bearer "
            f"{USER_TOKEN}'"
        )
    test_case = _example_test_case(world)
    if test_case is not None:
        lines.append(
            f"  curl '{root}{GRADIENT.base_path}/gen-ai/evaluation_test_cases/{test_case}'"
            f" -H 'Authorization: Bearer {USER_TOKEN}'"
        )
    lines += _browser(settings, root, example)
    lines.append(
        "Force an answer with a Prefer header: 'Prefer: code=503', 'Prefer: example=retired', "
        "'Prefer: delay=800'."
    )
    if settings.store != DEFAULT_STORE:
        lines.append(
            f"Sessions are kept in {shown_store(settings.store)}, shared by every replica started "
            "with the same --store."
        )
    low, high = settings.latency_ms
    if high or settings.error_rate:
        latency = f"{low} ms" if low == high else f"{low}-{high} ms"
        lines.append(f"Added latency {latency}; error rate {settings.error_rate:g}.")
    if settings.churn:
        lines.append(
            f"Lists move (--churn {settings.churn}): a case arrives at the top of a list every "
            f"{settings.churn} requests of it, and one arrival in {CHURN_RETIRE_EVERY} retires one "
            "of its newest active cases."
        )
    if settings.write_targets:
        path = settings.write_targets
        counts = ", with each list's counts at start" if settings.churn else ""
        lines.append(f"Targets written to {path}{counts} (for evalmock contract --targets {path}).")
    return lines
