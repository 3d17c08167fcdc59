"""A kubeconfig user the verifier could only send anonymous, or with one of two credentials winning unsaid, and an
exec plugin's output it could not use: each a kubeconfig or plugin problem naming the user and the field (exit 2,
before any request), never quoting a value."""

from __future__ import annotations

import base64
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from components.shown import shown
from tests.kubeconfigs import EXEC_API, exec_user, kubeconfig_text, script
from tools.verify import __main__ as cli
from tools.verify.kubeconfig import ExecPluginError, load_kubeconfig


def real_certificate() -> tuple[str, str]:
    """A self-signed client certificate and its key, PEM, as OpenSSL loads them."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "verify-test")])
    now = datetime.now(UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return certificate.public_bytes(serialization.Encoding.PEM).decode(), key_pem.decode()


REAL_CERTIFICATE, REAL_KEY = real_certificate()
OTHER_KEY = real_certificate()[1]


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


PEM_CERTIFICATE = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n").decode()
PEM_KEY = base64.b64encode(b"-----BEGIN PRIVATE KEY-----\nMA==\n-----END PRIVATE KEY-----\n").decode()


def refusal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], user: dict[str, Any], server: str = "http://127.0.0.1:9"
) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(kubeconfig_text(server, user))
    assert cli.main(["--stack", "dev", "--skip-smoke", "--kubeconfig", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f'error: kubeconfig {path}: user "u": '), err
    assert err.count("\n") == 1, err
    return err


@pytest.mark.parametrize(
    ("user", "message"),
    [
        ({"token": ""}, "token is empty"),
        ({"tokenFile": ""}, "tokenFile is empty"),
        ({"tokenFile": "blank"}, 'tokenFile "blank" is empty (or white space only)'),
        ({"password": "CANARYPW"}, "password without username"),
        ({"username": "admin"}, "username without password"),
        ({}, "the user has no credential (none of token, tokenFile"),
        ({"extensions": []}, "the user has no credential"),
        ({"client-certificate-data": PEM_CERTIFICATE}, "client-certificate without client-key"),
        ({"client-key-data": PEM_KEY}, "client-key without client-certificate"),
    ],
    ids=[
        "empty-token",
        "empty-token-file",
        "blank-token-file",
        "password-only",
        "username-only",
        "empty",
        "extensions",
        "cert-only",
        "key-only",
    ],
)
def test_a_user_with_no_usable_credential_is_refused_naming_the_user_and_field(tmp_path, capsys, user, message):
    (tmp_path / "blank").write_text(" \n")
    err = refusal(tmp_path, capsys, user)
    assert message in err and "CANARYPW" not in err


@pytest.mark.parametrize(
    ("user", "fields"),
    [
        ({"token": "t", "username": "u", "password": "CANARYPW"}, "token and username with password"),
        ({"token": "t", "tokenFile": "tok"}, "token and tokenFile"),
        ({"tokenFile": "tok", **exec_user("./get-token.sh")}, "tokenFile and exec"),
        ({"token": "t", **exec_user("./get-token.sh")}, "token and exec"),
    ],
    ids=["token-and-password", "token-and-token-file", "token-file-and-exec", "token-and-exec"],
)
def test_two_authentication_methods_in_one_user_are_refused_naming_both(tmp_path, capsys, user, fields):
    (tmp_path / "tok").write_text("t\n")
    err = refusal(tmp_path, capsys, user)
    assert f"more than one authentication method found ({fields}), only one is allowed" in err
    assert "CANARYPW" not in err


def test_a_username_with_a_colon_is_refused_never_shown(tmp_path, capsys):
    err = refusal(tmp_path, capsys, {"username": "a:CANARYPART", "password": "CANARYPW"})
    assert "username holds a ':', which a basic-authentication user-id cannot (RFC 7617" in err
    assert "CANARY" not in err


def test_a_client_certificate_beside_a_token_is_taken(tmp_path):
    path = tmp_path / "kubeconfig"
    user = {"token": "t", "client-certificate-data": b64(REAL_CERTIFICATE), "client-key-data": b64(REAL_KEY)}
    path.write_text(kubeconfig_text("https://127.0.0.1:9", user))
    assert load_kubeconfig(str(path)).token == "t"


@pytest.mark.parametrize("name", ["A=B", ""])
def test_an_exec_env_name_no_environment_can_hold_is_a_kubeconfig_problem_at_load(tmp_path, capsys, name):
    user = {"exec": {"apiVersion": EXEC_API, "command": "nebius", "env": [{"name": name, "value": "x"}]}}
    err = refusal(tmp_path, capsys, user)
    # Quoted through `shown`, which gives a text with a '=' by its shape.
    assert "exec env[0] name " in err and "is no environment variable name (it is empty or holds '='" in err


def test_an_exec_env_value_with_a_nul_is_refused_never_shown(tmp_path, capsys):
    user = {"exec": {"apiVersion": EXEC_API, "command": "nebius", "env": [{"name": "A", "value": "CANARY\0X"}]}}
    err = refusal(tmp_path, capsys, user)
    assert "exec env[0] value holds a NUL character" in err and "CANARY" not in err


def plugin_printing(tmp_path: Path, server: str, status: dict[str, Any]) -> Any:
    credential = {"apiVersion": EXEC_API, "kind": "ExecCredential", "status": status}
    script(tmp_path, "get-credential.sh", f"cat <<'JSON'\n{json.dumps(credential)}\nJSON\n")
    path = tmp_path / "kubeconfig"
    path.write_text(kubeconfig_text(server, exec_user("./get-credential.sh")))
    plugin = load_kubeconfig(str(path)).exec
    assert plugin is not None
    return plugin


PEM_TEXT_CERTIFICATE = base64.b64decode(PEM_CERTIFICATE).decode()
PEM_TEXT_KEY = base64.b64decode(PEM_KEY).decode()


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (
            {"clientCertificateData": "CANARYCERT", "clientKeyData": PEM_TEXT_KEY},
            "printed a clientCertificateData that is not a PEM certificate (no '-----BEGIN CERTIFICATE-----' marker)",
        ),
        (
            {"clientCertificateData": PEM_TEXT_CERTIFICATE, "clientKeyData": "CANARYKEY"},
            "printed a clientKeyData that is not a PEM private key",
        ),
    ],
    ids=["certificate", "key"],
)
def test_an_exec_plugin_client_certificate_that_is_not_pem_is_refused_never_shown(tmp_path, status, message):
    plugin = plugin_printing(tmp_path, "https://127.0.0.1:9", status)
    with pytest.raises(ExecPluginError) as refused:
        plugin.run(timeout_s=10)
    assert "the exec credential command `./get-credential.sh --profile dev`" in str(refused.value)
    assert message in str(refused.value) and "CANARY" not in str(refused.value)


def test_an_exec_plugin_client_certificate_for_an_http_server_is_refused(tmp_path):
    status = {"clientCertificateData": PEM_TEXT_CERTIFICATE, "clientKeyData": PEM_TEXT_KEY}
    plugin = plugin_printing(tmp_path, "http://127.0.0.1:9", status)
    with pytest.raises(ExecPluginError, match=r"client certificate \(clientCertificateData\), which only a TLS"):
        plugin.run(timeout_s=10)
    real = {"clientCertificateData": REAL_CERTIFICATE, "clientKeyData": REAL_KEY}
    assert plugin_printing(tmp_path, "https://127.0.0.1:9", real).run(timeout_s=10).client_key == REAL_KEY


GARBAGE_CERTIFICATE = "-----BEGIN CERTIFICATE-----\nCANARY\n-----END CERTIFICATE-----\n"
GARBAGE_KEY = "-----BEGIN PRIVATE KEY-----\nCANARY\n-----END PRIVATE KEY-----\n"
PEM_SHAPED = {
    "garbage-certificate": (GARBAGE_CERTIFICATE, REAL_KEY),
    "garbage-key": (REAL_CERTIFICATE, GARBAGE_KEY),
    "key-of-another-certificate": (REAL_CERTIFICATE, OTHER_KEY),
}


@pytest.mark.parametrize(("certificate", "key"), PEM_SHAPED.values(), ids=PEM_SHAPED.keys())
def test_a_pem_shaped_client_certificate_openssl_refuses_is_a_kubeconfig_problem_before_any_request(
    tmp_path, capsys, certificate, key
):
    (tmp_path / "client.key").write_text(key)
    user = {"client-certificate-data": b64(certificate), "client-key": "client.key"}
    err = refusal(tmp_path, capsys, user, server="https://127.0.0.1:9")
    assert "client-certificate(-data) and client-key(-data): OpenSSL does not take them" in err
    assert "CANARY" not in err and "BEGIN" not in err


@pytest.mark.parametrize(("certificate", "key"), PEM_SHAPED.values(), ids=PEM_SHAPED.keys())
def test_a_pem_shaped_exec_plugin_certificate_openssl_refuses_is_refused_never_shown(tmp_path, certificate, key):
    plugin = plugin_printing(
        tmp_path, "https://127.0.0.1:9", {"clientCertificateData": certificate, "clientKeyData": key}
    )
    with pytest.raises(ExecPluginError, match="printed clientCertificateData and clientKeyData: OpenSSL does not"):
        plugin.run(timeout_s=10)


def test_a_client_certificate_openssl_takes_is_taken(tmp_path):
    (tmp_path / "client.crt").write_text(REAL_CERTIFICATE)
    path = tmp_path / "kubeconfig"
    path.write_text(
        kubeconfig_text("https://127.0.0.1:9", {"client-certificate": "client.crt", "client-key-data": b64(REAL_KEY)})
    )
    assert load_kubeconfig(str(path)).user is not None


# Values no path or message of the run holds by chance (a temporary folder's name is pytest-<n>, n counting up).
@pytest.mark.parametrize("expires", ["CANARY-not-a-date", 987654321987])
def test_an_exec_plugin_expiration_that_is_no_time_is_named_never_quoted(tmp_path, expires):
    plugin = plugin_printing(tmp_path, "http://127.0.0.1:9", {"token": "t", "expirationTimestamp": expires})
    with pytest.raises(ExecPluginError) as refused:
        plugin.run(timeout_s=10)
    assert "printed an expirationTimestamp that is not an RFC 3339 time" in str(refused.value)
    assert str(expires) not in str(refused.value)


@pytest.mark.parametrize("key", ["certificate-authority", "client-certificate"])
@pytest.mark.parametrize("kind", ["directory", "fifo", "device"])
def test_a_certificate_path_that_is_no_regular_file_is_said_as_it_is(tmp_path, capsys, key, kind):
    target = {"directory": tmp_path / "dir", "fifo": tmp_path / "fifo", "device": Path("/dev/zero")}[kind]
    if kind == "directory":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)
    document: dict[str, Any] = {"token": "t"}
    if key == "client-certificate":
        document = {"client-certificate": str(target), "client-key-data": PEM_KEY}
    path = tmp_path / "kubeconfig"
    text = kubeconfig_text("https://127.0.0.1:9", document)
    if key == "certificate-authority":
        text = text.replace(
            "server: https://127.0.0.1:9", f"server: https://127.0.0.1:9\n    certificate-authority: {target}"
        )
    path.write_text(text)
    assert cli.main(["--stack", "dev", "--skip-smoke", "--kubeconfig", str(path)]) == 2
    err = capsys.readouterr().err
    said = {"directory": "a directory", "fifo": "a FIFO", "device": "a device"}[kind]
    assert f"{key} {shown(str(target))}: it is {said}, not a regular file" in err and "does not exist" not in err
