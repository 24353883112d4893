"""Where a secret may stand in a text or a body, and the forms it may be written in there."""

from __future__ import annotations

import html
import json
import re
from typing import Any
from urllib.parse import quote

from evalmock.contract.secret_names import SECRET_FIELD_PARTS
from evalmock.harness.excerpts import ELLIPSIS, WORD_BREAK

# HTTP authentication schemes (IANA's registry): a header holding one of these alone holds no
# secret.
AUTH_SCHEMES = frozenset(
    {
        "basic",
        "bearer",
        "digest",
        "dpop",
        "gnap",
        "hoba",
        "mutual",
        "negotiate",
        "ntlm",
        "privatetoken",
        "scram-sha-1",
        "scram-sha-256",
        "vapid",
        "concealed",
    }
)
# `name=value` in a URL's query, also inside HTML (`&amp;name=`): the value ends where a URL or the
# text around ends. The mark before the name is matched, not looked behind: a pattern that starts
# with a look-behind is tried at every character, one that starts with a class or a literal skips to
# it (3× faster over a page's 16 KB, 18× for `://`).
QUERY_PAIR = re.compile(r"([?&;])([A-Za-z0-9_.~%\[\]-]+)=([^&#\s\"'<>`)\]\\]*)")
USERINFO = re.compile(r"(://)([^/@\s:?#]+):([^/@\s?#]+)(?=@)")
RUNNING = re.compile(r"\$(EVALMOCK_[A-Za-z0-9_]*)")
JSON_START = re.compile(r"\s*[\[{]")
# A form's body (`user=ada&password=...`), read as a URL's query is.
FORM_BODY = re.compile(r"[^\s=&?#]+=[^\s&]*(?:&[^\s=&]+=[^\s&]*)*")
# A word cut short by `outcomes.clip`: it may be the start of a known secret.
CUT_WORD = re.compile(f"[^{WORD_BREAK}]{{4,}}(?={ELLIPSIS})")
# `"name": value` in a text (JSON, or a Python dict's repr), a value a string or a number: a body
# quoted in part in a finding cannot be parsed, yet its secret-named fields are to be hidden as in a
# whole one.
FIELD_PAIR = re.compile(
    r"""(["'])([^"'\\\n]{1,100})\1(\s*:\s*)("(?:[^"\\\n]|\\.)*"|'[^'\\\n]*'|-?\d[\d.eE+-]*)"""
)


def written_forms(secret: str) -> set[str]:
    """A secret as it may be written in an output: as is, percent-encoded, HTML- and
    JSON-escaped."""
    forms = {secret, quote(secret, safe=""), html.escape(secret), json.dumps(secret)[1:-1]}
    return {form for form in forms if form}


def json_that_may_hold_secrets(text: str) -> Any:
    """The parsed JSON of a body that opens as a JSON object or array and holds a part of a secret
    field's name somewhere, or an escape (a key may be written `pass\\u0077ord`); None for any other
    body, which is not parsed."""
    if JSON_START.match(text) is None:
        return None
    lowered = text.lower()
    if "\\u" not in text and not any(part in lowered for part in SECRET_FIELD_PARTS):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None
