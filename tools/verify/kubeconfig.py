"""The kubeconfig, read without trusting it, and its exec credential plugin, run under a time limit.

The `kubernetes` client turns a malformed kubeconfig into a traceback from deep inside itself
(a list at the top level, `cluster:` given as a string, no current-context), and it runs the
exec credential plugin with no time limit, so a `nebius` CLI waiting for a browser login
holds the verifier forever. Here every file is checked first and each problem becomes one
`KubeconfigError` line naming the file and the field; the plugin is run by `ExecPlugin`, which
kills it, and whatever it started, once its time is up. The client is handed only the chosen
context, its cluster and its user without `exec` (`client_config`); the token comes from
`ExecCredentials`, which runs the plugin again when the token it gave expires.

Several files in $KUBECONFIG are merged as kubectl merges them: the first file naming a
cluster, context or user wins, and so does the first current-context.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import os
import re
import signal
import ssl
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from kubernetes.config.kube_config import ConfigNode

from components.config.reading import InputError, check_file_flag, load_yaml, parse_json, printable, read_text
from components.redaction import redacted_command
from components.shown import shown
from tools.verify.signals import signals_deferred

DEFAULT_KUBECONFIG = "~/.kube/config"
WRITE_IT = "write it with `pulumi stack output kubeconfig --show-secrets > kubeconfig` and pass --kubeconfig kubeconfig"
# A credential this close to its expiry is renewed before the next request, not after a 401.
RENEW_BEFORE = timedelta(seconds=30)
# A service account token is about 1 KiB, a Nebius IAM token less; a token file of more is not a token.
MAX_TOKEN_BYTES = 64 << 10
# A bearer token travels in the Authorization header as `Bearer <token>`, where RFC 6750 section 2.1 allows only
# b64token characters; visible ASCII is the lenient superset kept here. A newline or another control character
# would end the header or start a forged one (RFC 9110 section 5.5), and http.client then raises an error that
# quotes the whole header, token included: such a token is refused first, by name, never by value.
HEADER_SAFE_TOKEN = re.compile(r"^[\x21-\x7e]+\Z")
NOT_HEADER_SAFE = (
    "holds a character an HTTP Authorization header cannot carry (a space, a newline or another control or "
    "non-ASCII character); a bearer token is visible ASCII only (RFC 6750 section 2.1). The value is secret and "
    "not shown"
)


# What an exec plugin may print on stdout: an ExecCredential, a client certificate and key included, is a few KiB;
# past this it is no credential, and reading on would hold it all in memory.
MAX_EXEC_STDOUT_BYTES = 1 << 20
# Of the plugin's stderr only the end is kept (its lines are counted, never quoted); the rest is read and dropped,
# so a plugin that floods stderr neither blocks on a full pipe nor fills the verifier's memory.
KEPT_EXEC_STDERR_BYTES = 64 << 10


class _Drain(threading.Thread):
    """Reads one pipe to its end in the background, keeping the first `limit` bytes (`head`) or the last ones."""

    def __init__(self, pipe: IO[bytes] | None, limit: int, head: bool) -> None:
        super().__init__(daemon=True)
        self.pipe, self.limit, self.head = pipe, limit, head
        self.data = bytearray()
        self.overflowed = False
        if pipe is not None:
            self.start()

    def run(self) -> None:
        # The pipe is this thread's to close, at its end: closed from another thread while a read waits, the close
        # would wait for that read, as long as whatever holds the pipe's other end lives.
        assert self.pipe is not None
        with contextlib.suppress(OSError, ValueError), self.pipe:
            while chunk := self.pipe.read1(1 << 16):  # type: ignore[attr-defined]
                self.data += chunk
                if len(self.data) > self.limit:
                    self.overflowed = True
                    if self.head:
                        del self.data[self.limit :]
                    else:
                        del self.data[: -self.limit]

    def text(self, wait_s: float = 0) -> bytes:
        if self.pipe is not None:
            self.join(wait_s)
        return bytes(self.data)


class KubeconfigError(Exception):
    """The kubeconfig cannot be used; the message is one line naming the file and what is wrong."""


class ExecPluginError(Exception):
    """The exec credential plugin gave no credential; the message names the command and why."""


def kind_of(value: object) -> str:
    """How YAML calls what was found, for messages: `cluster is a string, not a mapping`."""
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


def one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


@dataclass(frozen=True)
class Named:
    """One entry of clusters, contexts or users, with the file it came from (relative paths resolve there)."""

    name: str
    body: dict[str, Any]
    source: Path

    @property
    def directory(self) -> Path:
        return self.source.parent


def read_document(path: Path) -> dict[str, Any]:
    """The file's mapping, read through the project's input limits (`components.config.reading`)."""
    if not path.exists():
        raise KubeconfigError(f"kubeconfig {path}: no such file; {WRITE_IT}")
    if path.is_dir():
        raise KubeconfigError(f"kubeconfig {path}: is a directory, not a file")
    document = load_yaml(path, f"kubeconfig {path}", KubeconfigError)
    if document is None:
        raise KubeconfigError(f"kubeconfig {path}: the file is empty; {WRITE_IT}")
    if not isinstance(document, dict):
        raise KubeconfigError(
            f"kubeconfig {path}: the top level is {kind_of(document)}, not a mapping with clusters, contexts and users"
        )
    return document


def named_entries(document: Mapping[str, Any], path: Path, section: str, body_key: str) -> list[Named]:
    """The entries of one section, each a mapping with a name and a `body_key` mapping, each name once."""
    entries = document.get(section)
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise KubeconfigError(f"kubeconfig {path}: {section} is {kind_of(entries)}, not a list")
    found = []
    first_index: dict[str, int] = {}
    for index, entry in enumerate(entries):
        where = f"{section}[{index}]"
        if not isinstance(entry, dict):
            raise KubeconfigError(
                f"kubeconfig {path}: {where} is {kind_of(entry)}, not a mapping with name and {body_key}"
            )
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise KubeconfigError(f"kubeconfig {path}: {where} has no name (found {kind_of(name)})")
        body = entry.get(body_key)
        if not isinstance(body, dict):
            problem = f"has no {body_key}" if body is None else f"{body_key} is {kind_of(body)}, not a mapping"
            raise KubeconfigError(f"kubeconfig {path}: {section[:-1]} {shown(name)}: {problem}")
        if name in first_index:
            # client-go refuses it too (k8s.io/client-go tools/clientcmd/api/v1/conversion.go: `duplicate name "%v"
            # in list`), but quotes the whole list, credentials included; here only the name and the two places.
            raise KubeconfigError(
                f"kubeconfig {path}: {section} names {shown(name)} twice, {section}[{first_index[name]}] and {where}; "
                "give each entry its own name (kubectl refuses the file too)"
            )
        first_index[name] = index
        found.append(Named(name, body, path))
    return found


def field(entry: Named, what: str, key: str, kind: type, required: bool = False) -> Any:
    """`entry.body[key]` when it has the kind the client expects; None when absent and optional."""
    value = entry.body.get(key)
    if value is None or value == "":
        if required:
            raise KubeconfigError(f"kubeconfig {entry.source}: {what} {shown(entry.name)} has no {key}")
        return None
    if not isinstance(value, kind):
        wanted = {str: "a string", bool: "a boolean", dict: "a mapping", list: "a list"}[kind]
        raise KubeconfigError(
            f"kubeconfig {entry.source}: {what} {shown(entry.name)}: {key} is {kind_of(value)}, not {wanted}"
        )
    return value


# What a PEM file of each kind begins its block with (RFC 7468 section 2: "-----BEGIN <label>-----"); a key's label
# is "PRIVATE KEY", "RSA PRIVATE KEY" or "EC PRIVATE KEY", so its marker is the label's end.
PEM_MARKERS = {"CERTIFICATE": b"-----BEGIN CERTIFICATE-----", "PRIVATE KEY": b"PRIVATE KEY-----"}
PEM_READ_LIMIT = 1 << 20


def check_file_or_data(entry: Named, what: str, key: str, pem: str | None = None) -> None:
    """`key-data` must be base64 (the client decodes it); `key` must name an existing file; either must hold a PEM
    block of kind `pem` where one is given (a CA, a client certificate and key): otherwise the client's TLS setup fails at the first request, which read as a network
    failure (hostile review, issue 37), not as the kubeconfig field it is."""
    data = field(entry, what, f"{key}-data", str)
    given = f"{key}-data"
    if data is not None:
        try:
            content = base64.b64decode(data, validate=False)
        except (binascii.Error, ValueError):
            raise KubeconfigError(
                f"kubeconfig {entry.source}: {what} {shown(entry.name)}: {key}-data is not base64"
            ) from None
    else:
        file = field(entry, what, key, str)
        if file is None or (pem is None and (entry.directory / Path(file).expanduser()).is_file()):
            return
        path = entry.directory / Path(file).expanduser()
        if path.exists():  # a directory, a FIFO (opening it would block) or a device: said as tokenFile says it
            check_file_flag(path, f"kubeconfig {entry.source}: {what} {shown(entry.name)}: {key}", KubeconfigError)
        if not path.is_file():
            raise KubeconfigError(
                f"kubeconfig {entry.source}: {what} {shown(entry.name)}: {key} {shown(file)} does not exist"
                + ("" if Path(file).is_absolute() else f" (relative paths are read from {entry.directory})")
            )
        given = f"{key} {shown(file)}"
        try:
            with path.open("rb") as handle:
                content = handle.read(PEM_READ_LIMIT)
        except OSError as failure:
            raise KubeconfigError(
                f"kubeconfig {entry.source}: {what} {shown(entry.name)}: {given} cannot be read: "
                f"{failure.strerror or failure}"
            ) from None
    if pem is not None and PEM_MARKERS[pem] not in content:
        raise KubeconfigError(
            f"kubeconfig {entry.source}: {what} {shown(entry.name)}: {given} is not a PEM {pem.lower()} (no "
            f"'{PEM_MARKERS[pem].decode()}' marker); give the PEM file ({key}) or its base64-encoded content ({key}-data)"
        )


def certificate_problem(certificate: bytes, key: bytes) -> str | None:
    """Why OpenSSL would not take this client certificate and key at the first TLS handshake, or None: a PEM block
    that does not parse, a key of another certificate, a key under a passphrase. Said by OpenSSL's reason code only
    (`PEM_LIB`, `KEY_VALUES_MISMATCH`), never with the content."""
    with tempfile.TemporaryDirectory(prefix="tools-verify-") as directory:
        paths = [Path(directory) / "client.crt", Path(directory) / "client.key"]
        for path, content in zip(paths, (certificate, key), strict=True):
            path.touch(mode=0o600)
            path.write_bytes(content)

        def no_passphrase() -> bytes:
            raise ssl.SSLError("the key is under a passphrase, which the verifier does not ask for")

        try:
            ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_cert_chain(paths[0], paths[1], password=no_passphrase)
        except ssl.SSLError as failure:
            said = failure.reason or (failure.args[1] if len(failure.args) > 1 else None)
            said = re.sub(r"\s*\(_ssl\.c:[0-9]+\)\Z", "", said) if isinstance(said, str) else "refused"
            return (
                "OpenSSL does not take them as a client certificate and its key (a block that does not parse, a key "
                f"of another certificate, or one under a passphrase; OpenSSL says {printable(one_line(said, 80))!r})"
            )
    return None


def file_or_data_content(entry: Named, key: str) -> bytes:
    """What `key-data` (decoded) or the file `key` holds, once `check_file_or_data` took it."""
    data = entry.body.get(f"{key}-data")
    if data:
        return base64.b64decode(data, validate=False)
    with (entry.directory / Path(entry.body[key]).expanduser()).open("rb") as handle:
        return handle.read(PEM_READ_LIMIT)


def check_client_certificate(user: Named) -> None:
    """The user's client certificate and key load (`certificate_problem`): otherwise the TLS setup fails at the first
    request, which read as a network failure (hostile review F19), not as the kubeconfig fields it is."""
    if not any(user.body.get(key) for key in ("client-certificate", "client-certificate-data")):
        return
    problem = certificate_problem(
        file_or_data_content(user, "client-certificate"), file_or_data_content(user, "client-key")
    )
    if problem is not None:
        raise KubeconfigError(
            f"kubeconfig {user.source}: user {shown(user.name)}: client-certificate(-data) and client-key(-data): "
            f"{problem}; give the PEM files kubectl uses"
        )


def check_cluster(cluster: Named) -> str:
    """The cluster's server URL, after the fields the client reads are checked."""
    server = field(cluster, "cluster", "server", str, required=True)
    try:
        parts = urlsplit(server)
        usable = parts.scheme in ("http", "https") and bool(parts.netloc)
    except ValueError:  # a '[' without its ']' (an IPv6 host cut short)
        usable = False
    if not usable:
        raise KubeconfigError(
            f"kubeconfig {cluster.source}: cluster {shown(cluster.name)}: server {shown(server)} is not an http(s) URL"
        )
    try:
        port = parts.port
    except ValueError:  # past 65535, or not digits
        port = -1
    if parts.username is not None or parts.password is not None:
        # The client drops a URL's userinfo without a word; the credential belongs in the user entry.
        raise KubeconfigError(
            f"kubeconfig {cluster.source}: cluster {shown(cluster.name)}: server holds a user name or password before its "
            "host, which the verifier does not send; give the credential in the context's user entry (token, "
            "tokenFile, client-certificate, exec). The value is not shown"
        )
    if "?" in server or "#" in server:
        # The client appends the API path to the server URL as text (`<server>/api/v1/nodes`): after a query or a
        # fragment it is no path at all, and every request would go to the server's root.
        raise KubeconfigError(
            f"kubeconfig {cluster.source}: cluster {shown(cluster.name)}: server {parts.scheme}://{parts.netloc}{parts.path} "
            "has a query or a fragment (after '?' or '#', not shown), which the API path cannot follow; give the API "
            "server's URL, with a base path at most (https://api.example.com:6443/base)"
        )
    if port is not None and not 1 <= port <= 65535:
        raise KubeconfigError(
            f"kubeconfig {cluster.source}: cluster {shown(cluster.name)}: server {shown(server)}: its port is not a whole "
            "number from 1 to 65535"
        )
    for key in ("tls-server-name", "proxy-url"):
        field(cluster, "cluster", key, str)
    insecure = field(cluster, "cluster", "insecure-skip-tls-verify", bool)
    if insecure and (cluster.body.get("certificate-authority") or cluster.body.get("certificate-authority-data")):
        # kubectl refuses the pair (k8s.io/client-go v0.34.12 transport/transport.go, TLSConfigFor: "specifying a root
        # certificates file with the insecure flag is not allowed"); the verifier would otherwise trust either.
        raise KubeconfigError(
            f"kubeconfig {cluster.source}: cluster {shown(cluster.name)}: insecure-skip-tls-verify is true beside a "
            "certificate-authority, which kubectl refuses (a CA to check the server against, or no check: one of "
            "them); remove insecure-skip-tls-verify"
        )
    # A CA that is no PEM certificate fails the first TLS handshake, which read as an ssl error of the connection.
    check_file_or_data(cluster, "cluster", "certificate-authority", "CERTIFICATE")
    return str(server)


# Hosts a plain-http server may be reached on with a credential: this machine's loopback (a `kubectl port-forward`
# or an SSH tunnel ends there), where no network carries the request.
LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")


def check_credential_transport(cluster: Named, server: str, user: Named | None, sends_token: bool) -> None:
    """A credential only where TLS carries it: a client certificate is presented only in a TLS handshake (RFC 8446
    section 4.4.2), so over http:// it would never be sent; a token or a password over http:// to another machine
    crosses the network in clear (RFC 6750 section 5.3: bearer tokens need TLS). kubectl sends the token anyway; the
    verifier refuses, naming the field, before any request."""
    parts = urlsplit(server)
    if parts.scheme != "http" or user is None:
        return
    if user.body.get("client-certificate") or user.body.get("client-certificate-data"):
        raise KubeconfigError(
            f"kubeconfig {cluster.source}: cluster {shown(cluster.name)}: server is http://, and user {shown(user.name)} has a "
            "client certificate, which only a TLS handshake presents; give the server as https://"
        )
    secret_sent = sends_token or bool(user.body.get("password"))
    if secret_sent and (parts.hostname or "") not in LOOPBACK_HOSTS:
        raise KubeconfigError(
            f"kubeconfig {cluster.source}: cluster {shown(cluster.name)}: server is http:// on {shown(parts.hostname)}, and user "
            f"{shown(user.name)} sends a credential (a token, its exec plugin's token or a password), which would cross the "
            "network in clear; give the server as "
            "https:// (plain http is taken only on this machine's loopback: 127.0.0.1, ::1, localhost)"
        )


def header_safe(token: str) -> bool:
    return HEADER_SAFE_TOKEN.match(token) is not None


def read_token_file(user: Named, token_file: str) -> str:
    """The token in `tokenFile`, without surrounding white space, as client-go reads it
    (`transport.NewCachedFileTokenSource`: `strings.TrimSpace`); the Python client would send the newline."""
    path = user.directory / Path(token_file).expanduser()
    if not path.exists():
        raise KubeconfigError(
            f"kubeconfig {user.source}: user {shown(user.name)}: tokenFile {token_file} does not exist"
        )
    label = f"kubeconfig {user.source}: user {shown(user.name)}: tokenFile {token_file}"
    return read_text(path, label, KubeconfigError, limit=MAX_TOKEN_BYTES).strip()


# The user fields the verifier acts on as kubectl does. Impersonation (`as`, `as-groups`, ...) and an auth-provider
# the client would drop or half-apply, so the run would go out as another identity than the one the kubeconfig
# names, or with none: each is refused by name, as is a field no kubeconfig user has (`impersonate:`).
SUPPORTED_USER_FIELDS = (
    "token",
    "tokenFile",
    "client-certificate",
    "client-certificate-data",
    "client-key",
    "client-key-data",
    "username",
    "password",
    "exec",
    "extensions",
)
IMPERSONATION_FIELDS = ("as", "as-uid", "as-groups", "as-user-extra")
SUPPORTED_USERS = (
    "the verifier supports token, tokenFile, client-certificate(-data) with client-key(-data), username with "
    "password, and exec (what `nebius mk8s cluster get-credentials` writes)"
)


def check_user_fields(user: Named) -> None:
    """Refuses every user field the verifier would not act on, before any request is sent."""
    for key, value in user.body.items():
        if key in IMPERSONATION_FIELDS and value not in (None, "", [], {}):
            why = f"{key} impersonates another identity, which the verifier does not do"
        elif key == "auth-provider" and value not in (None, "", {}):
            provider = value.get("name") if isinstance(value, dict) else None
            named = f" {printable(one_line(provider, 60))!r}" if isinstance(provider, str) else ""
            why = f"auth-provider{named} is not run by the verifier (its requests would carry no credential)"
        elif key not in (*SUPPORTED_USER_FIELDS, *IMPERSONATION_FIELDS, "auth-provider"):
            why = f"{printable(one_line(str(key), 60))!r} is not a field of a kubeconfig user"
        else:
            continue
        raise KubeconfigError(f"kubeconfig {user.source}: user {shown(user.name)}: {why}; {SUPPORTED_USERS}")


def check_user(user: Named) -> tuple[str | None, str | None]:
    """The user's bearer token (`token`, else the content of `tokenFile`) and where it was written, after every field
    the client reads is checked."""
    check_user_fields(user)
    for key in ("username", "password"):
        field(user, "user", key, str)
    token = field(user, "user", "token", str)
    where = "token"
    if token is None and (token_file := field(user, "user", "tokenFile", str)) is not None:
        token, where = read_token_file(user, token_file), f"the content of tokenFile {token_file}"
        if not token:
            raise KubeconfigError(
                f"kubeconfig {user.source}: user {shown(user.name)}: tokenFile {shown(token_file)} is empty (or white "
                "space only); a token file holds the token"
            )
    if token is not None and not header_safe(token):
        raise KubeconfigError(f"kubeconfig {user.source}: user {shown(user.name)}: {where} {NOT_HEADER_SAFE}")
    check_file_or_data(user, "user", "client-certificate", "CERTIFICATE")
    check_file_or_data(user, "user", "client-key", "PRIVATE KEY")
    field(user, "user", "exec", dict)
    check_authentication(user)
    return (token, where) if token else (None, None)


def check_authentication(user: Named) -> None:
    """One usable way to authenticate, as kubectl takes it: an empty token, a password without its username (or the
    other way round: the client then sends neither), a username with a ':' (RFC 7617 section 2: a user-id holds
    none), a client certificate without its key, or no credential at all would send the run anonymous, and a 401 or
    403 would blame the identity; two methods at once would have one win unsaid (client-go, tools/clientcmd
    validation.go: "more than one authentication method found"). Refused naming the user and the fields, never a
    value."""
    body = user.body
    where = f"kubeconfig {user.source}: user {shown(user.name)}"
    given = {key for key, value in body.items() if value not in (None, "")}
    for key in ("token", "tokenFile"):
        if key in body and body[key] == "":
            raise KubeconfigError(f"{where}: {key} is empty; give the {key} or remove the field")
    if ("username" in given) != ("password" in given):
        having, missing = ("password", "username") if "password" in given else ("username", "password")
        raise KubeconfigError(
            f"{where}: {having} without {missing}; basic authentication sends both (RFC 7617), or give another "
            "credential and remove the field"
        )
    if ":" in str(body.get("username") or ""):
        raise KubeconfigError(
            f"{where}: username holds a ':', which a basic-authentication user-id cannot (RFC 7617 section 2: the "
            "first ':' ends it). The value is not shown"
        )
    certificate = bool(given & {"client-certificate", "client-certificate-data"})
    has_key = bool(given & {"client-key", "client-key-data"})
    if certificate != has_key:
        having, missing = ("client-certificate", "client-key") if certificate else ("client-key", "client-certificate")
        raise KubeconfigError(f"{where}: {having} without {missing}; a TLS client certificate needs both")
    methods = [
        fields
        for fields in (("token",), ("tokenFile",), ("username", "password"), ("exec",))
        if any(field_name in given for field_name in fields)
    ]
    if len(methods) > 1:
        raise KubeconfigError(
            f"{where}: more than one authentication method found ({' and '.join(' with '.join(m) for m in methods)}), "
            "only one is allowed (kubectl refuses a token beside a username and password too; otherwise one would "
            "win unsaid); keep one"
        )
    if not methods and not certificate:
        raise KubeconfigError(
            f"{where}: the user has no credential (none of token, tokenFile, client-certificate with client-key, "
            "username with password, exec), so every request would go out anonymous; give one, or name no user in "
            "the context"
        )


def credential_refused(user: Named | None, token_where: str | None, plugin: ExecPlugin | None) -> str:
    """What the server refused with a 401, named as the kubeconfig gives it, and what to do about it."""
    if user is None:
        return "the context names no user, so no credential was sent; name a user with a token or an exec plugin"
    sent = []
    if plugin is not None:
        sent.append(f"the credential of its exec plugin `{plugin.command_line}`")
    if token_where is not None:
        sent.append(f"its static token ({token_where})")
    if user.body.get("client-certificate-data") or user.body.get("client-certificate"):
        sent.append("its client certificate (client-certificate)")
    if plugin is None and token_where is None and user.body.get("username"):
        sent.append("its username and password")
    whose = f"user {shown(user.name)} in {user.source}"
    if not sent:
        return f"{whose} has no credential (none of token, tokenFile, client-certificate, exec), so none was sent"
    fix = (
        f"check that `{plugin.command}` is on PATH and its login is current (for the `nebius` CLI: its profile is "
        "logged in)"
        if plugin is not None
        else f"a token or certificate expires or is revoked: {WRITE_IT}"
    )
    return f"the API server refused {' and '.join(sent)} ({whose}); {fix}"


@dataclass(frozen=True)
class Credential:
    """What the exec plugin printed: a bearer token, or a client certificate and key (PEM)."""

    token: str | None = None
    client_certificate: str | None = None
    client_key: str | None = None
    expires: datetime | None = None

    def usable(self, now: datetime) -> bool:
        return self.expires is None or now < self.expires - RENEW_BEFORE


@dataclass(frozen=True)
class ExecPlugin:
    """The user's `exec` section: a command that prints an ExecCredential, run as the client would run it."""

    command: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    api_version: str
    directory: Path
    source: Path
    user: str
    cluster_info: Mapping[str, Any] | None = None
    # Whether the server is https://: a client certificate the plugin prints is presented only in a TLS handshake.
    over_tls: bool = True

    @classmethod
    def from_user(cls, user: Named, cluster: Named) -> ExecPlugin:
        spec = Named(user.name, user.body["exec"], user.source)
        what = "exec of user"
        command = field(spec, what, "command", str, required=True)
        api_version = field(spec, what, "apiVersion", str, required=True)
        args = field(spec, what, "args", list) or []
        if not all(isinstance(arg, str) for arg in args):
            raise KubeconfigError(f"kubeconfig {user.source}: user {shown(user.name)}: exec args must all be strings")
        env = []
        for index, item in enumerate(field(spec, what, "env", list) or []):
            if not (
                isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("value"), str)
            ):
                raise KubeconfigError(
                    f"kubeconfig {user.source}: user {shown(user.name)}: exec env[{index}] is not a mapping with string name and value"
                )
            if not item["name"] or "=" in item["name"] or "\0" in item["name"]:
                # Found only when the plugin ran, as an error blamed on the server (`ValueError` from subprocess).
                raise KubeconfigError(
                    f"kubeconfig {user.source}: user {shown(user.name)}: exec env[{index}] name {shown(item['name'])} "
                    "is no environment variable name (it is empty or holds '=' or a NUL character)"
                )
            if "\0" in item["value"]:
                raise KubeconfigError(
                    f"kubeconfig {user.source}: user {shown(user.name)}: exec env[{index}] value holds a NUL "
                    "character, which no environment variable can carry. The value is not shown"
                )
            env.append((item["name"], item["value"]))
        provide = field(spec, what, "provideClusterInfo", bool)
        return cls(
            command=command,
            args=tuple(args),
            env=tuple(env),
            api_version=api_version,
            directory=user.directory,
            source=user.source,
            user=user.name,
            cluster_info=cluster.body if provide else None,
            over_tls=urlsplit(str(cluster.body.get("server", ""))).scheme == "https",
        )

    @property
    def command_line(self) -> str:
        return redacted_command((self.command, *self.args))

    def _describe(self) -> str:
        return f"the exec credential command `{self.command_line}` (user {shown(self.user)} in {self.source})"

    def run(self, timeout_s: float, interactive: bool = False) -> Credential:
        """Runs the plugin for at most `timeout_s`; on a terminal it may prompt, elsewhere its stdin is empty."""
        info: dict[str, Any] = {
            "apiVersion": self.api_version,
            "kind": "ExecCredential",
            "spec": {"interactive": interactive},
        }
        if self.cluster_info is not None:
            info["spec"]["cluster"] = dict(self.cluster_info)
        env = {**os.environ, **dict(self.env), "KUBERNETES_EXEC_INFO": json.dumps(info)}
        # A Ctrl-C or SIGTERM while Popen runs (the child forked, its handle not yet returned) would leave the plugin
        # running with nothing to stop it: on a loaded machine one came there (a flake of issue 37's round 4). Both are
        # held until `process` exists, then acted on as if they came right after.
        with signals_deferred() as arrived:
            try:
                process = subprocess.Popen(
                    [self.command, *self.args],
                    stdin=None if interactive else subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=None if interactive else subprocess.PIPE,
                    cwd=self.directory,
                    env=env,
                    # Off a terminal the plugin gets its own process group, so a timeout kills its children too.
                    start_new_session=not interactive,
                )
            except OSError as error:
                raise ExecPluginError(
                    f"{self._describe()} cannot start: {error.strerror or error}; install it or put it on PATH"
                ) from None
        # From here on, whatever ends the run (a Ctrl-C included, while the drains' threads start) stops the plugin.
        try:
            for number in arrived:
                signal.raise_signal(number)
            stdout = _Drain(process.stdout, MAX_EXEC_STDOUT_BYTES, head=True)
            stderr = _Drain(process.stderr, KEPT_EXEC_STDERR_BYTES, head=False)
            deadline = time.monotonic() + timeout_s
            process.wait(timeout=timeout_s)
            for drain in (stdout, stderr):
                drain.text(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            stop(process, whole_group=not interactive)
            raise ExecPluginError(
                f"{self._describe()} did not finish within {timeout_s:g}s (--exec-plugin-timeout)"
                + self._unshown(stderr, wait_s=1.0)
                + f"; it most likely waits for a login (a browser or a prompt): run `{self.command_line}` by hand, "
                "finish the login, then run the verification again"
            ) from None
        except BaseException:
            stop(process, whole_group=not interactive)
            raise
        if stdout.is_alive() or stderr.is_alive():
            # The plugin ended, but a process it started outside its group (`setsid cmd &`) holds its stdout or stderr
            # open: client-go would wait for it as long as it lives (os/exec's Wait copies the pipes to their end);
            # the deadline stands here instead, and the pipes are left to their reading threads, never closed under
            # them (a close waits for the read in progress).
            stop(process, whole_group=not interactive)
            raise ExecPluginError(
                f"{self._describe()} exited with status {process.returncode}, but a process it started still held "
                f"its output open {timeout_s:g}s (--exec-plugin-timeout) after it began, so its answer may be cut "
                f"short; make the command leave no background process attached to its stdout and stderr (run "
                f"`{self.command_line}` by hand: it should return the prompt only once it is done)"
            )
        if process.returncode != 0:
            unshown = self._unshown(stderr)
            raise ExecPluginError(
                f"{self._describe()} exited with status {process.returncode}"
                + unshown
                + (f"; run `{self.command_line}` by hand to read what it says" if unshown else "")
            )
        if stdout.overflowed:
            raise ExecPluginError(
                f"{self._describe()} printed more than {MAX_EXEC_STDOUT_BYTES >> 20} MiB (MAX_EXEC_STDOUT_BYTES), "
                "which is no ExecCredential"
            )
        return self._credential(stdout.text())

    @staticmethod
    def _unshown(stderr: _Drain, wait_s: float = 0) -> str:
        """What a message says of the plugin's stderr off a terminal: that there is some, never what it is. A plugin
        may say its credential there in any words or language (`Passwort falsch: ...`, `the key is ...`), which no
        redaction can tell from its prose; on a terminal the plugin writes to the user directly, as kubectl lets it
        (k8s.io/client-go v0.34.12 plugin/pkg/client/auth/exec/exec.go: the command's Stderr is os.Stderr)."""
        lines = len([line for line in stderr.text(wait_s).decode(errors="replace").splitlines() if line.strip()])
        if not lines:
            return ""
        written = (
            f"more than {KEPT_EXEC_STDERR_BYTES >> 10} KiB"
            if stderr.overflowed
            else f"{lines} line{'s' if lines > 1 else ''}"
        )
        return f" after writing {written} to stderr (not shown: a plugin may print its credential there)"

    def _credential(self, stdout: bytes) -> Credential:
        try:
            printed = parse_json(stdout, "its output")
        except InputError as error:
            raise ExecPluginError(f"{self._describe()} printed no ExecCredential JSON ({error})") from None
        status = printed.get("status") if isinstance(printed, dict) else None
        if not isinstance(status, dict):
            raise ExecPluginError(f"{self._describe()} printed an ExecCredential without a status mapping")
        if printed.get("apiVersion") != self.api_version:
            raise ExecPluginError(
                f"{self._describe()} answered in apiVersion {shown(printed.get('apiVersion'))}, the kubeconfig asks for {shown(self.api_version)}"
            )
        expires = status.get("expirationTimestamp")
        try:
            if expires is not None and not isinstance(expires, str):
                raise ValueError
            expiry = datetime.fromisoformat(expires.replace("Z", "+00:00")) if isinstance(expires, str) else None
        except ValueError:
            # Its output may hold the credential anywhere: the field is named, never quoted.
            raise ExecPluginError(
                f"{self._describe()} printed an expirationTimestamp that is not an RFC 3339 time (such as "
                "2026-01-02T15:04:05Z); the value is not shown"
            ) from None
        if expiry is not None and expiry.tzinfo is None:
            expiry = expiry.replace(tzinfo=UTC)
        token, certificate, key = (status.get(k) for k in ("token", "clientCertificateData", "clientKeyData"))
        if isinstance(token, str) and token:
            if not header_safe(token):
                raise ExecPluginError(f"{self._describe()} printed a token that {NOT_HEADER_SAFE}")
            return Credential(token=token, expires=expiry)
        if isinstance(certificate, str) and isinstance(key, str) and certificate and key:
            self._check_certificate(certificate, key)
            return Credential(client_certificate=certificate, client_key=key, expires=expiry)
        raise ExecPluginError(
            f"{self._describe()} printed neither a token nor a client certificate and key in its status"
        )

    def _check_certificate(self, certificate: str, key: str) -> None:
        """The plugin's client certificate and key, checked as the kubeconfig's own (`check_file_or_data`): PEM, and
        only where TLS presents them; otherwise the run went out with no credential at all. Never quoted."""
        for name, value, pem in (
            ("clientCertificateData", certificate, "CERTIFICATE"),
            ("clientKeyData", key, "PRIVATE KEY"),
        ):
            if PEM_MARKERS[pem].decode() not in value:
                raise ExecPluginError(
                    f"{self._describe()} printed a {name} that is not a PEM {pem.lower()} (no "
                    f"'{PEM_MARKERS[pem].decode()}' marker); the value is not shown"
                )
        if not self.over_tls:
            raise ExecPluginError(
                f"{self._describe()} printed a client certificate (clientCertificateData), which only a TLS handshake "
                "presents, and the server is http://; give the server as https://"
            )
        problem = certificate_problem(certificate.encode(), key.encode())
        if problem is not None:
            raise ExecPluginError(f"{self._describe()} printed clientCertificateData and clientKeyData: {problem}")


def stop(process: subprocess.Popen[bytes], whole_group: bool) -> None:
    """Kills the plugin (and, in its own process group, everything it started) and reaps it."""
    try:
        if whole_group:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except OSError:
        pass  # it ended by itself meanwhile
    process.wait()


class ExecCredentials:
    """The exec plugin's current credential: run at the first request, and again once it expires."""

    def __init__(
        self,
        plugin: ExecPlugin,
        timeout_s: float,
        interactive: bool = False,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.plugin = plugin
        self.timeout_s = timeout_s
        self.interactive = interactive
        self.now = now
        self.credential: Credential | None = None
        self._files: tempfile.TemporaryDirectory[str] | None = None

    def current(self) -> tuple[Credential, bool]:
        """The credential to use, and whether it is new since the last call (so the caller installs it)."""
        if self.credential is not None and self.credential.usable(self.now()):
            return self.credential, False
        self.credential = self.plugin.run(self.timeout_s, self.interactive)
        return self.credential, True

    def certificate_files(self, credential: Credential) -> tuple[str, str]:
        """The client certificate and key written to a private directory removed when the run ends."""
        if self._files is None:
            self._files = tempfile.TemporaryDirectory(prefix="tools-verify-")
        paths = []
        for name, content in (("client.crt", credential.client_certificate), ("client.key", credential.client_key)):
            path = Path(self._files.name) / name
            path.write_text(content or "")
            path.chmod(0o600)
            paths.append(str(path))
        return paths[0], paths[1]


@dataclass(frozen=True)
class Kubeconfig:
    """The chosen context, its cluster and its user, checked; `exec` is None without an exec plugin to run."""

    files: tuple[Path, ...]
    context: Named
    cluster: Named
    user: Named | None
    server: str
    exec: ExecPlugin | None
    token: str | None = None
    # What a 401 means here: the credential this kubeconfig sends, named (`credential_refused`).
    refused: str = "the API server refused the kubeconfig's credential"

    def client_config(self) -> ConfigNode:
        """What the client's KubeConfigLoader reads: each entry keeps its file, so relative paths resolve there.

        The token is handed over as read and checked here (`tokenFile` trimmed), never as the file to read again.
        """
        user_body = {
            key: value
            for key, value in (self.user.body if self.user else {}).items()
            if key not in ("exec", "token", "tokenFile")
        }
        if self.token is not None:
            user_body["token"] = self.token
        contexts = [self._node(self.context, "context", self.context.body)]
        clusters = [self._node(self.cluster, "cluster", self.cluster.body)]
        users = [self._node(self.user, "user", user_body)] if self.user is not None else []
        return ConfigNode(
            str(self.files[0]),
            {"current-context": self.context.name, "contexts": contexts, "clusters": clusters, "users": users},
            str(self.files[0]),
        )

    @staticmethod
    def _node(entry: Named, key: str, body: Mapping[str, Any]) -> ConfigNode:
        return ConfigNode(
            f"{entry.source}/{key}s[name={entry.name}]", {"name": entry.name, key: dict(body)}, str(entry.source)
        )


def kubeconfig_files(path: str | None) -> tuple[Path, ...]:
    """--kubeconfig, else every existing file of $KUBECONFIG, else ~/.kube/config."""
    if path:
        return (Path(path).expanduser(),)
    listed = os.environ.get("KUBECONFIG", "")
    if listed.strip():
        candidates = [Path(item).expanduser() for item in listed.split(os.pathsep) if item.strip()]
        existing = tuple(candidate for candidate in candidates if candidate.exists())
        if not existing:
            raise KubeconfigError(f"kubeconfig $KUBECONFIG={listed}: none of its files exist; {WRITE_IT}")
        return existing
    return (Path(DEFAULT_KUBECONFIG).expanduser(),)


def first_by_name(entries: list[Named]) -> dict[str, Named]:
    found: dict[str, Named] = {}
    for entry in entries:
        found.setdefault(entry.name, entry)
    return found


def names(entries: Mapping[str, Named]) -> str:
    return ", ".join(map(shown, sorted(entries))) or "none"


def load_kubeconfig(path: str | None, context: str | None = None) -> Kubeconfig:
    """Reads and checks the kubeconfig down to what the chosen context uses; every problem is a KubeconfigError."""
    files = kubeconfig_files(path)
    documents = [(file, read_document(file)) for file in files]
    sections: dict[str, list[Named]] = {"contexts": [], "clusters": [], "users": []}
    current: tuple[str, Path] | None = None
    for file, document in documents:
        for section, body_key in (("contexts", "context"), ("clusters", "cluster"), ("users", "user")):
            sections[section] += named_entries(document, file, section, body_key)
        chosen = document.get("current-context")
        if chosen not in (None, "") and not isinstance(chosen, str):
            raise KubeconfigError(f"kubeconfig {file}: current-context is {kind_of(chosen)}, not a context name")
        if chosen and current is None:
            current = (chosen, file)
    where = str(files[0]) if len(files) == 1 else f"$KUBECONFIG ({os.pathsep.join(map(str, files))})"
    contexts, clusters, users = (first_by_name(sections[key]) for key in ("contexts", "clusters", "users"))
    if context:
        name, named_in = context, f"--context {shown(context)}"
    elif current is not None:
        name, named_in = current[0], f"current-context in {current[1]}"
    else:
        raise KubeconfigError(
            f"kubeconfig {where}: no current-context and no --context given (contexts: {names(contexts)})"
        )
    chosen_context = contexts.get(name)
    if chosen_context is None:
        raise KubeconfigError(
            f"kubeconfig {where}: no context named {shown(name)} ({named_in}; contexts: {names(contexts)})"
        )
    cluster_name = field(chosen_context, "context", "cluster", str, required=True)
    user_name = field(chosen_context, "context", "user", str)
    cluster = clusters.get(cluster_name)
    if cluster is None:
        raise KubeconfigError(
            f"kubeconfig {chosen_context.source}: context {shown(name)} names cluster {shown(cluster_name)}, "
            f"which no clusters entry defines (clusters: {names(clusters)})"
        )
    server = check_cluster(cluster)
    user = users.get(user_name) if user_name else None
    if user_name and user is None:
        raise KubeconfigError(
            f"kubeconfig {chosen_context.source}: context {shown(name)} names user {shown(user_name)}, "
            f"which no users entry defines (users: {names(users)})"
        )
    plugin, token, token_where = None, None, None
    if user is not None:
        token, token_where = check_user(user)
        # The client prefers a token over exec; so does this.
        if user.body.get("exec") is not None and token is None:
            plugin = ExecPlugin.from_user(user, cluster)
    check_credential_transport(cluster, server, user, token is not None or plugin is not None)
    if user is not None:
        check_client_certificate(user)
    refused = credential_refused(user, token_where, plugin)
    return Kubeconfig(files, chosen_context, cluster, user, server, plugin, token, refused)
