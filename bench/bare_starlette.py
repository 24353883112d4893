"""The Python ceiling: a bare Starlette app under uvicorn answering fixed bytes (the document's example page).

    python bench/bare_starlette.py --port 8099

Same server stack as `evalmock serve` (uvicorn with uvloop and httptools, no access log), no framework work:
every GET answers the `page` example of openapi/agent-test-set.yaml, the body Prism's static mode sends.
Run with the interpreter that runs evalmock (it has Starlette, uvicorn and PyYAML).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import uvicorn
import yaml
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

DOCUMENT = Path(__file__).resolve().parent.parent / "openapi" / "agent-test-set.yaml"


def example_page() -> bytes:
    spec = yaml.safe_load(DOCUMENT.read_text(encoding="utf-8"))
    operation = spec["paths"]["/agents/{agentId}/test-set/cases"]["get"]
    value = operation["responses"]["200"]["content"]["application/json"]["examples"]["page"]["value"]
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


BODY = example_page()


async def answer(request: Request) -> Response:
    return Response(BODY, media_type="application/json")


app = Starlette(routes=[Route("/{path:path}", answer)])

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    uvicorn.run(app, host=args.host, port=args.port, access_log=False, log_level="warning")
