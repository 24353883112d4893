"""Request validation: Connexion's parameter validator, replaced by one that names the parameter in
a 400.

This is the one place that wires validation into the app (`VALIDATOR_MAP`, `ValidationMiddleware`).
Schemas are compiled once per operation, not per request; repeated and (in strict mode) unknown
query parameters are refused; a body on a GET is refused; patterns are matched with JSON Schema's
(ECMA-262) reading of `$`, which does not match before a trailing newline as Python's does. The
values it parsed and coerced are left in the scope (`PARAMETERS_SCOPE_KEY`), and the handlers'
arguments are taken from there (see dispatch.py).
"""

from __future__ import annotations

import functools
import re
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from connexion.middleware.request_validation import (
    RequestValidationAPI,
    RequestValidationMiddleware,
    RequestValidationOperation,
)
from connexion.operations import AbstractOperation
from connexion.validators import VALIDATOR_MAP as CONNEXION_VALIDATOR_MAP
from jsonschema import Draft4Validator, FormatChecker, ValidationError, validators
from starlette.types import ASGIApp, Receive, Scope, Send

from evalmock.contract.schemas import ecma_pattern
from evalmock.server.errors import MAX_ECHO, ApiError, bad_input, echo

MAX_QUERY_FIELDS = 64
VALID_VALUES_KEPT = 1024  # per parameter of each operation; a parameter's schema never changes
# Where a validated request's parameter values wait for its handler: document name -> coerced value.
PARAMETERS_SCOPE_KEY = "evalmock.parameters"
# The query as `query_pairs` read it, left in the scope by a middleware before routing that read it
# already (a session's, for its journal), so that a request's query is parsed once.
QUERY_SCOPE_KEY = "evalmock.query"
_INTEGER = re.compile(r"-?[0-9]{1,32}")
_NUMBER = re.compile(r"-?[0-9]{1,32}(\.[0-9]{1,32})?([eE][-+]?[0-9]{1,3})?")
_BOOLEANS = {"true": True, "false": False}
# The keyword whose failure explains a bad value best, when several fail at once.
_PRIORITY = ("type", "format", "pattern", "enum", "minimum", "maximum", "minLength", "maxLength")
_FORMAT_NAMES = {
    "uuid": "a UUID",
    "date-time": "a date-time (RFC 3339)",
    "date": "a date (YYYY-MM-DD)",
}

FORMAT_CHECKER = FormatChecker()


@FORMAT_CHECKER.checks("uuid", raises=ValueError)
def _is_uuid(value: object) -> bool:
    if not isinstance(value, str):
        return True
    uuid.UUID(value)  # raises ValueError
    return len(value) == 36 and all(value[i] == "-" for i in (8, 13, 18, 23))


SchemaValidator = validators.extend(Draft4Validator, {"pattern": ecma_pattern})


def describe(error: ValidationError, schema: dict[str, Any]) -> str:
    """What the value must be, in words, from the failing keyword."""
    keyword, value = error.validator, error.validator_value
    if keyword == "type":
        article = "an" if str(value)[0] in "aeiou" else "a"
        return f"must be {article} {value}"
    if keyword == "format":
        return f"must be {_FORMAT_NAMES.get(value, 'a ' + str(value))}"
    if keyword == "pattern":
        if schema.get("format") in _FORMAT_NAMES:
            return f"must be {_FORMAT_NAMES[schema['format']]}"
        return f"must match {value}"
    if keyword == "enum":
        return "must be one of: " + ", ".join(str(v) for v in value)
    if keyword == "minimum":
        return f"must be {'greater than' if schema.get('exclusiveMinimum') else 'at least'} {value}"
    if keyword == "maximum":
        return f"must be {'less than' if schema.get('exclusiveMaximum') else 'at most'} {value}"
    if keyword == "minLength":
        return "must not be empty" if value == 1 else f"must be at least {value} characters long"
    if keyword == "maxLength":
        return f"must be at most {value} characters long"
    return f"is not valid: {error.message}"


def _mistaken_for(name: str, text: str) -> str | None:
    """What a refused value recognisably is instead (a session token pasted where its id goes), in
    words that never quote it: the schema's pattern would only puzzle its reader."""
    if name != "sessionId":
        return None
    # imported here: the sessions package imports this module (query_pairs)
    from evalmock.server.sessions.tokens import token_for_id

    return token_for_id(text)


@dataclass(frozen=True)
class _Rule:
    """One declared parameter, with its schema compiled once."""

    name: str
    location: str  # "query" or "path"
    required: bool
    schema: dict[str, Any]
    validator: Any

    @property
    def label(self) -> str:
        return f"{self.location.capitalize()} parameter '{self.name}'"

    def error(self, problem: str) -> ApiError:
        return bad_input(self.name, f"{self.label} {problem}.")

    def coerce(self, text: str) -> Any:
        kind = self.schema.get("type")
        if kind == "integer":
            if not _INTEGER.fullmatch(text):
                raise self.error("must be an integer")
            return int(text)
        if kind == "number":
            if not _NUMBER.fullmatch(text):
                raise self.error("must be a number")
            return float(text)
        if kind == "boolean":
            if text not in _BOOLEANS:
                raise self.error("must be true or false")
            return _BOOLEANS[text]
        return text

    def __post_init__(self) -> None:
        # Clients send the same few values again and again (ids, filters, limits): each valid text
        # is checked once. Invalid texts raise, and lru_cache keeps nothing for them.
        object.__setattr__(
            self, "_checked", functools.lru_cache(maxsize=VALID_VALUES_KEPT)(self._check)
        )

    def check(self, text: str) -> Any:
        """The value, coerced to the schema's type, or a bad-input error naming what is wrong with
        it."""
        return self._checked(text)  # type: ignore[attr-defined]

    def _check(self, text: str) -> Any:
        value = self.coerce(text)
        errors = list(self.validator.iter_errors(value))
        if errors and (what := _mistaken_for(self.name, text)) is not None:
            raise self.error(what)
        if errors:
            errors.sort(
                key=lambda e: (
                    _PRIORITY.index(e.validator) if e.validator in _PRIORITY else len(_PRIORITY)
                )
            )
            raise self.error(describe(errors[0], self.schema))
        return value


@dataclass(frozen=True)
class _OperationRules:
    parameters: list[dict[str, Any]]  # held so that its id stays unique while cached
    query: dict[str, _Rule]
    path: dict[str, _Rule]


_compiled: dict[int, _OperationRules] = {}


def _rules_for(parameters: list[dict[str, Any]]) -> _OperationRules:
    rules = _compiled.get(id(parameters))
    if rules is not None and rules.parameters is parameters:
        return rules
    by_location: dict[str, dict[str, _Rule]] = {"query": {}, "path": {}}
    for parameter in parameters:
        location = parameter["in"]
        if location not in by_location:
            continue  # headers and cookies are not used by these documents
        schema = parameter.get("schema", {})
        by_location[location][parameter["name"]] = _Rule(
            name=parameter["name"],
            location=location,
            required=bool(parameter.get("required")),
            schema=schema,
            validator=SchemaValidator(schema, format_checker=FORMAT_CHECKER),
        )
    rules = _OperationRules(parameters, by_location["query"], by_location["path"])
    _compiled[id(parameters)] = rules
    return rules


def query_pairs(query_string: str) -> list[tuple[str, str]]:
    """`parse_qsl(query_string, keep_blank_values=True, max_num_fields=MAX_QUERY_FIELDS)`, pair for
    pair.

    Without `%` or `+` there is nothing to decode, and the split below is what parse_qsl does then;
    it is asked on every request, and most query strings (ids, filters, limits, cursors) have
    neither.
    """
    if "%" in query_string or "+" in query_string:
        return parse_qsl(query_string, keep_blank_values=True, max_num_fields=MAX_QUERY_FIELDS)
    if query_string and query_string.count("&") >= MAX_QUERY_FIELDS:
        raise ValueError("Max number of fields exceeded")
    pairs = []
    for field in query_string.split("&"):
        if field:
            name, _, value = field.partition("=")
            pairs.append((name, value))
    return pairs


def _has_body(scope: dict[str, Any]) -> bool:
    for name, value in scope["headers"]:
        if name == b"transfer-encoding" or (
            name == b"content-length" and value.strip() not in (b"", b"0")
        ):
            return True
    return False


class ParameterValidator:
    """Drop-in for Connexion's ParameterValidator (same constructor), raising our bad-input
    errors."""

    def __init__(
        self,
        parameters: list[dict[str, Any]],
        uri_parser: Any = None,
        strict_validation: bool = False,
        security_query_params: Any = None,
    ) -> None:
        self.rules = _rules_for(parameters)
        self.strict_validation = strict_validation

    def validate(self, scope: dict[str, Any]) -> None:
        """Refuse a bad request; keep the parsed, coerced values in the scope for the handler's
        arguments."""
        if scope.get("method") in ("GET", "HEAD") and _has_body(scope):
            raise bad_input("body", f"A {scope['method']} request takes no body.")
        values = self._validate_query(scope)
        path_params = scope.get("path_params", {})
        for name, rule in self.rules.path.items():
            values[name] = rule.check(str(path_params.get(name, "")))
        scope[PARAMETERS_SCOPE_KEY] = values

    def _validate_query(self, scope: dict[str, Any]) -> dict[str, Any]:
        try:
            pairs = scope.get(QUERY_SCOPE_KEY)
            if pairs is None:
                pairs = query_pairs(scope.get("query_string", b"").decode("latin-1"))
        except ValueError:
            raise bad_input(
                "query", f"The query string has more than {MAX_QUERY_FIELDS} parameters."
            ) from None
        seen: dict[str, str] = {}
        for name, value in pairs:
            rule = self.rules.query.get(name)
            if rule is None:
                if self.strict_validation:
                    known = ", ".join(self.rules.query)
                    message = (
                        f"Unknown query parameter {echo(name)}; this operation takes: {known}."
                    )
                    raise bad_input(name[:MAX_ECHO], message)
                continue
            if name in seen:
                raise rule.error("must be given at most once")
            seen[name] = value
        values: dict[str, Any] = {}
        for name, rule in self.rules.query.items():
            if name in seen:
                values[name] = rule.check(seen[name])
            elif rule.required:
                raise rule.error("is required")
        return values


# Connexion's map with our parameter validator; request bodies and responses keep Connexion's
# validators.
VALIDATOR_MAP = {**CONNEXION_VALIDATOR_MAP, "parameter": ParameterValidator}


class _ValidationOperation(RequestValidationOperation):
    """Connexion's request validation of one operation, with its parameter validator built once, not
    per request.

    An operation without a request body (every operation of these documents) has nothing more to
    check: Connexion would work out the request's content type only to find no body schema for it.
    """

    def __init__(self, next_app: ASGIApp, *, operation: AbstractOperation, **options: Any) -> None:
        super().__init__(next_app, operation=operation, **options)
        self._takes_body = bool(operation.request_body)
        self._parameter_validator = self._validator_map["parameter"](
            operation.parameters,
            uri_parser=operation.uri_parser_class(
                operation.parameters, operation.body_definition()
            ),
            strict_validation=self.strict_validation,
            security_query_params=self.security_query_params,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._takes_body:
            await super().__call__(scope, receive, send)
            return
        self._parameter_validator.validate(scope)
        await self.next_app(scope, receive, send)


class _ValidationAPI(RequestValidationAPI):
    def make_operation(self, operation: AbstractOperation) -> _ValidationOperation:
        return _ValidationOperation(
            self.next_app,
            operation=operation,
            strict_validation=self.strict_validation,
            validator_map=self.validator_map,
        )


class ValidationMiddleware(RequestValidationMiddleware):
    """Connexion's RequestValidationMiddleware (same place in the stack, same validators from
    VALIDATOR_MAP)."""

    api_cls = _ValidationAPI
