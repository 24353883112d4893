"""Keep secrets out of every output: each secret replaced by the environment variable that holds it,
where it stands (a credential header, a cookie, a secret-named query value, header or JSON field)
and wherever its value is echoed."""

from __future__ import annotations

import base64
import binascii
import json
import re
import shlex
import threading
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote

from evalmock import environment
from evalmock.contract.secret_names import secret_field, secret_header, secret_query
from evalmock.harness.excerpts import ELLIPSIS
from evalmock.harness.secrets.json_fields import with_variables
from evalmock.harness.secrets.literal_search import LiteralSearch
from evalmock.harness.secrets.patterns import (
    AUTH_SCHEMES,
    CUT_WORD,
    FIELD_PAIR,
    FORM_BODY,
    QUERY_PAIR,
    RUNNING,
    USERINFO,
    json_that_may_hold_secrets,
    written_forms,
)
from evalmock.harness.secrets.variables import VARIABLE, field_variable, title, variable_name

TOKEN_VARIABLE = f"${environment.TOKEN}"
SECOND_TOKEN_VARIABLE = f"${environment.SECOND_TOKEN}"
EXPIRED_TOKEN_VARIABLE = "$EVALMOCK_EXPIRED_TOKEN"
REVOKED_TOKEN_VARIABLE = "$EVALMOCK_REVOKED_TOKEN"
LEARNED_TOKEN = "a bearer token met in the traffic"

# A value met in traffic this short is replaced where it stands, but not searched for in other text:
# it would match ordinary words and numbers there.
MIN_ECHOED = 8


class Redactor:
    """Replaces secrets with the environment variables that hold them, in any text, header, URL, HAR
    entry and curl command. It knows the tokens it is given; `learn_exchange` teaches it the secrets
    of recorded or proxied traffic (credential headers, cookies, secret-named headers and query
    values), each under a variable named after where it was met ($EVALMOCK_COOKIE_SESSION,
    $EVALMOCK_X_API_KEY, $EVALMOCK_API_KEY, ...)."""

    def __init__(
        self,
        token: str | None = None,
        second_token: str | None = None,
        expired_token: str | None = None,
        revoked_token: str | None = None,
        *,
        shown: Iterable[str] = (),
    ) -> None:
        # Credentials the audit made up itself (a token no one issued, a malformed one): no secret,
        # and a curl command that sends one reproduces its answer only if it is shown as it is.
        self._shown = frozenset(shown)
        self._variables: dict[
            str, str
        ] = {}  # a secret, in each form it may be written in -> its variable
        self._echoes = LiteralSearch()  # the forms searched for in any text
        self._meanings: dict[str, str] = {}  # a variable -> what it stands for
        self._last_number: dict[
            str, int
        ] = {}  # a variable's name -> the number of its last one given (1: as is)
        self._lock = threading.Lock()
        for secret, variable, meaning in (
            (token, TOKEN_VARIABLE, "the token"),
            (second_token, SECOND_TOKEN_VARIABLE, "the second token"),
            (expired_token, EXPIRED_TOKEN_VARIABLE, "the expired token"),
            (revoked_token, REVOKED_TOKEN_VARIABLE, "the revoked token"),
        ):
            if secret:
                self._add(secret, variable, meaning, echoed=True)

    # -- learning
    # --------------------------------------------------------------------------------------------
    def learn(
        self,
        secret: str,
        variable: str = TOKEN_VARIABLE,
        meaning: str = LEARNED_TOKEN,
        *,
        any_length: bool = True,
    ) -> str:
        """Keep `secret` out of every output from now on; returns the variable that stands for it:
        `variable` if free, else the same with _2, _3, ... A secret already known keeps its
        variable. Without `any_length` (a value met in traffic), one shorter than MIN_ECHOED is
        replaced only where it stands."""
        if not secret:
            return ""
        if secret in self._shown:
            return secret
        if VARIABLE.fullmatch(secret):  # already redacted (a HAR that evalmock wrote)
            self._meanings.setdefault(secret, meaning)
            return secret
        with self._lock:
            known = self._variables.get(secret)
            if known is not None:
                return known
            # The numbering goes on from the last one given: a gateway that sets a new cookie on
            # every answer asks for the 10,000th name of one variable, and trying _2 to _9,999 first
            # made each answer cost more.
            number = self._last_number.get(variable, 0)
            chosen = variable if number == 0 else f"{variable}_{number + 1}"
            while chosen in self._meanings:  # a name taken by a HAR that evalmock wrote
                number += 1
                chosen = f"{variable}_{number + 1}"
            self._last_number[variable] = number + 1
            self._add(secret, chosen, meaning, echoed=any_length or len(secret) >= MIN_ECHOED)
            return chosen

    def learn_authorization(self, value: str, header: str = "authorization") -> str:
        """Learn the credentials of an Authorization (or Proxy-Authorization) value, after its
        scheme; returns the value as output shows it (`Bearer $EVALMOCK_TOKEN`)."""
        scheme, _, credentials = value.strip().partition(" ")
        if not credentials.strip() and scheme.lower() in AUTH_SCHEMES:
            return value  # a scheme alone (`Bearer`, an empty token) carries no credential
        secret = credentials.strip() or scheme
        if scheme.lower() == "basic" and credentials.strip():
            self._learn_basic(credentials.strip())
        if header.lower() == "authorization":
            variable = self.learn(secret, any_length=False)
        else:
            variable = self.learn(
                secret,
                variable_name(header),
                f"the credentials of {title(header)}",
                any_length=False,
            )
        return f"{scheme} {variable}" if credentials.strip() else variable

    def _learn_basic(self, credentials: str) -> None:
        """Basic credentials' password (base64 of `user:password`), as a service may echo it
        decoded."""
        try:
            decoded = base64.b64decode(credentials, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            return
        password = decoded.partition(":")[2]
        if password:
            self.learn(
                password,
                "$EVALMOCK_BASIC_PASSWORD",
                "the password of Basic credentials",
                any_length=False,
            )

    def learn_cookie(self, name: str, value: str, *, set_by_service: bool = False) -> str:
        """Learn one cookie's value; returns the variable that stands for it. One the service (or a
        gateway) set is one a client got back, not one to know: a gateway's rotating session cookie
        is never the same twice, so a curl command may go without it, and the legend says so."""
        meaning = f"the cookie {name}" + (
            ", which the service set: leave it unset" if set_by_service else ""
        )
        return self.learn(value, variable_name("cookie", name), meaning, any_length=False)

    def learn_exchange(
        self,
        url: str,
        request_headers: Mapping[str, str] | Iterable[tuple[str, str]] = (),
        response_headers: Mapping[str, str] | Iterable[tuple[str, str]] = (),
    ) -> None:
        """Learn every secret one exchange carries: in its URL, its request headers and its response
        headers (Set-Cookie), before anything said about the exchange can quote one of them."""
        self.url(url)
        for name, value in (*_pairs(request_headers), *_pairs(response_headers)):
            if secret_header(name):
                self.header(name, value)

    def learn_json(self, value: Any) -> None:
        """Learn the value of every secret-named field (`password`, `access_token`, `apiKey`, ...)
        anywhere in a parsed JSON body, each string and number in it under a variable named after
        its field ($EVALMOCK_ACCESS_TOKEN)."""
        self.json(value)

    def learn_body(self, body: str | bytes) -> None:
        """Learn a body's secrets: `learn_json` where it is JSON that may hold a secret-named field,
        its secret-named values where it is a form."""
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        value = json_that_may_hold_secrets(text)
        if value is not None:
            self.learn_json(value)
        elif FORM_BODY.fullmatch(text):
            self.text("?" + text)

    def _add(self, secret: str, variable: str, meaning: str, *, echoed: bool) -> None:
        self._meanings.setdefault(variable, meaning)
        forms = written_forms(secret)
        for form in forms:
            self._variables.setdefault(form, variable)
        if echoed:
            self._echoes.add(forms)

    def echoed(self) -> list[str]:
        """Every secret searched for in any text, in each form it may be written in."""
        return list(self._echoes)

    def compact(self) -> None:
        """Ready for many texts in a row (a HAR file written whole): every secret in one index,
        searched once a text."""
        self._echoes.compact()

    # -- redacting
    # -------------------------------------------------------------------------------------------
    def text(self, value: str) -> str:
        """Any text: every known secret replaced, and the secret values of any URL in it
        (secret-named query values, a password in the URL) replaced too, learned if new."""
        # one pass, longest secret first: a secret inside another is never half replaced
        if self._echoes:
            value = self._echoes.sub(self._variables.__getitem__, value)
        if ELLIPSIS in value and self._echoes:
            value = CUT_WORD.sub(self._cut_word, value)
        if "=" in value:
            value = QUERY_PAIR.sub(self._query_pair, value)
        if "@" in value:
            value = USERINFO.sub(self._userinfo, value)
        return value

    def url(self, url: str) -> str:
        return self.text(url)

    def quoting(self, value: str) -> str:
        """A text that may quote a body in part (a finding's message, whose excerpt of a body no
        longer parses): each `"name": value` pair whose name is a secret field's has its value
        replaced where it stands, however short; then as `text`. Only for such texts: the pass costs
        a call per pair, some 2 ms over a page of 25 cases."""
        if ":" in value and ('"' in value or "'" in value):
            value = FIELD_PAIR.sub(self._field_pair, value)
        return self.text(value)

    def header(self, name: str, value: str) -> str:
        """One header's value as output shows it: a credential, cookie or secret-named header's
        secret replaced by its variable (a cookie's name and a Set-Cookie's attributes kept), any
        other value as `text`."""
        lowered = name.lower()
        if lowered in ("authorization", "proxy-authorization"):
            return self.learn_authorization(value, lowered)
        if lowered == "cookie":
            return "; ".join(self._cookie(part) for part in value.split(";") if part.strip())
        if lowered == "set-cookie":  # browsers' HARs join several into one value, a line each
            return "\n".join(self._set_cookie(line) for line in value.split("\n"))
        if secret_header(name):
            return self.learn(
                value.strip(), variable_name(name), f"the header {title(name)}", any_length=False
            )
        return self.text(value)

    def json(self, value: Any) -> Any:
        """Parsed JSON as output shows it: each secret-named field's value (each string and number
        in it) replaced by its variable, whatever its length; the rest as it is (strings elsewhere
        are for `text` once written)."""
        return with_variables(value, self)

    def body(self, text: str) -> str:
        """A body's text as output shows it. JSON with secret-named fields: each such value replaced
        by its variable, whatever its length (the JSON written again, compact); a form: its
        secret-named values, as in a URL's query; then as `text`."""
        value = json_that_may_hold_secrets(text)
        if value is not None:
            shown = self.json(value)
            if shown != value:
                text = json.dumps(shown, ensure_ascii=False, separators=(",", ":"))
        elif FORM_BODY.fullmatch(text):
            return self.text("?" + text)[1:]  # `text` itself, its first pair read as a URL's
        return self.text(text)

    def headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        return {name: self.header(name, value) for name, value in headers.items()}

    def curl(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes | None = None
    ) -> str:
        """A reproducing curl command; a redacted value is double-quoted so the shell expands the
        variable."""
        parts = ["curl", "-sS", "-i"]
        if method.upper() != "GET":
            parts += ["-X", method.upper()]
        parts.append(self._quote(self.url(url)))
        for name, value in headers.items():
            if name.lower() in _NOISE_HEADERS:
                continue
            parts += ["-H", self._quote(f"{title(name)}: {self.header(name, value)}")]
        if body:
            parts += ["--data-binary", self._quote(self.body(body.decode("utf-8", "replace")))]
        return " ".join(parts)

    def legend(self, used_in: str) -> str | None:
        """A note naming the variables that appear in `used_in` (an output's text) and what each
        stands for."""
        used = sorted(
            {match.group() for match in VARIABLE.finditer(used_in)} & self._meanings.keys()
        )
        if not used:
            return None
        return (
            "secrets are replaced by environment variables; set these before running a curl "
            "command: "
            + "; ".join(f"{variable[1:]} ({self._meanings[variable]})" for variable in used)
        )

    # -- helpers
    # ---------------------------------------------------------------------------------------------
    def _cookie(self, pair: str, *, set_by_service: bool = False) -> str:
        name, equals, value = pair.strip().partition("=")
        if not equals:  # a bare value, no name
            return self.learn(name, "$EVALMOCK_COOKIE", "a cookie without a name", any_length=False)
        if not value.strip():
            return f"{name}="
        return f"{name}={self.learn_cookie(name, value.strip(), set_by_service=set_by_service)}"

    def _set_cookie(self, line: str) -> str:
        first, semicolon, attributes = line.partition(";")
        return self._cookie(first, set_by_service=True) + semicolon + self.text(attributes)

    def _cut_word(self, match: re.Match[str]) -> str:
        start = match.group()
        cut = next(
            (form for form in self._echoes if len(form) > len(start) and form.startswith(start)),
            None,
        )
        return start if cut is None else self._variables[cut]

    def _field_pair(self, match: re.Match[str]) -> str:
        quote_mark, name, colon, written = match.groups()
        if not secret_field(name) or VARIABLE.fullmatch(written.strip("\"'")):
            return match.group()
        try:
            secret = json.loads(written) if written[0] != "'" else written[1:-1]
        except ValueError:
            secret = written.strip("\"'")
        if secret == "":
            return match.group()
        variable = self.learn(
            str(secret), field_variable(name), f"the JSON field {name}", any_length=False
        )
        self._variables.setdefault(written.strip("\"'"), variable)  # as written, escaped
        return f"{quote_mark}{name}{quote_mark}{colon}{quote_mark}{variable}{quote_mark}"

    def _query_pair(self, match: re.Match[str]) -> str:
        mark, name, value = match.groups()
        if not value or not secret_query(name) or "$EVALMOCK_" in value or "${EVALMOCK_" in value:
            return match.group()  # nothing to hide, or already redacted
        plain = unquote(name)
        variable = self.learn(
            unquote(value), variable_name(plain), f"the query parameter {plain}", any_length=False
        )
        self._variables.setdefault(value, variable)  # as written, percent-encoded
        return f"{mark}{name}={variable}"

    def _userinfo(self, match: re.Match[str]) -> str:
        scheme_end, user, password = match.groups()
        if VARIABLE.fullmatch(password):
            return match.group()
        variable = self.learn(
            unquote(password), "$EVALMOCK_URL_PASSWORD", "the password in a URL", any_length=False
        )
        return f"{scheme_end}{user}:{variable}"

    def _quote(self, value: str) -> str:
        if "$EVALMOCK_" not in value:
            return shlex.quote(value)
        escaped = re.sub(r'(["\\`])', r"\\\1", value)
        # Any `$` that is not one of our variables must not expand.
        escaped = re.sub(r"\$(?!EVALMOCK_)", r"\\$", escaped)
        return f'"{RUNNING.sub(self._brace, escaped)}"'

    def _brace(self, match: re.Match[str]) -> str:
        """A variable that runs into a name's characters, braced so that the shell ends it where it
        should."""
        word = match.group(1)
        if "$" + word in self._meanings:
            return match.group()
        for end in range(len(word) - 1, 0, -1):  # the longest variable the word starts with
            if "$" + word[:end] in self._meanings:
                return "${" + word[:end] + "}" + word[end:]
        return match.group()


# Headers every client adds by itself; a curl command is clearer without them.
_NOISE_HEADERS = {
    "user-agent",
    "accept-encoding",
    "connection",
    "content-length",
    "host",
    "accept",
    "x-schemathesis-testcaseid",
}


def _pairs(headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> Iterable[tuple[str, str]]:
    return headers.items() if isinstance(headers, Mapping) else headers
