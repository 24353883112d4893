"""`evalmock proxy` built from its command line and served in this process, as the command serves
it, on a free 127.0.0.1 port."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from evalmock.cli import build_parser
from evalmock.proxy.command import UVICORN_OPTIONS, build_proxy
from evalmock.proxy.forwarding import ProxyApp
from evalmock.proxy.session import ProxySession
from harness.serving import serving


@dataclass
class RunningProxy:
    base_url: str
    forwarder: ProxyApp
    session: ProxySession
    stream: io.StringIO

    def lines(self) -> list[str]:
        """What the proxy said on its console (stderr), one entry per line."""
        return self.stream.getvalue().splitlines()


@contextmanager
def proxying(upstream: str, *options: str) -> Iterator[RunningProxy]:
    """`evalmock proxy --upstream URL OPTIONS`, served until the block ends."""
    args = build_parser().parse_args(["proxy", "--upstream", upstream, *options])
    stream = io.StringIO()
    app, forwarder, session = build_proxy(args, stream)
    try:
        # The lifespan runs as `evalmock proxy` runs it: its shutdown closes the connections to the
        # upstream.
        with serving(app, lifespan="on", **UVICORN_OPTIONS) as base_url:
            yield RunningProxy(base_url, forwarder, session, stream)
    finally:
        session.close()
