"""The real Kueue controller (built from sigs.k8s.io/kueue v0.17.0) run out of cluster against the e2e control plane.

In a cluster the chart runs the manager as a pod behind a Service, with certificates from Kueue's
internal cert management for the Service's DNS name. Here the manager runs as a process on
127.0.0.1, so:
- **Webhooks stay on.** The API server calls them by URL (https://127.0.0.1:PORT/<path>) with a CA of
  our own in `caBundle`; the serving certificate (SAN IP:127.0.0.1) is in `webhook.certDir`. The
  webhook configurations are the module's (config/components/webhook/manifests.yaml), with only
  `clientConfig` changed and only the webhooks of Kueue's own kinds and of batch Jobs kept: the
  other kinds' handlers are not registered when their integration is off (`integrations.frameworks`
  is the stack's), and a kept webhook without a handler would refuse every such object.
- **Internal cert management is off** (`internalCertManagement.enable: false`): it issues
  certificates for `kueue-webhook-service.kueue-system.svc`, a name the API server cannot reach
  here. With it off, cmd/kueue/main.go reads the metrics certificate from the fixed path
  /etc/kueue/metrics/certs; the manager runs in a private mount namespace (`unshare --mount`)
  whose /etc is an overlay, so that path exists for it alone and the host's /etc is not touched.
- **The visibility server is off** (feature gate VisibilityOnDemand=false, on top of the stack's gates): it
  reads its certificate from the fixed path /visibility (sigs.k8s.io/kueue v0.17.0 pkg/visibility), which the
  chart mounts in the pod; the tests read Workload and ClusterQueue status, not the visibility API.
- **Leader election is off** (one manager), and its ports are free ones on 127.0.0.1.
Everything else is the stack's own Configuration (components/values/kueue.py) and feature gates.
"""

from __future__ import annotations

import base64
import copy
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

WEBHOOK_KEPT = ("kueue-x-k8s-io", "batch-v1-job")
WEBHOOK_CONFIGURATIONS = {
    "MutatingWebhookConfiguration": "kueue-mutating-webhook-configuration",
    "ValidatingWebhookConfiguration": "kueue-validating-webhook-configuration",
}
START_TIMEOUT = 120.0


class KueueError(RuntimeError):
    pass


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def make_certificates(directory: Path) -> Path:
    """A CA and a serving certificate for 127.0.0.1 (tls.crt, tls.key): the names controller-runtime reads."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca_crt = directory / "ca.key", directory / "ca.crt"
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=kueue-e2e-ca",
             "-keyout", str(ca_key), "-out", str(ca_crt))  # fmt: skip
    key, csr, crt = directory / "tls.key", directory / "tls.csr", directory / "tls.crt"
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(csr))
    extensions = directory / "san.cnf"
    extensions.write_text("subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    _openssl("x509", "-req", "-in", str(csr), "-CA", str(ca_crt), "-CAkey", str(ca_key), "-CAcreateserial",
             "-days", "2", "-extfile", str(extensions), "-out", str(crt))  # fmt: skip
    return ca_crt


def webhook_configurations(module: Path, port: int, ca_bundle: bytes) -> list[dict[str, Any]]:
    """The module's webhook configurations, called by URL on 127.0.0.1, for Kueue's kinds and batch Jobs."""
    documents = [d for d in yaml.safe_load_all((module / "config/components/webhook/manifests.yaml").read_text()) if d]
    configured = []
    for document in documents:
        kept = []
        for webhook in document.get("webhooks") or []:
            path = webhook["clientConfig"]["service"]["path"]
            if any(part in path for part in WEBHOOK_KEPT):
                webhook = copy.deepcopy(webhook)
                webhook["clientConfig"] = {
                    "url": f"https://127.0.0.1:{port}{path}",
                    "caBundle": base64.b64encode(ca_bundle).decode(),
                }
                kept.append(webhook)
        configured.append(
            {**document, "metadata": {"name": WEBHOOK_CONFIGURATIONS[document["kind"]]}, "webhooks": kept}
        )
    return configured


def crds(module: Path) -> list[dict[str, Any]]:
    """Kueue's CRDs as the module generates them (config/components/crd/bases; the chart templates the same)."""
    return [
        yaml.safe_load(path.read_text()) for path in sorted((module / "config/components/crd/bases").glob("*.yaml"))
    ]


def feature_gate_flag(gates: Sequence[Mapping[str, Any]]) -> list[str]:
    """`--feature-gates=A=true,...` as the chart's `kueue.featureGates` helper writes it from controllerManager.featureGates."""
    listed = ",".join(f"{gate['name']}={str(gate['enabled']).lower()}" for gate in gates)
    return [f"--feature-gates={listed}"] if listed else []


class KueueController:
    """`with KueueController(binary, module, kubeconfig, values, kube) as kueue:` runs the manager until the block ends.

    `values` are the stack's chart values (components/values/kueue.py kueue_values); `kube` (e2e/dra/dra_kube.py
    Kube) applies the CRDs, webhook configurations and namespace.
    """

    def __init__(self, binary: Path, module: Path, kubeconfig: Path, values: Mapping[str, Any], kube: Any) -> None:
        self.binary, self.module, self.kubeconfig, self.values, self.kube = binary, module, kubeconfig, values, kube
        self.workdir = Path(tempfile.mkdtemp(prefix="nebius-dra-e2e-kueue-"))
        self.log = self.workdir / "kueue.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.startup_seconds = 0.0

    def configuration(self, webhook_port: int, health_port: int, metrics_port: int, cert_dir: Path) -> dict[str, Any]:
        """The stack's Configuration with this run's addresses, no leader election and no internal cert management."""
        config = yaml.safe_load(self.values["managerConfig"]["controllerManagerConfigYaml"])
        config.update(
            namespace="kueue-system",
            health={"healthProbeBindAddress": f"127.0.0.1:{health_port}"},
            metrics={"bindAddress": f"127.0.0.1:{metrics_port}"},
            webhook={"port": webhook_port, "host": "127.0.0.1", "certDir": str(cert_dir)},
            leaderElection={"leaderElect": False},
            internalCertManagement={"enable": False},
        )
        return config

    def __enter__(self) -> KueueController:
        start = time.monotonic()
        webhook_port, health_port, metrics_port = _free_ports(3)
        cert_dir = self.workdir / "certs"
        ca = make_certificates(cert_dir)
        config_file = self.workdir / "config.yaml"
        config_file.write_text(yaml.safe_dump(self.configuration(webhook_port, health_port, metrics_port, cert_dir)))
        for crd in crds(self.module):
            self.kube.apply(crd)
        for crd in crds(self.module):
            self._wait_established(crd["metadata"]["name"])
        self.kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kueue-system"}})
        upper, work = self.workdir / "etc-upper", self.workdir / "etc-work"
        upper.mkdir()
        work.mkdir()
        gates = [*self.values["controllerManager"]["featureGates"], {"name": "VisibilityOnDemand", "enabled": False}]
        flags = [f"--config={config_file}", f"--kubeconfig={self.kubeconfig}", *feature_gate_flag(gates)]
        script = (
            f"mount -t overlay overlay -o lowerdir=/etc,upperdir={upper},workdir={work} /etc"
            f" && mkdir -p /etc/kueue/metrics/certs && cp {cert_dir}/tls.crt {cert_dir}/tls.key /etc/kueue/metrics/certs/"
            f' && exec {self.binary} "$@"'
        )
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "kueue", *flags],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            self._wait_ready(health_port, webhook_port, ca)
            for configuration in webhook_configurations(self.module, webhook_port, ca.read_bytes()):
                self.kube.apply(configuration)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - start
        return self

    def _wait_established(self, name: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            found = self.kube.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", name) or {}
            conditions = (found.get("status") or {}).get("conditions") or []
            if any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
                return
            time.sleep(0.2)
        raise KueueError(f"CRD {name} was not established within {START_TIMEOUT:.0f}s")

    def _wait_ready(self, health_port: int, webhook_port: int, ca: Path) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        context = ssl.create_default_context(cafile=str(ca))
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise KueueError(f"kueue exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{health_port}/readyz", timeout=2) as answer:
                    ready = answer.status == 200
                with (
                    socket.create_connection(("127.0.0.1", webhook_port), timeout=2) as raw,
                    context.wrap_socket(raw, server_hostname="127.0.0.1"),
                ):
                    pass
                if ready:
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise KueueError(f"kueue was not ready within {START_TIMEOUT:.0f}s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)

    def __exit__(self, *exc: object) -> None:
        self.stop()
        if os.environ.get("NEBIUS_DRA_E2E_KEEP") is None:
            shutil.rmtree(self.workdir, ignore_errors=True)
