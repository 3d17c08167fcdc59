"""The CI login: GitHub's OIDC token for this job, exchanged for a Nebius IAM token of a service account.

    python -m tools.ci_identity.exchange --service-account-id serviceaccount-e00... [--audience AUD]

Prints the Nebius IAM token, and nothing else, on stdout; the workflow masks it and hands it to the
later steps as NEBIUS_IAM_TOKEN, which both the Nebius provider and the nebius CLI (so the kubeconfig's
exec plugin) read before any profile (nebius pysdk, nebius/aio/cli_config.py: "An environment token has
priority"; nebius/base/constants.py TOKEN_ENV). Nothing is written to a file.

1. GitHub's token: GET $ACTIONS_ID_TOKEN_REQUEST_URL (with `audience` when one is given) with
   `Authorization: bearer $ACTIONS_ID_TOKEN_REQUEST_TOKEN`; the answer's `value` is the JWT. The two
   variables exist only in a job granted `id-token: write` (docs.github.com/en/actions/reference/security/oidc,
   "Methods for requesting the OIDC token"; @actions/core getIDToken reads `value`).
2. The exchange: RFC 8693 section 2.1, a POST of application/x-www-form-urlencoded parameters to Nebius's
   token exchange endpoint (nebius/api README.md "Service Account Authentication": over HTTP
   https://auth.eu.nebius.com:443/oauth2/token/exchange; over gRPC TokenExchangeService/Exchange on
   tokens.iam.api.nebius.cloud:443, the host endpoints.md lists for nebius.iam.v1.TokenExchangeService).
   The parameters are the fields of nebius.iam.v1.ExchangeTokenRequest (nebius/iam/v1/token_service.proto),
   filled as Nebius's own SDK fills them for federated credentials (pysdk FederatedCredentialsTokenRequester):
   the service account to impersonate is the subject token (type urn:nebius:params:oauth:token-type:subject_identifier),
   GitHub's JWT is the actor token (type urn:ietf:params:oauth:token-type:jwt), an access token is requested.
3. The answer (RFC 8693 section 2.2.1): `access_token`, `token_type` Bearer, `expires_in`.

Each request goes to the host its URL names and nowhere else: no redirect is followed (a 3xx answer is an
error naming the URL's variable and the status), so the request token is never re-sent to another host, and
only https is spoken (plain http only to this machine's loopback, 127.0.0.1, ::1 or localhost, as the
verifier allows: no network carries it). Each request, connection and whole answer, must be done within
REQUEST_DEADLINE_SECONDS, however slowly the server drips it, and an answer of more than MAX_ANSWER_BYTES is
refused. The inputs are checked before any request: the request token and the answers' tokens are visible
ASCII (a bearer token's characters), `--audience` and `--service-account-id` bounded in length and shape.

Exit status 0 with the token printed; 2 with one line on stderr naming what failed (a token never appears
in it, nor does a traceback: a failure the tool did not foresee is one line naming its kind).
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import socket
import ssl
import sys
import threading
import urllib.parse
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from components.config.reading import InputError, parse_json, printable
from components.input.fields import NEBIUS_ID_SUFFIX_LIMIT
from components.shown import shown
from tools.verify.kubeconfig import LOOPBACK_HOSTS, NOT_HEADER_SAFE, header_safe

NEBIUS_TOKEN_EXCHANGE_URL = "https://auth.eu.nebius.com:443/oauth2/token/exchange"
GRANT_TYPE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
SUBJECT_IDENTIFIER_TYPE = "urn:nebius:params:oauth:token-type:subject_identifier"
JWT_TYPE = "urn:ietf:params:oauth:token-type:jwt"
REQUEST_URL_ENV, REQUEST_TOKEN_ENV = "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"
# One request, connection, headers and whole answer, past which the login gives up (a server that drips its
# answer a byte at a time would otherwise hold the job until the step's own timeout).
REQUEST_DEADLINE_SECONDS = 30.0
MAX_ANSWER_BYTES = 1 << 20
READ_CHUNK_BYTES = 64 << 10
# A Nebius ID as the input model's NEBIUS_ID_PATTERN bounds it: the kind, '-', at most 56 lowercase letters or digits.
SERVICE_ACCOUNT_ID = re.compile(rf"^serviceaccount-[a-z0-9]{{1,{NEBIUS_ID_SUFFIX_LIMIT}}}\Z")
# An `aud` GitHub is asked for: visible ASCII (it travels in the URL's query), at most this long.
AUDIENCE = re.compile(r"^[\x21-\x7e]{1,255}\Z")
EXIT_OK, EXIT_FAILED = 0, 2


class ExchangeError(Exception):
    """The login cannot proceed; the message is one line and quotes no token."""


@dataclass(frozen=True)
class NebiusToken:
    access_token: str
    expires_in: int | None


def exchange_request(service_account_id: str, github_token: str) -> dict[str, str]:
    """The RFC 8693 parameters that impersonate `service_account_id` with GitHub's JWT as the actor."""
    return {
        "grant_type": GRANT_TYPE,
        "requested_token_type": ACCESS_TOKEN_TYPE,
        "subject_token": service_account_id,
        "subject_token_type": SUBJECT_IDENTIFIER_TYPE,
        "actor_token": github_token,
        "actor_token_type": JWT_TYPE,
    }


def _checked_url(url: str, what: str) -> urllib.parse.SplitResult:
    """https only; plain http only to this machine's loopback (tools.verify's LOOPBACK_HOSTS), where no network
    carries the request, so that the login can be tested locally. Said by scheme and host, never the whole URL."""
    if not header_safe(url):
        raise ExchangeError(f"{what} holds a space, a control or a non-ASCII character, which a URL cannot (not shown)")
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:  # a '[' without its ']', a port past 65535 or not digits
        raise ExchangeError(f"{what} is not a URL with a host and a port of 1 to 65535 (not shown)") from None
    host = parts.hostname or ""
    if port == 0 or not host:
        raise ExchangeError(f"{what} is not a URL with a host and a port of 1 to 65535 (not shown)")
    if parts.username is not None or parts.password is not None:
        raise ExchangeError(f"{what} holds a user name or password before its host (not shown)")
    if parts.scheme == "https" or (parts.scheme == "http" and host in LOOPBACK_HOSTS):
        return parts
    raise ExchangeError(
        f"{what} {parts.scheme}://{host} is not an https URL (plain http is taken only on this machine's loopback: "
        f"{', '.join(LOOPBACK_HOSTS)})"
    )


def _where(parts: urllib.parse.SplitResult) -> str:
    """The host and port a request goes to, as a message names it: never the path or the query."""
    host = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else parts.hostname
    return f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port else "")


def _shut(connection: http.client.HTTPConnection) -> None:
    """The deadline passed: shut the socket down, so that the worker's blocked read ends now."""
    sock = connection.sock
    if sock is not None:
        with suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
    with suppress(OSError):
        connection.close()


def send(
    method: str,
    parts: urllib.parse.SplitResult,
    headers: Mapping[str, str],
    body: bytes | None,
    what: str,
    deadline_s: float | None = None,
) -> tuple[int, bytes]:
    """One request to the host `parts` names, and only there: http.client follows no redirect. Its status and body
    (at most MAX_ANSWER_BYTES + 1 bytes), all within `deadline_s` (REQUEST_DEADLINE_SECONDS by default)."""
    deadline = REQUEST_DEADLINE_SECONDS if deadline_s is None else deadline_s
    # The socket's own limit is a backstop a little after the deadline, so that the wait below speaks first.
    backstop = deadline + 1
    connection: http.client.HTTPConnection = (
        http.client.HTTPSConnection(
            parts.hostname or "", parts.port, timeout=backstop, context=ssl.create_default_context()
        )
        if parts.scheme == "https"
        else http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=backstop)
    )
    target = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
    outcome: dict[str, Any] = {}
    finished = threading.Event()

    def work() -> None:
        try:
            connection.request(method, target, body=body, headers=dict(headers))
            answer = connection.getresponse()
            chunks, size = [], 0
            while size <= MAX_ANSWER_BYTES:
                chunk = answer.read1(READ_CHUNK_BYTES)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            outcome["answer"] = (answer.status, b"".join(chunks))
        except BaseException as error:  # handed to the waiting caller, which says it in one line
            outcome["error"] = error
        finally:
            finished.set()

    threading.Thread(target=work, name=f"nebius login: {what}", daemon=True).start()
    if not finished.wait(deadline):
        _shut(connection)
        raise ExchangeError(
            f"{what} at {_where(parts)} did not answer within {deadline:g} s (the login's limit on one request, "
            "connection and whole answer)"
        )
    _shut(connection)
    error = outcome.get("error")
    if isinstance(error, (OSError, http.client.HTTPException)):
        # Said by its kind or the system's words, never by str(): http.client's messages quote what it was sent.
        reason = (
            error.reason
            if isinstance(error, ssl.SSLError)
            else (error.strerror if isinstance(error, OSError) else None) or type(error).__name__
        )
        raise ExchangeError(f"{what} at {_where(parts)} could not be reached: {reason}")
    if error is not None:
        raise ExchangeError(f"{what} at {_where(parts)}: the request failed ({type(error).__name__}; not shown)")
    status, answer_body = outcome["answer"]
    return int(status), bytes(answer_body)


def _read_json(
    method: str,
    url: urllib.parse.SplitResult,
    headers: Mapping[str, str],
    body: bytes | None,
    what: str,
    variable: str,
) -> Mapping[str, Any]:
    status, answer = send(method, url, headers, body, what)
    if len(answer) > MAX_ANSWER_BYTES:
        raise ExchangeError(f"{what} answered more than {MAX_ANSWER_BYTES} bytes")
    if 300 <= status < 400:
        raise ExchangeError(
            f"{what} answered HTTP {status}, a redirect, which the login does not follow (the token goes to the host "
            f"{variable} names and no other): set {variable} to the URL that answers"
        )
    if status >= 400:
        raise ExchangeError(f"{what} answered HTTP {status}{_oauth_error(answer)}")
    if not 200 <= status < 300:
        raise ExchangeError(f"{what} answered HTTP {status}, not a success")
    try:
        document = parse_json(answer, "the answer")
    except InputError:
        raise ExchangeError(f"{what} answered something that is not JSON") from None
    if not isinstance(document, dict):
        raise ExchangeError(f"{what} answered JSON that is not an object")
    return document


def _oauth_error(answer: bytes) -> str:
    """`: error (error_description)` from an RFC 6749 section 5.2 error answer, which carries no token."""
    try:
        document = parse_json(answer, "the answer")
    except InputError:
        return ""
    if not isinstance(document, dict) or not isinstance(document.get("error"), str):
        return ""
    description = document.get("error_description")
    detail = f" ({description})" if isinstance(description, str) else ""
    return " ".join(f": {document['error']}{detail}".split())[:300]


def _token(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ExchangeError(f"{what} is missing from the answer")
    if not header_safe(value):
        raise ExchangeError(f"{what} holds characters a bearer token cannot (RFC 6750 section 2.1); not shown")
    return value


def github_oidc_token(environ: Mapping[str, str], audience: str | None) -> str:
    """This job's OIDC token from GitHub; ExchangeError when the job was not granted id-token: write."""
    url, bearer = environ.get(REQUEST_URL_ENV), environ.get(REQUEST_TOKEN_ENV)
    if not url or not bearer:
        raise ExchangeError(
            f"{REQUEST_URL_ENV} and {REQUEST_TOKEN_ENV} are not set: the job needs `permissions: id-token: write` "
            "(GitHub never grants it to a pull request from a fork)"
        )
    if not header_safe(bearer):
        # http.client would refuse the header with an error that quotes it, token included.
        raise ExchangeError(f"{REQUEST_TOKEN_ENV} {NOT_HEADER_SAFE}")
    parts = _checked_url(url, REQUEST_URL_ENV)
    if audience:
        query = urllib.parse.urlencode([*urllib.parse.parse_qsl(parts.query), ("audience", audience)])
        parts = parts._replace(query=query)
    headers = {"Authorization": f"bearer {bearer}", "Accept": "application/json"}
    answer = _read_json("GET", parts, headers, None, "GitHub's OIDC token service", REQUEST_URL_ENV)
    return _token(answer.get("value"), "GitHub's OIDC token (value)")


def exchange(parameters: Mapping[str, str], url: str = NEBIUS_TOKEN_EXCHANGE_URL) -> NebiusToken:
    """POSTs the RFC 8693 parameters to Nebius's token exchange and returns the issued access token."""
    answer = _read_json(
        "POST",
        _checked_url(url, "the token exchange endpoint (--exchange-url)"),
        {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"},
        urllib.parse.urlencode(parameters).encode(),
        "Nebius's token exchange",
        "the token exchange endpoint (--exchange-url)",
    )
    token_type = answer.get("token_type")
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        raise ExchangeError(f"Nebius's token exchange issued token_type {shown(token_type)}, not Bearer")
    expires_in = answer.get("expires_in")
    return NebiusToken(
        _token(answer.get("access_token"), "the Nebius access token (access_token)"),
        int(expires_in) if isinstance(expires_in, int | str) and str(expires_in).isdigit() else None,
    )


def checked_arguments(service_account_id: str, audience: str) -> None:
    """The flags, bounded and shaped before any request; a refusal names the flag and shows the value only as
    `shown` may (a credential pasted into one is described by its shape)."""
    if not SERVICE_ACCOUNT_ID.match(service_account_id):
        raise ExchangeError(
            f"--service-account-id {shown(service_account_id)} is not a service account ID (serviceaccount- then 1 to "
            f"{NEBIUS_ID_SUFFIX_LIMIT} lowercase letters or digits); set the repository variable the workflow reads "
            "(docs/ci.md, Keyless deploys)"
        )
    if audience and not AUDIENCE.match(audience):
        raise ExchangeError(
            f"--audience {shown(audience)} is not an audience GitHub can be asked for: 1 to 255 visible ASCII "
            "characters (no space or control character); leave it empty for GitHub's default"
        )


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.ci_identity.exchange", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument(
        "--service-account-id", required=True, help="the service account to act as (serviceaccount-...)"
    )
    parser.add_argument("--audience", default="", help="the `aud` to ask GitHub for; empty: GitHub's default")
    parser.add_argument("--exchange-url", default=NEBIUS_TOKEN_EXCHANGE_URL, help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)
    try:
        checked_arguments(arguments.service_account_id, arguments.audience)
        github_token = github_oidc_token(os.environ if environ is None else environ, arguments.audience or None)
        token = exchange(exchange_request(arguments.service_account_id, github_token), arguments.exchange_url)
    except ExchangeError as failed:
        print(f"nebius login: {printable(str(failed), lines=True)}", file=sys.stderr)
        return EXIT_FAILED
    except Exception as broken:  # the edge: no traceback (its frames may hold a token) reaches the log
        print(f"nebius login: failed unexpectedly ({type(broken).__name__}; its message is not shown)", file=sys.stderr)
        return EXIT_FAILED
    print(token.access_token)
    if token.expires_in is not None:
        print(f"nebius login: a token for {arguments.service_account_id}, valid {token.expires_in} s", file=sys.stderr)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
