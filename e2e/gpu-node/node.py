#!/usr/bin/env python3
"""A one-node Kubernetes cluster on the lent GPU machine, every part real, and the stack's samples run on it.

    python3 e2e/gpu-node/node.py --bundle DIR --line 25.12.0 [--line 0.4.1] --out CAPTURES [--local]

Brings up etcd, kube-apiserver, kube-controller-manager and kube-scheduler (e2e/kube/control_plane.py,
the e2e tier's own control plane, with the node lifecycle and DaemonSet controllers added), containerd
with its CRI plugin and the CNI bridge, runc, and a kubelet registered as system:node:<host>. Then, for
each driver line DIR/lines/<line>/ holds (render.py wrote them from the stack's plan and chart):

1. the chart's objects, as `helm template` rendered them, are created; the kubelet plugin runs as the
   chart's DaemonSet pod, from an image made here under the chart's image name, and registers with the
   kubelet through /var/lib/kubelet/plugins_registry;
2. the plan's sample namespace, claim templates and pods are created; the first pod must run with the
   claimed GPU's UUID and a passing cuda-check in its log, the second (the same GPU wanted through the
   by-product template) must stay Pending with the scheduler's reason, then run once the first is deleted;
3. deleting the pods must unprepare the claims: the claims go and the CDI spec files with them;
4. `python -m tools.verify` runs against the node (it must pass), then again with the plugin's DaemonSet
   deleted (it must fail).

Everything it saw is written under --out. --local runs without a GPU (no chart, no claims): the
control plane, containerd, the kubelet and a pod without a claim, to try the machinery anywhere.
Run it only on a throw-away machine: it writes /var/lib/kubelet, /var/run/cdi, /etc/cni and /usr/lib64.
Standard library only (Python 3.11+).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "e2e" / "kube"))

from control_plane import SERVICE_IP, ControlPlane, Daemon  # noqa: E402  (e2e/kube, on the path above)

KUBELET_ROOT = Path("/var/lib/kubelet")
CDI_ROOT = Path("/var/run/cdi")
CNI_CONF_DIR = Path("/etc/cni/net.d")
# Where this machine keeps the driver (a read-only squashfs), and where a node with the driver preinstalled
# (the dev stack's driver root "/") keeps it: the plugin searches <root>/usr/lib64 and <root>/usr/bin among others.
DRIVER_SOURCES = {Path("/usr/local/nvidia/lib64"): Path("/usr/lib64"), Path("/usr/local/nvidia/bin"): Path("/usr/bin")}
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
SAMPLE_IMAGE = "example.local/nebius-dra/gpu-node-workload:1"
LOCAL_POD_IMAGE = SAMPLE_IMAGE
POD_SUBNET = "10.88.0.0/16"
# The node's address: the kubelet refuses a loopback node IP, and the machine's own interfaces may change, so the
# node gets an address of its own on the loopback device, where the API server reaches the kubelet.
NODE_IP = "10.99.0.1"
UUID = re.compile(r"GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# Binaries of the bundle (xz) and where they go; the control plane's go where e2e/kube/build.py looks for them.
KUBE_BINARIES = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
NODE_BINARIES = ("kubelet", "containerd", "containerd-shim-runc-v2", "ctr", "runc", "pause", "cuda-check", "netaddr")
CNI_BINARIES = ("bridge", "host-local", "loopback")
# glibc's libraries that the driver's programs and libraries (nvidia-smi, libnvidia-ml, libcuda) load and that
# no file of an image needs by itself: both images carry them, as a distribution's base image does.
GLIBC_EXTRAS = tuple(
    path
    for name in ("libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1", "libgcc_s.so.1", "libstdc++.so.6")
    for path in (f"/lib/x86_64-linux-gnu/{name}",)
    if os.path.exists(path)
)


class NodeError(Exception):
    """A step failed; the message says which and what was seen."""


class Log:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.started = time.monotonic()

    def __call__(self, message: str) -> None:
        line = f"[{time.monotonic() - self.started:7.1f}s] {message}"
        print(line, flush=True)
        with self.path.open("a") as handle:
            handle.write(line + "\n")


def run(argv: list[str], log: Log, check: bool = True, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if check and proc.returncode != 0:
        raise NodeError(f"{' '.join(argv)} exited {proc.returncode}: {(proc.stdout + proc.stderr)[-1500:]}")
    return proc


class Api:
    """The API server as the cluster admin (the control plane's system:masters certificate)."""

    def __init__(self, server: str, pki: Path) -> None:
        self.server = server
        self.ctx = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        self.ctx.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.server + path, data=data, method=method)
        req.add_header("Content-Type", content_type)
        req.add_header("Accept", "application/json")
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=30) as resp:
                text = resp.read().decode()
        except urllib.error.HTTPError as error:
            text = error.read().decode(errors="replace")
            raise ApiError(error.code, f"{method} {path}: {error.code} {text[:800]}") from None
        return json.loads(text) if text.startswith(("{", "[")) else text

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def text(self, path: str) -> str:
        req = urllib.request.Request(self.server + path)
        with urllib.request.urlopen(req, context=self.ctx, timeout=30) as resp:
            return resp.read().decode(errors="replace")

    def exists(self, path: str) -> bool:
        try:
            self.get(path)
        except ApiError as error:
            if error.code == 404:
                return False
            raise
        return True

    def create(self, obj: dict[str, Any]) -> Any:
        return self.request("POST", collection_path(obj), obj)

    def delete(self, path: str, grace: int | None = None) -> None:
        body = None if grace is None else {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": grace}
        with contextlib.suppress(ApiError):
            self.request("DELETE", path, body)


class ApiError(NodeError):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


# Plural names of the kinds the chart and the plan hold (the API's own; `kubectl api-resources`).
PLURALS = {
    "Namespace": "namespaces",
    "ServiceAccount": "serviceaccounts",
    "ConfigMap": "configmaps",
    "Secret": "secrets",
    "Service": "services",
    "Pod": "pods",
    "ClusterRole": "clusterroles",
    "ClusterRoleBinding": "clusterrolebindings",
    "Role": "roles",
    "RoleBinding": "rolebindings",
    "DaemonSet": "daemonsets",
    "Deployment": "deployments",
    "DeviceClass": "deviceclasses",
    "ResourceClaimTemplate": "resourceclaimtemplates",
    "ResourceClaim": "resourceclaims",
    "ValidatingAdmissionPolicy": "validatingadmissionpolicies",
    "ValidatingAdmissionPolicyBinding": "validatingadmissionpolicybindings",
    "ValidatingWebhookConfiguration": "validatingwebhookconfigurations",
    "NetworkPolicy": "networkpolicies",
}
CLUSTER_SCOPED = {
    "Namespace",
    "ClusterRole",
    "ClusterRoleBinding",
    "DeviceClass",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration",
}


def collection_path(obj: dict[str, Any]) -> str:
    kind, version = obj["kind"], obj["apiVersion"]
    if kind not in PLURALS:
        raise NodeError(f"no API path known for kind {kind}")
    prefix = "/api/v1" if version == "v1" else f"/apis/{version}"
    if kind in CLUSTER_SCOPED:
        return f"{prefix}/{PLURALS[kind]}"
    return f"{prefix}/namespaces/{obj['metadata']['namespace']}/{PLURALS[kind]}"


def object_path(obj: dict[str, Any]) -> str:
    return f"{collection_path(obj)}/{obj['metadata']['name']}"


def wait(what: str, probe: Any, timeout: float, log: Log, interval: float = 1.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = probe()
        except (ApiError, OSError) as error:
            value, last = None, error
        else:
            last = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise NodeError(
                f"timed out after {timeout:.0f}s waiting for {what}" + (f" (last error: {last})" if last else "")
            )
        time.sleep(interval)


def unpack(bundle: Path, work: Path, log: Log) -> dict[str, Path]:
    """Decompresses the bundle's binaries: the control plane's into the layout build.py reuses, the rest into work/bin."""
    sys.path.insert(0, str(ROOT / "e2e" / "kube"))
    import build  # e2e/kube/build.py: the versions and the cache layout of the e2e tier's binaries

    cache = work / "e2e-cache"
    os.environ["NEBIUS_DRA_E2E_CACHE"] = str(cache)
    dirs = build.binary_dirs()
    wanted = {name: dirs["kube"] / name for name in KUBE_BINARIES}
    wanted["etcd"] = dirs["etcd"] / "etcd"
    wanted.update({name: work / "bin" / name for name in NODE_BINARIES})
    wanted.update({name: work / "cni" / name for name in CNI_BINARIES})
    jobs = []
    for packed in sorted(bundle.glob("**/bin/*")):
        name = packed.name.removesuffix(".xz")
        target = wanted.setdefault(name, work / "bin" / name)
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if packed.suffix == ".xz":
            jobs.append((packed, target))
        else:  # an uncompressed binary (a dry run off the device): used where it is
            target.symlink_to(packed.resolve())

    def decompress(job: tuple[Path, Path]) -> None:
        packed, target = job
        with target.open("wb") as out:
            subprocess.run(["xz", "-dc", str(packed)], stdout=out, check=True)
        target.chmod(0o755)

    with concurrent.futures.ThreadPoolExecutor(max(1, os.cpu_count() or 1)) as pool:
        list(pool.map(decompress, jobs))
    missing = [name for name, path in wanted.items() if not path.exists()]
    if missing:
        raise NodeError(f"the bundle {bundle} lacks {', '.join(missing)} (bin/<name>.xz)")
    log(f"binaries: {len(wanted)} in {work} (control plane under {cache})")
    return wanted


def clear_leftovers(netaddr: str, log: Log) -> None:
    """A warm machine keeps the last run's mounts under the kubelet's root: unmount them, then start empty."""
    mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    for point in sorted(
        (m for m in mounts if m.startswith(str(KUBELET_ROOT) + "/") or m.startswith("/run/containerd-gpu-node")),
        reverse=True,
    ):
        subprocess.run(["umount", "-l", point], capture_output=True)
    for path in (KUBELET_ROOT, CDI_ROOT, CNI_CONF_DIR, Path("/var/lib/cni")):
        shutil.rmtree(path, ignore_errors=True)
    subprocess.run([netaddr, "link-del", "cni0"], capture_output=True)
    log("cleared the kubelet root, CDI root and CNI state of any earlier run")


# Where a host program in the target directory is only a launcher of the driver's own copy (this machine's
# /usr/bin/nvidia-smi is a shell script that execs /usr/local/nvidia/bin/nvidia-smi), it is moved aside under
# this suffix for the run, because the plugin's driver check and the CDI spec mount /usr/bin/<tool> into
# containers, where the driver's path does not exist. restore_driver_layout puts it back.
MOVED_ASIDE = ".gpu-node-moved-aside"


def is_launcher_of(dest: Path, source: Path) -> bool:
    """A small script at `dest` that names the driver's folder (/usr/local/nvidia): a launcher, not a host program."""
    try:
        if dest.is_symlink() or dest.stat().st_size > 4096:
            return False
        text = dest.read_bytes()
    except OSError:
        return False
    return text.startswith(b"#!") and str(source.parent.parent).encode() in text


def preset_driver_layout(sources: dict[Path, Path], out: Path, log: Log) -> list[Path]:
    """Copies the driver's files to where a node with the driver preinstalled has them; returns what it moved aside.

    Nothing the host has is overwritten: a file already there is left alone, except a launcher script of the
    driver's own file (is_launcher_of), which is renamed with MOVED_ASIDE until restore_driver_layout.
    """
    copied, kept, moved, launchers = [], [], [], []
    for source, target in sources.items():
        if not source.is_dir():
            raise NodeError(f"no driver files in {source} on this machine")
        target.mkdir(parents=True, exist_ok=True)
        for entry in sorted(source.iterdir()):
            dest = target / entry.name
            if os.path.lexists(dest):
                if not is_launcher_of(dest, entry):
                    kept.append(str(dest))
                    continue
                launchers.append(f"==> {dest} <==\n{dest.read_text(errors='replace')}")
                dest.rename(dest.with_name(dest.name + MOVED_ASIDE))
                moved.append(dest)
            if entry.is_dir() and not entry.is_symlink():
                shutil.copytree(entry, dest, symlinks=True)
            else:
                shutil.copy2(entry, dest, follow_symlinks=False)
            copied.append(f"{entry} -> {dest}")
    (out / "driver-files-copied.txt").write_text(
        "# copied (source -> destination)\n"
        + "\n".join(copied)
        + f"\n# launchers of the driver's files, moved aside to <name>{MOVED_ASIDE} for the run and put back after\n"
        + "\n".join(map(str, moved))
        + "\n# left alone (already present on the host)\n"
        + "\n".join(kept)
        + "\n# the launchers as they were\n"
        + "\n".join(launchers)
    )
    log(
        f"driver layout: {len(copied)} files copied from {', '.join(map(str, sources))}; "
        f"{len(moved)} launcher(s) moved aside ({', '.join(map(str, moved))}); {len(kept)} present left alone"
    )
    return moved


def restore_driver_layout(moved: list[Path], log: Log) -> None:
    for dest in moved:
        with contextlib.suppress(OSError):
            dest.unlink()
            dest.with_name(dest.name + MOVED_ASIDE).rename(dest)
    if moved:
        log(f"driver layout: put back {', '.join(map(str, moved))}")


def containerd_config(state: Path, binaries: dict[str, Path]) -> str:
    cni_dir = binaries["bridge"].parent
    return f"""version = 3
root = "{state}/root"
state = "{state}/state"
[grpc]
  address = "{state}/containerd.sock"
[plugins."io.containerd.cri.v1.runtime"]
  # The VM lacks CAP_SYS_RESOURCE: runc cannot lower oom_score_adj below containerd's own (README-kubelet-gpu-pod.md).
  restrict_oom_score_adj = true
  # CDI is always on in containerd 2.x; these are its default spec directories, where the DRA plugin writes.
  cdi_spec_dirs = ["/etc/cdi", "/var/run/cdi"]
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["{cni_dir}"]
    conf_dir = "{CNI_CONF_DIR}"
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "{binaries["runc"]}"
        SystemdCgroup = false
[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "{PAUSE_IMAGE}"
"""


def cni_config() -> dict[str, Any]:
    """The CNI reference bridge: pods get an address on cni0, which the host (the kubelet's probes) reaches."""
    return {
        "cniVersion": "1.0.0",
        "name": "gpu-node",
        "plugins": [
            {
                "type": "bridge",
                "bridge": "cni0",
                "isGateway": True,
                "ipMasq": False,
                "ipam": {"type": "host-local", "ranges": [[{"subnet": POD_SUBNET}]], "routes": [{"dst": "0.0.0.0/0"}]},
            }
        ],
    }


def kubelet_config(containerd_sock: Path, ca: Path, crt: Path, key: Path, pod_logs: Path) -> dict[str, Any]:
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "cgroupDriver": "cgroupfs",
        "containerRuntimeEndpoint": f"unix://{containerd_sock}",
        "failSwapOn": False,
        "enforceNodeAllocatable": [],
        "address": NODE_IP,
        "readOnlyPort": 0,
        "tlsCertFile": str(crt),
        "tlsPrivateKeyFile": str(key),
        # The API server comes with its kubelet client certificate (CA-signed); nothing else may talk to the kubelet.
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"enabled": False},
            "x509": {"clientCAFile": str(ca)},
        },
        "authorization": {"mode": "AlwaysAllow"},
        "resolvConf": "",
        "localStorageCapacityIsolation": False,
        "podLogsDir": str(pod_logs),
        "serializeImagePulls": False,
        "imageGCHighThresholdPercent": 100,
        "evictionHard": {},
    }


class ServiceRelay:
    """Stands in for kube-proxy for one Service: the API server's ClusterIP (SERVICE_IP:443) on this host.

    Pods reach the API server through the `kubernetes` Service (KUBERNETES_SERVICE_HOST, which the kubelet
    sets from it); the kubelet plugin's in-cluster client does. There is no kube-proxy here, so the address
    is put on the loopback device and each connection is piped to the API server's 127.0.0.1 port. TLS passes
    through untouched (the serving certificate names SERVICE_IP).
    """

    def __init__(self, address: str, target: tuple[str, int], netaddr: str, log: Log) -> None:
        self.address, self.target, self.log = address, target, log
        self.netaddr = netaddr
        run([netaddr, "add", f"{address}/32", "lo"], log)
        self.server = socket.create_server((address, 443), reuse_port=False)
        threading.Thread(target=self._accept, daemon=True).start()
        log(f"service relay: {address}:443 -> {target[0]}:{target[1]} (the kubernetes Service, no kube-proxy)")

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.server.close()
        subprocess.run([self.netaddr, "del", f"{self.address}/32", "lo"], capture_output=True)


class Node:
    """containerd, the CNI bridge and the kubelet on this machine, registered with the control plane."""

    def __init__(
        self, cp: Any, binaries: dict[str, Path], work: Path, out: Path, log: Log, labels: dict[str, str]
    ) -> None:
        self.cp, self.binaries, self.work, self.out, self.log = cp, binaries, work, out, log
        self.name = socket.gethostname().lower()
        self.labels = labels
        self.daemons: list[Daemon] = []
        self.state = Path("/run/containerd-gpu-node")
        self.sock = self.state / "containerd.sock"

    def ctr(self, *args: str) -> str:
        return run([str(self.binaries["ctr"]), "-a", str(self.sock), "-n", "k8s.io", *args], self.log).stdout

    def start(self) -> None:
        shutil.rmtree(self.state, ignore_errors=True)
        self.state.mkdir(parents=True)
        config = self.work / "containerd.toml"
        config.write_text(containerd_config(self.state, self.binaries))
        CNI_CONF_DIR.mkdir(parents=True, exist_ok=True)
        (CNI_CONF_DIR / "10-gpu-node.conflist").write_text(json.dumps(cni_config(), indent=1))
        # containerd finds its runc shim on PATH.
        os.environ["PATH"] = f"{self.binaries['containerd'].parent}:{os.environ['PATH']}"
        self.daemons.append(
            Daemon(
                "containerd", [str(self.binaries["containerd"]), "--config", str(config)], self.out / "containerd.log"
            )
        )
        wait("containerd's socket", self.sock.exists, 30, self.log, 0.2)
        self.log(run([str(self.binaries["containerd"]), "--version"], self.log).stdout.strip())

    def image(
        self, ref: str, files: list[str], env: list[str] | None = None, entrypoint: list[str] | None = None
    ) -> None:
        archive = self.work / f"image-{len(list(self.work.glob('image-*.tar')))}.tar"
        options = [f"--env={item}" for item in env or []] + [f"--entrypoint={arg}" for arg in entrypoint or []]
        argv = [sys.executable, str(HERE / "mkimage.py"), str(archive), ref, *options, *files]
        self.log(run(argv, self.log).stdout.strip())
        self.ctr("images", "import", "--all-platforms", str(archive))

    def start_kubelet(self) -> None:
        run([str(self.binaries["netaddr"]), "add", f"{NODE_IP}/32", "lo"], self.log)
        kubeconfig, crt, key = self.cp.node_kubeconfig(self.name, NODE_IP)
        KUBELET_ROOT.mkdir(parents=True, exist_ok=True)
        config = self.work / "kubelet.json"
        pod_logs = self.work / "pod-logs"
        config.write_text(json.dumps(kubelet_config(self.sock, self.cp.ca_file, crt, key, pod_logs), indent=1))
        labels = ",".join(f"{k}={v}" for k, v in sorted(self.labels.items()))
        argv = [
            str(self.binaries["kubelet"]),
            f"--config={config}",
            f"--kubeconfig={kubeconfig}",
            f"--root-dir={KUBELET_ROOT}",
            f"--hostname-override={self.name}",
            f"--node-ip={NODE_IP}",
            f"--node-labels={labels}",
            "--v=2",
        ]
        self.log("kubelet: " + " ".join(argv))
        self.daemons.append(Daemon("kubelet", argv, self.out / "kubelet.log"))

    def stop(self) -> None:
        for daemon in reversed(self.daemons):
            daemon.stop()
        subprocess.run([str(self.binaries["netaddr"]), "del", f"{NODE_IP}/32", "lo"], capture_output=True)


def ready(node: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in node.get("status", {}).get("conditions", []))


def pod_phase(api: Api, namespace: str, name: str) -> str:
    return str(api.get(f"/api/v1/namespaces/{namespace}/pods/{name}").get("status", {}).get("phase"))


def save(out: Path, name: str, value: Any) -> None:
    path = out / name
    path.write_text(value if isinstance(value, str) else json.dumps(value, indent=1, sort_keys=True) + "\n")


def pod_log(api: Api, namespace: str, name: str) -> str:
    try:
        return api.text(f"/api/v1/namespaces/{namespace}/pods/{name}/log")
    except urllib.error.HTTPError as error:
        return f"(no log: {error.code} {error.read().decode(errors='replace')[:300]})"


def cdi_listing() -> list[str]:
    return sorted(p.name for p in CDI_ROOT.glob("*")) if CDI_ROOT.exists() else []


class LineRun:
    """One driver line on the node: the chart, the samples, unprepare, the verifier."""

    def __init__(self, api: Api, node: Node, folder: Path, out: Path, log: Log, args: argparse.Namespace) -> None:
        self.api, self.node, self.folder, self.log, self.args = api, node, folder, log, args
        self.meta = json.loads((folder / "node.json").read_text())
        self.chart = json.loads((folder / "chart.json").read_text())
        self.samples = json.loads((folder / "samples.json").read_text())
        self.out = out / f"line-{self.meta['line']}"
        self.out.mkdir(parents=True, exist_ok=True)
        self.summary: dict[str, Any] = {
            "line": self.meta["line"],
            "chart": f"{self.meta['chart']} {self.meta['version']}",
            "steps": [],
        }

    def step(self, name: str, ok: bool, detail: str) -> None:
        self.summary["steps"].append({"step": name, "ok": ok, "detail": detail})
        self.log(f"[{self.meta['line']}] {'ok  ' if ok else 'FAIL'} {name}: {detail}")
        if not ok:
            raise NodeError(f"{self.meta['line']}: {name}: {detail}")

    def plugin_image(self) -> None:
        """The chart's image name, built here: bash and the prestart script's tools, the plugin, nvidia-cdi-hook."""
        line = self.meta["line"]
        bins = self.node.binaries
        hook = next(
            p
            for name, p in bins.items()
            if name.startswith("nvidia-cdi-hook-") and name.endswith(self.meta["cdi_hook"])
        )
        tools = [
            "/bin/bash",
            "/usr/bin/find",
            "/usr/bin/head",
            "/bin/ln",
            "/bin/date",
            "/bin/ls",
            "/usr/bin/env",
            "/usr/bin/basename",
            "/bin/sleep",
            "/bin/cat",
            "/bin/sh",
        ]
        files = [
            *tools,
            *GLIBC_EXTRAS,
            f"{bins['gpu-kubelet-plugin-' + line]}=/usr/bin/gpu-kubelet-plugin",
            f"{hook}=/usr/bin/nvidia-cdi-hook",
            f"{self.folder / 'kubelet-plugin-prestart.sh'}=/usr/bin/kubelet-plugin-prestart.sh",
        ]
        # The upstream image's ENV (deployments/container/Dockerfile at the tag).
        env = [
            "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
            "NVIDIA_DISABLE_REQUIRE=true",
            "NVIDIA_VISIBLE_DEVICES=all",
            "NVIDIA_DRIVER_CAPABILITIES=utility",
        ]
        self.node.image(self.meta["plugin_image"], files, env)

    def install_chart(self) -> None:
        ns = self.meta["namespace"]
        if not self.api.exists(f"/api/v1/namespaces/{ns}"):
            self.api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        created = []
        for obj in self.chart:
            obj.setdefault("metadata", {})
            if obj["kind"] not in CLUSTER_SCOPED:
                obj["metadata"].setdefault("namespace", ns)
            self.api.create(obj)
            created.append(f"{obj['kind']} {obj['metadata']['name']}")
        save(self.out, "chart-objects-created.txt", "\n".join(created) + "\n")
        self.step(
            "chart",
            True,
            f"{len(created)} objects of {self.meta['chart']} {self.meta['version']} created: {', '.join(created)}",
        )

    def plugin_pods(self) -> list[dict[str, Any]]:
        pods = self.api.get(f"/api/v1/namespaces/{self.meta['namespace']}/pods")["items"]
        return [p for p in pods if "kubelet-plugin" in p["metadata"]["name"]]

    def plugin_registered(self) -> None:
        def running() -> Any:
            pods = self.plugin_pods()
            return (
                pods
                and all(
                    any(
                        c["type"] == "Ready" and c["status"] == "True"
                        for c in p.get("status", {}).get("conditions", [])
                    )
                    for p in pods
                )
                and pods
            )

        pods = wait("the kubelet plugin pod to be Ready", running, 180, self.log, 2)
        self.plugin_pod = pods[0]["metadata"]["name"]
        slices = wait(
            "the plugin's ResourceSlice",
            lambda: [
                s
                for s in self.api.get("/apis/resource.k8s.io/v1/resourceslices")["items"]
                if s["spec"]["driver"] == "gpu.nvidia.com"
            ],
            60,
            self.log,
        )
        save(self.out, "resourceslices.json", slices)
        devices = [d for s in slices for d in s["spec"].get("devices", [])]
        self.uuid = str(devices[0]["attributes"]["uuid"]["string"])
        registry = sorted(p.name for p in (KUBELET_ROOT / "plugins_registry").glob("*"))
        kubelet_log = (self.node.out / "kubelet.log").read_text(errors="replace")
        registered = [
            line for line in kubelet_log.splitlines() if "gpu.nvidia.com" in line and re.search(r"[Rr]egist", line)
        ]
        save(self.out, "kubelet-registration.txt", "\n".join(registered) + "\n")
        save(self.out, "plugins-registry-listing.txt", "\n".join(registry) + "\n")
        self.step(
            "plugin",
            bool(registered) and any("gpu.nvidia.com" in name for name in registry),
            f"pod {self.plugin_pod} Ready; registry {registry}; {len(registered)} kubelet log lines on its registration; "
            f"{len(slices)} slice(s), devices {[d['name'] for d in devices]}, uuid {self.uuid}",
        )

    def samples_run(self) -> None:
        ns = self.samples["namespace"]["metadata"]["name"]
        if not self.api.exists(f"/api/v1/namespaces/{ns}"):
            self.api.create(self.samples["namespace"])
        wait(
            f"ServiceAccount {ns}/default",
            lambda: self.api.exists(f"/api/v1/namespaces/{ns}/serviceaccounts/default"),
            30,
            self.log,
        )
        for template in self.samples["templates"]:
            if not self.api.exists(object_path(template)):
                self.api.create(template)
        first, second = self.samples["pods"]
        self.api.create(first)
        name = first["metadata"]["name"]
        wait(
            f"pod {name} to run",
            lambda: pod_phase(self.api, ns, name) in ("Running", "Failed", "Succeeded"),
            120,
            self.log,
        )
        text = wait(
            f"cuda-check in pod {name}'s log",
            lambda: (t := pod_log(self.api, ns, name)) and ("cuda-check" in t or "rror" in t) and t,
            60,
            self.log,
        )
        time.sleep(2)
        text = pod_log(self.api, ns, name)
        save(self.out, f"pod-{name}.log", text)
        self.judge_log(name, text)
        self.capture_claims(ns, "while-first-runs")
        save(self.out, "cdi-while-first-runs.txt", "\n".join(cdi_listing()) + "\n")
        for spec in CDI_ROOT.glob("*.yaml"):
            save(self.out, f"cdi-spec-{name}.yaml", spec.read_text())
        self.api.create(second)
        other = second["metadata"]["name"]
        time.sleep(6)
        pod = self.api.get(f"/api/v1/namespaces/{ns}/pods/{other}")
        condition = next((c for c in pod["status"].get("conditions", []) if c["type"] == "PodScheduled"), {})
        save(self.out, f"pod-{other}-pending.json", pod)
        self.step(
            "pending",
            pod["status"].get("phase") == "Pending" and condition.get("status") == "False",
            f"pod {other} {pod['status'].get('phase')}: PodScheduled={condition.get('status')} {condition.get('reason')}: {condition.get('message')}",
        )
        self.delete_pod(ns, name)
        wait(
            f"pod {other} to run once {name} released the GPU",
            lambda: pod_phase(self.api, ns, other) == "Running",
            120,
            self.log,
        )
        wait(f"cuda-check in pod {other}'s log", lambda: "cuda-check" in pod_log(self.api, ns, other), 60, self.log)
        time.sleep(2)
        text = pod_log(self.api, ns, other)
        save(self.out, f"pod-{other}.log", text)
        self.judge_log(other, text)
        self.delete_pod(ns, other)
        self.capture_claims(ns, "after-delete")
        save(self.out, "cdi-after-delete.txt", "\n".join(cdi_listing()) + "\n")
        events = self.api.get(f"/api/v1/namespaces/{ns}/events")["items"]
        save(self.out, "events-dra-samples.json", events)
        with contextlib.suppress(NodeError):
            wait(
                "the claims' CDI specs to be removed",
                lambda: not [n for n in cdi_listing() if "claim" in n],
                30,
                self.log,
            )
        claim_specs = [n for n in cdi_listing() if "claim" in n]
        self.step("unprepare", not claim_specs, f"after both pods were deleted: claims gone, CDI root {cdi_listing()}")

    def judge_log(self, name: str, text: str) -> None:
        listed = [line for line in text.splitlines() if line.startswith("GPU ") and "UUID" in line]
        check = [line for line in text.splitlines() if line.startswith("cuda-check ok")]
        uuids = set(UUID.findall("\n".join(listed)))
        self.step(
            f"pod {name}",
            uuids == {self.uuid} and bool(check) and self.uuid in check[0],
            f"nvidia-smi -L: {listed}; {check[0] if check else 'no cuda-check ok line'}; slice uuid {self.uuid}",
        )

    def delete_pod(self, ns: str, name: str) -> None:
        """Deletes a sample pod and waits for the claim made for it (owned by the pod) to go: the unprepare."""
        uid = self.api.get(f"/api/v1/namespaces/{ns}/pods/{name}")["metadata"]["uid"]
        self.api.delete(f"/api/v1/namespaces/{ns}/pods/{name}", grace=1)
        wait(
            f"pod {name} to be gone", lambda: not self.api.exists(f"/api/v1/namespaces/{ns}/pods/{name}"), 90, self.log
        )

        def owned() -> list[str]:
            claims = self.api.get(f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims")["items"]
            return [
                c["metadata"]["name"]
                for c in claims
                if any(o.get("uid") == uid for o in c["metadata"].get("ownerReferences", []))
            ]

        wait(f"the claim of pod {name} to be gone", lambda: not owned(), 60, self.log)
        self.log(f"[{self.meta['line']}] pod {name} deleted and its claim with it; CDI root {cdi_listing()}")

    def capture_claims(self, ns: str, when: str) -> None:
        save(
            self.out,
            f"resourceclaims-{when}.json",
            self.api.get(f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims")["items"],
        )

    def snapshot(self, label: str) -> None:
        """What the verifier's first step reads (tools.verify.runner.read_cluster_state), as the API answered."""
        ns = self.meta["namespace"]
        save(
            self.out,
            f"cluster-{label}.json",
            {
                "nodes": self.api.get("/api/v1/nodes")["items"],
                "driver_pods": self.api.get(f"/api/v1/namespaces/{ns}/pods")["items"],
                "device_classes": self.api.get("/apis/resource.k8s.io/v1/deviceclasses")["items"],
                "resource_slices": self.api.get("/apis/resource.k8s.io/v1/resourceslices")["items"],
            },
        )

    def verify(self, label: str, expect_pass: bool, extra: list[str]) -> None:
        self.snapshot(label)
        report = self.out / f"verify-{label}.json"
        argv = [
            sys.executable,
            "-m",
            "tools.verify",
            "--stack",
            self.meta["stack"],
            "--kubeconfig",
            str(self.node.cp.kubeconfig),
            "--image",
            SAMPLE_IMAGE,
            "--json",
            str(report),
            *extra,
        ]
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        started = time.monotonic()
        proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=env, timeout=400)
        save(
            self.out,
            f"verify-{label}.txt",
            f"$ {' '.join(argv[1:])}\n# exit {proc.returncode}\n{proc.stdout}\n# stderr\n{proc.stderr}",
        )
        try:
            checks = json.loads(report.read_text())["checks"]
        except (OSError, ValueError, KeyError):
            checks = []
        failed = sorted(c["name"] for c in checks if c["status"] == "fail")
        statuses = ", ".join(f"{c['name']} {c['status']}" for c in checks)
        if expect_pass:
            # Only the exporter's step may fail, and only where the stack has an exporter this machine cannot run.
            allowed = ["gpu-metrics"] if self.meta["gpu_metrics"] else []
            ok = bool(checks) and failed == allowed and proc.returncode == (1 if allowed else 0)
        else:
            ok = proc.returncode == 1 and "driver-pods" in failed
        self.step(f"verify {label}", ok, f"exit {proc.returncode} in {time.monotonic() - started:.0f}s: {statuses}")

    def stop_plugin(self) -> None:
        ds = next(o for o in self.chart if o["kind"] == "DaemonSet")
        self.api.delete(object_path(ds))
        wait("the kubelet plugin pod to be gone", lambda: not self.plugin_pods(), 90, self.log)
        self.log(f"[{self.meta['line']}] plugin stopped: DaemonSet {ds['metadata']['name']} deleted")

    def uninstall(self) -> None:
        for obj in reversed(self.chart):
            self.api.delete(object_path(obj))
        for s in self.api.get("/apis/resource.k8s.io/v1/resourceslices")["items"]:
            self.api.delete(f"/apis/resource.k8s.io/v1/resourceslices/{s['metadata']['name']}")
        wait("the plugin's pods to be gone", lambda: not self.plugin_pods(), 90, self.log)

    def local(self) -> dict[str, Any]:
        """Without a GPU: the plugin image, the chart's objects and its pod up to the init container's driver check."""
        try:
            self.plugin_image()
            self.install_chart()

            def init_log() -> str:
                pods = self.plugin_pods()
                if not pods:
                    return ""
                name, ns = pods[0]["metadata"]["name"], self.meta["namespace"]
                try:
                    text = self.api.text(f"/api/v1/namespaces/{ns}/pods/{name}/log?container=init-container")
                except urllib.error.HTTPError:
                    return ""
                return text if "nvidia-smi" in text else ""

            text = wait("the plugin pod's init container to check the driver", init_log, 120, self.log, 2)
            save(self.out, "local-init-container.log", text)
            self.step(
                "local chart", True, f"init container ran its driver check: {text.strip().splitlines()[-1][:300]}"
            )
            self.summary["ok"] = True
        except NodeError as error:
            self.summary.update(ok=False, error=str(error))
        finally:
            with contextlib.suppress(NodeError, ApiError, OSError):
                self.uninstall()
        save(self.out, "summary.json", self.summary)
        return self.summary

    def run(self) -> dict[str, Any]:
        try:
            self.plugin_image()
            self.install_chart()
            self.plugin_registered()
            self.samples_run()
            if self.args.verify:
                # --no-burn-in: tools.verify expects every listed built-in template (Expectations.claim_templates is
                # builtin_templates), so on a one-GPU stack, which creates no multi-gpu template (active_builtin_templates),
                # its burn-in step fails "no whole-node claim template" instead of being not applicable; the first
                # run here showed it (tests/data/gpu-node/25.12.0/verify-pass-with-burn-in.json).
                no_burn_in = ["--no-burn-in"]
                self.verify("pass", True, ["--timeout", "120", "--metrics-timeout", "20", *no_burn_in])
                self.stop_plugin()
                self.verify("plugin-stopped", False, ["--timeout", "45", "--metrics-timeout", "10", *no_burn_in])
            self.summary["ok"] = True
        except NodeError as error:
            self.summary["ok"] = False
            self.summary["error"] = str(error)
            self.log(f"[{self.meta['line']}] stopped: {error}")
        finally:
            self.capture_plugin_logs()
            with contextlib.suppress(NodeError, ApiError, OSError):
                self.uninstall()
        save(self.out, "summary.json", self.summary)
        return self.summary

    def capture_plugin_logs(self) -> None:
        logs = sorted((self.node.work / "pod-logs").glob(f"{self.meta['namespace']}_*/*/*.log"))
        text = "".join(f"==> {p.relative_to(self.node.work)} <==\n{p.read_text(errors='replace')}\n" for p in logs)
        save(self.out, "kubelet-plugin-pod.log", text or "(no plugin pod log files)\n")


def local_pod(api: Api, out: Path, log: Log) -> None:
    """Without a GPU: one pod with no claim, on the CNI bridge, must run and log."""
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "local"}})
    wait(
        "ServiceAccount local/default", lambda: api.exists("/api/v1/namespaces/local/serviceaccounts/default"), 30, log
    )
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "no-claim", "namespace": "local"},
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "c",
                    "image": LOCAL_POD_IMAGE,
                    "command": ["sh", "-c", "echo pod ran as $(id -u 2>/dev/null || echo ?); ls /; sleep 3600"],
                }
            ],
        },
    }
    api.create(pod)
    wait("pod local/no-claim to run", lambda: pod_phase(api, "local", "no-claim") == "Running", 90, log)
    time.sleep(2)
    text = pod_log(api, "local", "no-claim")
    got = api.get("/api/v1/namespaces/local/pods/no-claim")
    save(out, "local-pod.log", text)
    save(out, "local-pod.json", got)
    log(f"local pod Running, podIP {got['status'].get('podIP')}, log: {text.strip()[:200]}")
    api.delete("/api/v1/namespaces/local/pods/no-claim", grace=1)
    wait("pod local/no-claim to be gone", lambda: not api.exists("/api/v1/namespaces/local/pods/no-claim"), 60, log)


def host_facts(out: Path, log: Log) -> None:
    lines = []
    for argv in (
        ["uname", "-a"],
        ["nvidia-smi", "-L"],
        [
            "nvidia-smi",
            "--query-gpu=name,uuid,driver_version,compute_mode,persistence_mode,mig.mode.current",
            "--format=csv",
        ],
        ["python3", "-V"],
        ["findmnt", "-no", "PROPAGATION", "/"],
    ):
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=30)
            lines.append(f"$ {' '.join(argv)}\n{proc.stdout}{proc.stderr}")
        except OSError as error:
            lines.append(f"$ {' '.join(argv)}\n{error}")
    save(out, "host-facts.txt", "\n".join(lines))
    log("host facts written")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bundle", type=Path, required=True, help="folder with bin/*.xz and lines/<line>/")
    parser.add_argument("--work", type=Path, default=Path("/root/gpu-node"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--line", action="append", default=[], help="driver line to run (a folder of BUNDLE/lines)")
    parser.add_argument("--local", action="store_true", help="no GPU: the machinery and a pod without a claim")
    parser.add_argument("--no-verify", dest="verify", action="store_false")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    args.work.mkdir(parents=True, exist_ok=True)
    log = Log(args.out / "run.log")
    host_facts(args.out, log)
    binaries = unpack(args.bundle, args.work, log)
    clear_leftovers(str(binaries["netaddr"]), log)
    if shutil.which("openssl") is None and "openssl" in binaries:
        # The control plane makes its certificates with the openssl CLI; the bundle carries one for machines without.
        os.environ["PATH"] = f"{binaries['openssl'].parent}:{os.environ['PATH']}"
        log(f"openssl: none on PATH, using {binaries['openssl']}")
    # The chart's Bidirectional and HostToContainer mounts need a shared root mount (a VM without systemd leaves it private).
    run(["mount", "--make-rshared", "/"], log)
    moved: list[Path] = []
    if not args.local:
        moved = preset_driver_layout(DRIVER_SOURCES, args.out, log)
    lines = [args.bundle / "lines" / line for line in args.line]
    labels = json.loads((lines[0] / "node.json").read_text())["node_labels"] if lines else {}

    # A fresh cluster each run: the control plane's workdir (etcd's data among it) would otherwise carry the last one.
    shutil.rmtree(args.work / "control-plane", ignore_errors=True)

    summaries = []
    cp = ControlPlane(
        args.work / "control-plane",
        remove_workdir=False,
        workload_controllers=True,
        extra_controllers=("node-lifecycle-controller",),
    )
    node = None
    relay = None
    try:
        with cp:
            for component, path in cp.logs.items():
                log(f"{component} log: {path}")
            api = Api(cp.server, cp.workdir / "pki")
            api_port = int(urllib.parse.urlsplit(cp.server).port or 443)
            relay = ServiceRelay(SERVICE_IP, ("127.0.0.1", api_port), str(binaries["netaddr"]), log)
            node = Node(cp, binaries, args.work, args.out, log, labels)
            node.start()
            node.image(PAUSE_IMAGE, [f"{binaries['pause']}=/pause"], entrypoint=["/pause"])
            # The CDI spec's update-ldcache hook runs the host's /sbin/ldconfig inside the container; where that is
            # Ubuntu's wrapper script it execs /sbin/ldconfig.real, so the image carries both.
            real = ["/sbin/ldconfig.real"] if os.path.exists("/sbin/ldconfig.real") else []
            node.image(
                SAMPLE_IMAGE,
                [
                    "/bin/sh",
                    "/bin/sleep",
                    "/bin/ls",
                    "/usr/bin/id",
                    "/sbin/ldconfig",
                    *real,
                    *GLIBC_EXTRAS,
                    f"{binaries['cuda-check']}=/usr/local/bin/cuda-check",
                ],
            )
            save(args.out, "images.txt", node.ctr("images", "ls"))
            node.start_kubelet()
            got = wait(
                f"node {node.name} Ready",
                lambda: (n := api.get(f"/api/v1/nodes/{node.name}")) and ready(n) and not n["spec"].get("taints") and n,
                120,
                log,
            )
            save(args.out, "node.json", got)
            log(f"node {node.name} registered and Ready, labels {got['metadata'].get('labels')}")
            if args.local:
                local_pod(api, args.out, log)
            for folder in lines:
                line_run = LineRun(api, node, folder, args.out, log, args)
                summaries.append(line_run.local() if args.local else line_run.run())
            save(args.out, "containers-at-end.txt", node.ctr("containers", "ls"))
    except NodeError as error:
        log(f"stopped: {error}")
        summaries.append({"ok": False, "error": str(error)})
    finally:
        if node is not None:
            node.stop()
        if relay is not None:
            relay.close()
        restore_driver_layout(moved, log)
        for component, path in cp.logs.items():
            if path.exists():
                shutil.copy(path, args.out / f"{component}.log")
    ok = bool(summaries) and all(s.get("ok") for s in summaries) if lines else not summaries
    save(args.out, "summary.json", {"ok": ok, "lines": summaries})
    log(f"done: {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
