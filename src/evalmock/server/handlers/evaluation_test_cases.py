"""GET /v2/gen-ai/evaluation_test_cases/{test_case_uuid}: one test case, at a version or its
latest."""

from __future__ import annotations

from starlette.responses import Response

from evalmock.server.errors import ApiError
from evalmock.server.live_world import LiveWorld
from evalmock.server.responses import encoded_json_response
from evalmock.server.sessions.active import active_session


class EvaluationTestCases:
    """The getEvaluationTestCase operation over the live world."""

    def __init__(self, live: LiveWorld) -> None:
        self.live = live

    async def get(
        self, test_case_uuid: str, evaluation_test_case_version: int | None = None
    ) -> Response:
        # The path parameter is a plain string: anything that names no test case (or no such
        # version) is a 404.
        session = active_session()
        world = self.live.world if session is None else session.world
        found = world.encoded_evaluation_test_case(
            test_case_uuid.lower(), evaluation_test_case_version
        )
        if found is None:
            raise ApiError(404, "not-found")
        return encoded_json_response(b'{"evaluation_test_case":' + found + b"}")
