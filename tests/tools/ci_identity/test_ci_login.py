"""The CI login (tools/ci_identity/exchange.py) against sources no one here wrote.

The request is compared field by field with nebius.iam.v1.ExchangeTokenRequest as Nebius's own Python SDK
(nebius 0.6.29) generates it from nebius/api's token_service.proto, and with the request that SDK builds
for federated credentials (FederatedCredentialsTokenRequester). RFC 8693 section 2.1 fixes the transport:
an HTTP POST of application/x-www-form-urlencoded parameters, grant_type
urn:ietf:params:oauth:grant-type:token-exchange, a subject_token with its subject_token_type, and an
actor_token_type whenever an actor_token is sent. The whole login then runs against real HTTP servers on
127.0.0.1 standing for GitHub's OIDC token service and Nebius's exchange.
"""

from __future__ import annotations

import io
import json
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from nebius.api.nebius.iam.v1 import ExchangeTokenRequest, TokenExchangeServiceClient
from nebius.base.service_account.federated_credentials import (
    FederatedCredentialsTokenRequester,
    StaticFederatedCredentials,
)

from components.values.kubeconfig import build_kubeconfig
from tools.ci_identity import exchange as login
from tools.verify.kubeconfig import load_kubeconfig

SERVICE_ACCOUNT = "serviceaccount-e00ci0000000000000"
GITHUB_JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBvOm8vcjplbnZpcm9ubWVudDpkZXYifQ.c2lnbmF0dXJl"
NEBIUS_TOKEN = "v1.nebius-iam-token-for-tests"


def proto_fields() -> list[str]:
    return [f.name for f in ExchangeTokenRequest.__PB2_DESCRIPTOR__.fields]


def test_every_parameter_is_a_field_of_the_proto_exchange_request():
    request = login.exchange_request(SERVICE_ACCOUNT, GITHUB_JWT)
    assert set(request) <= set(proto_fields()), set(request) - set(proto_fields())
    assert ExchangeTokenRequest.__PROTO_FULL_NAME__ == "nebius.iam.v1.ExchangeTokenRequest"


def test_the_request_is_the_one_nebius_sdk_builds_for_federated_credentials():
    sdk = FederatedCredentialsTokenRequester(SERVICE_ACCOUNT, StaticFederatedCredentials(GITHUB_JWT))
    built = sdk.get_exchange_token_request()
    expected = {name: getattr(built, name) for name in proto_fields() if getattr(built, name) not in ("", [])}
    assert login.exchange_request(SERVICE_ACCOUNT, GITHUB_JWT) == expected


def test_the_request_follows_rfc_8693_section_2_1():
    request = login.exchange_request(SERVICE_ACCOUNT, GITHUB_JWT)
    assert request["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange"
    assert request["subject_token"] and request["subject_token_type"], "both REQUIRED"
    assert request["actor_token"] == GITHUB_JWT
    assert request["actor_token_type"] == "urn:ietf:params:oauth:token-type:jwt", "REQUIRED with an actor_token"
    # Section 3: the registered token type identifiers.
    assert request["requested_token_type"] == "urn:ietf:params:oauth:token-type:access_token"


def test_the_exchange_hosts_are_the_ones_nebius_api_names():
    """nebius/api README: a service with option (api_service_name) is served at {name}.api.nebius.cloud:443."""
    assert TokenExchangeServiceClient.__service_name__ == "nebius.iam.v1.TokenExchangeService"
    assert f"{TokenExchangeServiceClient.__api_service_name__}.api.nebius.cloud" == "tokens.iam.api.nebius.cloud"
    assert "tokens.iam.api.nebius.cloud:443" in (login.__doc__ or "")
    assert login.NEBIUS_TOKEN_EXCHANGE_URL == "https://auth.eu.nebius.com:443/oauth2/token/exchange"


@dataclass
class Seen:
    requests: list[dict[str, Any]] = field(default_factory=list)


Serve = Callable[[type[BaseHTTPRequestHandler]], str]


@pytest.fixture
def serve() -> Iterator[Serve]:
    """Starts a real HTTP server on 127.0.0.1 for each handler class given and returns its base URL; every one is
    stopped when the test ends, whatever it asserted. The one setup of every server here."""
    started: list[tuple[ThreadingHTTPServer, threading.Thread]] = []

    def start(handler: type[BaseHTTPRequestHandler]) -> str:
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        started.append((server, thread))
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server, thread in started:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


class _Quiet(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def answering(serve: Serve) -> Callable[[dict[str, tuple[Any, ...]]], tuple[str, Seen]]:
    """A server answering path to (status, JSON answer[, headers]), every request recorded: its URL and record."""

    def start(answers: dict[str, tuple[Any, ...]]) -> tuple[str, Seen]:
        seen = Seen()

        class Handler(_Quiet):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                parts = urllib.parse.urlsplit(self.path)
                seen.requests.append(
                    {
                        "method": self.command,
                        "path": parts.path,
                        "query": urllib.parse.parse_qs(parts.query),
                        "headers": dict(self.headers),
                        "body": self.rfile.read(length).decode() if length else "",
                    }
                )
                status, answer, *headers = answers[parts.path]
                body = (answer if isinstance(answer, str) else json.dumps(answer)).encode()
                self.send_response(status)
                for name, value in (headers[0] if headers else {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer  # noqa: N815 (http.server's method names)

        return serve(Handler), seen

    return start


def run_login(base: str, *extra: str, environ: dict[str, str] | None = None) -> tuple[int, str, str]:
    env = {
        "ACTIONS_ID_TOKEN_REQUEST_URL": f"{base}/github-token?api-version=2.0",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "runtime-request-token",
    }
    out, err = io.StringIO(), io.StringIO()
    arguments = ["--service-account-id", SERVICE_ACCOUNT, "--exchange-url", f"{base}/exchange", *extra]
    with redirect_stdout(out), redirect_stderr(err):
        status = login.main(arguments, env if environ is None else environ)
    return status, out.getvalue(), err.getvalue()


GOOD = {
    "/github-token": (200, {"count": 1, "value": GITHUB_JWT}),
    "/exchange": (
        200,
        {
            "access_token": NEBIUS_TOKEN,
            "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
            "token_type": "Bearer",
            "expires_in": 43200,
        },
    ),
}


def test_the_login_asks_github_then_posts_the_form_and_prints_the_token_alone(answering):
    base, seen = answering(GOOD)
    status, out, err = run_login(base, "--audience", "nebius")
    assert (status, out) == (0, NEBIUS_TOKEN + "\n")
    github, nebius = seen.requests
    assert github["method"] == "GET" and github["headers"]["Authorization"] == "bearer runtime-request-token"
    assert github["query"] == {"api-version": ["2.0"], "audience": ["nebius"]}, "the URL's own query is kept"
    assert nebius["method"] == "POST"
    assert nebius["headers"]["Content-Type"] == "application/x-www-form-urlencoded"
    form = {key: values for key, values in urllib.parse.parse_qs(nebius["body"], strict_parsing=True).items()}
    assert form == {key: [value] for key, value in login.exchange_request(SERVICE_ACCOUNT, GITHUB_JWT).items()}
    assert NEBIUS_TOKEN not in err and GITHUB_JWT not in err
    assert "valid 43200 s" in err


def test_without_an_audience_github_is_asked_for_its_default(answering):
    base, seen = answering(GOOD)
    assert run_login(base)[0] == 0
    assert "audience" not in seen.requests[0]["query"]


def test_a_job_without_id_token_write_is_told_so():
    status, out, err = run_login("http://127.0.0.1:9", environ={})
    assert (status, out) == (2, "")
    assert "id-token: write" in err and "fork" in err


def test_a_refused_exchange_names_the_oauth_error_and_never_a_token(answering):
    refused = {**GOOD, "/exchange": (400, {"error": "invalid_grant", "error_description": "subject not trusted"})}
    base, _ = answering(refused)
    status, out, err = run_login(base)
    assert (status, out) == (2, "")
    assert "HTTP 400: invalid_grant (subject not trusted)" in err
    assert GITHUB_JWT not in err and "runtime-request-token" not in err


@pytest.mark.parametrize(
    ("answers", "said"),
    [
        ({**GOOD, "/exchange": (200, {"access_token": NEBIUS_TOKEN, "token_type": "mac"})}, "not Bearer"),
        ({**GOOD, "/exchange": (200, {"token_type": "Bearer"})}, "access_token) is missing"),
        ({**GOOD, "/exchange": (200, {"access_token": "a\r\nX-Forged: 1", "token_type": "Bearer"})}, "not shown"),
        ({**GOOD, "/exchange": (200, "<html>")}, "not JSON"),
        ({**GOOD, "/github-token": (200, {"count": 0})}, "value) is missing"),
        ({**GOOD, "/github-token": (500, "oops")}, "HTTP 500"),
    ],
    ids=["token-type", "no-token", "header-breaking-token", "not-json", "no-github-token", "github-down"],
)
def test_every_unusable_answer_stops_the_login_with_one_line(answers, said, answering):
    base, _ = answering(answers)
    status, out, err = run_login(base)
    assert (status, out) == (2, "")
    assert said in err and len(err.strip().splitlines()) == 1
    assert "X-Forged" not in err


def test_only_https_or_loopback_http_is_spoken_to():
    with pytest.raises(login.ExchangeError, match="not an https URL"):
        login.exchange({}, "http://auth.example.com/oauth2/token/exchange")
    status, _, err = run_login(
        "http://127.0.0.1:9",
        environ={"ACTIONS_ID_TOKEN_REQUEST_URL": "http://example.com/t", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "x"},
    )
    assert status == 2 and "not an https URL" in err


@pytest.mark.parametrize("given", ["", "x:CANARY1@h", "serviceaccount-\x1b[2J"])
def test_a_service_account_id_of_another_shape_is_refused_before_any_request(given):
    """A credential pasted into the variable is shown by its shape, a terminal escape escaped (issue 37)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = login.main(["--service-account-id", given], {})
    assert status == 2 and "is not a service account ID" in err.getvalue() and out.getvalue() == ""
    assert "CANARY1" not in err.getvalue() and "\x1b" not in err.getvalue()


def test_a_request_token_a_header_cannot_carry_is_refused_by_name_and_never_shown(answering):
    """http.client would raise an error quoting the whole header, the token in it, as a traceback."""
    base, seen = answering(GOOD)
    status, out, err = run_login(
        base,
        environ={
            "ACTIONS_ID_TOKEN_REQUEST_URL": f"{base}/github-token?api-version=2.0",
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "CANARY\nX: y",
        },
    )
    assert (status, out) == (2, "") and seen.requests == []
    assert len(err.strip().splitlines()) == 1 and err.startswith("nebius login: ACTIONS_ID_TOKEN_REQUEST_TOKEN holds")
    assert "CANARY" not in err and "Traceback" not in err


def test_a_redirect_is_refused_and_the_request_token_goes_to_no_other_host(answering):
    elsewhere, caught = answering(GOOD)
    base, seen = answering({"/github-token": (302, "", {"Location": f"{elsewhere}/github-token?api-version=2.0"})})
    status, out, err = run_login(base)
    assert (status, out) == (2, "")
    assert caught.requests == [], "the redirect's target got the request (and its token)"
    assert len(seen.requests) == 1
    assert "HTTP 302" in err and "ACTIONS_ID_TOKEN_REQUEST_URL" in err and "redirect" in err
    assert elsewhere not in err, "the redirect's Location is not quoted"


@pytest.mark.parametrize(
    "url", ["http://127.0.0.2:9/t", "ftp://127.0.0.1/t", "https://u:CANARY@h/t", "https://h:99999/t"]
)
def test_a_request_url_other_than_https_or_loopback_http_is_refused_before_any_request(url):
    status, _, err = run_login(
        "http://127.0.0.1:9", environ={"ACTIONS_ID_TOKEN_REQUEST_URL": url, "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "x"}
    )
    assert status == 2 and "ACTIONS_ID_TOKEN_REQUEST_URL" in err and "CANARY" not in err


class _Dripping(_Quiet):
    """Promises 100000 bytes and sends one every 20 ms, until the client hangs up (8 s at most)."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "100000")
        self.end_headers()
        until = time.monotonic() + 8
        while time.monotonic() < until:
            time.sleep(0.02)
            try:
                self.wfile.write(b" ")
                self.wfile.flush()
            except OSError:
                return


def test_a_server_that_drips_its_answer_is_given_up_at_the_deadline(monkeypatch, serve):
    monkeypatch.setattr(login, "REQUEST_DEADLINE_SECONDS", 0.5)
    base = serve(_Dripping)
    started = time.monotonic()
    status, out, err = run_login(base)
    took = time.monotonic() - started
    assert (status, out) == (2, "")
    assert took < 3, f"the login waited {took:.1f} s on a dripping server"
    host = base.removeprefix("http://")
    assert f"GitHub's OIDC token service at http://{host} did not answer within 0.5 s" in err
    assert "api-version" not in err, "the URL's query is not quoted"


@pytest.mark.parametrize(
    ("flag", "given"),
    [
        ("--audience", "a\nb&x=1"),
        ("--audience", "\x1b[2J"),
        ("--audience", "a b"),
        ("--audience", "a" * 100000),
        ("--service-account-id", "serviceaccount-" + "a" * 5000),
    ],
    ids=["newline", "escape", "space", "huge-audience", "huge-id"],
)
def test_a_flag_out_of_its_bounds_is_refused_naming_it_before_any_request(flag, given):
    arguments = ["--service-account-id", SERVICE_ACCOUNT, "--audience", "nebius"]
    arguments[arguments.index(flag) + 1] = given
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = login.main(arguments, {})
    assert (status, out.getvalue()) == (2, "")
    assert err.getvalue().startswith(f"nebius login: {flag} ") and len(err.getvalue()) < 600
    assert "\x1b" not in err.getvalue() and len(err.getvalue().strip().splitlines()) == 1


def test_an_unforeseen_failure_is_one_line_without_its_message(monkeypatch, answering):
    def broken(*_: Any) -> None:
        raise RuntimeError("CANARY in a message")

    monkeypatch.setattr(login, "exchange_request", broken)
    base, _ = answering(GOOD)
    status, out, err = run_login(base)
    assert (status, out) == (2, "")
    assert "RuntimeError" in err and "CANARY" not in err and len(err.strip().splitlines()) == 1


EXEC_CREDENTIAL_CLI = """#!/bin/sh
# Stands for the nebius CLI's `mk8s v1 cluster get-token --format json`: an ExecCredential with the token of
# the environment, which the CLI reads before any profile (nebius pysdk cli_config.py, TOKEN_ENV).
[ "$*" = "mk8s v1 cluster get-token --format json" ] || { echo "unexpected arguments: $*" >&2; exit 3; }
[ -n "$NEBIUS_IAM_TOKEN" ] || { echo "no NEBIUS_IAM_TOKEN" >&2; exit 4; }
printf '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"%s"}}' \\
  "$NEBIUS_IAM_TOKEN"
"""


def test_the_kubeconfigs_exec_plugin_runs_the_cli_with_the_jobs_token(tmp_path, monkeypatch):
    """A stack CI deploys leaves nebiusProfile empty, so the kubeconfig's exec plugin runs the CLI without
    --profile and with the job's environment, where the login put NEBIUS_IAM_TOKEN (tools.verify's runner
    passes the environment through, as client-go's does)."""
    cli = tmp_path / "bin" / "nebius"
    cli.parent.mkdir()
    cli.write_text(EXEC_CREDENTIAL_CLI)
    cli.chmod(0o755)
    config = tmp_path / "kubeconfig"
    config.write_text(build_kubeconfig("dra-dev", "https://203.0.113.7", "-----BEGIN CERTIFICATE-----\n"))
    monkeypatch.setenv("PATH", f"{cli.parent}:/usr/bin:/bin")
    monkeypatch.setenv("NEBIUS_IAM_TOKEN", NEBIUS_TOKEN)
    plugin = load_kubeconfig(str(config)).exec
    assert plugin is not None and "--profile" not in plugin.args and not plugin.env
    assert plugin.run(timeout_s=20).token == NEBIUS_TOKEN
