"""The burn-in's Kubernetes objects, as plain API data: an indexed Job, one pod per node of a GPU group.

Each pod claims its devices through the stack's own templates, as users' jobs do: every GPU of
its node from `multi-gpu` (the whole-node template: multiGpuCount 0 means every GPU of the
largest node) and, on an InfiniBand group, one `ib-network` NIC per GPU. The pods carry the
settings RDMA needs (IPC_LOCK, policies/dra_guardrails/rdma_pod_rules.py, checked before the Job is sent) and
a memory-backed /dev/shm for NCCL's intra-node transport.

The launcher. nccl-tests runs several processes (and so several nodes) only under MPI (its
README: "NCCL tests rely on MPI to work on multiple processes, hence multiple nodes"); no
MPI-free launcher ships with it. So on a fabric group the pod of index 0 runs Open MPI's `mpirun`,
which starts one `all_reduce_perf -g 1` per GPU on every pod over SSH, as the MPI Operator does;
the other pods run `sshd` until the Job's success policy (index 0 succeeded) ends them. The SSH
key pair is made for this run only (a Secret owned by the Job). On a group of one node, or one
off the fabric, each pod runs `all_reduce_perf -g <GPUs>` on its own node (NVLink only) through a
local `mpirun -np 1`, and each pod's output is judged alone.

The default image is Nebius's public nccl-tests image (`DEFAULT_IMAGE`): Open MPI, an MPI build of
nccl-tests at `DEFAULT_BINARY` and `sshd`, as Nebius's Run:ai NCCL example runs it (mpirun on the
launcher, `/usr/sbin/sshd -De` on the workers, nebius/nebius-solutions-library) and SkyPilot's
Nebius provisioner names it (skypilot-org/skypilot sky/provision/nebius/constants.py). Any image
with `mpirun`, `sshd`, `ssh-keygen` and an MPI build of all_reduce_perf works: --burn-in-image and
--burn-in-binary.

Nothing outlives the run: the Job has `activeDeadlineSeconds` and `ttlSecondsAfterFinished`, and
the Secret and the headless Service are owned by the Job, so even a verifier killed with SIGKILL
leaves nothing once the deadline and the TTL have passed; a normal end deletes all of it at once.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from components.dra_constants import IB_TEMPLATE, MULTI_GPU_TEMPLATE, NODE_GROUP_LABEL
from policies.dra_guardrails.rdma_pod_rules import MEMLOCK_CAPABILITY
from tools.verify.floors import FLOOR_BYTES
from tools.verify.smoke import MANAGED_BY, MANAGED_BY_LABEL

DEFAULT_IMAGE = "cr.eu-north1.nebius.cloud/nebius-benchmarks/nccl-tests:2.23.4-ubu22.04-cu12.4"
DEFAULT_BINARY = "/opt/nccl_tests/build/all_reduce_perf"
CONTAINER = "all-reduce"
RUN_LABEL = "nebius-dra/burn-in"
GPU_CLAIM = "gpus"
SSH_PORT = 2222
SSH_MOUNT = "/etc/burn-in-ssh"
# After the Job ends, the API server keeps it this long for a verifier that was killed; a live one deletes it at once.
FINISHED_TTL_S = 120


@dataclass(frozen=True)
class Sweep:
    """What each all_reduce_perf process is asked for, as its arguments; its header prints them back ("# nThread 1
    nGpus 8 minBytes 8 maxBytes 1073741824 step: 2(factor) ... validation: 1"), and the verdict compares the two, so
    that a log of another run (a smaller maxBytes, no data check) is never judged as this one.

    The sizes are 8 B to the floors' size (1 GiB) doubling, the range the published floors were measured at; the
    data check is asked for by name (`-c 1`, nccl-tests' default), as the verdict fails a row without it."""

    gpus_per_process: int
    threads: int = 1
    min_bytes: int = 8
    max_bytes: int = FLOOR_BYTES
    step_factor: int = 2
    check: int = 1

    def arguments(self) -> str:
        return (
            f"-b {self.min_bytes} -e {self.max_bytes} -f {self.step_factor} -t {self.threads} "
            f"-g {self.gpus_per_process} -c {self.check}"
        )


@dataclass(frozen=True)
class BurnInPlan:
    """One run: `nodes` pods of group `group`, `gpus` GPUs each, `nics` NIC claims each (0 off the fabric)."""

    name: str
    namespace: str
    group: str
    nodes: int
    gpus: int
    nics: int
    tolerations: tuple[Mapping[str, str], ...]
    image: str
    binary: str
    deadline_s: int

    @property
    def across_nodes(self) -> bool:
        """One all-reduce over every pod (MPI over SSH), or one per pod."""
        return self.nics > 0 and self.nodes > 1

    @property
    def sweep(self) -> Sweep:
        """Across nodes mpirun starts one process per GPU (`-g 1`); alone, one process drives every GPU of its pod."""
        return Sweep(gpus_per_process=1 if self.across_nodes else self.gpus)

    def pod_hostname(self, index: int) -> str:
        """An indexed Job's pod has the hostname `<job>-<index>` (Kubernetes' Indexed completion mode; its name adds a suffix)."""
        return f"{self.name}-{index}"

    def nic_claims(self) -> list[str]:
        return [f"nic-{index}" for index in range(self.nics)]


@dataclass(frozen=True)
class SshKeys:
    private_openssh: str
    public_openssh: str


def new_ssh_keys() -> SshKeys:
    """An Ed25519 key pair for one run, in the OpenSSH formats sshd and ssh read."""
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return SshKeys(private.decode(), public.decode() + " nebius-dra-burn-in\n")


def _labels(plan: BurnInPlan) -> dict[str, str]:
    return {MANAGED_BY_LABEL: MANAGED_BY, "app.kubernetes.io/component": "burn-in", RUN_LABEL: plan.name}


def _ssh_setup() -> str:
    return "\n".join(
        [
            "mkdir -p /root/.ssh /run/sshd && chmod 700 /root/.ssh",
            f"cp {SSH_MOUNT}/id_ed25519 /root/.ssh/id_ed25519 && cp {SSH_MOUNT}/id_ed25519.pub /root/.ssh/authorized_keys",
            "chmod 600 /root/.ssh/id_ed25519 /root/.ssh/authorized_keys",
            f"printf 'Host *\\n  Port {SSH_PORT}\\n  StrictHostKeyChecking no\\n  UserKnownHostsFile /dev/null\\n"
            "  LogLevel ERROR\\n  ConnectTimeout 5\\n' > /root/.ssh/config",
            "ssh-keygen -A >/dev/null",
            f"/usr/sbin/sshd -p {SSH_PORT} -o PermitRootLogin=prohibit-password -o PasswordAuthentication=no",
        ]
    )


def launch_script(plan: BurnInPlan) -> str:
    """What each pod's shell runs; only pod 0 prints all_reduce_perf's output on a fabric group."""
    binary = shlex.quote(plan.binary)
    mpirun = "mpirun --allow-run-as-root --bind-to none -x NCCL_DEBUG=WARN -x LD_LIBRARY_PATH -x PATH"
    if not plan.across_nodes:
        return f"set -eu\nexec {mpirun} -np 1 {binary} {plan.sweep.arguments()}\n"
    hosts = [f"{plan.pod_hostname(index)}.{plan.name}" for index in range(plan.nodes)]
    slots = ",".join(f"{host}:{plan.gpus}" for host in hosts)
    return "\n".join(
        [
            "set -eu",
            _ssh_setup(),
            # Workers only serve mpirun's SSH; the Job's success policy ends them once pod 0 succeeded.
            'if [ "$JOB_COMPLETION_INDEX" != 0 ]; then exec sleep infinity; fi',
            # Every worker's sshd answers before mpirun starts (the Job's deadline bounds the wait).
            f'for host in {" ".join(hosts)}; do until ssh "$host" true 2>/dev/null; do sleep 2; done; done',
            f"exec {mpirun} -np {plan.nodes * plan.gpus} -H {slots} {binary} {plan.sweep.arguments()}",
            "",
        ]
    )


def pod_spec(plan: BurnInPlan) -> dict[str, Any]:
    claims = [{"name": GPU_CLAIM, "resourceClaimTemplateName": MULTI_GPU_TEMPLATE}]
    claims += [{"name": nic, "resourceClaimTemplateName": IB_TEMPLATE} for nic in plan.nic_claims()]
    volumes: list[dict[str, Any]] = [{"name": "shm", "emptyDir": {"medium": "Memory"}}]
    mounts: list[dict[str, Any]] = [{"name": "shm", "mountPath": "/dev/shm"}]
    if plan.across_nodes:
        volumes.append({"name": "ssh", "secret": {"secretName": plan.name, "defaultMode": 0o400}})
        mounts.append({"name": "ssh", "mountPath": SSH_MOUNT, "readOnly": True})
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 0,
        "nodeSelector": {NODE_GROUP_LABEL: plan.group},
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {RUN_LABEL: plan.name}},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        },
        "resourceClaims": claims,
        "containers": [
            {
                "name": CONTAINER,
                "image": plan.image,
                "command": ["bash", "-c", launch_script(plan)],
                "securityContext": {"capabilities": {"add": [MEMLOCK_CAPABILITY]}},
                "resources": {"claims": [{"name": claim["name"]} for claim in claims]},
                "volumeMounts": mounts,
            }
        ],
        "volumes": volumes,
    }
    if plan.tolerations:
        spec["tolerations"] = [dict(toleration) for toleration in plan.tolerations]
    if plan.across_nodes:
        spec["subdomain"] = plan.name
    return spec


def job(plan: BurnInPlan) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "completionMode": "Indexed",
        "completions": plan.nodes,
        "parallelism": plan.nodes,
        "backoffLimit": 0,
        "activeDeadlineSeconds": plan.deadline_s,
        "ttlSecondsAfterFinished": FINISHED_TTL_S,
        "template": {"metadata": {"labels": _labels(plan)}, "spec": pod_spec(plan)},
    }
    if plan.across_nodes:
        # The run is pod 0's mpirun: once it succeeded the workers' sshd is done (JobSuccessPolicy, GA in 1.33).
        spec["successPolicy"] = {"rules": [{"succeededIndexes": "0"}]}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": plan.name, "namespace": plan.namespace, "labels": _labels(plan)},
        "spec": spec,
    }


def owned_by(created_job: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The Job as owner: the garbage collector deletes what it owns with it (also after its TTL)."""
    metadata = created_job.get("metadata", {})
    return [{"apiVersion": "batch/v1", "kind": "Job", "name": metadata.get("name"), "uid": metadata.get("uid")}]


def ssh_secret(plan: BurnInPlan, keys: SshKeys, owners: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": plan.name,
            "namespace": plan.namespace,
            "labels": _labels(plan),
            "ownerReferences": [dict(owner) for owner in owners],
        },
        "type": "Opaque",
        "stringData": {"id_ed25519": keys.private_openssh, "id_ed25519.pub": keys.public_openssh},
    }


def headless_service(plan: BurnInPlan, owners: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Gives each pod the DNS name `<job>-<index>.<job>` mpirun reaches it by, before it is ready."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": plan.name,
            "namespace": plan.namespace,
            "labels": _labels(plan),
            "ownerReferences": [dict(owner) for owner in owners],
        },
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": {RUN_LABEL: plan.name},
            "ports": [{"name": "ssh", "port": SSH_PORT, "targetPort": SSH_PORT}],
        },
    }
