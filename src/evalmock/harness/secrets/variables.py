"""The environment variable that stands for a secret in every output: `$EVALMOCK_` and the secret's
name."""

from __future__ import annotations

import re

VARIABLE = re.compile(r"\$EVALMOCK_[A-Z0-9_]+")
_NAME_CHARACTERS = re.compile(r"[^A-Z0-9]+")
_CAMEL_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def title(name: str) -> str:
    return "-".join(part[:1].upper() + part[1:] for part in name.split("-"))


def variable_name(*parts: str) -> str:
    """`$EVALMOCK_` and the parts in upper case, anything but letters and digits as one `_`."""
    words = [_NAME_CHARACTERS.sub("_", part.upper()).strip("_") for part in parts]
    return "$EVALMOCK_" + "_".join(word for word in words if word)


def field_variable(name: str) -> str:
    """A JSON field's variable, its camelCase words apart: `sessionToken` ->
    `$EVALMOCK_SESSION_TOKEN`."""
    return variable_name(_CAMEL_HUMP.sub("_", name))
