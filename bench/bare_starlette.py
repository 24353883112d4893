"""The Python ceiling: a bare Starlette app answering fixed bytes (the document's example page).

    python bench/bare_starlette.py --port 8099 [--server granian|uvicorn]

Served as `evalmock serve` serves (the same HTTP server, uvloop, no access log), with no framework
work: every GET answers the `page` example of openapi/agent-test-set.yaml, the body Prism's static
mode sends. Run with the interpreter that runs evalmock (it has Starlette, uvicorn and PyYAML).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evalmock.server.http_server import SERVERS, ServeOptions, default_server, serve_app

DOCUMENT = Path(__file__).resolve().parent.parent / "openapi" / "agent-test-set.yaml"


def example_page() -> bytes:
    spec = yaml.safe_load(DOCUMENT.read_text(encoding="utf-8"))
    operation = spec["paths"]["/agents/{agentId}/test-set/cases"]["get"]
    value = operation["responses"]["200"]["content"]["application/json"]["examples"]["page"][
        "value"
    ]
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


BODY = example_page()


async def answer(request: Request) -> Response:
    return Response(BODY, media_type="application/json")


app = Starlette(routes=[Route("/{path:path}", answer)])

if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--server", choices=SERVERS, default=default_server())
    args = parser.parse_args()
    raise SystemExit(serve_app(app, args.server, ServeOptions(args.host, args.port)))
