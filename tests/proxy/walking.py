"""A service whose pages each conform but whose walks do not, one defect per agent, and the browser
app that walks it: a "Load more" list page that fetches through the proxy from another origin, as a
frontend does."""

from __future__ import annotations

import base64
import json
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from harness.builders import hand_case

CASES = 90  # enough for three pages of the harness's limit=37 walk
DEFECTS = ("repeats-last", "skips-one", "restarts", "reorders")
CORRECT = "correct"
AGENTS = (CORRECT, *DEFECTS)
MOVING = "moving"  # a list in use, walked right: each walk begun finds one case more than the last


def _case(number: int) -> dict[str, Any]:
    added = f"2026-11-20T{9 + number // 60:02d}:{number % 60:02d}:00Z"
    return hand_case(id=f"case-{number:04d}", addedAt=added, updatedAt=added)


# Newest first: case 0 was added last.
LIST = [_case(CASES - 1 - n) for n in range(CASES)]


def _cursor(offset: int, request: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"o": offset, "n": request}).encode()).decode()


def _position(cursor: str | None) -> tuple[int, int]:
    if not cursor:
        return 0, 1
    state = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    return state["o"], state["n"]


def _order(limit: int, defect: str) -> list[dict[str, Any]]:
    order = list(LIST)
    if defect == "reorders":  # at every page boundary, the two cases on either side change places
        for boundary in range(limit, CASES, limit):
            order[boundary - 1], order[boundary] = order[boundary], order[boundary - 1]
    return order


def _arrived(request: Request) -> list[dict[str, Any]]:
    """The moving list: a case newer than all arrives as each walk begins (a request without a
    cursor)."""
    state = request.app.state
    if not request.query_params.get("cursor"):
        state.arrived = getattr(state, "arrived", 0) + 1
    return [_case(CASES - 1 + n) for n in range(state.arrived, 0, -1)] + LIST


async def _cases(request: Request) -> Response:
    defect = request.path_params["agent"]
    if defect not in (*AGENTS, MOVING):
        body = {
            "error": {
                "code": "agent-not-found",
                "message": "No such agent.",
                "details": {},
                "requestId": "r-404",
            }
        }
        return JSONResponse(body, status_code=404, headers={"X-Request-Id": "r-404"})
    limit = int(request.query_params.get("limit", "25"))
    offset, number = _position(request.query_params.get("cursor"))
    if defect == "restarts" and number == 3:
        offset = 0  # the third request of a walk gets the first page again
    step = {"repeats-last": limit - 1, "skips-one": limit + 1}.get(defect, limit)
    order = _arrived(request) if defect == MOVING else _order(limit, defect)
    cases = order[offset : offset + limit]
    has_more = offset + limit < len(order)
    body: dict[str, Any] = {"data": cases, "hasMore": has_more}
    if has_more:
        body["nextCursor"] = _cursor(offset + step, number + 1)
    return JSONResponse(body, headers={"X-Request-Id": f"r-{defect}-{number}"})


def walking_upstream() -> Starlette:
    """GET /v1/agents/{agent}/test-set/cases: CASES hand cases of harness.builders.PROJECT: agent
    `correct` walks them right; `repeats-last` starts each page with the last case of the one
    before, `skips-one` leaves one case out between pages, `restarts` answers the third request of a
    walk with the first page, `reorders` swaps the cases on either side of every page boundary;
    `moving` walks right, and a case arrives as each walk begins."""
    return Starlette(routes=[Route("/v1/agents/{agent}/test-set/cases", _cases)])


APP = """<!doctype html>
<html><head><meta charset="utf-8"><title>Test cases</title></head>
<body>
<h1>Test cases</h1>
<ul id="cases"></ul>
<button id="more">Load more</button>
<script>
const settings = new URLSearchParams(location.search);
const api = settings.get("api"), agent = settings.get("agent"), project = settings.get("project");
window.pages = [];
let cursor = null;
document.querySelector("#more").addEventListener("click", async (event) => {
  event.target.disabled = true;
  const query = new URLSearchParams({projectId: project, limit: settings.get("limit")});
  if (cursor) query.set("cursor", cursor);
  const response = await fetch(`${api}/v1/agents/${agent}/test-set/cases?${query}`,
                               {headers: {Authorization: `Bearer ${settings.get("token")}`}});
  const page = await response.json();
  const violations = response.headers.get("evalmock-violations");
  if (violations) console.warn("evalmock:", violations);
  for (const item of page.data) {
    const li = document.createElement("li");
    li.textContent = item.id;
    document.querySelector("#cases").append(li);
  }
  window.pages.push({status: response.status, ids: page.data.map((item) => item.id), violations});
  cursor = page.hasMore ? page.nextCursor : null;
  event.target.disabled = !page.hasMore;
  window.done = !page.hasMore;
});
</script>
</body></html>
"""


def browser_app() -> Starlette:
    """The list page, served from its own origin."""

    async def index(request: Request) -> Response:
        return HTMLResponse(APP)

    return Starlette(routes=[Route("/", index)])
