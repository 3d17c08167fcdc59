"""Credentials out of every text the tools print or write: the one function is `redacted`.

Three kinds of credential reach a message, a plan, a report or a file: the values of keys set as
secrets (every leaf, whatever its type: a number or a boolean is as secret as a string), the
userinfo, query and fragment of URLs (`https://user:pass@host/?token=...`; a fragment that only
names a place in the page, `#section-4.2`, is shown), and fields a credential is written under
inside a quoted text (an inline kubeconfig's `token:` or `client-key-data:`, a `password=` in a
connection string). Every output goes through `redacted`
last, so no copy of this logic lives at the places that quote outside text.

A URL's parts are found as RFC 3986 section 3.2 defines them and `urllib.parse.urlsplit` splits
them (CPython 3.11, Lib/urllib/parse.py): the authority runs from `//` to the next `/`, `?` or
`#`, and its userinfo ends at its *last* `@` (`_NetlocResultMixinStr._userinfo` uses
`rpartition('@')`), so a password with an `@` in it is redacted whole. Every pattern here is
linear: fixed alternations, single character classes, and quantified groups only of alternatives that differ
in their first character.
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

SECRET = "[secret]"
CREDENTIALS = "[credentials]"
REDACTED = "[redacted]"

# A scheme (RFC 3986 section 3.1: a letter, then letters, digits, '+', '-', '.'; at most 32 here), its slashes (`://`
# as RFC 3986 writes an authority, or the malformed `:/`, `:///` or `:\\` of a careless URL, which urllib reads as a
# path but whose `user:password@` is as secret), then the rest of the whitespace-free run. \b keeps a run of letters
# from being tried at each of its positions.
_URL = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]{0,31}):([/\\]+)(\S*)")
# Parameters of a query or fragment are separated by `&` (or `;`); they end where the text around the URL goes on:
# a quote, as it is or JSON-escaped, or an angle bracket.
_SEPARATOR = re.compile(r"([&;])")
# What ends a userinfo (RFC 3986 section 3.2.1: its last '@'), and what only looks like it: the full-width and small
# commercial at (U+FF20, U+FE6B), which a pasted or mistyped URL carries where its '@' belongs, and any of these
# escaped as an output writes them (`\uff20`, `\x40`) or percent-encoded (`%40`). A URL with one is refused, and its
# refusal quotes it: everything before the last of them is taken for the userinfo.
_USERINFO_END = re.compile(r"(?i)@|\uff20|\ufe6b|\\u(?:0040|ff20|fe6b)|\\x40|%40")
# An authority written without its `scheme://` (a registry's `user:password@host/x` pasted into a Helm value, a
# kubeconfig's `server:`): a whitespace-free token from a token boundary (the text's start, white space, a quote, a
# backquote, '=', '(', '[', '{', '<', ',' or ';') whose first ':' (or a look-alike: U+FF1A, U+FE55, U+A789, U+2236,
# U+02D0, as it is or `\\u`-escaped, or `%3A`) comes before any '/', '?' or '#', and whose authority (RFC 3986
# section 3.2: up to the next '/', '?' or '#'; a `:\\` is a careless URL's, `_URL`'s) then holds an '@' or look-alike (`_USERINFO_END`): what is before its
# last one is the userinfo. Not one: a plain `user@host` or `git@github.com:org/repo` (no ':' before the '@', so no
# password), a mail address `mailto:ops@example.com` (RFC 6068: an addr-spec has no password), a config key
# `nebius-dra:name`, `host:8443`, an image's `repo:tag` or `nvcr.io/x:v1@sha256:...` (its
# first ':' is after a '/', or what follows its '@' is a digest, `DIGEST`), a compact JSON's `"name":"ops@x"` (a
# quote right after a ':' that follows a boundary starts a value). The user part (empty in `:password@host`) excludes every boundary
# character and the colons, so attempts from two boundaries never scan the same characters, and the rest is one
# class: linear.
_ESCAPED_COLON = r"u(?i:ff1a|fe55|a789|2236|02d0)"
_SCHEMELESS_COLON = rf"(?:[:\uff1a\ufe55\ua789\u2236\u02d0]|%3[Aa]|\\{_ESCAPED_COLON})"
_SCHEMELESS_AUTHORITY = re.compile(
    r"(?<![^\s\"'`=(\[{<,;])"
    rf"((?:[^\s\"'`=(\[{{<,;/?#:\uff1a\ufe55\ua789\u2236\u02d0%\\]|%(?!3[Aa])|\\(?!{_ESCAPED_COLON}))*)"
    rf"(?:(?<=[^\s\"'`=(\[{{<,;])|(?!{_SCHEMELESS_COLON}\\?[\"'`]))({_SCHEMELESS_COLON})(?!\\\\)"
    r"([^\s/?#]+)"
)
_SCHEMELESS_COLON_ANYWHERE = re.compile(_SCHEMELESS_COLON)
# A host starts with an IP literal's '[' or a character of a name or address (RFC 3986 section 3.2.2: unreserved, or
# a percent-encoding); a text that names the form, "a URL with `user:password@` is refused", has none after its '@'.
_HOST_START = re.compile(r"[A-Za-z0-9\[%._~-]")
_MAILTO = "mailto"
# An OCI digest after an image reference's '@' (github.com/opencontainers/image-spec descriptor.md, "Registered
# algorithms": sha256 is 64 and sha512 128 lowercase hex digits): `repo:tag@sha256:...` is no userinfo.
DIGEST = re.compile(r"(?:sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})(?![0-9A-Za-z])")
# What a credential pasted into a value needs one of, as a URL or a connection string spells it: RFC 3986 section
# 3.2.1's userinfo ends at '@'; a query, fragment or parameter starts at '?', '#' or ';' and holds `name=value&...`;
# '%' and two hex digits percent-encode any of these; '\\' is a careless URL's '/'; and the look-alikes of '@', ':'
# and '=' (U+FF20, U+FE6B; U+FF1A, U+FE55, U+A789, U+2236, U+02D0; U+FF1D) that a terminal shows as them. A ':' is
# one too, unless it is a URL's `scheme://`, a port's digits, or a single name after it (a config key's
# `namespace:name`, an image's `repository:tag`), and an '@' unless it is an image's `@sha256:` digest (`DIGEST`).
# (Every pattern is a single character class or fixed text, so each search is linear.)
_MARKERS = re.compile("[@?#;=&\\\\\uff20\ufe6b\uff1a\ufe55\ua789\u2236\u02d0\uff1d]|%[0-9A-Fa-f]{2}")
_SCHEME = re.compile(r"\A[A-Za-z][A-Za-z0-9+.-]{0,31}://")
_NAME_OR_PORT_AFTER_COLON = re.compile(r":(?:[0-9]{1,5}|[A-Za-z0-9_][A-Za-z0-9_.-]*)(?=/|\Z)")
# A token whose form says what it is, with no '@' or ':' to give it away. A token pasted glued to the text before it
# (`3ghp_...` in a number's place, `vpcsubnet-e00ghp_...`, `dra<token>`) is as secret as one standing alone, so each
# form counts wherever it starts inside a word, unless the form is one that words hold too:
# - GitHub's tokens, `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` and 36 base62 characters, `github_pat_` and base62 with
#   `_` (github.blog 2021-04-05, "Behind GitHub's new authentication token formats"): anywhere; a word holds an
#   underscore right after `ghp` and then 20 letters and digits in a row only as such a token.
# - GitLab's personal access tokens, `glpat-` and 20 characters of `[0-9A-Za-z_-]`
#   (https://docs.gitlab.com/ee/security/tokens/#token-prefixes): anywhere, for the same reason.
# - Slack's tokens, `xoxb-`, `xoxp-`, `xoxa-`, `xoxo-`, `xoxs-`, `xoxr-` and a dash-joined run
#   (https://api.slack.com/authentication/token-types): anywhere.
# - AWS access key IDs, `AKIA` (long-term) or `ASIA` (temporary) and 16 capitals or digits, 20 characters in all
#   (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-unique-ids): anywhere,
#   glued to capitals or digits on either side too (`XAKIA...`, `AKIA...5`), since a key pasted into a longer
#   capital run is still one; no name of this project has `AKIA` or `ASIA` then 16 capitals or digits.
# - A JSON Web Token, or any base64url of a JSON object (RFC 7519 section 3; its header is the base64url of `{"...`,
#   which starts `eyJ`): at a word start only, since `eyJ` and 8 letters sit inside camel-case words
#   (`keyJobRunnerName`, `surveyJsonFields`). Glued inside a word, a JOSE header counts by the base64url of its
#   first member's name, which RFC 7515 section 4.1 and RFC 7516 section 4.1 register (`{"alg"` is `eyJhbGci`,
#   `{"typ"` `eyJ0eXAi`, `{"kid"` `eyJraWQi`, ... `{"zip"` `eyJ6aXAi`): fixed text no word holds.
# - API keys of OpenAI (`sk-`, `sk-proj-`, `sk-svcacct-`, `sk-admin-` then letters and digits: platform.openai.com
#   docs, "API keys"; help.openai.com "project API keys") and Anthropic (`sk-ant-api03-`, `sk-ant-admin01-`:
#   docs.anthropic.com, "API keys"), pasted into any setting as often as a cloud's: at a word start only (`task-`,
#   `disk-` end in `sk-`), and then 20 letters and digits in a row, which no word after `sk-` holds.
# Each alternative reads a fixed number of characters from where it starts (a search tries each position once):
# linear.
_TOKEN_FORM = re.compile(
    r"(?:(?<![A-Za-z0-9])eyJ[A-Za-z0-9_-]{8}|eyJ(?:hbGci|0eXAi|raWQi|lbmMi|jdHki|qa3Ui|qd2si|4NXUi|4NWMi|4NXQi|jcml0|6aXAi)"
    r"|gh[pousr]_[A-Za-z0-9]{20}|github_pat_[A-Za-z0-9_]{20}|glpat-[A-Za-z0-9_-]{20}"
    r"|xox[abposr]-[A-Za-z0-9-]{10}|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|(?<![A-Za-z0-9])sk-(?:(?:proj|svcacct|admin|ant-api03|ant-admin01)-)?[A-Za-z0-9]{20})"
)

# A whole token of such a form in free text, to its last token character (a JWT's '.'-joined parts among them, a sentence's closing '.' not): what
# `redacted` replaces. The run after the form's fixed start is one character class, so a search stays linear.
_TOKEN_RUN = re.compile(_TOKEN_FORM.pattern + r"(?:[A-Za-z0-9_-]|\.(?=[A-Za-z0-9_-]))*")


# A word shaped as a token that no prefix names (Cloudsmith's `https://dl.cloudsmith.io/<token>/...`, Gemfury's
# `https://repo.fury.io/<token>/...`): a run of at least TOKEN_WORD_LENGTH ASCII letters and digits that holds what a
# random token holds and a word does not. Either an uppercase letter, a lowercase letter and a digit together: the
# base62 alphabet of GitHub's tokens (github.blog 2021-04-05, "Behind GitHub's new authentication token formats":
# `[a-zA-Z0-9]`) and of most API keys; of random base62 words of 16 characters, 94% hold all three ((52/62)**16 = 6%
# lack a digit, 2 * (36/62)**16 = 0.03% a case), of 20, 97%. Or HEX_TOKEN_LENGTH or more hex digits holding a letter
# and a digit: a key of 128 bits or more written in hex. A page, a mirror or a product is named in one case with a
# year or a version in it (`nvidia2024mirror`, `h100sxm80gb2024`), which neither takes for a token.
TOKEN_WORD_LENGTH = 16
HEX_TOKEN_LENGTH = 32
_WORD_RUN = re.compile(r"[A-Za-z0-9]+")
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def token_shaped_word(word: str) -> bool:
    """True when `word` (letters and digits) has a random token's shape (`TOKEN_WORD_LENGTH`), not a word's."""
    if len(word) < TOKEN_WORD_LENGTH:
        return False
    digit = any(character.isdigit() for character in word)
    if digit and any(character.isupper() for character in word) and any(character.islower() for character in word):
        return True
    return len(word) >= HEX_TOKEN_LENGTH and digit and not word.isdigit() and set(word) <= _HEX_DIGITS


def holds_a_token_shaped_word(text: str) -> bool:
    """True when a run of ASCII letters and digits in `text` is `token_shaped_word` (a single character class:
    linear)."""
    return any(token_shaped_word(word) for word in _WORD_RUN.findall(text))


# A label of a URL's host (RFC 1123 section 2.1: letters, digits and '-', joined by '.'), in the authority after a
# `scheme://` (`https://<token>.example.com`, `oci://mirror.<token>.example/charts`): a service that hands out a host
# per customer may put the token there, and the URL is printed whole. A run of `token_shaped_word`'s shape in an
# authority is redacted. Only there: outside a URL a dotted name is as often code (`Mk8sV1NodeGroupArgs.template`,
# a source a plan cites), whose camel case with a digit has a token's shape.
_LABEL_RUN = re.compile(rf"(?<![A-Za-z0-9])[A-Za-z0-9]{{{TOKEN_WORD_LENGTH},}}(?![A-Za-z0-9])")


def _labels_redacted(authority: str) -> str:
    """`authority` with each run of a token's shape in it (`_LABEL_RUN`) redacted."""
    return _LABEL_RUN.sub(lambda match: REDACTED if token_shaped_word(match[0]) else match[0], authority)


def holds_a_token(text: str) -> bool:
    """True when `text` has a token's form (`_TOKEN_FORM`: `ghp_...`, a JWT, an AWS key ID) anywhere in it: the one
    credential shape that a text of several words (a script, a CEL expression) cannot hold for a reason of its own."""
    return _TOKEN_FORM.search(text) is not None


def may_hold_a_credential(text: str) -> bool:
    """True when `text` has what a credential needs one of (`_MARKERS`, a ':' that is no port's or tag's) or a
    token's form (`_TOKEN_FORM`): such a text is never quoted (`components.shown.shape` describes it), and an exec
    plugin's argument of such a shape is never shown (`redacted_command`). No rule can list every way a credential is
    spelt, but each way needs one of these."""
    if _TOKEN_FORM.search(text) or "PRIVATE KEY-----" in text:
        return True
    text = _SCHEME.sub("", text, count=1)
    at = text.rfind("@")
    if at >= 0 and DIGEST.fullmatch(text, at + 1):
        text = text[:at]  # an image pinned by digest, `repo:tag@sha256:...`
    if _MARKERS.search(text):
        return True
    colons = text.count(":")
    return colons > 1 or (colons == 1 and _NAME_OR_PORT_AFTER_COLON.search(text) is None)


# A host's port is digits (RFC 3986 section 3.2.3): a ':' followed by anything else in the authority (outside an IPv6
# literal's brackets) is the colon of a `user:password` whose '@' is missing or mistyped; the authority is taken
# for credentials whole. A ';' or ',' right after the port is the sentence's (`on https://h:8443; ...`).
_NOT_A_PORT = re.compile(r":(?![0-9]*[;,]?\Z)")
_TRAILING_PUNCTUATION = frozenset("?!.,:")
# A fragment that only names a place in the page (RFC 3986 section 3.5), as anchor generators write it: words of a
# letter of either case, then lowercase letters, then digits (`deleting-a-namespace`, `section-4.2.2`, `L10-L20`,
# `v3`), or of digits, joined by single '-', '_' or '.'. Anything else (a '=', a run in capitals or mixed case, digits
# among letters) may be a token: a link can carry one bare in its fragment (a share link's key), and of random
# base64url tokens of 12 bytes or more none in 500,000 reads as such an anchor (of 8 bytes, 1 in 1,250). (Its word's
# two alternatives differ in their first character, every quantifier ends where the next class starts: linear.)
# The pattern is in the syntax Go's RE2 and ECMA-262 share, so that the stack-file schema states it too (a price's
# source may point at a place in its page, components/input/fields.py PRICE_SOURCE_PATTERN).
_WORD = r"(?:[A-Za-z][a-z]*[0-9]*|[0-9]+)"
ANCHOR_PATTERN = rf"{_WORD}(?:[-_.]{_WORD})*"
_ANCHOR = re.compile(ANCHOR_PATTERN)
_AROUND = re.compile(r"\\?[\"'<>]")
# White space between a name and its value: any Unicode space (a no-break space U+00A0, an em space U+2003, a tab)
# but the line feed that ends an output's line, as it is or JSON- or repr-escaped (`\u00a0`, `\xa0`, `\t`, `\n`: any
# such escape counts), so that no look-alike blank ends a redaction. (Its two alternatives differ in their first
# character: linear.)
_BLANK = r"(?:[^\S\n]|\\(?:[bfnrtv]|u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}))"
# A credential written as a field of a quoted document: `token: x`, `"password": "x"`, `client-key-data=x`, and as
# the `\"token\": \"x\"` of a JSON-escaped quote. The value ends at white space, a quote or a separator; a JSON
# escape inside it (`\u0001`, `\n`) does not end it, so no part after a control character is shown. (The group's
# two alternatives differ in their first character, so it matches one way only: linear.)
_CREDENTIAL_NAME = (
    rf"(token|password|passwd|client-key-data|api(?:[-_]|{_BLANK})?key|private[-_]?key|secret[-_]?key|access[-_]?key)"
)
_CREDENTIAL_FIELD = re.compile(
    rf"(?i){_CREDENTIAL_NAME}"
    rf"(\\?[\"']?{_BLANK}*[:=]{_BLANK}*\\?[\"']?)"
    r"((?:[^\s\"'\\,;&}\][]|\\(?:u[0-9A-Fa-f]{4}|[bfnrt/]|\\(?!\")))+)"
)
# A credential named in prose, as a command's stderr says it: `error: token CANARY7731E2 expired`, `password
# hunter2x9 rejected`. After blanks alone (no ':' or '='), a word is a value only when it is one no prose word is: at
# least 8 characters holding both a letter and a digit (the project's own texts about tokens and passwords have
# none such after the name: `token file`, `password chartRepositoryPassword`, `token v1`, tested). Each lookahead
# scans only the word after its name's blanks, and no word follows two names: linear.
_VALUE_CHARACTER = r"[^\s\"'\\,;]"
_CREDENTIAL_WORD = re.compile(
    rf"(?i){_CREDENTIAL_NAME}({_BLANK}+)"
    rf"(?={_VALUE_CHARACTER}*[0-9])(?={_VALUE_CHARACTER}*[a-z])({_VALUE_CHARACTER}{{8,}})"
)
# A Pulumi config key, `<namespace>:<name>` (github.com/pulumi/pulumi sdk/go/common/resource/config/key.go,
# `ParseKey`), is never a credential field: a message names the key it refuses (`nebius-dra:password: is set ...`),
# and the value of a key set as a secret is redacted by its text (`Secrets`) wherever it is quoted. This matches the
# text before a field name, read backwards, when it ends in such a key's start (the name's first characters, ':', a
# namespace starting with a letter); read backwards so that the match is anchored, and linear.
_CONFIG_KEY_BEFORE = re.compile(r"[A-Za-z0-9_.-]*:[A-Za-z0-9_.-]*[A-Za-z](?![A-Za-z0-9_.:-])")
_CONFIG_KEY_WINDOW = 128
# An article after `password:` and a blank is prose (`no user or password: a login goes in ...`), not a field's value.
_ARTICLES = frozenset({"a", "an", "the"})
# A ':' that a closing quote may come before (a quoted name ending in `passwd`) but none after: no quoted value.
_PROSE_COLON = re.compile(r"\\?[\"']?:")
# An HTTP Authorization header's credentials (RFC 9110 section 11.4: `<scheme> <credentials>`): a bearer token
# (RFC 6750) and `Basic <base64 of user:password>` (RFC 7617) alike.
# After a lowercase `basic`, a lowercase word (`basic authentication`, punctuation after it) or a text that no token68
# (RFC 9110 section 11.2: letters, digits, `-._~+/`, then `=`) starts is prose; `Basic dXNlcjpwYXNz` and any other
# token is credentials.
_PROSE_AFTER_BASIC = re.compile(r"[a-z]+[).:!?]*|[^A-Za-z0-9._~+/=-].*")
# After `bearer`, the word `token` is prose (`a bearer token is visible ASCII only`), never a token; after either
# scheme, an ellipsis is a text naming the form (`a word the redactor hides (Bearer ..., token ...)`).
_PROSE_AFTER_BEARER = re.compile(r"(?i)tokens?[).:!?]*")
_ELLIPSIS = re.compile(r"(?:\.\.\.|\u2026)[)`.:!?]*")
_AUTH_SCHEME = re.compile(rf"(?i)\b((?:bearer|basic){_BLANK}+)([^\s\"'\\,;]+)")
# A credential given to a command as a flag, as an exec plugin's command line is echoed: `--token x`, `--api-key=x`.
# The value is never the next flag (`--secret --token x` redacts x: a run starting `--` is a flag) nor a shell
# redirection (`--secret < kubeconfig` names a file, not a value).
_FLAG_NAME = r"--?(?:[a-z0-9]+-){0,3}(?:token|password|passwd|secret|api-?key)"
_CREDENTIAL_FLAG = re.compile(rf"(?i)(?<![\w-])({_FLAG_NAME}(?:={_BLANK}*|{_BLANK}+))(?!--)([^\s\"'\\`\[<>|]+)")
# `shown` cuts a long quote as `<start>... (N characters)`: a secret cut there is found by its start.
_CUT = re.compile(r"\.\.\. \([0-9]+ characters\)")
# The longest quote `shown` keeps; a cut secret's start is at most this long.
_CUT_WINDOW = 120
# Texts at least this long are replaced wherever they appear; shorter ones (and every number and boolean) only as
# whole tokens, so that a secret `1` does not eat every digit of a message.
MIN_ANYWHERE = 4


# Secret forms are found by their first KEY characters (all of a shorter form), then by length: each position of a
# text costs a few dictionary lookups, however many secrets there are (a secret map of 40,000 leaves and a problem
# line for each stays linear, where one `str.replace` per form and line was quadratic).
KEY = 8


@dataclass(frozen=True)
class Secrets:
    """The texts of secret values as any output may spell them (raw, JSON-escaped, as repr), indexed for search."""

    # key -> length -> forms of that key and length.
    index: Mapping[str, Mapping[int, frozenset[str]]] = field(default_factory=dict)
    # Forms replaced only as whole tokens: short strings, numbers, booleans.
    whole: frozenset[str] = frozenset()
    # The first two characters of every form (all of a one-character one): a position that starts none is passed
    # with one set lookup.
    starts: frozenset[str] = frozenset()
    # Every start of 2 to KEY - 1 characters of a form that is not whole-token only: what a cut may leave of one.
    short_starts: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.index)

    def longest_at(self, text: str, start: int) -> int:
        """The length of the longest secret form at `start` of `text` (a whole one standing alone), or 0."""
        for size in range(KEY, 0, -1):
            by_length = self.index.get(text[start : start + size])
            if not by_length:
                continue
            for length in sorted(by_length, reverse=True):
                form = text[start : start + length]
                if len(form) == length and form in by_length[length] and self._stands(text, start, form):
                    return length
        return 0

    def _stands(self, text: str, start: int, form: str) -> bool:
        if form not in self.whole:
            return True
        end = start + len(form)
        return (start == 0 or text[start - 1] not in _TOKEN_EDGE_CHARACTERS) and (
            end == len(text) or text[end] not in _TOKEN_EDGE_CHARACTERS
        )

    def starts_ending(self, window: str) -> int:
        """The length of the longest end of `window` that starts a secret form (at least 2 characters), or 0."""
        for start in range(max(0, len(window) - _CUT_WINDOW), len(window) - 1):
            tail = window[start:]
            if len(tail) < KEY:
                if tail in self.short_starts:
                    return len(tail)
                continue
            by_length = self.index.get(tail[:KEY], {})
            if any(
                form.startswith(tail) for length, forms in by_length.items() if length >= len(tail) for form in forms
            ):
                return len(tail)
        return 0


NO_SECRETS = Secrets()
_TOKEN_EDGE_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+-")


def _leaves(value: Any) -> Iterable[Any]:
    """Every leaf of a decoded value (map keys are structure), without recursion."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
        elif item is not None:
            yield item


def _spellings(text: str) -> set[str]:
    """How an output may write `text`: as it is, JSON-escaped (ASCII or not), as repr, white space collapsed."""
    forms = {text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1], repr(text)[1:-1]}
    forms.add(" ".join(text.split()))
    return {form for form in forms if form.strip()}


def secrets_of(values: Iterable[Any]) -> Secrets:
    """The `Secrets` of these values: each one and every leaf inside it (a JSON text is decoded for its leaves)."""
    index: dict[str, dict[int, set[str]]] = {}
    whole: set[str] = set()
    for value in values:
        found = list(_leaves(value))
        if isinstance(value, str):
            with contextlib.suppress(ValueError, RecursionError):
                # Every value of an object, a key given twice too: the first of two is as secret as the last.
                found += list(_leaves(json.loads(value, object_pairs_hook=lambda pairs: [v for _, v in pairs])))
        for leaf in found:
            text = leaf if isinstance(leaf, str) else json.dumps(leaf, default=str)
            forms = _spellings(text) | ({str(leaf)} if not isinstance(leaf, str) else set())
            for form in forms:
                if not isinstance(leaf, str) or len(form) < MIN_ANYWHERE:
                    whole.add(form)
                index.setdefault(form[:KEY], {}).setdefault(len(form), set()).add(form)
    frozen = {key: {length: frozenset(forms) for length, forms in by.items()} for key, by in index.items()}
    short_starts = frozenset(
        form[:size] for by in index.values() for forms in by.values() for form in forms for size in range(2, KEY)
    )
    return Secrets(frozen, frozenset(whole), frozenset(key[:2] for key in index), short_starts)


def _replaced(text: str, secrets: Secrets) -> str:
    """`text` with every secret form in it replaced, the longest first at each position; one pass."""
    out: list[str] = []
    last = position = 0
    starts, singles = secrets.starts, any(len(start) == 1 for start in secrets.starts)
    while position < len(text):
        if text[position : position + 2] not in starts and not (singles and text[position] in starts):
            position += 1
            continue
        length = secrets.longest_at(text, position)
        if length:
            out += [text[last:position], SECRET]
            position += length
            last = position
        else:
            position += 1
    return "".join([*out, text[last:]])


def _cut_starts(text: str, secrets: Secrets) -> str:
    """`text` with the start of a secret that a `... (N characters)` cut ends replaced too; one pass."""
    out: list[str] = []
    last = 0
    for cut in _CUT.finditer(text):
        end = cut.start()
        longest = secrets.starts_ending(text[max(last, end - _CUT_WINDOW) : end])
        out += [text[last : end - longest], SECRET if longest else "", text[end : cut.end()]]
        last = cut.end()
    return "".join([*out, text[last:]])


def _authority_end(rest: str) -> int:
    """Where the authority ends (RFC 3986 section 3.2, `urlsplit`'s `_splitnetloc`): the first `/`, `?` or `#`.

    A quote does not end it: a hostile password may hold one, and a JSON text this runs over has white space after
    each value (the tools write JSON indented), which ends the URL before the next value.
    """
    ends = [index for index in (rest.find(mark) for mark in "/?#") if index >= 0]
    return min(ends, default=len(rest))


def _parameters(text: str) -> str:
    """A query or fragment with every parameter's value redacted, and a part without `=` redacted whole, up to where
    the text around the URL goes on.

    RFC 3986 gives the query (section 3.4) and the fragment (section 3.5) no inner structure: `name=value&...` is HTML's
    convention, and a bare part can be a token as well (an OAuth implicit grant returns `#access_token=...`, RFC 6749
    section 4.2.2; a signed link may carry its signature bare). Only a name followed by `=` is shown. The path is
    shown: RFC 3986 section 3.3 makes it the name of the resource, which a message needs (`/charts`), and section 7.5
    names the userinfo as the part that carries credentials (`[credentials]` above). Its parameters are not: section
    3.3 lets a segment carry them after a `;` (`/c;jsessionid=...`, a servlet's session), so from the path's first `;`
    on it is read as parameters too.
    """
    around = _AROUND.search(text)
    inside, after = (text[: around.start()], text[around.start() :]) if around else (text, "")
    parts = _SEPARATOR.split(inside)
    for index in range(0, len(parts), 2):
        name, equals, _ = parts[index].partition("=")
        if equals:
            parts[index] = f"{name}={REDACTED}"
        elif name:
            parts[index] = REDACTED
    return "".join(parts) + after


def _fragment(text: str) -> str:
    """A fragment as shown: an anchor as it is (a cited source's `#deleting-a-namespace` is where it points), any
    other fragment read as parameters (`#access_token=...`, RFC 6749 section 4.2.2), up to where the text around the
    URL goes on."""
    around = _AROUND.search(text)
    inside = text[: around.start()] if around else text
    return text if _ANCHOR.fullmatch(inside) else _parameters(text)


def _without_closing_text(rest: str) -> tuple[str, str]:
    """(the URL, the text after it) of a whitespace-free run: trailing punctuation and a `)` the URL does not open
    belong to the sentence around it (`(see https://host/page#part): ...`), as GitHub's autolinks read them
    (https://github.github.com/gfm/#extended-autolink-path-validation), and are kept after the URL."""
    end, opened, closed = len(rest), rest.count("("), rest.count(")")  # counted once: linear on outside text
    while end and (rest[end - 1] in _TRAILING_PUNCTUATION or (rest[end - 1] == ")" and closed > opened)):
        closed -= rest[end - 1] == ")"
        end -= 1
    return rest[:end], rest[end:]


def _url(match: re.Match[str]) -> str:
    scheme, slashes, rest = match.groups()
    rest, after = _without_closing_text(rest)
    end = _authority_end(rest)
    authority, tail = rest[:end], rest[end:]
    # As urllib's `_userinfo` and `_hostinfo` split the netloc: the userinfo ends at its last '@' (or look-alike).
    # A host is no credential, a malformed one (a '[' without its ']') neither: it is shown, as a config key that
    # reads as one is (`nebius-dra:\\e[2J`).
    ends = list(_USERINFO_END.finditer(authority))
    if ends:
        at = ends[-1]
        shown_authority = f"{CREDENTIALS}{at[0]}{authority[at.end() :]}"
    else:
        around = _AROUND.search(authority)
        host = authority[: around.start()] if around else authority
        port_part = host.rpartition("]")[2] if host.startswith("[") else host
        shown_authority = CREDENTIALS + authority[len(host) :] if _NOT_A_PORT.search(port_part) else authority
    shown_authority = _labels_redacted(shown_authority)
    before_fragment, hash_mark, fragment = tail.partition("#")
    path, question, query = before_fragment.partition("?")
    name, semicolon, path_parameters = path.partition(";")
    return (
        f"{scheme}:{slashes}{shown_authority}{name}"
        + (f";{_parameters(path_parameters)}" if semicolon else "")
        + (f"?{_parameters(query)}" if question else "")
        + (f"#{_fragment(fragment)}" if hash_mark else "")
        + after
    )


def _schemeless(match: re.Match[str]) -> str:
    user, _, rest = match.groups()
    ends = list(_USERINFO_END.finditer(rest))
    if not ends or not _HOST_START.match(rest, ends[-1].end()) or DIGEST.match(rest, ends[-1].end()):
        return match[0]  # no userinfo (`nebius-dra:name`, `host:8443`, `user:password@` naming the form), or a digest
    if user.lower() == _MAILTO and not _SCHEMELESS_COLON_ANYWHERE.search(rest, 0, ends[-1].start()):
        return match[0]  # an address, `mailto:ops@example.com` (RFC 6068): no password in it
    return f"{CREDENTIALS}{rest[ends[-1].start() :]}"


def _field(match: re.Match[str]) -> str:
    window = match.string[max(0, match.start() - _CONFIG_KEY_WINDOW) : match.start()]
    if _CONFIG_KEY_BEFORE.match(window[::-1]):
        return match[0]  # the end of a config key's name, not a field
    if match[3].lower() in _ARTICLES and _PROSE_COLON.fullmatch(match[2].strip()):
        return match[0]  # prose: `user or password: a login goes in ...`, `stack "../etc/passwd": a stack name ...`
    return f"{match[1]}{match[2]}{REDACTED}"


def _auth(match: re.Match[str]) -> str:
    if match[1].startswith("basic") and _PROSE_AFTER_BASIC.fullmatch(match[2]):
        return match[0]  # `basic authentication`, `basic (no DCGM fields)`: prose, not credentials
    if match[1].lower().startswith("bearer") and _PROSE_AFTER_BEARER.fullmatch(match[2]):
        return match[0]  # `a bearer token is ...`: prose
    if _ELLIPSIS.fullmatch(match[2]):
        return match[0]  # `Bearer ...`, naming the form: prose
    return f"{match[1]}{REDACTED}"


# A PEM private key (RFC 7468 section 10's `PRIVATE KEY`, and the `RSA`/`EC`/`ENCRYPTED`/`OPENSSH` labels before it),
# pasted into a value: its label line and the base64 after it, a newline written as one or as JSON's `\n`, up to its
# END line (left: it says what was there). One character class after a fixed start: linear.
_PEM_PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[A-Za-z0-9+/=\s\\]*")


def redacted(text: str, secrets: Secrets = NO_SECRETS) -> str:
    """`text` with the given secrets, URL credentials and parameters, tokens of a known form (`_TOKEN_FORM`),
    token-shaped labels of a URL's host (`_LABEL_RUN`) and credential fields replaced."""
    if secrets:
        text = _replaced(text, secrets)
        if "... (" in text:
            text = _cut_starts(text, secrets)
    text = _TOKEN_RUN.sub(REDACTED, text)
    if "PRIVATE KEY-----" in text:
        text = _PEM_PRIVATE_KEY.sub(f"-----BEGIN PRIVATE KEY-----{REDACTED}", text)
    if ":/" in text or ":\\" in text:
        text = _URL.sub(_url, text)
    if _USERINFO_END.search(text):
        text = _SCHEMELESS_AUTHORITY.sub(_schemeless, text)
    text = _CREDENTIAL_FIELD.sub(_field, text)
    text = _CREDENTIAL_WORD.sub(lambda m: f"{m[1]}{m[2]}{REDACTED}", text)
    text = _CREDENTIAL_FLAG.sub(lambda m: f"{m[1]}{REDACTED}", text)
    return _AUTH_SCHEME.sub(_auth, text)


# A key (a label, a Helm value) CONTAINING one of these names a credential: `client-secret`, `x-password-x`,
# `passphrase`, `credentials`, `db-token`. Broader than the field names `redacted` looks for in prose, where "secret"
# and "credentials" are common words; a key is a name only.
_NAMES_A_CREDENTIAL = re.compile(
    rf"(?i){_CREDENTIAL_NAME[:-1]}|passphrase|pwd|secret|session|cookie|bearer|credential|auth|kubeconfig"
    r"|ssh[-_]?key|signing[-_]?key|dsn|connection[-_]?string|cert)"
)


def names_a_credential(name: str) -> bool:
    """True when `name` contains a name a credential is written under (`password`, `client-secret`, `passphrase`):
    a text that shows two values of such a field (a change, `password: a -> b`) hides both, since the redactor sees
    only the one right after the name, and only for the narrower names of prose."""
    return _NAMES_A_CREDENTIAL.search(name) is not None


def redacted_leaves(document: Any) -> Any:
    """A JSON-shaped document with every string in it `redacted` (keys too), for a file whose syntax must survive."""
    if isinstance(document, dict):
        return {redacted(str(key)): redacted_leaves(value) for key, value in document.items()}
    if isinstance(document, list | tuple):
        return [redacted_leaves(item) for item in document]
    return redacted(document) if isinstance(document, str) else document


# A short `-p` is a password by convention (`docker login -p`, `helm registry login -p`, `mysql -pPASSWORD`); in free
# text it is as often `mkdir -p` or `sshd -p 22`, so it is redacted only where a command's arguments are known.
_SHORT_PASSWORD = "-p"
_WHOLE_FLAG_NAME = re.compile(_FLAG_NAME, re.IGNORECASE)
# Flags a command takes a credential with that no credential name contains (hostile review, issue 37 #2): `--pw`,
# `--pass`, `--jwt`, `--otp`; and those that take a login, which holds a password when it has a ':' (`-u admin:pw`,
# curl's `--user user:password`).
_CREDENTIAL_FLAG_WORDS = frozenset({"pw", "pass", "pwd", "jwt", "otp", "auth", "cred", "creds"})
_LOGIN_FLAGS = frozenset({"-u", "--user", "--username", "--login"})


def _hides_its_value(flag: str) -> bool:
    """True when `flag` (`--name`, `-n`) names a credential: its value is never shown."""
    name = flag.lstrip("-").lower()
    return (
        flag.startswith("-")
        and bool(name)
        and (
            flag == _SHORT_PASSWORD
            or bool(_WHOLE_FLAG_NAME.fullmatch(flag))
            or names_a_credential(name)
            or name in _CREDENTIAL_FLAG_WORDS
            or name.split("-")[-1] in _CREDENTIAL_FLAG_WORDS
        )
    )


def redacted_command(argv: Sequence[str]) -> str:
    """A command line to show (`shlex.join`'s quoting), the value of every credential flag in it redacted.

    Read by argument, not as text: a value with a space or a quote in it is one argument, and a flag's value is the
    next argument whatever it starts with (as Go's spf13/pflag takes it, flag.go `parseLongArg`), so nothing after a
    credential flag shows; a redacted argument that is a credential flag itself hides the next one too. Any argument
    that starts `-p` (not `--`) is taken for `-pVALUE`: a single-dash `-profile` is redacted too, which costs a
    message a word and never shows a password. An argument of a credential's shape (`may_hold_a_credential`: `u:PW@host`,
    a JWT, `ghp_...`) is hidden whatever comes before it, and a `name=value`'s value of that shape; the command itself
    (the first) is named as it is.
    """
    words: list[str] = []
    hide_next = False
    login_next = False
    for index, arg in enumerate(argv):
        name, equals, value = arg.partition("=")
        flag = not equals and _hides_its_value(arg)
        shaped = index > 0 and may_hold_a_credential(name)
        if hide_next or (login_next and ":" in arg) or shaped:
            words.append(REDACTED)
        elif flag:
            words.append(shlex.quote(arg))
        elif equals and (
            _hides_its_value(name)
            or (name in _LOGIN_FLAGS and ":" in value)
            or (index > 0 and may_hold_a_credential(value))
        ):
            words.append(shlex.quote(f"{name}=") + REDACTED)
        elif arg.startswith(_SHORT_PASSWORD) and not arg.startswith("--"):
            words.append(_SHORT_PASSWORD + REDACTED)
        else:
            words.append(shlex.quote(arg))
        hide_next, login_next = flag, arg in _LOGIN_FLAGS
    return " ".join(words)
