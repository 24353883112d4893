"""The start-up text: where each API and its Swagger UI live, the demo tokens, known ids and a curl to paste."""

from __future__ import annotations

from evalmock.contract.documents import GRADIENT, TEST_SET
from evalmock.server.auth import DEMO_TOKENS
from evalmock.server.settings import ServerSettings
from evalmock.world import World
from evalmock.world.catalog import EXAMPLE_AGENT, EXAMPLE_PROJECT
from evalmock.world.gradient import EXAMPLE_TEST_CASE

MAX_LISTED = 6


def base_url(settings: ServerSettings) -> str:
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(settings.host, settings.host)
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{settings.port}"


def _example_ids(world: World) -> tuple[str, str]:
    if world.has_agent(EXAMPLE_AGENT) and EXAMPLE_PROJECT in world.project_ids(EXAMPLE_AGENT):
        return EXAMPLE_AGENT, EXAMPLE_PROJECT.upper()  # as the reference page writes it
    agent = world.agent_ids()[0]
    return agent, world.project_ids(agent)[0]


def _example_test_case(world: World) -> str:
    versions = world.evaluation_test_case_versions()
    return EXAMPLE_TEST_CASE if EXAMPLE_TEST_CASE in versions else next(iter(versions), EXAMPLE_TEST_CASE)


def banner(settings: ServerSettings, world: World) -> str:
    root = base_url(settings)
    agent, project = _example_ids(world)
    test_case = _example_test_case(world)
    workers = f"{settings.workers} worker{'s' if settings.workers != 1 else ''}"
    lines = [
        f"evalmock: seed {world.seed}, {world.cases} generated cases per agent and project, {workers}",
        "",
        f"  {TEST_SET.title}",
        f"    {root}{TEST_SET.base_path}/agents/{{agentId}}/test-set/cases",
        f"    Swagger UI {root}{TEST_SET.base_path}/ui/   document {root}{TEST_SET.base_path}/openapi.json",
        f"  {GRADIENT.title}",
        f"    {root}{GRADIENT.base_path}/gen-ai/evaluation_test_cases/{{test_case_uuid}}",
        f"    Swagger UI {root}{GRADIENT.base_path}/ui/   document {root}{GRADIENT.base_path}/openapi.json",
        "",
        "Demo tokens (Authorization: Bearer <token>):",
        *(f"  {token:<14} {meaning}" for token, meaning in DEMO_TOKENS.items()),
        *(f"  {token:<14} a {kind} (--token)" for token, kind in settings.tokens),
        "  any other       well-formed token: a user of its own" if settings.any_token else
        "  any other       401 (register more with --token NAME[:user|service], or accept any with --any-token)",
        "",
        "Agents and projects:",
    ]
    for agent_id in world.agent_ids()[:MAX_LISTED]:
        lines.append(f"  {agent_id:<22} {', '.join(world.project_ids(agent_id))}")
    versions = world.evaluation_test_case_versions()
    lines.append("Evaluation test cases (uuid: versions):")
    for uuid, numbers in list(versions.items())[:MAX_LISTED]:
        lines.append(f"  {uuid}: {', '.join(map(str, numbers))}")
    if len(versions) > MAX_LISTED:
        lines.append(f"  … {len(versions) - MAX_LISTED} more (evalmock serve --write-targets FILE lists them all)")
    lines += [
        "",
        "Try:",
        f"  curl '{root}{TEST_SET.base_path}/agents/{agent}/test-set/cases"
        f"?projectId={project}&include=retired&limit=25' -H 'Authorization: Bearer demo-user'",
        f"  curl '{root}{GRADIENT.base_path}/gen-ai/evaluation_test_cases/{test_case}'"
        " -H 'Authorization: Bearer demo-user'",
        "Force an answer with a Prefer header: 'Prefer: code=503', 'Prefer: example=retired', 'Prefer: delay=800'.",
    ]
    low, high = settings.latency_ms
    if high or settings.error_rate:
        latency = f"{low} ms" if low == high else f"{low}-{high} ms"
        lines.append(f"Added latency {latency}; error rate {settings.error_rate:g}.")
    if settings.write_targets:
        path = settings.write_targets
        lines.append(f"Targets written to {path} (for evalmock contract --targets {path}).")
    return "\n".join(lines)
