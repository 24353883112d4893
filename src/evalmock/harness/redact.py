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
    """Replaces known secrets (longest first) in any text, and builds curl commands that stay runnable; `learn` adds a
    secret met in traffic (the proxy's and a HAR file's bearer tokens)."""

    def __init__(
        self,
        token: str | None = None,
        second_token: str | None = None,
        expired_token: str | None = None,
        revoked_token: str | None = None,
    ) -> None:
        pairs = [(token, TOKEN_VARIABLE), (second_token, SECOND_TOKEN_VARIABLE),
                 (expired_token, EXPIRED_TOKEN_VARIABLE), (revoked_token, REVOKED_TOKEN_VARIABLE)]
        self._variables: dict[str, str] = {}
        for secret, variable in pairs:
            if secret:
                self._variables.setdefault(secret, variable)
        self._pattern = self._compile()

    def learn(self, secret: str) -> str:
        """Keep `secret` out of every output from now on; returns the variable that stands for it: $EVALMOCK_TOKEN
        for the first token (unless one was given), then $EVALMOCK_TOKEN_2, $EVALMOCK_TOKEN_3, ..."""
        if secret in self._variables or not secret:
            return self._variables.get(secret, "")
        taken = set(self._variables.values())
        variable = TOKEN_VARIABLE
        number = 1
        while variable in taken:
            number += 1
            variable = f"{TOKEN_VARIABLE}_{number}"
        self._variables[secret] = variable
        self._pattern = self._compile()
        return variable

    def learn_authorization(self, value: str) -> None:
        """Learn the credentials of an Authorization header's value (after its scheme, `Bearer` or any other)."""
        scheme, _, credentials = value.strip().partition(" ")
        self.learn(credentials.strip() or scheme)

    def _compile(self) -> re.Pattern[str] | None:
        # One pass, longest secret first, so that a secret inside another is never half replaced.
        secrets = sorted(self._variables, key=len, reverse=True)
        return re.compile("|".join(map(re.escape, secrets))) if secrets else None

    def text(self, value: str) -> str:
        if self._pattern is None:
            return value
        return self._pattern.sub(lambda match: self._variables[match.group()], value)

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
