"""The redaction rules, each with a secret it must replace and a neighbour it must leave alone:
credential and cookie headers, API-key and secret-named headers, secret-named query values and JSON
fields, the documents' apiKey schemes, HAR cookies arrays and bodies, echoed values; and curl
commands that still run once the variables are set."""

from __future__ import annotations

import base64
import json
import re
import subprocess
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalmock.contract import secret_names
from evalmock.contract.secret_names import (
    SECRET_FIELD_PARTS,
    secret_field,
    secret_header,
    secret_query,
)
from evalmock.harness.checks.outcomes import Violation
from evalmock.harness.checks.policy import Policy
from evalmock.harness.excerpts import clip
from evalmock.harness.results.audit_results import Results
from evalmock.harness.run.judge import ResponseJudge, violation_example
from evalmock.harness.secrets import patterns
from evalmock.harness.secrets.har_entries import learn_har_entry, redacted_har_entry
from evalmock.harness.secrets.redactor import MIN_ECHOED, Redactor

from .builders import error

SESSION = "sess-7f3a9c2e41b8"
API_KEY = "ak-live-5d1e88f0c2"
QUERY_KEY = "qk-31f0e9a7b6c5"
SIGNED_IN = "eyJhbGciOiJIUzI1NiJ9.c2lnbmVkLWlu.5f2b"  # an access token a sign-in answered


def test_every_cookie_value_becomes_its_own_variable_and_the_names_stay() -> None:
    redactor = Redactor()
    assert (
        redactor.header("Cookie", f"session={SESSION}; theme=dark")
        == "session=$EVALMOCK_COOKIE_SESSION; theme=$EVALMOCK_COOKIE_THEME"
    )
    assert redactor.header("Prefer", "code=503") == "code=503"


def test_set_cookie_keeps_its_attributes_and_loses_its_value() -> None:
    redactor = Redactor()
    assert (
        redactor.header("set-cookie", f"session={SESSION}; Path=/; HttpOnly; SameSite=Lax")
        == "session=$EVALMOCK_COOKIE_SESSION; Path=/; HttpOnly; SameSite=Lax"
    )
    assert redactor.header("Cache-Control", "no-store") == "no-store"
    # As Chromium's HAR holds two Set-Cookie headers: one value, a line each.
    assert (
        redactor.header("Set-Cookie", "a=first-value-5678; Path=/\nb=second-value-1234; Secure")
        == "a=$EVALMOCK_COOKIE_A; Path=/\nb=$EVALMOCK_COOKIE_B; Secure"
    )


def test_authorization_and_proxy_authorization_keep_their_scheme() -> None:
    redactor = Redactor()
    assert redactor.header("Authorization", "Bearer tok-abc") == "Bearer $EVALMOCK_TOKEN"
    assert (
        redactor.header("Proxy-Authorization", "Basic dXNlcjpwYXNz")
        == "Basic $EVALMOCK_PROXY_AUTHORIZATION"
    )
    assert redactor.header("WWW-Authenticate", 'Bearer realm="api"') == 'Bearer realm="api"'


@pytest.mark.parametrize(
    "name",
    [
        "X-Api-Key",
        "Api-Key",
        "X-Auth-Token",
        "X-Session-Id",
        "X-Client-Secret",
        "X-Amz-Security-Token",
        "X-Signature",
    ],
)
def test_api_key_and_secret_named_headers_are_secrets(name: str) -> None:
    assert secret_header(name)
    redactor = Redactor()
    variable = redactor.header(name, API_KEY)
    assert variable.startswith("$EVALMOCK_") and API_KEY not in variable


@pytest.mark.parametrize(
    "name",
    [
        "X-Request-Id",
        "Content-Type",
        "Prefer",
        "Retry-After",
        "WWW-Authenticate",
        "ratelimit-remaining",
        "Access-Control-Allow-Headers",
    ],
)
def test_ordinary_headers_are_not_secrets(name: str) -> None:
    assert not secret_header(name)


@pytest.mark.parametrize(
    "name",
    [
        "api_key",
        "apiKey",
        "key",
        "access_token",
        "X-Amz-Signature",
        "sig",
        "sessionid",
        "password",
        "client_secret",
        "id_token",
    ],
)
def test_query_parameters_whose_names_say_secret_are_secrets(name: str) -> None:
    assert secret_query(name)
    redactor = Redactor()
    text = redactor.text(f"GET http://h/v1/x?limit=5&{name}={QUERY_KEY}&include=retired -> 200")
    assert QUERY_KEY not in text
    assert "limit=5&" in text and "&include=retired -> 200" in text


@pytest.mark.parametrize(
    "name", ["projectId", "limit", "cursor", "include", "kind", "evaluation_test_case_version"]
)
def test_the_documents_query_parameters_are_not_secrets(name: str) -> None:
    assert not secret_query(name)
    assert Redactor().text(f"http://h/x?{name}=abcdefgh1234") == f"http://h/x?{name}=abcdefgh1234"


def test_the_api_key_query_value_gets_the_variable_its_name_says() -> None:
    redactor = Redactor()
    assert redactor.url(f"http://h/x?api_key={QUERY_KEY}") == "http://h/x?api_key=$EVALMOCK_API_KEY"


def test_a_query_value_is_found_percent_encoded_and_inside_html() -> None:
    redactor = Redactor()
    assert (
        redactor.text("http://h/x?a=1&amp;token=s%2Bcret-value")
        == "http://h/x?a=1&amp;token=$EVALMOCK_TOKEN"
    )
    # learned decoded, found as written
    assert redactor.text("echo s+cret-value") == "echo $EVALMOCK_TOKEN"


def test_a_password_in_a_url_is_a_secret() -> None:
    assert Redactor().text("http://me:hunter2-pass@h/x") == "http://me:$EVALMOCK_URL_PASSWORD@h/x"
    assert Redactor().text("mailto me@h") == "mailto me@h"


def test_headers_and_query_parameters_an_api_key_scheme_names_are_secrets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    schemes = {
        "gateway": {"type": "apiKey", "in": "header", "name": "X-Gateway"},
        "partner": {"type": "apiKey", "in": "query", "name": "partner"},
        "bearer": {"type": "http", "scheme": "bearer"},
    }
    document = SimpleNamespace(spec={"components": {"securitySchemes": schemes}})
    monkeypatch.setattr(secret_names, "APIS", {"x": document})
    names = secret_names.scheme_names.__wrapped__()
    assert names == (frozenset({"x-gateway"}), frozenset({"partner"}))
    monkeypatch.setattr(secret_names, "scheme_names", lambda: names)
    secret_header.cache_clear(), secret_query.cache_clear()
    try:
        assert secret_header("X-Gateway") and secret_query("partner")
        assert not secret_header("X-Gate") and not secret_query("partners-page")
        assert (
            Redactor().text("http://h/x?partner=p-123456789")
            == "http://h/x?partner=$EVALMOCK_PARTNER"
        )
    finally:
        secret_header.cache_clear(), secret_query.cache_clear()


# The look-behind forms of the query-pair and userinfo patterns (the plain reading of the rule,
# slower): the patterns that match the mark before the pair must find the same pairs.
_QUERY_PAIR_BEHIND = re.compile(r"(?<=[?&;])([A-Za-z0-9_.~%\[\]-]+)=([^&#\s\"'<>`)\]\\]*)")
_USERINFO_BEHIND = re.compile(r"(?<=://)([^/@\s:?#]+):([^/@\s?#]+)(?=@)")
_URLISH = st.text(alphabet=st.sampled_from(list("?&;=:/@#%ab_-. \"'<>)]\\$")), max_size=60)


@settings(max_examples=400, deadline=None)
@given(_URLISH)
def test_query_pairs_and_url_passwords_are_the_ones_a_look_behind_finds(text: str) -> None:
    pairs = [(m.start(2), m.group(2), m.group(3)) for m in patterns.QUERY_PAIR.finditer(text)]
    assert pairs == [
        (m.start(1), m.group(1), m.group(2)) for m in _QUERY_PAIR_BEHIND.finditer(text)
    ]
    users = [(m.start(2), m.group(2), m.group(3)) for m in patterns.USERINFO.finditer(text)]
    assert users == [(m.start(1), m.group(1), m.group(2)) for m in _USERINFO_BEHIND.finditer(text)]


def test_a_secret_query_value_and_a_url_password_keep_the_text_before_them() -> None:
    assert Redactor().text("a?b=1&token=abcdefgh&c") == "a?b=1&token=$EVALMOCK_TOKEN&c"
    assert Redactor().text("see http://me:hunter2-pass@h and ftp://u:p4ssword-x@g") == (
        "see http://me:$EVALMOCK_URL_PASSWORD@h and ftp://u:$EVALMOCK_URL_PASSWORD_2@g"
    )


def test_har_cookies_arrays_and_parameters_are_redacted_and_learned() -> None:
    entry = {
        "request": {
            "url": f"http://h/x?api_key={QUERY_KEY}&limit=5",
            "headers": [
                {"name": "cookie", "value": f"session={SESSION}"},
                {"name": "x-api-key", "value": API_KEY},
                {"name": "accept", "value": "*/*"},
            ],
            "cookies": [{"name": "session", "value": SESSION, "httpOnly": True}],
            "queryString": [
                {"name": "api_key", "value": QUERY_KEY},
                {"name": "limit", "value": "5"},
            ],
        },
        "response": {
            "headers": [{"name": "set-cookie", "value": "next=rotated-0123456789; Path=/"}],
            "cookies": [{"name": "next", "value": "rotated-0123456789", "path": "/"}],
            "content": {"text": f'{{"message": "bad key {API_KEY}"}}'},
        },
    }
    redactor = Redactor()
    learn_har_entry(redactor, entry)
    redacted = str(redacted_har_entry(redactor, entry))
    for secret in (SESSION, API_KEY, QUERY_KEY, "rotated-0123456789"):
        assert secret not in redacted
    assert (
        "'httpOnly': True" in redacted and "'path': '/'" in redacted and "'value': '5'" in redacted
    )
    assert "bad key $EVALMOCK_X_API_KEY" in redacted


def test_a_learned_value_echoed_anywhere_is_replaced_but_a_short_one_only_where_it_stands() -> None:
    redactor = Redactor()
    redactor.learn_exchange(
        f"http://h/x?api_key={QUERY_KEY}",
        {"cookie": f"session={SESSION}; theme=dark"},
        {"set-cookie": "seen=rotated-0123456789"},
    )
    assert redactor.text(f"requestId {SESSION}, key {QUERY_KEY}, next rotated-0123456789") == (
        "requestId $EVALMOCK_COOKIE_SESSION, key $EVALMOCK_API_KEY, next $EVALMOCK_COOKIE_SEEN"
    )
    assert len("dark") < MIN_ECHOED
    # too short to hunt for: it would match ordinary words
    assert redactor.text("a dark theme") == "a dark theme"
    assert redactor.header("Cookie", "theme=dark") == "theme=$EVALMOCK_COOKIE_THEME"


def test_a_short_secret_named_token_is_not_hunted_in_other_text() -> None:
    redactor = Redactor()
    assert redactor.text("http://h/x?token=1&limit=1") == "http://h/x?token=$EVALMOCK_TOKEN&limit=1"
    assert redactor.text("limit=1, 1 case") == "limit=1, 1 case"


def test_a_short_bearer_token_met_in_traffic_is_replaced_where_it_stands() -> None:
    redactor = Redactor()
    assert redactor.header("Authorization", "Bearer 1") == "Bearer $EVALMOCK_TOKEN"
    assert redactor.text("limit=1") == "limit=1"
    # a token given is hunted at any length
    assert Redactor("1").text("limit=1") == "limit=$EVALMOCK_TOKEN"


def test_values_already_redacted_stay_as_they_are() -> None:
    redactor = Redactor()
    assert (
        redactor.header("Cookie", "session=$EVALMOCK_COOKIE_SESSION")
        == "session=$EVALMOCK_COOKIE_SESSION"
    )
    assert (
        redactor.url("http://h/x?api_key=$EVALMOCK_API_KEY")
        == "http://h/x?api_key=$EVALMOCK_API_KEY"
    )
    assert "EVALMOCK_COOKIE_SESSION (the cookie session)" in (
        redactor.legend("$EVALMOCK_COOKIE_SESSION") or ""
    )


def test_a_cookie_the_service_set_is_one_the_legend_says_to_leave_unset() -> None:
    # A gateway's rotating session cookie, which the audit's client sent back: no one can know its
    # value.
    redactor = Redactor()
    redactor.learn_exchange(
        "http://h/v1/x", [], [("set-cookie", "GWSESSION=a1b2c3d4e5f6; Path=/; HttpOnly")]
    )
    curl = redactor.curl("GET", "http://h/v1/x", {"cookie": "GWSESSION=a1b2c3d4e5f6"})
    assert "a1b2c3d4e5f6" not in curl and "GWSESSION=$EVALMOCK_COOKIE_GWSESSION" in curl
    assert (
        "EVALMOCK_COOKIE_GWSESSION (the cookie GWSESSION, which the service set: leave it unset)"
        in (redactor.legend(curl) or "")
    )
    own = Redactor()
    assert own.legend(own.header("Cookie", "own=v4l9e1")) == (
        "secrets are replaced by environment variables; set "
        "these before running a curl command: "
        "EVALMOCK_COOKIE_OWN (the cookie own)"
    )


def test_one_value_met_in_two_places_is_one_variable_and_two_values_of_one_name_are_two() -> None:
    redactor = Redactor()
    redactor.learn_exchange(f"http://h/x?api_key={API_KEY}", {"x-api-key": API_KEY})
    assert redactor.header("X-Api-Key", API_KEY) == "$EVALMOCK_API_KEY"
    assert redactor.header("X-Api-Key", "ak-other-99887766") == "$EVALMOCK_X_API_KEY"
    assert (
        redactor.url("http://h/x?api_key=ak-third-11223344")
        == "http://h/x?api_key=$EVALMOCK_API_KEY_2"
    )


def test_the_values_of_one_cookie_are_numbered_on_around_the_names_a_har_already_holds() -> None:
    redactor = Redactor()
    redactor.learn("$EVALMOCK_COOKIE_AWSALB_3")  # a HAR that evalmock wrote names it already
    shown = [redactor.learn_cookie("AWSALB", f"alb-value-{n:08d}") for n in range(4)]
    assert shown == [
        "$EVALMOCK_COOKIE_AWSALB",
        "$EVALMOCK_COOKIE_AWSALB_2",
        "$EVALMOCK_COOKIE_AWSALB_4",
        "$EVALMOCK_COOKIE_AWSALB_5",
    ]
    # known: as before
    assert redactor.learn_cookie("AWSALB", "alb-value-00000002") == "$EVALMOCK_COOKIE_AWSALB_4"


class _CountedLookups(dict):  # type: ignore[type-arg]
    """Counts the names looked at: one for a look-up, all of them for a walk over them."""

    lookups = 0

    def __contains__(self, key: object) -> bool:
        self.lookups += 1
        return super().__contains__(key)

    def __iter__(self):  # type: ignore[no-untyped-def]
        self.lookups += len(self)
        return super().__iter__()


def test_naming_the_thousandth_value_of_a_cookie_does_not_try_the_names_before_it() -> None:
    """A gateway that sets a new cookie on every answer (AWS ALB): each value's name costs the same,
    where trying _2, _3, ... first made every answer dearer than the one before."""
    redactor = Redactor()
    names = redactor._meanings = _CountedLookups()  # the names given, as the redactor looks them up
    for n in range(1000):
        redactor.learn_cookie("AWSALB", f"alb-value-{n:08d}")
    assert redactor.learn_cookie("AWSALB", "alb-value-new") == "$EVALMOCK_COOKIE_AWSALB_1001"
    assert names.lookups <= 1001


def test_the_curl_command_runs_with_the_secrets_once_the_variables_are_set() -> None:
    redactor = Redactor("tok-123456")
    curl = redactor.curl(
        "GET",
        f"http://h/v1/x?limit=5&api_key={QUERY_KEY}",
        {
            "Authorization": "Bearer tok-123456",
            "Cookie": f"session={SESSION}; theme=dark",
            "X-Api-Key": API_KEY,
            "X-Echo": f"{SESSION}_tail",
            "Prefer": "code=503 $HOME",
        },
    )
    for secret in (QUERY_KEY, SESSION, API_KEY, "tok-123456"):
        assert secret not in curl
    legend = redactor.legend(curl) or ""
    for variable in (
        "EVALMOCK_API_KEY",
        "EVALMOCK_COOKIE_SESSION",
        "EVALMOCK_COOKIE_THEME",
        "EVALMOCK_X_API_KEY",
        "EVALMOCK_TOKEN",
    ):
        assert variable in legend
    environment = {
        "EVALMOCK_TOKEN": "tok-123456",
        "EVALMOCK_API_KEY": QUERY_KEY,
        "EVALMOCK_COOKIE_SESSION": SESSION,
        "EVALMOCK_COOKIE_THEME": "dark",
        "EVALMOCK_X_API_KEY": API_KEY,
        "HOME": "/nowhere",
    }
    # The command as the shell runs it, with printf in curl's place to show each argument it would
    # get.
    shown = subprocess.run(
        ["sh", "-c", curl.replace("curl", "printf '%s\\n'", 1)],
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert shown == [
        "-sS",
        "-i",
        f"http://h/v1/x?limit=5&api_key={QUERY_KEY}",
        "-H",
        "Authorization: Bearer tok-123456",
        "-H",
        f"Cookie: session={SESSION}; theme=dark",
        "-H",
        f"X-Api-Key: {API_KEY}",
        "-H",
        f"X-Echo: {SESSION}_tail",
        "-H",
        "Prefer: code=503 $HOME",
    ]


def test_a_judge_learns_an_answer_s_set_cookie_before_any_check_quotes_it() -> None:
    """The live audit's path: the service sets a cookie and echoes it; the breach quotes it as its
    variable."""
    rotated = "srv-set-0a1b2c3d4e5f"
    exchange = error(
        400,
        "bad-input",
        request_id=rotated,
        header="rid-1",
        headers={"set-cookie": f"sid={rotated}; Path=/; HttpOnly"},
    )
    results = Results(Policy(), ("test-set",))
    redactor = Redactor()
    breaches = ResponseJudge("test-set", results, redactor).judge(exchange)

    [breach] = [b for b in breaches if b.check.name == "request_id_header_is_the_envelope_s"]
    assert rotated not in breach.example.message + (breach.example.value or "")
    assert "$EVALMOCK_COOKIE_SID" in breach.example.message


@pytest.mark.parametrize(
    "name",
    [
        "access_token",
        "accessToken",
        "refresh_token",
        "id_token",
        "token",
        "jwt",
        "password",
        "passwd",
        "client_secret",
        "clientSecret",
        "apiKey",
        "api_key",
        "privateKey",
        "accessKeyId",
        "sessionId",
        "session_id",
        "sid",
        "signature",
        "Authorization",
        "apiKeys",
        "passwords",
        "client_secrets",
        "cookies",
    ],
)
def test_json_fields_whose_names_say_secret_are_secrets(name: str) -> None:
    assert secret_field(name)
    # so a body holding it is read for it
    assert any(part in name.lower() for part in SECRET_FIELD_PARTS)


@pytest.mark.parametrize(
    "name",
    [
        "key",
        "sortKey",
        "idempotencyKey",
        "keyword",
        "tokenType",
        "tokenizer",
        "maxTokens",
        "tokenExpiresAt",
        "secretName",
        "signatureAlgorithm",
        "signed",
        "kind",
        "expect",
        "id",
        "requestId",
        "projectId",
        "tokens",
        "total_tokens",
        "keys",
        "sortKeys",
    ],
)
def test_json_fields_of_ordinary_bodies_are_not_secrets(name: str) -> None:
    """The test-set API's items carry a `key`: an item's key is data, not a credential."""
    assert not secret_field(name)


def test_a_json_body_s_secret_fields_become_variables_whatever_their_length() -> None:
    redactor = Redactor()
    body = json.dumps(
        {
            "access_token": SIGNED_IN,
            "user": {"password": "hunter2"},
            "expiresIn": 3600,
            "items": [{"key": "corr-1", "rank": 0}],
        },
        indent=2,
    )
    shown = redactor.body(body)
    assert json.loads(shown) == {
        "access_token": "$EVALMOCK_ACCESS_TOKEN",
        "user": {"password": "$EVALMOCK_PASSWORD"},
        "expiresIn": 3600,
        "items": [{"key": "corr-1", "rank": 0}],
    }
    # Learned too: the long one is replaced wherever it is echoed, the short one only where it
    # stands.
    assert (
        redactor.text(f"echoed {SIGNED_IN} and hunter2")
        == "echoed $EVALMOCK_ACCESS_TOKEN and hunter2"
    )


def test_a_body_without_a_secret_named_field_comes_back_as_written() -> None:
    """Its values may hold the words of secret names (a case's text, an item's `key`): nothing is
    replaced, and the body keeps its own spacing and escapes, as it is not written again."""
    body = (
        '{"data": [{"query": "which session key was passed inside the token?", "items": [{"key": '
        '"k\\u00e9"}]}]}'
    )
    assert Redactor().body(body) == body


def test_a_secret_named_field_is_found_however_json_writes_it() -> None:
    """A key escaped (`pass\\u0077ord`), deep in arrays of objects, or in a body only Python's json
    reads (NaN)."""
    escaped = Redactor().body('{"data": [[{"a": 1, "pass\\u0077ord": "hunter2"}]]}')
    assert json.loads(escaped) == {"data": [[{"a": 1, "password": "$EVALMOCK_PASSWORD"}]]}
    assert "hunter2" not in Redactor().body('{"score": NaN, "session": {"id": "hunter2"}}')


def test_a_secret_field_s_number_object_or_array_is_hidden_too() -> None:
    """Whatever its type: each string and number under a secret-named field is a secret; true, false
    and null, and the token counts an LLM API reports (`maxTokens`, `tokens`), are not."""
    redactor = Redactor()
    body = {
        "session": {"id": "s-1", "csrf": "c-9", "fresh": True},
        "apiKeys": ["k-1", "k-2"],
        "sessionId": 1234567890,
        "refreshToken": None,
        "maxTokens": 4096,
        "usage": {"tokens": 12},
    }
    shown = json.loads(redactor.body(json.dumps(body)))
    assert shown == {
        "session": {"id": "$EVALMOCK_SESSION_ID", "csrf": "$EVALMOCK_SESSION_CSRF", "fresh": True},
        "apiKeys": ["$EVALMOCK_API_KEYS", "$EVALMOCK_API_KEYS_2"],
        "sessionId": "$EVALMOCK_SESSION_ID_2",
        "refreshToken": None,
        "maxTokens": 4096,
        "usage": {"tokens": 12},
    }
    assert redactor.text("session 1234567890 resumed") == "session $EVALMOCK_SESSION_ID_2 resumed"


def test_a_secret_field_in_a_body_quoted_in_part_is_hidden_where_it_stands() -> None:
    """A finding quotes the first 200 characters of a body, which no longer parse; a secret-named
    field's value in them is still replaced, short or long, in JSON's quotes or a Python dict's; and
    a finding's message is read so."""
    redactor = Redactor()
    body = (
        json.dumps({"error": {"details": {"password": "hunter2", "attempts": 3, "sessionId": 42}}})
        + " " * 300
    )
    quoted = redactor.quoting(f"received: 400 {body[:60]} and {{'client_secret': 'xyz'}}")
    assert "hunter2" not in quoted and "42" not in quoted and "xyz" not in quoted
    assert '"password": "$EVALMOCK_PASSWORD", "attempts": 3' in quoted
    assert "'client_secret': '$EVALMOCK_CLIENT_SECRET'" in quoted
    assert (
        redactor.quoting('{"tokenType": "bearer", "key": "corr-1"}')
        == '{"tokenType": "bearer", "key": "corr-1"}'
    )
    clipped = '401 {"error": {"password": "hunter2"}, "n": "' + "x" * 300
    violation = Violation("refused", expected="200", received=clipped)
    assert "hunter2" not in violation_example(violation, None, Redactor()).message


def test_a_clipped_text_ends_between_words() -> None:
    text = 'received: 401 {"message": "Bearer tok-3f9a2c7e1b4d expired"}'
    for limit in range(12, len(text)):
        shown = clip(text, limit)
        assert len(shown) <= limit and shown.endswith("…")
        assert "tok-" not in shown or "tok-3f9a2c7e1b4d" in shown  # never part of the word
    assert clip(text, len(text)) == text


def test_a_long_value_clipped_shows_its_start_and_a_known_secret_cut_so_is_its_variable() -> None:
    """A word longer than half the room is cut (an auditor sees what the value began with); the
    redactor names a known secret by its variable from its start alone."""
    assert clip("x" * 500, 200) == "x" * 199 + "…"
    redactor = Redactor(token=SIGNED_IN)
    shown = redactor.text(clip(f"401 {SIGNED_IN} and more", 30))
    assert shown == "401 $EVALMOCK_TOKEN…"
    assert redactor.text("an ordinary word…") == "an ordinary word…"


def test_a_finding_quoting_a_body_never_shows_part_of_an_echoed_secret() -> None:
    """The body echoes the caller's token where the finding's excerpt of it ends; the example names
    the token by its variable, and shows none of it."""
    for padding in range(150, 200, 7):
        exchange = error(
            401, "unauthenticated", body={"note": "n" * padding, "echo": f"Bearer {SIGNED_IN}"}
        )
        redactor = Redactor(token=SIGNED_IN)
        violation = Violation(
            "a token was refused", expected="200", received=f"401 {exchange.excerpt()}"
        )
        example = violation_example(violation, None, redactor)
        assert SIGNED_IN[:12] not in example.message


def test_a_body_without_a_secret_field_is_shown_as_written() -> None:
    redactor = Redactor()
    page = json.dumps(
        {"data": [{"id": "case-1", "items": [{"key": "corr-1"}]}], "hasMore": False}, indent=2
    )
    assert redactor.body(page) == page
    assert redactor.body("password=hunter2 is not JSON") == "password=hunter2 is not JSON"
    assert redactor.body('{"password": "unterminated') == '{"password": "unterminated'


def test_har_bodies_are_redacted_and_their_secrets_learned_but_base64_is_left_alone() -> None:
    redactor = Redactor()
    encoded = base64.b64encode(b'{"password":"in-base64"}').decode()
    entry = {
        "request": {
            "method": "POST",
            "url": "http://h/session",
            "headers": [],
            "postData": {
                "mimeType": "application/json",
                "text": '{"user":"ada","password":"hunter2"}',
            },
        },
        "response": {
            "status": 200,
            "headers": [],
            "content": {
                "mimeType": "application/json",
                "text": json.dumps({"access_token": SIGNED_IN}),
            },
        },
        "_other": {"content": {"encoding": "base64", "text": encoded}},
    }
    learn_har_entry(redactor, entry)
    assert redactor.text(f"later: {SIGNED_IN}") == "later: $EVALMOCK_ACCESS_TOKEN"
    shown = redacted_har_entry(redactor, entry)
    assert json.loads(shown["request"]["postData"]["text"]) == {
        "user": "ada",
        "password": "$EVALMOCK_PASSWORD",
    }
    assert json.loads(shown["response"]["content"]["text"]) == {
        "access_token": "$EVALMOCK_ACCESS_TOKEN"
    }
    assert shown["_other"]["content"]["text"] == encoded
    assert "hunter2" not in json.dumps(shown) and SIGNED_IN not in json.dumps(shown)


def test_a_curl_command_s_json_body_names_its_secret_fields_by_their_variables() -> None:
    redactor = Redactor()
    command = redactor.curl("POST", "http://h/session", {}, b'{"user":"ada","password":"hunter2"}')
    assert "hunter2" not in command and "$EVALMOCK_PASSWORD" in command


def test_a_finding_that_quotes_a_body_names_its_secret_field_by_its_variable() -> None:
    """A scenario's finding quotes the answer's body; the service's envelope echoes a token under a
    secret-named field: the example names the token by its variable (learned as the finding's
    request is recorded)."""
    body = {
        "error": {
            "code": "bad-input",
            "message": "It went wrong.",
            "details": {"sessionToken": SIGNED_IN},
            "requestId": "rid-1",
        }
    }
    exchange = error(400, "bad-input", body=body)
    redactor = Redactor()
    judge = ResponseJudge("test-set", Results(Policy(), ("test-set",)), redactor)
    violation = Violation(
        "an unknown agent was not a 404",
        expected="404 agent-not-found",
        received=f"{exchange.status} {exchange.text[:300]}",
    )
    example = violation_example(violation, judge.record(exchange), redactor)
    assert SIGNED_IN in violation.render() and SIGNED_IN not in example.message
    assert "$EVALMOCK_SESSION_TOKEN" in example.message


def test_the_credentials_the_audit_makes_up_are_shown_as_sent_so_their_curl_reproduces() -> None:
    from schemathesis.specs.openapi._auth_retry import INVALID_CREDENTIAL

    from evalmock.harness.checks.authentication import (
        MADE_UP_TOKEN,
        SCHEMATHESIS_INVALID_CREDENTIAL,
    )
    from evalmock.harness.run.options import Audit

    # what ignored_auth sends, kept in step
    assert SCHEMATHESIS_INVALID_CREDENTIAL == INVALID_CREDENTIAL
    redactor = Audit("http://service.test", token="tok-real-0123456789").redactor
    url = "http://service.test/v1/agents/a/test-set/cases?projectId=p"
    # the last: an empty bearer token, a scheme alone
    for sent in (
        f"Bearer {MADE_UP_TOKEN}",
        f"Bearer {INVALID_CREDENTIAL}",
        "Bearer not a token",
        "Basic ZGVtbzpkZW1v",
        "Bearer",
    ):
        redactor.learn_exchange(url, {"authorization": sent})
        assert sent in redactor.curl("GET", url, {"authorization": sent})
    assert "tok-real" not in redactor.curl(
        "GET", url, {"authorization": "Bearer tok-real-0123456789"}
    )
    assert (
        redactor.legend(redactor.curl("GET", url, {"authorization": f"Bearer {MADE_UP_TOKEN}"}))
        is None
    )
