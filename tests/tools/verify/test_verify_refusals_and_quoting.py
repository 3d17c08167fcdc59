"""Issue 37's hostile review of the verifier: user text quoted through `shown`, a report folder that is not there,
a client certificate that is not PEM, TLS verification turned off, a failed credential command, HTTP errors at the
first read. Servers listen on 127.0.0.1 only, as in test_verify_hostile.py, whose helpers these tests use."""

from __future__ import annotations

import base64
import contextlib
import json
import shutil
import socket
import ssl
import subprocess
import threading
from typing import Any

import pytest
import yaml

from tests.kubeconfigs import kubeconfig_text
from tests.tools.verify.test_verify_hostile import run_cli, scripted, write_kubeconfig  # noqa: F401 (a fixture)
from tools.verify import __main__ as cli

CANARY = "x:CANARY1@h"
ESCAPE = "\x1b[2J"


def test_a_report_path_in_a_folder_that_is_not_there_is_refused_before_the_cluster_and_nothing_is_made(
    tmp_path, capsys
):
    missing = tmp_path / "nonexistent" / "dir"
    kubeconfig = write_kubeconfig(tmp_path, "http://127.0.0.1:1", {"token": "t"})
    assert run_cli("--kubeconfig", str(kubeconfig), "--json", str(missing / "x.json"))[0] == 2
    err = capsys.readouterr().err
    assert f"--json {json.dumps(str(missing / 'x.json'))}: its folder" in err and "does not exist" in err
    assert "Read the cluster" not in err and not missing.parent.exists()


@pytest.mark.parametrize(
    "user",
    [
        {"client-certificate-data": base64.b64encode(b"not a certificate").decode(), "client-key-data": "a2V5"},
        {"client-certificate": "client.crt", "client-key": "client.key"},
    ],
    ids=["data", "file"],
)
def test_a_client_certificate_that_is_not_pem_is_a_kubeconfig_problem_naming_the_field(tmp_path, capsys, user):
    (tmp_path / "client.crt").write_text("not a certificate\n")
    (tmp_path / "client.key").write_text("not a key\n")
    kubeconfig = write_kubeconfig(tmp_path, "https://127.0.0.1:1", user)
    assert run_cli("--kubeconfig", str(kubeconfig))[0] == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: kubeconfig {kubeconfig}: user") and "client-certificate" in err
    assert "is not a PEM certificate" in err and "could not be reached" not in err


def test_insecure_skip_tls_verify_is_said_once_in_the_projects_words(tmp_path, capsys):
    document = yaml.safe_load(kubeconfig_text("https://127.0.0.1:1", {"token": "t"}))
    document["clusters"][0]["cluster"]["insecure-skip-tls-verify"] = True
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(document))
    assert run_cli("--kubeconfig", str(path), "--request-timeout", "2")[0] == 2
    err = capsys.readouterr().err
    assert err.count("warning: TLS verification is off") == 1 and "insecure-skip-tls-verify: true" in err
    assert "InsecureRequestWarning" not in err


@pytest.mark.parametrize("server", ["u:CANARY1@h", "u:CANARY1@h" + ESCAPE])
def test_a_server_without_a_scheme_is_refused_without_quoting_a_credential_in_it(tmp_path, capsys, server):
    assert run_cli("--kubeconfig", str(write_kubeconfig(tmp_path, server)))[0] == 2
    err = capsys.readouterr().err
    assert "is not an http(s) URL" in err and "CANARY1" not in err and "\x1b" not in err


@pytest.mark.parametrize("value", [CANARY, ESCAPE])
def test_the_context_and_stack_flags_are_quoted_through_shown(tmp_path, capsys, value):
    kubeconfig = write_kubeconfig(tmp_path, "http://127.0.0.1:1")
    assert run_cli("--kubeconfig", str(kubeconfig), "--context", value)[0] == 2
    assert cli.main(["--stack", value, "--skip-smoke", "--kubeconfig", str(kubeconfig)]) == 2
    err = capsys.readouterr().err
    assert "CANARY1" not in err and "\x1b" not in err and err.count("error:") == 2


def answer_status(status: bytes) -> Any:
    def answer(connection: socket.socket, _stopping: threading.Event) -> None:
        connection.sendall(b"HTTP/1.1 " + status + b"\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}")

    return answer


@pytest.mark.parametrize(
    ("status", "said"),
    [
        (b"403 Forbidden", "list nodes: forbidden (403): the kubeconfig's identity lacks this permission"),
        (b"404 Not Found", "list nodes: not found (404)"),
        (b"431 Request Header Fields Too Large", "list nodes: HTTP 431"),
        (b"500 Internal Server Error", "list nodes: HTTP 500"),
    ],
)
def test_an_http_error_at_the_first_read_judges_nothing_and_exits_2(scripted, tmp_path, capsys, status, said):  # noqa: F811
    server = scripted(answer_status(status))
    report = tmp_path / "verify.json"
    kubeconfig = write_kubeconfig(tmp_path, server.url)
    assert run_cli("--kubeconfig", str(kubeconfig), "--json", str(report))[0] == 2
    err = capsys.readouterr().err
    assert said in err and "exit 2" in err
    document = json.loads(report.read_text())
    assert document["unreachable"] or document["unusable"]


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a server certificate")
def test_an_unverified_tls_connection_gives_no_urllib3_warning(scripted, tmp_path, capsys, recwarn):  # noqa: F811
    """The run says once that TLS verification is off; urllib3's InsecureRequestWarning, raw and once per request,
    is not what the user reads (hostile review, issue 37)."""
    key, certificate = tmp_path / "server.key", tmp_path / "server.crt"
    request = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"]
    subprocess.run(
        [*request, "-keyout", str(key), "-out", str(certificate)],
        check=True,
        capture_output=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate, key)

    def answer(connection: socket.socket, stopping: threading.Event) -> None:
        with context.wrap_socket(connection, server_side=True) as tls:
            tls.recv(65536)
            answer_status(b"500 Internal Server Error")(tls, stopping)

    server = scripted(lambda connection, stopping: None)
    server.handle = lambda connection: threading.Thread(target=_quietly, args=(answer, connection), daemon=True).start()
    document = yaml.safe_load(kubeconfig_text(f"https://127.0.0.1:{server.port}", {"token": "t"}))
    document["clusters"][0]["cluster"]["insecure-skip-tls-verify"] = True
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(document))
    assert run_cli("--kubeconfig", str(path), "--request-timeout", "10")[0] == 2
    err = capsys.readouterr().err
    assert "list nodes: HTTP 500" in err and err.count("warning: TLS verification is off") == 1
    assert not [warning for warning in recwarn if "InsecureRequestWarning" in type(warning.message).__name__]


def _quietly(answer: Any, connection: socket.socket) -> None:
    with connection, contextlib.suppress(OSError):
        answer(connection, threading.Event())
