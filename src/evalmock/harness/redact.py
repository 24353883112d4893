"""Keep tokens out of every output: replace each secret with the environment variable that holds it."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping

TOKEN_VARIABLE = "$EVALMOCK_TOKEN"
SECOND_TOKEN_VARIABLE = "$EVALMOCK_SECOND_TOKEN"
EXPIRED_TOKEN_VARIABLE = "$EVALMOCK_EXPIRED_TOKEN"
REVOKED_TOKEN_VARIABLE = "$EVALMOCK_REVOKED_TOKEN"


class Redactor:
    """Replaces known secrets (longest first) in any text, and builds curl commands that stay runnable."""

    def __init__(
        self,
        token: str | None = None,
        second_token: str | None = None,
        expired_token: str | None = None,
        revoked_token: str | None = None,
    ) -> None:
        pairs = [(token, TOKEN_VARIABLE), (second_token, SECOND_TOKEN_VARIABLE),
                 (expired_token, EXPIRED_TOKEN_VARIABLE), (revoked_token, REVOKED_TOKEN_VARIABLE)]
        self._secrets = sorted(((s, v) for s, v in pairs if s), key=lambda pair: -len(pair[0]))

    def text(self, value: str) -> str:
        for secret, variable in self._secrets:
            value = value.replace(secret, variable)
        return value

    def headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        return {name: self.text(value) for name, value in headers.items()}

    def curl(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None = None) -> str:
        """A reproducing curl command; a redacted value is double-quoted so the shell expands the variable."""
        parts = ["curl", "-sS", "-i"]
        if method.upper() != "GET":
            parts += ["-X", method.upper()]
        parts.append(shlex.quote(self.text(url)))
        for name, value in headers.items():
            if name.lower() in _NOISE_HEADERS:
                continue
            line = f"{_title(name)}: {self.text(value)}"
            parts += ["-H", _quote(line)]
        if body:
            parts += ["--data-binary", _quote(self.text(body.decode("utf-8", "replace")))]
        return " ".join(parts)


# Headers every client adds by itself; a curl command is clearer without them.
_NOISE_HEADERS = {
    "user-agent", "accept-encoding", "connection", "content-length", "host", "accept", "x-schemathesis-testcaseid",
}


def _title(name: str) -> str:
    return "-".join(part[:1].upper() + part[1:] for part in name.split("-"))


def _quote(value: str) -> str:
    if "$EVALMOCK_" not in value:
        return shlex.quote(value)
    escaped = re.sub(r'(["\\`])', r"\\\1", value)
    # Any `$` that is not one of our variables must not expand.
    escaped = re.sub(r"\$(?!EVALMOCK_)", r"\\$", escaped)
    return f'"{escaped}"'
