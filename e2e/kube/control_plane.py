"""A real, throw-away Kubernetes control plane on 127.0.0.1 for end-to-end tests.

    from control_plane import ControlPlane          # with e2e/kube on sys.path
    with ControlPlane() as cp:
        kubernetes.config.load_kube_config(str(cp.kubeconfig))
        ...

Runs etcd, kube-apiserver, kube-controller-manager and kube-scheduler built by
build.py (built on first use). No kubelet, no container runtime: pods are
scheduled (spec.nodeName set, DRA claims allocated) but never run.

Standard library only; certificates are made with the `openssl` CLI.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import importlib.util
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _load_build_module():
    # Loaded by path under a unique name: "build" would clash with the PyPI package.
    name = "nebius_dra_e2e_kube_build"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE / "build.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_build = _load_build_module()
ensure_binaries = _build.ensure_binaries
BuildError = _build.BuildError

# Controllers kube-controller-manager runs (names as of v1.34, see `kube-controller-manager --help`;
# the same in v1.36.3's cmd/kube-controller-manager/names/controller_names.go). Only what the DRA scenarios need; in
# particular no node-lifecycle / node-ipam / pod-garbage-collector /
# taint-eviction controllers, since there are no kubelets.
CONTROLLERS = (
    "resourceclaim-controller",  # ResourceClaimTemplate -> ResourceClaim, reservedFor cleanup
    "serviceaccount-controller",  # "default" ServiceAccount in every namespace
    "serviceaccount-token-controller",  # legacy SA token secrets / token signer wiring
    "namespace-controller",  # namespace deletion
    "garbage-collector-controller",  # ownerReference cascade (claims owned by pods)
    "root-ca-certificate-publisher-controller",  # kube-root-ca.crt ConfigMap
)

# What workloads need besides: Helm waits for a release's Deployments, DaemonSets and Jobs, whose
# status these controllers compute from their pods (`ControlPlane(workload_controllers=True)`, for
# the tests that install real charts; the DRA scenarios write that status themselves).
WORKLOAD_CONTROLLERS = ("deployment-controller", "replicaset-controller", "daemonset-controller", "job-controller")

SERVICE_CIDR = "10.0.0.0/24"
SERVICE_IP = "10.0.0.1"

STOP_TIMEOUT = 10.0


class ControlPlaneError(RuntimeError):
    pass


def _free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


class _PKI:
    """Certificates made with the openssl CLI (EC P-256, valid 2 days)."""

    def __init__(self, directory: Path):
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.openssl = shutil.which("openssl")
        if not self.openssl:
            raise ControlPlaneError("the `openssl` command was not found on PATH (needed for test certificates)")
        self._req_cnf = self.dir / "req.cnf"
        self._req_cnf.write_text("[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = unused\n")

    def _run(self, *args: str) -> None:
        proc = subprocess.run([self.openssl, *args], cwd=self.dir, capture_output=True, text=True)
        if proc.returncode != 0:
            raise ControlPlaneError(f"openssl {' '.join(args)} failed:\n{proc.stderr.strip()}")

    def _key(self, name: str) -> Path:
        key = self.dir / f"{name}.key"
        self._run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(key))
        os.chmod(key, 0o600)
        return key

    def ca(self, name: str = "ca", cn: str = "nebius-dra-e2e-ca") -> tuple[Path, Path]:
        key = self._key(name)
        crt = self.dir / f"{name}.crt"
        cnf = self.dir / f"{name}.cnf"
        cnf.write_text(
            "[req]\ndistinguished_name = dn\nprompt = no\nx509_extensions = ext\n"
            f"[dn]\nCN = {cn}\n"
            "[ext]\nbasicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign,digitalSignature\n"
            "subjectKeyIdentifier = hash\n"
        )
        self._run("req", "-x509", "-new", "-config", str(cnf), "-key", str(key), "-days", "2", "-out", str(crt))
        return crt, key

    def leaf(
        self,
        ca: tuple[Path, Path],
        name: str,
        cn: str,
        org: str | None = None,
        *,
        server: bool = False,
        client: bool = True,
        sans: tuple[str, ...] = (),
    ) -> tuple[Path, Path]:
        key = self._key(name)
        csr = self.dir / f"{name}.csr"
        crt = self.dir / f"{name}.crt"
        subj = f"/CN={cn}" + (f"/O={org}" if org else "")
        self._run("req", "-new", "-config", str(self._req_cnf), "-key", str(key), "-subj", subj, "-out", str(csr))
        eku = ",".join(u for u, on in (("serverAuth", server), ("clientAuth", client)) if on)
        ext = [
            "[ext]",
            "basicConstraints = critical,CA:FALSE",
            "keyUsage = critical,digitalSignature,keyEncipherment",
            f"extendedKeyUsage = {eku}",
            "authorityKeyIdentifier = keyid",
        ]
        if sans:
            ext.append("subjectAltName = " + ",".join(sans))
        extfile = self.dir / f"{name}.ext"
        extfile.write_text("\n".join(ext) + "\n")
        self._run(
            "x509",
            "-req",
            "-in",
            str(csr),
            "-CA",
            str(ca[0]),
            "-CAkey",
            str(ca[1]),
            "-set_serial",
            "0x" + os.urandom(12).hex(),
            "-days",
            "2",
            "-extfile",
            str(extfile),
            "-extensions",
            "ext",
            "-out",
            str(crt),
        )
        csr.unlink()
        return crt, key

    def rsa_keypair(self, name: str) -> tuple[Path, Path]:
        key = self.dir / f"{name}.key"
        pub = self.dir / f"{name}.pub"
        self._run("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", str(key))
        os.chmod(key, 0o600)
        self._run("pkey", "-in", str(key), "-pubout", "-out", str(pub))
        return key, pub


def _kubeconfig(path: Path, server: str, ca: Path, crt: Path, key: Path, user: str) -> Path:
    b64 = lambda p: base64.b64encode(p.read_bytes()).decode()  # noqa: E731
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "e2e", "cluster": {"server": server, "certificate-authority-data": b64(ca)}}],
        "users": [{"name": user, "user": {"client-certificate-data": b64(crt), "client-key-data": b64(key)}}],
        "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": user}}],
        "current-context": "e2e",
        "preferences": {},
    }
    path.write_text(json.dumps(cfg, indent=2))  # JSON is valid YAML
    os.chmod(path, 0o600)
    return path


class Daemon:
    """A process in its own group, its output appended to a log, ended with SIGTERM then SIGKILL (e2e/gpu-node too)."""

    def __init__(self, name: str, argv: list[str], log: Path):
        self.name, self.argv, self.log = name, argv, log
        self.started = time.monotonic()
        with open(log, "ab") as out:
            self.popen = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # own process group: signals from the terminal do not reach it
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            )

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        if self.popen.poll() is not None:
            return
        try:
            os.killpg(self.popen.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait(5)


class ControlPlane:
    """Context manager: etcd + kube-apiserver + kube-controller-manager + kube-scheduler on 127.0.0.1.

    `kube_minor` picks the Kubernetes minor ("1.36"; default: the oldest a wrapper module under
    e2e/kube declares, the stack's floor); `kube_version` is the release its wrapper builds.

    Attributes once entered: kubeconfig (Path, admin, O=system:masters), server (https URL),
    workdir (Path), logs ({component: Path}), binaries ({name: Path}), ca_file (Path),
    startup_seconds (float).

    `controller_manager_flags` are appended to kube-controller-manager's command line, `scheduler_flags` to
    kube-scheduler's (a later flag wins).

    `workdir=None` uses a fresh temp dir that is removed on exit; a given workdir is left
    in place (logs stay readable) unless remove_workdir=True.
    """

    def __init__(
        self,
        workdir: Path | None = None,
        *,
        remove_workdir: bool | None = None,
        start_timeout: float = 120.0,
        verbosity: int = 2,
        workload_controllers: bool = False,
        quiet: bool = False,
        kube_minor: str | None = None,
        extra_controllers: tuple[str, ...] = (),
        controller_manager_flags: tuple[str, ...] = (),
        scheduler_flags: tuple[str, ...] = (),
    ):
        self.kube_minor = kube_minor or _build.default_minor()
        self.kube_version = _build.kube_version(self.kube_minor)
        self._given_workdir = Path(workdir) if workdir is not None else None
        self._remove_workdir = (workdir is None) if remove_workdir is None else remove_workdir
        self.start_timeout = start_timeout
        self.verbosity = verbosity
        self.quiet = quiet
        self.controllers = CONTROLLERS + (WORKLOAD_CONTROLLERS if workload_controllers else ()) + extra_controllers
        self.controller_manager_flags = controller_manager_flags
        self.scheduler_flags = scheduler_flags
        self._procs: list[Daemon] = []
        self._old_sigterm = None
        self.workdir: Path | None = None
        self.kubeconfig: Path | None = None
        self.server: str | None = None
        self.logs: dict[str, Path] = {}
        self.timings: dict[str, float] = {}

    # ----------------------------------------------------------------- public
    def __enter__(self) -> ControlPlane:
        self._install_sigterm_handler()
        try:
            self._start()
        except BaseException:
            self._stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._stop()

    def log_tail(self, component: str, lines: int = 40) -> str:
        path = self.logs.get(component)
        if not path or not path.exists():
            return f"(no log for {component})"
        data = path.read_text(errors="replace").splitlines()
        return "\n".join(data[-lines:])

    def node_kubeconfig(self, node: str, address: str) -> tuple[Path, Path, Path]:
        """(kubeconfig, certificate, key) for a kubelet: system:node:<node> in system:nodes, as the Node authorizer wants.

        The certificate also serves the kubelet's own port at `address`, where the API server's kubelet client
        certificate (system:masters) reaches it for logs and exec.
        """
        crt, key = self._pki.leaf(
            self._ca_pair,
            f"kubelet-{node}",
            f"system:node:{node}",
            "system:nodes",
            server=True,
            sans=(f"IP:{address}", f"DNS:{node}"),
        )
        path = _kubeconfig(self.workdir / f"kubelet-{node}.kubeconfig", self.server, self.ca_file, crt, key, node)
        return path, crt, key

    def get(self, path: str, timeout: float = 5.0) -> tuple[int, str]:
        """GET `path` on the apiserver as admin; returns (status, body)."""
        return self._https_get(self.server + path, self._admin_ctx, timeout)

    # --------------------------------------------------------------- internal
    def _say(self, msg: str) -> None:
        if not self.quiet:
            print(f"[e2e/kube/control-plane] {msg}", flush=True)

    def _install_sigterm_handler(self) -> None:
        # SIGTERM would otherwise kill Python without running __exit__. A handler already in place (a benchmark's:
        # tools/bench/interrupts.py) unwinds as well and says so; replacing it ended `make bench-cli` silently.
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return

        def on_sigterm(signum, frame):
            raise SystemExit(128 + signum)

        self._old_sigterm = signal.signal(signal.SIGTERM, on_sigterm)

    def _start(self) -> None:
        t0 = time.monotonic()
        self.binaries = ensure_binaries(self.kube_minor)
        self.timings["binaries"] = time.monotonic() - t0

        if self._given_workdir is not None:
            self.workdir = self._given_workdir
            self.workdir.mkdir(parents=True, exist_ok=True)
        else:
            self.workdir = Path(tempfile.mkdtemp(prefix="nebius-dra-e2e-kube-"))
        wd = self.workdir
        self._say(f"Kubernetes {self.kube_version}, workdir {wd}")

        t = time.monotonic()
        pki = _PKI(wd / "pki")
        ca_pair = pki.ca()
        ca = ca_pair[0]
        self.ca_file = ca
        serving_sans = (
            "IP:127.0.0.1",
            "DNS:localhost",
            f"IP:{SERVICE_IP}",
            "DNS:kubernetes",
            "DNS:kubernetes.default",
            "DNS:kubernetes.default.svc",
            "DNS:kubernetes.default.svc.cluster.local",
        )
        # serverAuth+clientAuth: also used by etcd for its peer listener.
        serving_crt, serving_key = pki.leaf(
            ca_pair, "serving", "127.0.0.1", server=True, client=True, sans=serving_sans
        )
        etcd_client_crt, etcd_client_key = pki.leaf(ca_pair, "apiserver-etcd-client", "kube-apiserver-etcd-client")
        admin_crt, admin_key = pki.leaf(ca_pair, "admin", "kubernetes-admin", "system:masters")
        kcm_crt, kcm_key = pki.leaf(ca_pair, "kube-controller-manager", "system:kube-controller-manager")
        sched_crt, sched_key = pki.leaf(ca_pair, "kube-scheduler", "system:kube-scheduler")
        # Request-header (front-proxy) CA, as kubeadm sets up: without it the controller-manager and
        # scheduler log "missing content for CA bundle ... requestheader-client-ca-file" errors.
        fp_ca = pki.ca("front-proxy-ca", "nebius-dra-e2e-front-proxy-ca")
        fp_crt, fp_key = pki.leaf(fp_ca, "front-proxy-client", "front-proxy-client")
        # What kubeadm gives the API server to reach kubelets (logs, exec); unused while no kubelet runs.
        kubelet_client_crt, kubelet_client_key = pki.leaf(
            ca_pair, "apiserver-kubelet-client", "kube-apiserver-kubelet-client", "system:masters"
        )
        sa_key, sa_pub = pki.rsa_keypair("service-account")
        self._pki, self._ca_pair = pki, ca_pair
        self.timings["pki"] = time.monotonic() - t

        etcd_client, etcd_peer, api_port, kcm_port, sched_port = _free_ports(5)
        self.server = f"https://127.0.0.1:{api_port}"
        self.kubeconfig = _kubeconfig(wd / "admin.kubeconfig", self.server, ca, admin_crt, admin_key, "admin")
        kcm_kubeconfig = _kubeconfig(
            wd / "kube-controller-manager.kubeconfig",
            self.server,
            ca,
            kcm_crt,
            kcm_key,
            "system:kube-controller-manager",
        )
        sched_kubeconfig = _kubeconfig(
            wd / "kube-scheduler.kubeconfig", self.server, ca, sched_crt, sched_key, "system:kube-scheduler"
        )

        self._admin_ctx = ssl.create_default_context(cafile=str(ca))
        self._admin_ctx.load_cert_chain(str(admin_crt), str(admin_key))
        anon_ctx = ssl.create_default_context(cafile=str(ca))
        v = f"--v={self.verbosity}"

        # ---- etcd
        t = time.monotonic()
        etcd_url = f"https://127.0.0.1:{etcd_client}"
        peer_url = f"https://127.0.0.1:{etcd_peer}"
        self._spawn(
            "etcd",
            [
                str(self.binaries["etcd"]),
                "--name=e2e",
                f"--data-dir={wd / 'etcd-data'}",
                f"--listen-client-urls={etcd_url}",
                f"--advertise-client-urls={etcd_url}",
                f"--listen-peer-urls={peer_url}",
                f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=e2e={peer_url}",
                "--initial-cluster-state=new",
                f"--cert-file={serving_crt}",
                f"--key-file={serving_key}",
                "--client-cert-auth=true",
                f"--trusted-ca-file={ca}",
                f"--peer-cert-file={serving_crt}",
                f"--peer-key-file={serving_key}",
                "--peer-client-cert-auth=true",
                f"--peer-trusted-ca-file={ca}",
                "--unsafe-no-fsync=true",  # throw-away data dir; durability not needed
                "--log-level=info",
            ],
        )
        etcd_ctx = ssl.create_default_context(cafile=str(ca))
        etcd_ctx.load_cert_chain(str(etcd_client_crt), str(etcd_client_key))
        self._wait("etcd", lambda: self._ok(etcd_url + "/health", etcd_ctx, lambda b: '"health":"true"' in b))
        self.timings["etcd"] = time.monotonic() - t

        # ---- kube-apiserver
        t = time.monotonic()
        self._spawn(
            "kube-apiserver",
            [
                str(self.binaries["kube-apiserver"]),
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={api_port}",
                f"--etcd-servers={etcd_url}",
                f"--etcd-cafile={ca}",
                f"--etcd-certfile={etcd_client_crt}",
                f"--etcd-keyfile={etcd_client_key}",
                f"--tls-cert-file={serving_crt}",
                f"--tls-private-key-file={serving_key}",
                f"--client-ca-file={ca}",
                f"--requestheader-client-ca-file={fp_ca[0]}",
                "--requestheader-allowed-names=front-proxy-client",
                "--requestheader-username-headers=X-Remote-User",
                "--requestheader-group-headers=X-Remote-Group",
                "--requestheader-extra-headers-prefix=X-Remote-Extra-",
                f"--proxy-client-cert-file={fp_crt}",
                f"--proxy-client-key-file={fp_key}",
                f"--kubelet-client-certificate={kubelet_client_crt}",
                f"--kubelet-client-key={kubelet_client_key}",
                # A kubelet's hostname may resolve to another address than the one it serves on; its InternalIP does not.
                "--kubelet-preferred-address-types=InternalIP",
                f"--service-account-key-file={sa_pub}",
                f"--service-account-signing-key-file={sa_key}",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                "--authorization-mode=Node,RBAC",
                # The "kubernetes" Endpoints may not hold a loopback address (validation rejects
                # 127.0.0.1 every 10s otherwise); nothing here runs in-cluster clients.
                "--endpoint-reconciler-type=none",
                "--profiling=false",
                # Real clusters (mk8s, kubeadm's default) allow privileged containers, which the DRA driver's
                # kubelet plugin and the GPU Operator's operands need; without it their DaemonSets are refused.
                "--allow-privileged=true",
                # resource.k8s.io/v1 is GA and served by default from 1.34 (checked below), and on 1.36 its
                # beta fields (device taints and tolerations, ...) are on by default: no --runtime-config and no
                # --feature-gates (BUILD-NOTES.md, "Kubernetes 1.36").
                v,
            ],
        )
        self._wait("kube-apiserver", lambda: self._ok(self.server + "/readyz", self._admin_ctx, lambda b: b == "ok"))
        status, body = self.get("/apis/resource.k8s.io/v1")
        if status != 200 or '"resourceslices"' not in body or '"resourceclaims"' not in body:
            raise ControlPlaneError(
                f"resource.k8s.io/v1 is not served (GET /apis/resource.k8s.io/v1 -> {status}): {body[:500]}"
            )
        self.timings["kube-apiserver"] = time.monotonic() - t

        # ---- kube-controller-manager and kube-scheduler (started together)
        t = time.monotonic()
        self._spawn(
            "kube-controller-manager",
            [
                str(self.binaries["kube-controller-manager"]),
                f"--kubeconfig={kcm_kubeconfig}",
                f"--authentication-kubeconfig={kcm_kubeconfig}",
                f"--authorization-kubeconfig={kcm_kubeconfig}",
                "--bind-address=127.0.0.1",
                f"--secure-port={kcm_port}",
                f"--tls-cert-file={serving_crt}",
                f"--tls-private-key-file={serving_key}",
                "--controllers=" + ",".join(self.controllers),
                f"--service-account-private-key-file={sa_key}",
                f"--root-ca-file={ca}",
                "--use-service-account-credentials=true",
                "--leader-elect=false",
                "--profiling=false",
                v,
                *self.controller_manager_flags,
            ],
        )
        self._spawn(
            "kube-scheduler",
            [
                str(self.binaries["kube-scheduler"]),
                f"--kubeconfig={sched_kubeconfig}",
                f"--authentication-kubeconfig={sched_kubeconfig}",
                f"--authorization-kubeconfig={sched_kubeconfig}",
                "--bind-address=127.0.0.1",
                f"--secure-port={sched_port}",
                f"--tls-cert-file={serving_crt}",
                f"--tls-private-key-file={serving_key}",
                "--leader-elect=false",
                "--profiling=false",
                v,
                *self.scheduler_flags,
            ],
        )
        self._wait(
            "kube-controller-manager",
            lambda: self._ok(f"https://127.0.0.1:{kcm_port}/healthz", anon_ctx, lambda b: b == "ok"),
        )
        self._wait(
            "kube-scheduler", lambda: self._ok(f"https://127.0.0.1:{sched_port}/healthz", anon_ctx, lambda b: b == "ok")
        )
        # Pods cannot be created before the serviceaccount controller made "default/default".
        self._wait(
            "kube-controller-manager",
            lambda: self.get("/api/v1/namespaces/default/serviceaccounts/default")[0] == 200,
            what="ServiceAccount default/default",
        )
        self.timings["controllers"] = time.monotonic() - t

        self.startup_seconds = time.monotonic() - t0
        self._say(
            f"ready at {self.server} in {self.startup_seconds:.1f}s ("
            + ", ".join(f"{k} {v:.1f}s" for k, v in self.timings.items())
            + ")"
        )

    def _spawn(self, name: str, argv: list[str]) -> None:
        log = self.workdir / f"{name}.log"
        self.logs[name] = log
        self._say(f"starting {name} (log {log})")
        try:
            self._procs.append(Daemon(name, argv, log))
        except OSError as exc:
            raise ControlPlaneError(f"cannot start {name} ({argv[0]}): {exc}") from None

    @staticmethod
    def _https_get(url: str, ctx: ssl.SSLContext, timeout: float) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(url, context=ctx, timeout=timeout) as resp:
                return resp.status, resp.read().decode(errors="replace")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(errors="replace")

    def _ok(self, url: str, ctx: ssl.SSLContext, check) -> bool:
        try:
            status, body = self._https_get(url, ctx, timeout=3)
        except (OSError, ssl.SSLError):
            return False
        return status == 200 and check(body.strip())

    def _wait(self, name: str, probe, what: str | None = None) -> None:
        what = what or f"{name} to become healthy"
        deadline = time.monotonic() + self.start_timeout
        proc = next(p for p in self._procs if p.name == name)
        while True:
            if not proc.alive():
                raise ControlPlaneError(
                    f"{name} exited with code {proc.popen.returncode} while waiting for {what}; "
                    f"last lines of {self.logs[name]}:\n" + textwrap.indent(self.log_tail(name), "  ")
                )
            try:
                if probe():
                    return
            except (OSError, ssl.SSLError):
                pass
            if time.monotonic() > deadline:
                raise ControlPlaneError(
                    f"timed out after {self.start_timeout:.0f}s waiting for {what}; "
                    f"last lines of {self.logs[name]}:\n" + textwrap.indent(self.log_tail(name), "  ")
                )
            time.sleep(0.2)

    def _stop(self) -> None:
        interrupted: BaseException | None = None
        try:
            for proc in reversed(self._procs):
                try:
                    proc.stop(timeout=1.0 if interrupted else STOP_TIMEOUT)
                except BaseException as exc:  # e.g. a second Ctrl-C: keep stopping, then re-raise
                    interrupted = interrupted or exc
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.popen.pid, signal.SIGKILL)
            self._procs.clear()
            if interrupted is not None:
                self._say("interrupted while stopping; remaining processes were killed")
            if self.workdir is not None and self._remove_workdir:
                shutil.rmtree(self.workdir, ignore_errors=True)
        finally:
            if self._old_sigterm is not None:
                signal.signal(signal.SIGTERM, self._old_sigterm)
                self._old_sigterm = None
        if interrupted is not None:
            raise interrupted


if __name__ == "__main__":
    # Manual use: start, print the kubeconfig path, run until Ctrl-C. Optional argument: the minor ("1.36").
    try:
        with ControlPlane(kube_minor=sys.argv[1] if len(sys.argv) > 1 else None) as cp:
            print(f"KUBECONFIG={cp.kubeconfig}\nserver={cp.server}\nCtrl-C to stop", flush=True)
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        pass
    except (ControlPlaneError, BuildError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
