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

Exit status 0 with the token printed; 2 with one line on stderr naming what failed (a token never appears
in it).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from components.config.reading import InputError, parse_json, printable
from components.shown import shown

NEBIUS_TOKEN_EXCHANGE_URL = "https://auth.eu.nebius.com:443/oauth2/token/exchange"
GRANT_TYPE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
SUBJECT_IDENTIFIER_TYPE = "urn:nebius:params:oauth:token-type:subject_identifier"
JWT_TYPE = "urn:ietf:params:oauth:token-type:jwt"
REQUEST_URL_ENV, REQUEST_TOKEN_ENV = "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"
TIMEOUT_SECONDS = 30
MAX_ANSWER_BYTES = 1 << 20
SERVICE_ACCOUNT_ID = re.compile(r"^serviceaccount-[a-z0-9]+\Z")
# A bearer token is visible ASCII only (RFC 6750 section 2.1's b64token is a subset): anything else would
# break, or forge, the Authorization header it travels in.
BEARER_SAFE = re.compile(r"^[\x21-\x7e]+\Z")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
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


def _checked_url(url: str, what: str) -> str:
    """https only; plain http to a loopback address is allowed so the exchange can be tested locally."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return url
    if parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS:
        return url
    raise ExchangeError(f"{what} {parts.scheme}://{parts.hostname or ''} is not an https URL")


def _read_json(request: urllib.request.Request, what: str) -> Mapping[str, Any]:
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:
            body = answer.read(MAX_ANSWER_BYTES + 1)
    except urllib.error.HTTPError as refused:
        raise ExchangeError(f"{what} answered HTTP {refused.code}{_oauth_error(refused)}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as unreachable:
        reason = getattr(unreachable, "reason", unreachable)
        raise ExchangeError(f"{what} could not be reached: {reason}") from None
    if len(body) > MAX_ANSWER_BYTES:
        raise ExchangeError(f"{what} answered more than {MAX_ANSWER_BYTES} bytes")
    try:
        document = parse_json(body, "the answer")
    except InputError:
        raise ExchangeError(f"{what} answered something that is not JSON") from None
    if not isinstance(document, dict):
        raise ExchangeError(f"{what} answered JSON that is not an object")
    return document


def _oauth_error(refused: urllib.error.HTTPError) -> str:
    """`: error (error_description)` from an RFC 6749 section 5.2 error answer, which carries no token."""
    try:
        document = parse_json(refused.read(MAX_ANSWER_BYTES), "the answer")
    except (InputError, OSError):
        return ""
    if not isinstance(document, dict) or not isinstance(document.get("error"), str):
        return ""
    description = document.get("error_description")
    detail = f" ({description})" if isinstance(description, str) else ""
    return " ".join(f": {document['error']}{detail}".split())[:300]


def _token(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ExchangeError(f"{what} is missing from the answer")
    if not BEARER_SAFE.match(value):
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
    _checked_url(url, "GitHub's OIDC token URL")
    if audience:
        parts = urllib.parse.urlsplit(url)
        query = urllib.parse.urlencode([*urllib.parse.parse_qsl(parts.query), ("audience", audience)])
        url = urllib.parse.urlunsplit(parts._replace(query=query))
    request = urllib.request.Request(url, headers={"Authorization": f"bearer {bearer}", "Accept": "application/json"})
    return _token(_read_json(request, "GitHub's OIDC token service").get("value"), "GitHub's OIDC token (value)")


def exchange(parameters: Mapping[str, str], url: str = NEBIUS_TOKEN_EXCHANGE_URL) -> NebiusToken:
    """POSTs the RFC 8693 parameters to Nebius's token exchange and returns the issued access token."""
    request = urllib.request.Request(
        _checked_url(url, "the token exchange endpoint"),
        data=urllib.parse.urlencode(parameters).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"},
        method="POST",
    )
    answer = _read_json(request, "Nebius's token exchange")
    token_type = answer.get("token_type")
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        raise ExchangeError(f"Nebius's token exchange issued token_type {shown(token_type)}, not Bearer")
    expires_in = answer.get("expires_in")
    return NebiusToken(
        _token(answer.get("access_token"), "the Nebius access token (access_token)"),
        int(expires_in) if isinstance(expires_in, int | str) and str(expires_in).isdigit() else None,
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
        if not SERVICE_ACCOUNT_ID.match(arguments.service_account_id):
            raise ExchangeError(
                f"--service-account-id {shown(arguments.service_account_id)} is not a service account ID "
                "(serviceaccount-...); set the repository variable the workflow reads (docs/ci.md, Keyless deploys)"
            )
        github_token = github_oidc_token(os.environ if environ is None else environ, arguments.audience or None)
        token = exchange(exchange_request(arguments.service_account_id, github_token), arguments.exchange_url)
    except ExchangeError as failed:
        print(f"nebius login: {printable(str(failed), lines=True)}", file=sys.stderr)
        return EXIT_FAILED
    print(token.access_token)
    if token.expires_in is not None:
        print(f"nebius login: a token for {arguments.service_account_id}, valid {token.expires_in} s", file=sys.stderr)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
