"""Parsed JSON as output shows it: the value of each secret-named field replaced by its variable."""

from __future__ import annotations

from typing import Any, Protocol

from evalmock.contract.secret_names import secret_field
from evalmock.harness.secrets.variables import field_variable


class Learner(Protocol):
    """What learns a secret and gives the variable that stands for it (a Redactor)."""

    def learn(
        self, secret: str, variable: str = ..., meaning: str = ..., *, any_length: bool = ...
    ) -> str: ...


def with_variables(value: Any, redactor: Learner) -> Any:
    """A copy of parsed JSON with each secret-named field's value replaced by its variable, learned
    here: a string or number, or each one inside an object or array (`"session": {"id": ...}`) under
    a name with its keys added (`$EVALMOCK_SESSION_ID`). A value that already is a variable stays;
    true, false and null say nothing."""
    if isinstance(value, dict):
        return {
            name: _secret(inner, name, redactor)
            if secret_field(name)
            else with_variables(inner, redactor)
            for name, inner in value.items()
        }
    if isinstance(value, list):
        return [with_variables(inner, redactor) for inner in value]
    return value


def _secret(value: Any, name: str, redactor: Learner) -> Any:
    """Everything under the secret-named field `name`, each string and number as its variable."""
    if isinstance(value, dict):
        return {key: _secret(inner, f"{name}_{key}", redactor) for key, inner in value.items()}
    if isinstance(value, list):
        return [_secret(inner, name, redactor) for inner in value]
    if isinstance(value, bool) or value is None or value == "":
        return value
    if isinstance(value, int | float | str):
        return redactor.learn(
            str(value), field_variable(name), f"the JSON field {name}", any_length=False
        )
    return value
