"""The verifier against hostile input: it never hangs and never ends in a traceback.

An API server that accepts connections and never answers, an exec credential command that
never returns (a `nebius` CLI waiting for a browser login), and every kind of malformed
kubeconfig each end in one message naming the server URL, the command or the file, and exit
status 2. The servers here listen on 127.0.0.1 only and are stopped by each test; the
plugins are tiny shell scripts in the test's temporary directory.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.server
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from kubernetes import client

from components.shown import shown
from tests.kubeconfigs import EXEC_API, exec_user, kubeconfig_text, script
from tools.verify import __main__ as cli
from tools.verify.cluster import ClusterError, ClusterUnreachableError, KubeCluster, UnusableAnswerError
from tools.verify.kubeconfig import ExecPlugin, ExecPluginError, load_kubeconfig

# A bound on waiting, not on speed: the limits under test are 0.5 s and 1 s, and the messages say which one
# fired; it stays below the 30 s limits these tests set as the ones that must not fire, with room for a
# 2-core machine loaded tenfold (5 s, the bound before issue 38, is 10x the limit, within reach of such load).
BOUND_S = 20.0


@pytest.fixture(scope="module", autouse=True)
def warm_client() -> None:
    """The client builds its API classes on first use (seconds); pay that before any test measures time."""
    KubeCluster(client.ApiClient())


class SilentServer:
    """A TCP server on 127.0.0.1 that accepts every connection and never sends a byte."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.05)
        self.port = self.listener.getsockname()[1]
        self.accepted: list[socket.socket] = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.handle(connection)

    def handle(self, connection: socket.socket) -> None:
        self.accepted.append(connection)

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=2)
        self.listener.close()
        for connection in self.accepted:
            connection.close()


@pytest.fixture
def silent_server() -> Iterator[SilentServer]:
    server = SilentServer()
    yield server
    server.stop()


def write_kubeconfig(tmp_path: Path, server: str, user: dict[str, Any] | None = None) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(kubeconfig_text(server, user))
    return path


def gone(pid: int) -> bool:
    """No such process, or only its zombie waiting for an init that does not reap."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return status.rsplit(")", 1)[1].split()[0] == "Z"


def wait_gone(pids: list[int]) -> list[int]:
    """The processes still there after BOUND_S: the wait ends as soon as all are gone, so a loaded machine only waits."""
    deadline = time.monotonic() + BOUND_S
    while time.monotonic() < deadline and not all(gone(pid) for pid in pids):
        time.sleep(0.02)
    return [pid for pid in pids if not gone(pid)]


def run_cli(*args: str) -> tuple[int, float]:
    started = time.monotonic()
    status = cli.main(["--stack", "dev", "--skip-smoke", *args])
    return status, time.monotonic() - started


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_an_api_server_that_accepts_and_never_answers_fails_within_the_request_timeout(
    scheme, silent_server, tmp_path, capsys
):
    server = f"{scheme}://127.0.0.1:{silent_server.port}"
    kubeconfig = write_kubeconfig(tmp_path, server)
    report = tmp_path / "verify.json"
    status, elapsed = run_cli("--kubeconfig", str(kubeconfig), "--request-timeout", "0.5", "--json", str(report))
    assert status == 2
    assert elapsed < BOUND_S
    shown = capsys.readouterr()
    assert "FAIL [1/15] Read the cluster: the cluster could not be reached" in shown.err
    assert f"list nodes: the API server {server} did not answer within 0.5s (--request-timeout)" in shown.err
    assert silent_server.accepted, "the client connected and then waited for an answer"
    assert "Traceback" not in shown.err
    written = json.loads(report.read_text())
    assert (written["passed"], written["unreachable"]) == (False, True)
    assert [c["status"] for c in written["checks"]][:2] == ["fail", "skip"]


def test_the_exec_stream_to_a_server_that_never_answers_gives_up_after_the_request_timeout(silent_server, tmp_path):
    server = f"http://127.0.0.1:{silent_server.port}"
    cluster = KubeCluster.from_kubeconfig(str(write_kubeconfig(tmp_path, server)), request_timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(ClusterUnreachableError, match=rf"exec nvidia-smi -L in dra-samples/p: the API server {server}"):
        cluster.exec_in_pod("dra-samples", "p", "smoke", ["nvidia-smi", "-L"])
    assert time.monotonic() - started < BOUND_S


def test_a_refused_connection_names_the_server_and_exits_2(tmp_path, capsys):
    with socket.create_server(("127.0.0.1", 0)) as closed:
        port = closed.getsockname()[1]
    status, _ = run_cli("--kubeconfig", str(write_kubeconfig(tmp_path, f"http://127.0.0.1:{port}")))
    assert status == 2
    assert f"cannot reach the API server http://127.0.0.1:{port}" in capsys.readouterr().err


def test_an_exec_plugin_that_never_returns_is_killed_with_its_children_after_its_timeout(tmp_path, capsys):
    pids = tmp_path / "pids"
    plugin = script(
        tmp_path,
        "login.sh",
        'echo "open https://auth.example/login in a browser" >&2\nsleep 300 &\necho $$ $! > "$PIDS"\nwait\n',
    )
    kubeconfig = write_kubeconfig(tmp_path, "http://127.0.0.1:9", exec_user("./login.sh", {"PIDS": str(pids)}))
    status, elapsed = run_cli("--kubeconfig", str(kubeconfig), "--exec-plugin-timeout", "1")
    assert status == 2
    assert elapsed < BOUND_S
    shown = capsys.readouterr().err
    # Its own heading: the credential command failed, nothing was sent (hostile review, issue 37).
    assert "FAIL [1/15] Read the cluster: the kubeconfig's credential command failed" in shown
    assert "could not be reached" not in shown and "an answer within the time limit" not in shown
    assert "the exec credential command `./login.sh --profile dev`" in shown
    assert "did not finish within 1s (--exec-plugin-timeout)" in shown
    assert "after writing 1 line to stderr (not shown: a plugin may print its credential there)" in shown
    assert "auth.example" not in shown
    assert plugin.exists()
    assert wait_gone([int(pid) for pid in pids.read_text().split()]) == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("head -c 67108864 /dev/zero | tr '\\0' x >&2\necho >&2\necho 'login failed: no profile' >&2\nexit 3\n",
         "exited with status 3 after writing more than 64 KiB to stderr (not shown"),
        ("head -c 67108864 /dev/zero | tr '\\0' x\n", "printed more than 1 MiB (MAX_EXEC_STDOUT_BYTES)"),
    ],
    ids=["stderr", "stdout"],
)  # fmt: skip
def test_an_exec_plugin_that_floods_its_output_is_read_in_bounded_memory(tmp_path, body, message):
    """64 MiB on stderr (counted, never quoted) or on stdout (no credential is that long): what is kept of either
    stays bounded, where reading it all held every byte."""
    script(tmp_path, "get-token.sh", body)
    plugin = ExecPlugin(
        command="./get-token.sh",
        args=(),
        env=(),
        api_version=EXEC_API,
        directory=tmp_path,
        source=tmp_path / "kubeconfig",
        user="u",
    )
    tracemalloc.start()
    try:
        with pytest.raises(ExecPluginError, match=re.escape(message)):
            plugin.run(timeout_s=BOUND_S)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, peak


def test_ctrl_c_while_the_exec_plugin_runs_kills_it_and_exits_130(tmp_path, capsys):
    pids = tmp_path / "pids"
    script(tmp_path, "login.sh", 'sleep 300 &\necho $$ $! > "$PIDS"\nwait\n')
    kubeconfig = write_kubeconfig(tmp_path, "http://127.0.0.1:9", exec_user("./login.sh", {"PIDS": str(pids)}))
    started, done = threading.Event(), threading.Event()

    def interrupt_once_the_plugin_runs() -> None:
        # Ctrl-C while the plugin runs, known by the pids it wrote, not after a guessed delay: on a loaded machine
        # a fixed 0.5 s once came before the plugin had started (a flake of issue 38).
        while not done.is_set():
            if pids.exists() and len(pids.read_text().split()) == 2:
                started.set()
                os.kill(os.getpid(), signal.SIGINT)
                return
            done.wait(0.02)

    interrupt = threading.Thread(target=interrupt_once_the_plugin_runs, daemon=True)
    interrupt.start()
    try:
        status, elapsed = run_cli("--kubeconfig", str(kubeconfig), "--exec-plugin-timeout", "30")
    finally:
        done.set()
        interrupt.join()
    assert started.is_set(), "the verifier ended before its exec plugin had started"
    assert status == 130
    assert elapsed < BOUND_S
    out = capsys.readouterr().out
    assert "passed" not in out
    assert wait_gone([int(pid) for pid in pids.read_text().split()]) == []


def test_an_exec_plugin_whose_background_process_holds_its_output_is_given_up_at_its_timeout(tmp_path, capsys):
    """Attack round 4: a plugin that answered and exited, leaving `setsid sleep 120 &` (outside its process group, so
    not killed with it) on its stdout, kept the run for the sleep's 120 s, past --exec-plugin-timeout, --run-timeout
    and SIGTERM (closing the pipe waited for the read in progress), then blamed a login."""
    pids = tmp_path / "pids"
    credential = json.dumps({"apiVersion": EXEC_API, "kind": "ExecCredential", "status": {"token": "t"}})
    script(tmp_path, "login.sh", f"setsid sleep 120 &\necho $! > \"$PIDS\"\necho '{credential}'\n")
    kubeconfig = write_kubeconfig(tmp_path, "http://127.0.0.1:9", exec_user("./login.sh", {"PIDS": str(pids)}))
    try:
        status, elapsed = run_cli("--kubeconfig", str(kubeconfig), "--exec-plugin-timeout", "1")
        err = capsys.readouterr().err
    finally:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(pids.read_text()), signal.SIGKILL)
    assert status == 2
    assert elapsed < BOUND_S
    assert "exited with status 0, but a process it started still held its output open 1s (--exec-plugin-timeout)" in err
    assert "waits for a login" not in err


def test_ctrl_c_while_the_plugin_is_being_started_stops_it_once_it_has_started(tmp_path, monkeypatch):
    """Ctrl-C between the fork and Popen's return (one came there on a loaded machine) raised out of Popen, leaving
    the plugin with nothing to stop it; held until the handle exists, it stops the plugin."""
    pids = tmp_path / "pids"
    script(tmp_path, "get-token.sh", 'sleep 300 &\necho $$ $! > "$PIDS"\nwait\n')
    real_popen = subprocess.Popen

    def popen_interrupted_before_it_returns(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        process = real_popen(*args, **kwargs)
        deadline = time.monotonic() + BOUND_S
        while time.monotonic() < deadline and len(pids.read_text().split() if pids.exists() else []) < 2:
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # the handler runs here, inside Popen as far as the caller knows
        return process

    monkeypatch.setattr(subprocess, "Popen", popen_interrupted_before_it_returns)
    plugin = ExecPlugin(
        command="./get-token.sh",
        args=(),
        env=(("PIDS", str(pids)),),
        api_version=EXEC_API,
        directory=tmp_path,
        source=tmp_path / "kubeconfig",
        user="u",
    )
    with pytest.raises(KeyboardInterrupt):
        plugin.run(timeout_s=BOUND_S)
    assert wait_gone([int(pid) for pid in pids.read_text().split()]) == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "echo 'error: not logged in, run nebius profile create' >&2\nexit 1\n",
            "exited with status 1 after writing 1 line to stderr (not shown: a plugin may print its credential there); "
            "run `./get-token.sh --profile dev` by hand to read what it says",
        ),
        ("echo 'Welcome!'\n", "printed no ExecCredential JSON"),
        (
            'echo \'{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": {"token": "t"}}\'\n',
            "answered in apiVersion",
        ),
        (
            f'echo \'{{"apiVersion": "{EXEC_API}", "kind": "ExecCredential", "status": {{}}}}\'\n',
            "printed neither a token",
        ),
    ],
    ids=["exits-1", "not-json", "wrong-api-version", "no-token"],
)
def test_an_exec_plugin_that_fails_names_the_command(tmp_path, capsys, body, message):
    script(tmp_path, "get-token.sh", body)
    kubeconfig = write_kubeconfig(tmp_path, "http://127.0.0.1:9", exec_user("./get-token.sh"))
    status, _ = run_cli("--kubeconfig", str(kubeconfig))
    assert status == 2
    shown = capsys.readouterr().err
    assert "the exec credential command `./get-token.sh --profile dev`" in shown
    assert message in shown


def test_an_exec_plugin_missing_from_path_is_named(tmp_path, capsys):
    kubeconfig = write_kubeconfig(tmp_path, "http://127.0.0.1:9", exec_user("nebius-not-installed-here"))
    assert run_cli("--kubeconfig", str(kubeconfig))[0] == 2
    assert "`nebius-not-installed-here --profile dev`" in capsys.readouterr().err


# What an API server answers a list of each with (the captured tests/data/captured/resourceslices-*.json: kind
# ResourceSliceList, apiVersion resource.k8s.io/v1), by the path's last segment.
LIST_KINDS = {"nodes": "NodeList", "deviceclasses": "DeviceClassList"}


class TokenServer(http.server.BaseHTTPRequestHandler):
    """Answers every GET with an empty list and records the Authorization header it got."""

    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.seen.append(self.headers.get("Authorization", ""))
        plural = self.path.split("?")[0].rsplit("/", 1)[-1]
        version = "v1" if plural == "nodes" else "resource.k8s.io/v1"
        data = json.dumps({"kind": LIST_KINDS[plural], "apiVersion": version, "items": []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_args: Any) -> None:
        return


@pytest.fixture
def token_server() -> Iterator[str]:
    TokenServer.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), TokenServer)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    ("expiry", "tokens"), [("2999-01-01T00:00:00Z", ["1", "1"]), ("2000-01-01T00:00:00Z", ["1", "2"])]
)
def test_the_exec_plugin_token_reaches_the_server_and_is_renewed_once_it_expires(
    token_server, tmp_path, expiry, tokens
):
    script(
        tmp_path,
        "get-token.sh",
        'echo x >> runs\nn=$(wc -l < runs | tr -d " ")\n'
        f'echo "{{\\"apiVersion\\": \\"{EXEC_API}\\", \\"kind\\": \\"ExecCredential\\", '
        f'\\"status\\": {{\\"token\\": \\"tok-$n\\", \\"expirationTimestamp\\": \\"{expiry}\\"}}}}"\n',
    )
    cluster = KubeCluster.from_kubeconfig(str(write_kubeconfig(tmp_path, token_server, exec_user("./get-token.sh"))))
    assert cluster.list_nodes() == [] and cluster.list_device_classes() == []
    assert TokenServer.seen == [f"Bearer tok-{n}" for n in tokens]


def test_kubernetes_exec_info_tells_the_plugin_it_may_not_prompt(tmp_path):
    script(tmp_path, "get-token.sh", 'printf "%s" "$KUBERNETES_EXEC_INFO" > info.json\nexit 1\n')
    user = exec_user("./get-token.sh")
    config = load_kubeconfig(str(write_kubeconfig(tmp_path, "http://127.0.0.1:9", user)))
    assert isinstance(config.exec, ExecPlugin)
    with pytest.raises(ExecPluginError, match="exited with status 1"):
        config.exec.run(timeout_s=5)
    assert json.loads((tmp_path / "info.json").read_text())["spec"] == {"interactive": False}


VALID: dict[str, Any] = yaml.safe_load(kubeconfig_text("https://127.0.0.1:6443"))


def changed(change: Any) -> str:
    document = json.loads(json.dumps(VALID))
    change(document)
    return yaml.safe_dump(document)


def set_path(path: str, value: Any) -> Any:
    """`clusters.0.cluster.server` -> set that field; a value of DELETE removes it."""

    def apply(document: Any) -> None:
        *parents, last = path.split(".")
        for part in parents:
            document = document[int(part)] if isinstance(document, list) else document[part]
        key: Any = int(last) if isinstance(document, list) else last
        if value is DELETE:
            del document[key]
        else:
            document[key] = value

    return apply


DELETE = object()
# Only their PEM markers are read before a TLS handshake; a handshake would refuse these.
PEM_CERTIFICATE = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n").decode()
PEM_KEY = base64.b64encode(b"-----BEGIN PRIVATE KEY-----\nMA==\n-----END PRIVATE KEY-----\n").decode()

MALFORMED = {
    "invalid-yaml": ("clusters: [\n  {name: c\n", "not valid YAML"),
    "mapping-value-error": (
        "current-context: x: y\n",
        "not valid YAML: mapping values are not allowed in this context at line 1",
    ),
    "top-level-list": ("- clusters\n- users\n", "the top level is a list, not a mapping"),
    "top-level-string": ("just some text\n", "the top level is a string, not a mapping"),
    "empty": ("", "the file is empty"),
    "cluster-as-string": (
        changed(set_path("clusters.0.cluster", "https://127.0.0.1:6443")),
        'cluster "c": cluster is a string, not a mapping',
    ),
    "clusters-as-mapping": (changed(set_path("clusters", {"c": {}})), "clusters is a mapping, not a list"),
    "context-entry-as-string": (changed(set_path("contexts.0", "x")), "contexts[0] is a string, not a mapping"),
    "user-without-name": (changed(set_path("users.0.name", DELETE)), "users[0] has no name"),
    "context-without-body": (changed(set_path("contexts.0.context", DELETE)), 'context "x": has no context'),
    "no-current-context": (
        changed(set_path("current-context", DELETE)),
        'no current-context and no --context given (contexts: "x")',
    ),
    "current-context-as-list": (changed(set_path("current-context", ["x"])), "current-context is a list"),
    "unknown-current-context": (changed(set_path("current-context", "y")), 'no context named "y"'),
    "context-without-cluster": (changed(set_path("contexts.0.context.cluster", DELETE)), 'context "x" has no cluster'),
    "unknown-cluster": (changed(set_path("contexts.0.context.cluster", "d")), 'names cluster "d", which no clusters'),
    "unknown-user": (changed(set_path("contexts.0.context.user", "v")), 'names user "v", which no users'),
    "no-server": (changed(set_path("clusters.0.cluster.server", DELETE)), 'cluster "c" has no server'),
    "server-not-a-url": (
        changed(set_path("clusters.0.cluster.server", "127.0.0.1:6443")),
        'server "127.0.0.1:6443" is not an http(s) URL',
    ),
    # Hostile review: a port past 65535 was taken.
    "server-port-past-65535": (
        changed(set_path("clusters.0.cluster.server", "https://127.0.0.1:99999")),
        'server "https://127.0.0.1:99999": its port is not a whole number from 1 to 65535',
    ),
    "server-port-zero": (
        changed(set_path("clusters.0.cluster.server", "https://[::1]:0/")),
        ": its port is not a whole number from 1 to 65535",
    ),
    "server-as-number": (changed(set_path("clusters.0.cluster.server", 6443)), "server is a number, not a string"),
    "skip-tls-as-string": (
        changed(set_path("clusters.0.cluster.insecure-skip-tls-verify", "yes please")),
        "insecure-skip-tls-verify is a string, not a boolean",
    ),
    "ca-data-not-base64": (
        changed(set_path("clusters.0.cluster.certificate-authority-data", "abc")),
        "certificate-authority-data is not base64",
    ),
    "ca-file-missing": (
        changed(set_path("clusters.0.cluster.certificate-authority", "ca.crt")),
        'certificate-authority "ca.crt" does not exist (relative paths are read from',
    ),
    "exec-as-string": (changed(set_path("users.0.user", {"exec": "nebius"})), "exec is a string, not a mapping"),
    "exec-without-command": (
        changed(set_path("users.0.user", {"exec": {"apiVersion": EXEC_API}})),
        'exec of user "u" has no command',
    ),
    "exec-without-api-version": (
        changed(set_path("users.0.user", {"exec": {"command": "nebius"}})),
        'exec of user "u" has no apiVersion',
    ),
    "exec-args-as-string": (
        changed(set_path("users.0.user", {"exec": {"apiVersion": EXEC_API, "command": "nebius", "args": "a b"}})),
        "args is a string, not a list",
    ),
    "exec-env-without-value": (
        changed(
            set_path("users.0.user", {"exec": {"apiVersion": EXEC_API, "command": "nebius", "env": [{"name": "A"}]}})
        ),
        "exec env[0] is not a mapping with string name and value",
    ),
    # Hostile review a37 F3: impersonation and an auth-provider were dropped without a word, so the run went out as
    # another identity than the kubeconfig names, or with none.
    **{
        f"user-{key}": (
            changed(set_path(f"users.0.user.{key}", value)),
            f'user "u": {named}; the verifier supports token, tokenFile, client-certificate(-data)',
        )
        for key, value, named in (
            ("as", "admin", "as impersonates another identity, which the verifier does not do"),
            (
                "as-groups",
                ["system:masters"],
                "as-groups impersonates another identity, which the verifier does not do",
            ),
            ("impersonate", "admin", "'impersonate' is not a field of a kubeconfig user"),
            (
                "auth-provider",
                {"name": "oidc", "config": {"id-token": "x"}},
                "auth-provider 'oidc' is not run by the verifier (its requests would carry no credential)",
            ),
        )
    },
    # Hostile review a37 F4: the client appends the API path after the query, so every request went to the root.
    "server-query": (
        changed(set_path("clusters.0.cluster.server", "https://127.0.0.1:6443/?access_token=Q")),
        "server https://127.0.0.1:6443/ has a query or a fragment (after '?' or '#', not shown), which the API path "
        "cannot follow; give the API server's URL, with a base path at most (https://api.example.com:6443/base)",
    ),
    "server-fragment": (
        changed(set_path("clusters.0.cluster.server", "https://127.0.0.1:6443/base#F")),
        "server https://127.0.0.1:6443/base has a query or a fragment",
    ),
    # kubectl refuses the pair (client-go transport.TLSConfigFor); hostile round three (a37 N2) saw it accepted.
    "insecure-beside-a-ca": (
        changed(
            lambda document: [
                set_path("clusters.0.cluster.insecure-skip-tls-verify", True)(document),
                set_path("clusters.0.cluster.certificate-authority-data", "Y2E=")(document),
            ]
        ),
        "insecure-skip-tls-verify is true beside a certificate-authority, which kubectl refuses",
    ),
    "server-userinfo": (
        changed(set_path("clusters.0.cluster.server", "https://u:p@127.0.0.1:6443")),
        "server holds a user name or password before its host, which the verifier does not send",
    ),
}


@pytest.mark.parametrize(("text", "message"), MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_kubeconfig_is_one_line_naming_the_file_and_the_problem(tmp_path, capsys, text, message):
    path = tmp_path / "kubeconfig"
    path.write_text(text)
    assert run_cli("--kubeconfig", str(path))[0] == 2
    shown = capsys.readouterr()
    assert shown.out == ""
    assert shown.err.startswith(f"error: kubeconfig {path}")
    assert shown.err.count("\n") == 1, shown.err
    assert message in shown.err


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda path: None, "no such file; write it with `pulumi stack output kubeconfig"),
        (lambda path: path.mkdir(), "it is a directory, not a regular file"),
        (lambda path: path.write_bytes(b"\xff\xfe\x00\x01binary"), "not a text file (not UTF-8)"),
    ],
    ids=["missing", "directory", "binary"],
)
def test_a_kubeconfig_that_is_not_a_readable_file_is_one_line(tmp_path, capsys, make, message):
    path = tmp_path / "kubeconfig"
    make(path)
    assert run_cli("--kubeconfig", str(path))[0] == 2
    err = capsys.readouterr().err
    # A directory is refused as the flag's path, before the file is read; the rest by the kubeconfig's reader.
    named = "--kubeconfig" if "directory" in message else "kubeconfig"
    # The flag's check quotes the path (`shown`); the kubeconfig's reader names it as its label.
    assert err.startswith(f"error: {named} {shown(str(path)) if named == '--kubeconfig' else path}: {message}")
    assert err.count("\n") == 1


def test_an_unknown_context_flag_lists_the_contexts(tmp_path, capsys):
    path = write_kubeconfig(tmp_path, "https://127.0.0.1:6443")
    assert run_cli("--kubeconfig", str(path), "--context", "nope")[0] == 2
    assert 'no context named "nope" (--context "nope"; contexts: "x")' in capsys.readouterr().err


def test_kubeconfig_from_the_environment_merges_files_and_names_them_when_none_exists(tmp_path, monkeypatch, capsys):
    first, second = tmp_path / "a", tmp_path / "b"
    document = yaml.safe_load(kubeconfig_text("https://127.0.0.1:6443"))
    first.write_text(yaml.safe_dump({k: v for k, v in document.items() if k != "users"}))
    second.write_text(yaml.safe_dump({"users": document["users"], "current-context": "elsewhere"}))
    monkeypatch.setenv("KUBECONFIG", f"{first}{os.pathsep}{tmp_path / 'absent'}{os.pathsep}{second}")
    merged = load_kubeconfig(None)
    assert (merged.context.name, merged.server, merged.user and merged.user.source) == (
        "x",
        "https://127.0.0.1:6443",
        second,
    )
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'absent'}{os.pathsep}{tmp_path / 'gone'}")
    assert run_cli()[0] == 2
    assert "$KUBECONFIG=" in capsys.readouterr().err


def test_relative_certificate_paths_are_read_next_to_the_kubeconfig(tmp_path, monkeypatch):
    (tmp_path / "ca.crt").write_bytes(base64.b64decode(PEM_CERTIFICATE))
    document = yaml.safe_load(kubeconfig_text("https://127.0.0.1:6443"))
    document["clusters"][0]["cluster"]["certificate-authority"] = "ca.crt"
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(document))
    monkeypatch.chdir("/")
    cluster = KubeCluster.from_kubeconfig(str(path))
    assert cluster.api_client.configuration.ssl_ca_cert == str(tmp_path / "ca.crt")
    assert cluster.server == "https://127.0.0.1:6443"


@pytest.mark.parametrize(
    "flag", ["--request-timeout", "--exec-plugin-timeout", "--timeout", "--metrics-timeout", "--run-timeout"]
)
@pytest.mark.parametrize("value", ["0", "-1", "soon", "inf", "nan"])
def test_the_time_limits_must_be_positive_seconds(flag, value, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.parse_args([flag, value])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f'argument {flag}: "{value}"' in err
    assert "positive number of seconds" in err or "not a number of seconds" in err


def test_the_kubeconfig_error_is_a_cluster_error_for_callers():
    with pytest.raises(ClusterError, match="no such file"):
        KubeCluster.from_kubeconfig("/nonexistent/kubeconfig")


FORGED_TOKEN = "tok-s3cr3t\nX-Injected: 1"


def assert_secret_absent(secret: str, *texts: str) -> None:
    """No part of the credential, raw or as Python or JSON would quote it, reaches any output."""
    for text in texts:
        for form in (secret, repr(secret)[1:-1], json.dumps(secret)[1:-1], "tok-s3cr3t"):
            assert form not in text


def test_a_kubeconfig_token_a_header_cannot_carry_is_refused_by_user_and_field_never_shown(tmp_path, capsys):
    report = tmp_path / "verify.json"
    kubeconfig = write_kubeconfig(tmp_path, "http://127.0.0.1:9", {"token": FORGED_TOKEN})
    assert run_cli("--kubeconfig", str(kubeconfig), "--json", str(report))[0] == 2
    shown = capsys.readouterr()
    assert f'kubeconfig {kubeconfig}: user "u": token holds a character an HTTP Authorization header' in shown.err
    assert "not shown" in shown.err
    assert_secret_absent(FORGED_TOKEN, shown.out, shown.err, report.read_text() if report.exists() else "")


def test_an_exec_plugin_token_a_header_cannot_carry_is_refused_never_shown(tmp_path, capsys):
    credential = {"apiVersion": EXEC_API, "kind": "ExecCredential", "status": {"token": FORGED_TOKEN}}
    script(tmp_path, "get-token.sh", f"cat <<'JSON'\n{json.dumps(credential)}\nJSON\n")
    report = tmp_path / "verify.json"
    kubeconfig = write_kubeconfig(tmp_path, "http://127.0.0.1:9", exec_user("./get-token.sh"))
    assert run_cli("--kubeconfig", str(kubeconfig), "--json", str(report))[0] == 2
    shown = capsys.readouterr()
    assert "the exec credential command `./get-token.sh --profile dev`" in shown.err
    assert "printed a token that holds a character an HTTP Authorization header cannot carry" in shown.err
    assert_secret_absent(FORGED_TOKEN, shown.out, shown.err, report.read_text())


def test_a_token_file_is_read_trimmed_as_client_go_reads_it(token_server, tmp_path):
    (tmp_path / "token").write_text("tok-from-file\n")
    kubeconfig = write_kubeconfig(tmp_path, token_server, {"tokenFile": "token"})
    assert KubeCluster.from_kubeconfig(str(kubeconfig)).list_nodes() == []
    assert TokenServer.seen == ["Bearer tok-from-file"]


def test_a_token_file_with_a_newline_inside_is_refused_by_name(tmp_path, capsys):
    (tmp_path / "token").write_text(FORGED_TOKEN)
    kubeconfig = write_kubeconfig(tmp_path, "http://127.0.0.1:9", {"tokenFile": "token"})
    assert run_cli("--kubeconfig", str(kubeconfig))[0] == 2
    shown = capsys.readouterr()
    assert 'user "u": the content of tokenFile token holds a character' in shown.err
    assert_secret_absent(FORGED_TOKEN, shown.out, shown.err)


class ScriptedServer(SilentServer):
    """A TCP server on 127.0.0.1 whose every connection is answered by `answer(connection)` on a thread of its own.

    The connection is closed after one answer, so a complete answer says `Connection: close` (RFC 9112 section 9.6):
    without it the client's pool may send its next request on the connection this server is closing, and the run
    reads as an unreachable cluster or not, by the race between the two threads (once CI's verdict on one commit).
    """

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        super().__init__()
        self.url = f"http://127.0.0.1:{self.port}"

    def handle(self, connection: socket.socket) -> None:
        threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            try:
                connection.recv(65536)
                self.answer(connection, self.stopping)
            except OSError:
                return  # the client gave up and shut the connection down


@pytest.fixture
def scripted() -> Iterator[Any]:
    servers: list[ScriptedServer] = []

    def start(answer: Any) -> ScriptedServer:
        servers.append(ScriptedServer(answer))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def drip_headers(connection: socket.socket, stopping: threading.Event) -> None:
    for byte in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: " + b"a" * 10000:
        if stopping.wait(0.05):
            return
        connection.sendall(bytes([byte]))


def drip_body(connection: socket.socket, stopping: threading.Event) -> None:
    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
    while not stopping.wait(0.05):
        connection.sendall(b" ")


def endless_chunks(status: bytes) -> Any:
    """An answer of `status` whose chunked body never ends."""

    def answer(connection: socket.socket, stopping: threading.Event) -> None:
        connection.sendall(
            b"HTTP/1.1 " + status + b"\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        chunk = b"%x\r\n%s\r\n" % (1 << 20, b" " * (1 << 20))
        while not stopping.is_set():
            connection.sendall(chunk)

    return answer


@pytest.mark.parametrize("answer", [drip_headers, drip_body], ids=["headers", "body"])
def test_a_server_that_drips_its_answer_fails_within_the_request_timeout_not_per_read(
    scripted, tmp_path, capsys, answer
):
    server = scripted(answer)
    status, elapsed = run_cli("--kubeconfig", str(write_kubeconfig(tmp_path, server.url)), "--request-timeout", "1")
    assert status == 2
    assert elapsed < BOUND_S
    assert (
        f"list nodes: the API server {server.url} did not answer within 1s (--request-timeout)"
        in capsys.readouterr().err
    )


# The client reads an error status's body whole before raising; the verifier's REST layer reads it bounded too.
@pytest.mark.parametrize("status", [b"200 OK", b"500 Internal Server Error"], ids=["answer", "error-answer"])
def test_an_endless_chunked_body_is_cut_off_at_the_size_limit(scripted, tmp_path, monkeypatch, status):
    monkeypatch.setattr("tools.verify.cluster.MAX_RESPONSE_BYTES", 4 << 20)
    server = scripted(endless_chunks(status))
    cluster = KubeCluster.from_kubeconfig(str(write_kubeconfig(tmp_path, server.url)), request_timeout_s=30)
    started = time.monotonic()
    with pytest.raises(UnusableAnswerError, match=r"list nodes: the API server .* answered with more than 4 MiB"):
        cluster.list_nodes()
    assert time.monotonic() - started < BOUND_S


def test_the_run_timeout_stops_the_requests_that_would_pass_it(silent_server, tmp_path, capsys):
    kubeconfig = write_kubeconfig(tmp_path, f"http://127.0.0.1:{silent_server.port}")
    status, elapsed = run_cli("--kubeconfig", str(kubeconfig), "--request-timeout", "30", "--run-timeout", "0.5")
    assert status == 2
    assert elapsed < BOUND_S
    assert "list nodes: the API server" in (err := capsys.readouterr().err)
    assert "did not answer within the run's time limit (--run-timeout)" in err


def answer_with(body: bytes) -> Any:
    def answer(connection: socket.socket, _stopping: threading.Event) -> None:
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        connection.sendall(head.encode() + body)

    return answer


GARBAGE = {
    "not-json": (
        b"<html>login</html>",
        "answered with something this verifier cannot read (its answer is not valid JSON",
    ),
    "a-list": (b"[1, 2]", "answered with JSON that is not an object"),
    "items-not-objects": (
        b'{"kind": "NodeList", "apiVersion": "v1", "items": [1, "x"]}',
        "answered with a NodeList whose items are a list with an entry that is not an object",
    ),
    # Each once read as an empty list: no nodes, a verdict on nothing.
    **{
        f"items-{name}": (
            b'{"kind": "NodeList", "apiVersion": "v1", "items": ' + items + b"}",
            f"answered with a NodeList whose items are {kind}, not a list of objects",
        )
        for name, items, kind in (
            ("object", b"{}", "a mapping"),
            ("empty-string", b'""', "a string"),
            ("zero", b"0", "a number"),
            ("false", b"false", "a boolean"),
        )
    },
    # Once counted as pods, DeviceClasses and ResourceSlices: `PASS [1/15] Read the cluster: ... 1 DeviceClasses`.
    "a-nodelist-for-every-list": (
        b'{"kind": "NodeList", "apiVersion": "v1", "items": [{"metadata": {"name": "n"}}]}',
        "answered with NodeList of v1 where PodList of v1 was asked",
    ),
    "kubectls-generic-list": (b'{"kind": "List", "apiVersion": "v1", "items": []}', "List of v1 where NodeList of v1"),
    "no-kind": (b'{"items": []}', "answered with None of None where NodeList of v1 was asked"),
    "empty-object": (b"{}", "None of None where NodeList of v1 was asked"),
    "nested-too-deep": (b"[" * 100000 + b"]" * 100000, "its answer: nested more than 64 levels deep (MAX_DEPTH)"),
    "number-too-long": (b'{"items": [], "n": ' + b"9" * 5000 + b"}", "at most 300 (MAX_DIGITS)"),
}


@pytest.mark.parametrize(("body", "message"), GARBAGE.values(), ids=GARBAGE.keys())
def test_garbage_answers_are_an_unusable_cluster_exit_2_never_a_failed_check(scripted, tmp_path, capsys, body, message):
    status, err, document = verify_against(scripted(answer_with(body)), tmp_path, capsys)
    assert status == 2
    assert "FAIL [1/15] Read the cluster: the cluster's answers could not be used" in err
    assert message in err
    assert "Traceback" not in err
    assert document["unusable"] is True


def verify_against(server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, Any]:
    """(exit status, stderr, JSON report) of a run against `server`, with a kubeconfig pointing at it."""
    report = tmp_path / "verify.json"
    kubeconfig = write_kubeconfig(tmp_path, server.url)
    status = run_cli("--kubeconfig", str(kubeconfig), "--json", str(report))[0]
    return status, capsys.readouterr().err, json.loads(report.read_text())


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"kind": "NodeList", "apiVersion": "kueue.x-k8s.io/v1beta2", "items": [{"metadata": {"name": "n"}}]}',
         "answered with NodeList of kueue.x-k8s.io/v1beta2 where ClusterQueueList of kueue.x-k8s.io/v1beta2 was asked"),
        (b'{"kind": "WorkloadList", "apiVersion": "kueue.x-k8s.io/v1beta2", "items": []}',
         "answered with WorkloadList of kueue.x-k8s.io/v1beta2 where ClusterQueueList"),
        (b'{"kind": "ClusterQueueList", "apiVersion": "kueue.x-k8s.io/v1beta2", "items": {}}',
         "answered with a ClusterQueueList whose items are a mapping, not a list of objects"),
    ],
    ids=["nodelist", "other-kueue-kind", "items-object"],
)  # fmt: skip
def test_a_crd_list_of_another_kind_or_malformed_is_refused_naming_the_resource(scripted, tmp_path, body, message):
    """A CRD-backed list is checked as a built-in one: its kind is `<Kind>List`, its items a list of objects."""
    server = scripted(answer_with(body))
    cluster = KubeCluster.from_kubeconfig(str(write_kubeconfig(tmp_path, server.url)), request_timeout_s=30)
    with pytest.raises(UnusableAnswerError) as refused:
        cluster.list_custom_objects("kueue.x-k8s.io", "v1beta2", "ClusterQueue", "clusterqueues")
    assert str(refused.value).startswith("list clusterqueues.kueue.x-k8s.io: the API server") and message in str(
        refused.value
    )


def test_a_list_whose_items_are_null_is_empty(scripted, tmp_path):
    """Go's encoding/json writes a nil slice as null: that is an empty list, not a malformed one."""
    server = scripted(answer_with(b'{"kind": "NodeList", "apiVersion": "v1", "items": null}'))
    cluster = KubeCluster.from_kubeconfig(str(write_kubeconfig(tmp_path, server.url)), request_timeout_s=30)
    assert cluster.list_nodes() == []


def test_a_small_error_answer_is_still_explained_by_its_status(scripted, tmp_path):
    server = scripted(
        lambda connection, _stopping: connection.sendall(
            b"HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}"
        )
    )
    cluster = KubeCluster.from_kubeconfig(str(write_kubeconfig(tmp_path, server.url)), request_timeout_s=30)
    with pytest.raises(ClusterError, match=r"list nodes: forbidden \(403\)"):
        cluster.list_nodes()


class WebSocketFlood(ScriptedServer):
    """Answers the exec websocket upgrade (v4.channel.k8s.io), then floods stdout: many frames or one endless one."""

    def __init__(self, one_frame: bool) -> None:
        self.one_frame = one_frame
        super().__init__(None)

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            try:
                request = connection.recv(65536).decode("latin-1")
                key = next(
                    line.split(":", 1)[1].strip()
                    for line in request.split("\r\n")
                    if line.lower().startswith("sec-websocket-key:")
                )
                accept = base64.b64encode(hashlib.sha1((key + WEBSOCKET_GUID).encode()).digest()).decode()
                connection.sendall(
                    (
                        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        f"Sec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Protocol: v4.channel.k8s.io\r\n\r\n"
                    ).encode()
                )
                stdout = b"\x01" + b"x" * ((1 << 20) - 1)
                if self.one_frame:
                    connection.sendall(b"\x82\x7f" + (1 << 40).to_bytes(8, "big"))
                while not self.stopping.is_set():
                    connection.sendall(
                        stdout if self.one_frame else b"\x82\x7f" + len(stdout).to_bytes(8, "big") + stdout
                    )
            except OSError:
                return


WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


@pytest.mark.parametrize("one_frame", [False, True], ids=["many-frames", "one-endless-frame"])
def test_an_exec_stream_that_floods_stdout_is_cut_off_at_its_limit(tmp_path, monkeypatch, one_frame):
    monkeypatch.setattr("tools.verify.cluster.MAX_EXEC_OUTPUT_BYTES", 4 << 20)
    server = WebSocketFlood(one_frame)
    try:
        cluster = KubeCluster.from_kubeconfig(str(write_kubeconfig(tmp_path, server.url)), request_timeout_s=30)
        started = time.monotonic()
        with pytest.raises(
            UnusableAnswerError, match=r"exec nvidia-smi -L in dra-samples/p: the pod sent more than 4 MiB"
        ):
            cluster.exec_in_pod("dra-samples", "p", "smoke", ["nvidia-smi", "-L"])
        assert time.monotonic() - started < BOUND_S
    finally:
        server.stop()


def test_text_from_an_api_answer_reaches_the_terminal_escaped(scripted, tmp_path, capsys):
    """An HTTP reason phrase is the server's text; in a finding it is printable, as the plan prints outside text."""
    reason = b"Unavailable \x1b]0;owned\x07\x1b[2J"
    server = scripted(
        lambda connection, _stopping: connection.sendall(
            b"HTTP/1.1 503 " + reason + b"\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
        )
    )
    report = tmp_path / "verify.json"
    assert run_cli("--kubeconfig", str(write_kubeconfig(tmp_path, server.url)), "--json", str(report))[0] != 0
    captured = capsys.readouterr()
    assert "\x1b" not in captured.err + captured.out and "\x07" not in captured.err + captured.out
    assert "Unavailable \\u001b]0;owned\\u0007\\u001b[2J" in captured.err


@pytest.mark.parametrize("section", ["clusters", "contexts", "users"])
def test_a_name_given_twice_in_a_kubeconfig_list_is_refused_naming_it_and_neither_entry_is_quoted(
    section, tmp_path, capsys
):
    """client-go refuses it (tools/clientcmd/api/v1/conversion.go, `duplicate name`); neither entry is shown."""
    document = yaml.safe_load(kubeconfig_text("https://127.0.0.1:9", {"token": "CANARYFIRSTdup"}))
    entry = dict(document[section][0])
    body_key = section[:-1] if section != "users" else "user"
    entry[body_key] = {"token": "CANARYAGAINdup"} if section == "users" else dict(entry[body_key])
    document[section].append(entry)
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(document))
    assert cli.main(["--stack", "dev", "--skip-smoke", "--kubeconfig", str(path)]) == 2
    err = capsys.readouterr().err
    name = document[section][0]["name"]
    assert f'{section} names "{name}" twice, {section}[0] and {section}[1]' in err
    assert "CANARY" not in err


def test_a_refused_run_says_that_no_json_report_was_written(tmp_path, capsys):
    report = tmp_path / "verify.json"
    assert run_cli("--kubeconfig", str(tmp_path / "missing"), "--json", str(report))[0] == 2
    assert f"no report was written to {report} (--json): nothing was checked" in capsys.readouterr().err
    assert not report.exists()


def test_a_json_report_that_cannot_be_written_is_refused_by_name(tmp_path, capsys):
    # /proc takes no new file, as root neither: the run says so, exit 2 (it said nothing, attack 37 F11e), before
    # the cluster is asked anything (hostile review: only at the end of the run, after every check).
    kubeconfig = write_kubeconfig(tmp_path, "http://127.0.0.1:1", {"token": "t"})
    report = Path("/proc/verify-report.json")
    assert run_cli("--kubeconfig", str(kubeconfig), "--json", str(report), "--request-timeout", "2")[0] == 2
    assert (
        f"error: --json {shown(str(report))}: cannot be written: No such file or directory" in capsys.readouterr().err
    )


@pytest.mark.parametrize(
    "server", ["http://127.0.0.1:9/?access_token=CANARY7731K3#CANARY7731K3F", "http://u:CANARY7731K2@127.0.0.1:9"]
)
def test_a_server_url_with_a_query_or_userinfo_is_refused_without_quoting_it(tmp_path, capsys, server):
    assert run_cli("--kubeconfig", str(write_kubeconfig(tmp_path, server)))[0] == 2
    shown = capsys.readouterr()
    assert "server" in shown.err and "CANARY" not in shown.out + shown.err


def node_list(conditions: list[dict[str, str]]) -> bytes:
    node = {"metadata": {"name": "gpu-0"}, "status": {"conditions": conditions}}
    return json.dumps({"kind": "NodeList", "apiVersion": "v1", "items": [node]}).encode()


@pytest.mark.parametrize(
    ("kind", "first", "then"),
    [("NebiusGPUError", "False", "True"), ("Ready", "True", "False")],
)
def test_a_condition_type_listed_twice_is_an_unusable_answer_whatever_the_order(
    scripted, tmp_path, capsys, kind, first, then
):
    """Hostile review a37 F1: the first entry decided (`PASS ... no GPU or boot-disk error`), the later one dropped."""
    conditions = [{"type": kind, "status": first}, {"type": kind, "status": then}]
    server = scripted(answer_with(node_list(conditions)))
    report = tmp_path / "verify.json"
    assert run_cli("--kubeconfig", str(write_kubeconfig(tmp_path, server.url)), "--json", str(report))[0] == 2
    err = capsys.readouterr().err
    assert f"answered with 'gpu-0' listing condition {kind} twice" in err
    assert json.loads(report.read_text())["unusable"] is True


def unauthorized(connection: socket.socket, _stopping: threading.Event) -> None:
    connection.sendall(b"HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}")


@pytest.mark.parametrize(
    ("user", "named"),
    [
        ({"token": "t"}, 'the API server refused its static token (token) (user "u" in '),
        ({"tokenFile": "token.txt"}, "the API server refused its static token (the content of tokenFile token.txt)"),
        (exec_user("./get-token.sh"), "the API server refused the credential of its exec plugin `./get-token.sh"),
    ],
    ids=["token", "token-file", "exec"],
)
def test_a_refused_credential_is_named_as_the_kubeconfig_gives_it_and_exits_2(scripted, tmp_path, capsys, user, named):
    """Hostile review a37 F2: a static token's 401 was blamed on "the kubeconfig's exec plugin", and exited 1."""
    (tmp_path / "token.txt").write_text("t\n")
    credential = json.dumps({"apiVersion": EXEC_API, "kind": "ExecCredential", "status": {"token": "t"}})
    script(tmp_path, "get-token.sh", f"echo '{credential}'\n")
    server = scripted(unauthorized)
    report = tmp_path / "verify.json"
    assert run_cli("--kubeconfig", str(write_kubeconfig(tmp_path, server.url, user)), "--json", str(report))[0] == 2
    err = capsys.readouterr().err
    assert "list nodes: unauthorized (401): " in err and named in err
    assert ("exec plugin" in err) == ("exec" in user)
    assert json.loads(report.read_text())["unreachable"] is True


@pytest.mark.parametrize(
    ("server", "user", "refusal"),
    [
        ("http://api.example.com:6443", {"token": "t0ken-value"}, "which would cross the network in clear"),
        ("http://10.0.0.5", {"username": "u", "password": "pw"}, "which would cross the network in clear"),
        ("http://api.example.com", exec_user("./get-token.sh", {}), "which would cross the network in clear"),
        (
            "http://127.0.0.1:9",
            {"client-certificate-data": PEM_CERTIFICATE, "client-key-data": PEM_KEY},
            "which only a TLS handshake presents",
        ),
    ],
    ids=["token", "password", "exec", "client-certificate-on-loopback"],
)
def test_a_credential_over_plain_http_is_refused_before_any_request(tmp_path, capsys, server, user, refusal):
    """Hostile round five: a client certificate beside an http:// server was taken (and never sent), and a token
    would go to another machine in clear."""
    kubeconfig = write_kubeconfig(tmp_path, server, user)
    assert run_cli("--kubeconfig", str(kubeconfig))[0] == 2
    err = capsys.readouterr().err
    assert refusal in err and "server is http://" in err
    assert "t0ken-value" not in err


# The verifier's refusals and quoting of user text (issue 37's round six).
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


@pytest.mark.parametrize(
    "cluster",
    [
        {"certificate-authority-data": base64.b64encode(b"garbage, no certificate").decode()},
        {"certificate-authority": "ca.crt"},
    ],
    ids=["data", "file"],
)
def test_a_certificate_authority_that_is_not_pem_is_a_kubeconfig_problem_naming_the_field(tmp_path, capsys, cluster):
    (tmp_path / "ca.crt").write_text("garbage, no certificate\n")
    document = yaml.safe_load(kubeconfig_text("https://127.0.0.1:1", {"token": "t"}))
    document["clusters"][0]["cluster"].update(cluster)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(document))
    assert run_cli("--kubeconfig", str(kubeconfig))[0] == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: kubeconfig {kubeconfig}: cluster") and "certificate-authority" in err, err
    assert "is not a PEM certificate" in err and "Traceback" not in err and "SSL" not in err


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
def test_an_http_error_at_the_first_read_judges_nothing_and_exits_2(scripted, tmp_path, capsys, status, said):
    exit_status, err, document = verify_against(scripted(answer_status(status)), tmp_path, capsys)
    assert exit_status == 2
    assert said in err and "exit 2" in err
    assert document["unreachable"] or document["unusable"]


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a server certificate")
def test_an_unverified_tls_connection_gives_no_urllib3_warning(scripted, tmp_path, capsys, recwarn):
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
