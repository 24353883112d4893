"""The request's path through Connexion: handler arguments mapped once per operation, from validated
values."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest
from starlette.responses import Response

from evalmock.server.dispatch import PreparedOperation, arguments_for
from evalmock.server.handlers.test_set import page_body
from evalmock.server.request_id import fresh_id
from evalmock.server.validation import PARAMETERS_SCOPE_KEY, ParameterValidator
from evalmock.world.catalog import EXAMPLE_PROJECT

PARAMETERS = [
    {"name": "agentId", "in": "path", "required": True, "schema": {"type": "string"}},
    {
        "name": "projectId",
        "in": "query",
        "required": True,
        "schema": {"type": "string", "format": "uuid"},
    },
    {
        "name": "limit",
        "in": "query",
        "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 25},
    },
    {"name": "class", "in": "query", "schema": {"type": "string"}},
    {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
]


@dataclass
class FakeOperation:
    """What the mapping reads of a Connexion operation."""

    parameters: list[dict[str, Any]] = field(default_factory=lambda: PARAMETERS)
    operation_id: str = "listThings"


class Recorder:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def handler(
        self, agent_id: str, project_id: str, limit: int = 1, token_info: Any = None
    ) -> Response:
        self.calls.append(
            {
                "agent_id": agent_id,
                "project_id": project_id,
                "limit": limit,
                "token_info": token_info,
            }
        )
        return Response(b"{}", media_type="application/json")

    async def takes_anything(self, **kwargs: Any) -> Response:
        self.calls.append(kwargs)
        return Response(b"{}", media_type="application/json")


def test_arguments_use_connexions_pythonic_names_and_the_documents_defaults() -> None:
    mapped = arguments_for(FakeOperation(), Recorder().handler, pythonic_params=True)  # type: ignore[arg-type]
    assert [(a.parameter, a.argument) for a in mapped] == [
        ("agentId", "agent_id"),
        ("projectId", "project_id"),
        ("limit", "limit"),
    ]
    assert mapped[2].default == 25  # the schema's, not the handler's
    assert all(a.parameter != "X-Trace" for a in mapped)  # headers are not handler arguments


def test_a_handler_taking_keywords_gets_every_parameter_shadowed_names_renamed() -> None:
    mapped = arguments_for(FakeOperation(), Recorder().takes_anything, pythonic_params=True)  # type: ignore[arg-type]
    assert ("class", "class_") in [(a.parameter, a.argument) for a in mapped]


def test_a_handler_missing_a_path_parameter_fails_at_start_up() -> None:
    async def handler(project_id: str) -> Response:
        return Response(b"")

    with pytest.raises(TypeError, match="agent_id"):
        arguments_for(FakeOperation(), handler, pythonic_params=True)  # type: ignore[arg-type]


def test_a_handler_must_be_a_coroutine_function() -> None:
    with pytest.raises(TypeError, match="coroutine"):
        PreparedOperation("listThings", lambda: None, (), None)  # type: ignore[arg-type]


async def call(operation: PreparedOperation, scope: dict[str, Any]) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await operation(scope, receive, send)
    return sent


@pytest.mark.anyio
async def test_the_handler_gets_validated_values_defaults_and_the_callers_token_info() -> None:
    recorder = Recorder()
    arguments = arguments_for(FakeOperation(), recorder.handler, pythonic_params=True)  # type: ignore[arg-type]
    operation = PreparedOperation(
        "listThings", recorder.handler, arguments, frozenset({"token_info"})
    )
    token_info = {"sub": "user-demo", "kind": "user"}
    scope = {
        "type": "http",
        "headers": [],
        PARAMETERS_SCOPE_KEY: {"agentId": "example", "projectId": EXAMPLE_PROJECT},
        "extensions": {"connexion_context": {"user": "user-demo", "token_info": token_info}},
    }
    sent = await call(operation, scope)
    assert recorder.calls == [
        {
            "agent_id": "example",
            "project_id": EXAMPLE_PROJECT,
            "limit": 25,
            "token_info": token_info,
        }
    ]
    assert sent[0]["status"] == 200


def test_the_parameter_validator_leaves_coerced_values_for_the_handler() -> None:
    validator = ParameterValidator(PARAMETERS, strict_validation=True)
    scope: dict[str, Any] = {
        "type": "http",
        "method": "GET",
        "headers": [],
        "path_params": {"agentId": "example"},
        "query_string": f"projectId={EXAMPLE_PROJECT}&limit=007".encode(),
    }
    validator.validate(scope)
    assert scope[PARAMETERS_SCOPE_KEY] == {
        "projectId": EXAMPLE_PROJECT,
        "limit": 7,
        "agentId": "example",
    }
    validator.validate(scope)  # the second time from the cache of valid values: the same answer
    assert scope[PARAMETERS_SCOPE_KEY]["limit"] == 7


@pytest.mark.parametrize(
    "cases", [[], [{"id": "a"}], [{"id": "a", "n": 1.5, "s": "é\n\u2028"}, {"id": "b"}]]
)
@pytest.mark.parametrize("cursor", [None, "AQAAAAAAAAAB-_x"])
def test_a_page_joined_from_encoded_cases_is_what_orjson_writes(
    cases: list[dict[str, Any]], cursor: str | None
) -> None:
    expected: dict[str, Any] = {"data": cases}
    if cursor is not None:
        expected["nextCursor"] = cursor
    expected["hasMore"] = cursor is not None
    assert page_body([orjson.dumps(case) for case in cases], cursor) == orjson.dumps(expected)


def test_a_fresh_request_id_is_a_version_4_uuid_in_hex() -> None:
    ids = {fresh_id() for _ in range(200)}
    assert len(ids) == 200
    for text in ids:
        parsed = uuid.UUID(text)
        assert parsed.hex == text and parsed.version == 4 and parsed.variant == uuid.RFC_4122


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_worker_never_hands_out_its_parents_next_request_ids() -> None:
    fresh_id()  # the parent has ids drawn and not yet used
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover (the child process)
        os.write(writer, " ".join(fresh_id() for _ in range(3)).encode())
        os._exit(0)
    os.close(writer)
    os.waitpid(child, 0)
    with os.fdopen(reader) as pipe:
        in_child = set(pipe.read().split())
    assert len(in_child) == 3
    assert in_child.isdisjoint({fresh_id() for _ in range(3)})


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
