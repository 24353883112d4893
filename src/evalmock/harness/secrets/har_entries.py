"""A HAR entry's secrets: learned from every place a browser's HAR holds them, and replaced in a
copy of it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalmock.contract.secret_names import secret_query
from evalmock.harness.secrets.redactor import Redactor
from evalmock.harness.secrets.variables import VARIABLE, variable_name


def learn_har_entry(redactor: Redactor, entry: Mapping[str, Any]) -> None:
    """Learn every secret a HAR entry carries: its exchange's (`learn_exchange`), its cookies
    arrays, its secret-named queryString and form parameters and its JSON bodies' secret-named
    fields."""
    request, response = entry.get("request") or {}, entry.get("response") or {}
    redactor.learn_exchange(
        str(request.get("url", "")),
        _har_pairs(request.get("headers")),
        _har_pairs(response.get("headers")),
    )
    for name, value in (*_har_pairs(request.get("cookies")), *_har_pairs(response.get("cookies"))):
        redactor.learn_cookie(name, value)
    parameters = [
        *_har_pairs(request.get("queryString")),
        *_har_pairs((request.get("postData") or {}).get("params")),
    ]
    for name, value in parameters:
        if secret_query(name):
            redactor.learn(
                value, variable_name(name), f"the query parameter {name}", any_length=False
            )
    for body in (request.get("postData"), response.get("content")):
        text = _har_body_text(body)
        if text is not None:
            redactor.learn_body(text)


def redacted_har_entry(redactor: Redactor, entry: Any) -> Any:
    """A HAR entry (as JSON data) with every secret replaced: headers by `header`, cookies arrays,
    secret-named queryString and form params, and every other string by `text`."""
    return _har_value(entry, redactor, None)


def _har_pairs(records: Any) -> list[tuple[str, str]]:
    """The name/value pairs of a HAR list (headers, cookies, parameters); anything else in it left
    out."""
    if not isinstance(records, list):
        return []
    return [
        (str(record.get("name", "")), record["value"])
        for record in records
        if isinstance(record, Mapping) and isinstance(record.get("value"), str)
    ]


def _har_value(value: Any, redactor: Redactor, key: str | None) -> Any:
    if isinstance(value, str):
        return redactor.text(value)
    if key in ("postData", "content") and _har_body_text(value) is not None:
        return {
            name: redactor.body(item) if name == "text" else _har_value(item, redactor, name)
            for name, item in value.items()
        }
    if isinstance(value, list):
        if key in ("headers", "cookies", "queryString", "params"):
            return [_har_record(record, redactor, key) for record in value]
        return [_har_value(item, redactor, None) for item in value]
    if isinstance(value, dict):
        return {name: _har_value(item, redactor, name) for name, item in value.items()}
    return value


def _har_record(record: Any, redactor: Redactor, key: str) -> Any:
    """One name/value record of a HAR list: a header, a cookie, a query or form parameter."""
    if not isinstance(record, dict) or not isinstance(record.get("value"), str):
        return _har_value(record, redactor, None)
    name, value = str(record.get("name", "")), record["value"]
    if key == "headers":
        redacted = redactor.header(name, value)
    elif key == "cookies":
        redacted = redactor.learn_cookie(name, value) if value else value
    elif secret_query(name) and value and not VARIABLE.fullmatch(value):
        redacted = redactor.learn(
            value, variable_name(name), f"the query parameter {name}", any_length=False
        )
    else:
        redacted = redactor.text(value)
    return {
        field: redacted if field == "value" else _har_value(item, redactor, field)
        for field, item in record.items()
    }


def _har_body_text(body: Any) -> str | None:
    """A HAR `postData` or `content` record's text, where it has one as text (base64 is left as it
    stands)."""
    if (
        isinstance(body, Mapping)
        and isinstance(body.get("text"), str)
        and body.get("encoding") != "base64"
    ):
        return body["text"]
    return None
