"""How a violation message quotes a value it read from a resource or from the policy config: `shown`.

`pulumi preview --policy-pack policies` prints a message as the pack wrote it (the offline plan quotes it again, the
CLI does not), so a value goes through `shown` before it is part of one: credential-shaped text hidden (a URL's
userinfo, a parameter named like a token, key, password or secret, a bearer or basic token, a token of a known
form such as `ghp_...`, a host's label shaped as a token), every character a terminal would act on escaped (control characters, ESC among them, and
Unicode format characters such as bidi overrides), and the result cut to a bounded length. The pack cannot import the program's own quoting
(components/shown.py): the CLI runs it from inside `policies/`. Every pattern is linear: fixed or bounded text,
single character classes, starts only at a boundary or at a fixed text (a token's prefix).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

SHOWN_LIMIT = 120
CREDENTIALS = "[credentials]"
REDACTED = "[redacted]"

# A URL's userinfo (RFC 3986 section 3.2.1): from `scheme://` to the authority's last '@' (urllib's rpartition). No
# word boundary is asked for before the scheme: `namehttps://u:p@h` is as secret.
_URL_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]{0,31}:/{1,3})[^/?#\s]*@")
# `user:password@host` written without a scheme, from a boundary (a path's '/' among them); an image's
# `repo:tag@sha256:...` is a digest.
_SCHEMELESS_USERINFO = re.compile(r"(?<![^\s\"'`=(\[{<,;/])[^\s\"'`=(\[{<,;/?#@:]+:[^\s/?#@]*@(?!sha(?:256|512):)")
# `name=value` or `name: value` after a boundary (a query's '?', '&', ';', a fragment's '#', white space, a quote):
# the name is judged by `_CREDENTIAL_NAME`, its value hidden.
_PARAMETER = re.compile(r"(?:(?<=[?&;#\s\"'`,({\[])|\A)([\w.-]+)(\s{0,8}[=:]\s{0,8})([^\s?&;#\"'`,)}\]]+)")
_CREDENTIAL_NAME = re.compile(r"(?i)token|key|passw|pwd|secret|auth|credential|signature|sig\Z|session|cookie|private")
# An HTTP Authorization header's credentials (RFC 9110 section 11.4): `Bearer <token>`, `Basic <base64>`.
_AUTH_SCHEME = re.compile(r"(?i)(bearer|basic)(\s+)\S+")

# A token whose form says what it is (a JWT's `eyJ`, GitHub's `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`,
# GitLab's `glpat-`, Slack's `xox?-`, AWS's `AKIA`/`ASIA` key IDs), hidden whole to its last token character, also
# glued to the text before it (`5ghp_...`; a JWT inside a word only by its header's start): the forms of
# components/redaction.py `_TOKEN_FORM` (each form's source and boundary there), kept in step by
# tests/policies/test_policy_quoting.py.
TOKEN_FORM = re.compile(
    r"(?:(?<![A-Za-z0-9])eyJ[A-Za-z0-9_-]{8}|eyJ(?:hbGci|0eXAi|raWQi|lbmMi|jdHki|qa3Ui|qd2si|4NXUi|4NWMi|4NXQi|jcml0|6aXAi)"
    r"|gh[pousr]_[A-Za-z0-9]{20}|github_pat_[A-Za-z0-9_]{20}|glpat-[A-Za-z0-9_-]{20}"
    r"|xox[abposr]-[A-Za-z0-9-]{10}|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|(?<![A-Za-z0-9])sk-(?:(?:proj|svcacct|admin|ant-api03|ant-admin01)-)?[A-Za-z0-9]{20})"
)
_TOKEN_RUN = re.compile(TOKEN_FORM.pattern + r"(?:[A-Za-z0-9_-]|\.(?=[A-Za-z0-9_-]))*")
# A label of a URL's host shaped as a token that no prefix names (`https://<token>.mirror.example/`): a run of
# TOKEN_WORD_LENGTH or more letters and digits in the authority after `scheme://`, holding both cases and a digit, or
# HEX_TOKEN_LENGTH or more hex digits with a letter and a digit. The rule and its thresholds are components/redaction.py
# `token_shaped_word`'s and `_LABEL_RUN`'s (why these, and why only in a URL, there), kept in step by
# tests/policies/test_policy_quoting.py.
TOKEN_WORD_LENGTH = 16
HEX_TOKEN_LENGTH = 32
LABEL_RUN = re.compile(rf"(?<![A-Za-z0-9])[A-Za-z0-9]{{{TOKEN_WORD_LENGTH},}}(?![A-Za-z0-9])")
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_URL_AUTHORITY = re.compile(r"([A-Za-z][A-Za-z0-9+.-]{0,31}:/{1,3})([^/?#\s]+)")


def token_shaped_word(word: str) -> bool:
    """True when `word` (letters and digits) has a random token's shape, not a word's (`nvidia2024mirror`)."""
    if len(word) < TOKEN_WORD_LENGTH:
        return False
    digit = any(character.isdigit() for character in word)
    if digit and any(character.isupper() for character in word) and any(character.islower() for character in word):
        return True
    return len(word) >= HEX_TOKEN_LENGTH and digit and not word.isdigit() and set(word) <= _HEX_DIGITS


def _labels_redacted(match: re.Match) -> str:
    labels = LABEL_RUN.sub(lambda run: REDACTED if token_shaped_word(run.group(0)) else run.group(0), match.group(2))
    return match.group(1) + labels


def _parameter(match: re.Match) -> str:
    name, between, value = match.groups()
    if not _CREDENTIAL_NAME.search(name) or value.startswith("//"):
        return match.group(0)
    return f"{name}{between}{REDACTED}"


def redacted(text: str) -> str:
    """`text` with its credential-shaped parts replaced."""
    text = _TOKEN_RUN.sub(REDACTED, text)
    text = _URL_USERINFO.sub(lambda m: f"{m.group(1)}{CREDENTIALS}@", text)
    text = _SCHEMELESS_USERINFO.sub(f"{CREDENTIALS}@", text)
    text = _URL_AUTHORITY.sub(_labels_redacted, text)
    text = _AUTH_SCHEME.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    return _PARAMETER.sub(_parameter, text)


def _escaped(character: str) -> str:
    if character.isprintable():
        return character
    code = ord(character)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _plain(value: Any) -> Any:
    """A value the JSON encoder takes: the policy SDK hands objects and lists as proxies, not dicts and lists."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, Sequence):
        return [_plain(item) for item in value]
    return repr(value)


def shown(value: Any, limit: int = SHOWN_LIMIT) -> str:
    """`value` as a message may print it: a text as it is, anything else as JSON; credentials hidden, every character
    a terminal acts on escaped, and at most `limit` characters (a longer one cut, with its length said)."""
    text = value if isinstance(value, str) else json.dumps(_plain(value), sort_keys=True)
    text = redacted(text)
    pieces: list[str] = []
    size = 0
    for character in text:
        pieces.append(_escaped(character))
        size += len(pieces[-1])
        if size > limit:
            break
    else:
        return "".join(pieces)
    kept, size = [], 0
    for piece in pieces:
        if size + len(piece) > limit - 24:
            break
        kept.append(piece)
        size += len(piece)
    return "".join(kept) + f"... ({len(text)} characters)"


def listed(values: Sequence[Any], limit: int = 10) -> str:
    """Values joined with ', ', each `shown`, at most `limit` of them (the rest counted)."""
    items = [shown(value) for value in values[:limit]]
    more = len(values) - limit
    return ", ".join(items) + (f" and {more} more" if more > 0 else "")


def quoted(value: Any) -> str:
    """`value` as a Python literal reads: a text `shown` between single quotes, None as None, anything else `shown`."""
    if value is None:
        return "None"
    return f"'{shown(value)}'" if isinstance(value, str) else shown(value)
