"""What the cloud, Nebius and the NVIDIA chart would put in the cluster, written as Kubernetes objects.

There is no kubelet, no node group and no Helm here, so the tests stand in for them:

- Nodes of every GPU group, labelled exactly as the stack labels them (`gpu_node_labels`), tainted
  with the group's taints, with capacity and a Ready condition set through the status subresource
  (what a kubelet reports); system nodes with `system_node_labels()`.
- ResourceSlices as the NVIDIA DRA driver's kubelet plugin publishes GPUs (`gpu.nvidia.com`) and as
  Nebius's DRANet publishes NICs (`dra.net`, InfiniBand groups only). A 1-GPU H200 node publishes the
  devices the real driver published for a real H200 (tests/data/captured/, the file of the stack's
  chart line), only its node and pool names are this node's. 8-GPU nodes keep a modelled layout (no
  8-GPU capture exists): attribute names and value shapes as in those captures and tests/data/verify/,
  bus IDs and PCIe roots of a real 8-GPU node.
- DeviceClasses as the NVIDIA chart (kubernetes-sigs/dra-driver-nvidia-gpu, deviceclass-*.yaml at
  v0.4.1, identical at v25.12.0) creates them, and the two Nebius network classes.
- The chart's kubelet plugin pods, placed by the real scheduler with the nodeSelector and
  tolerations of the plan's Helm values, then marked Running and Ready; Nebius's dranet DaemonSet.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dra_kube import JSON_PATCH, RESOURCE_API, Kube, Obj
from dra_scenarios import PLATFORM_GPUS

from components.dra_constants import GPU_DRIVER, NETWORK_DRIVER, PCIE_ROOT_ATTRIBUTE
from components.labels import gpu_node_labels, system_node_labels
from components.model import GpuNodeGroupConfig, StackConfig

CAPTURED_SLICES = Path(__file__).resolve().parent.parent.parent / "tests" / "data" / "captured"
PCI_BUS_ID = "resource.kubernetes.io/pciBusID"
DRANET_NODE_LABEL = "nebius.com/dranet-rdma-capable"  # set by Nebius on DRA groups in a GPU cluster, not by the stack
NOW = "2026-11-30T12:00:00Z"

# The NVIDIA chart's classes. At resource.k8s.io/v1 the chart also sets extendedResourceName on
# gpu.nvidia.com; that field belongs to the DRAExtendedResource feature (alpha and off in 1.34, beta
# and on in 1.36: policies/dra_minors.json), so a 1.34 API server drops it: the report says, per
# control plane, whether it was kept.
NVIDIA_CLASSES = {
    "gpu.nvidia.com": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
    "mig.nvidia.com": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'",
    "vfio.gpu.nvidia.com": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'vfio'",
}
GPU_EXTENDED_RESOURCE = "nvidia.com/gpu"
# Nebius creates these on DRA node groups in a GPU cluster. Their real selectors are Nebius-internal
# and not published: these are plausible ones (an InfiniBand NIC is an RDMA NIC whose link layer is
# InfiniBand), written for this test, not copied from a cluster.
NEBIUS_CLASSES = {
    "ib.networking.nebius.ai": (
        "device.driver == 'dra.net' && device.attributes['dra.net'].rdma == true"
        " && device.attributes['dra.net'].encapsulation == 'infiniband'"
    ),
    "rdma.networking.nebius.ai": "device.driver == 'dra.net' && device.attributes['dra.net'].rdma == true",
}

# An 8-GPU H200/H100 node: PCIe bus IDs and roots as modelled in tests/data/verify (one GPU per root;
# no 8-GPU node has been captured, issue 30).
EIGHT_GPU_PCI = (
    ("0000:8d:00.0", "pci0000:8a"),
    ("0000:91:00.0", "pci0000:8e"),
    ("0000:95:00.0", "pci0000:92"),
    ("0000:99:00.0", "pci0000:96"),
    ("0000:ab:00.0", "pci0000:a8"),
    ("0000:af:00.0", "pci0000:ac"),
    ("0000:b3:00.0", "pci0000:b0"),
    ("0000:b7:00.0", "pci0000:b4"),
)
# The InfiniBand NICs of an 8-GPU node, in the order DRANet lists them. The first four sit on PCIe
# roots with no GPU; the last four share a root with GPUs 4-7. So GPUs 0-3 have no NIC on their root,
# and a GPU/NIC pair on one root exists only for GPUs 4-7: a naive first-GPU, first-NIC pick fails the
# gpu-nic-aligned constraint, and the allocator must search.
IB_NICS = (
    ("ibp192s0", "0000:c0:00.0", "pci0000:be", "mlx5_0", 1),
    ("ibp196s0", "0000:c4:00.0", "pci0000:c2", "mlx5_1", 1),
    ("ibp200s0", "0000:c8:00.0", "pci0000:c6", "mlx5_2", 1),
    ("ibp204s0", "0000:cc:00.0", "pci0000:ca", "mlx5_3", 1),
    ("ibp170s0", "0000:aa:00.0", "pci0000:a8", "mlx5_4", 1),
    ("ibp174s0", "0000:ae:00.0", "pci0000:ac", "mlx5_5", 1),
    ("ibp178s0", "0000:b2:00.0", "pci0000:b0", "mlx5_6", 1),
    ("ibp182s0", "0000:b6:00.0", "pci0000:b4", "mlx5_7", 1),
)
PAIRED_ROOTS = {root for _, _, root, _, _ in IB_NICS} & {root for _, root in EIGHT_GPU_PCI}


def preset_resources(preset: str) -> tuple[str, str]:
    """`8gpu-128vcpu-1600gb` or `4vcpu-16gb` -> (cpu, memory) as a kubelet reports capacity."""
    match = re.search(r"(\d+)vcpu-(\d+)gb", preset)
    cpu, memory = (match.group(1), match.group(2)) if match else ("4", "16")
    return cpu, f"{memory}Gi"


def device_class(name: str, expression: str, extended_resource: str | None = None) -> Obj:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": expression}}]}
    if extended_resource:
        spec["extendedResourceName"] = extended_resource
    return {"apiVersion": RESOURCE_API, "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def device_classes() -> list[Obj]:
    return [
        *(
            device_class(name, expr, GPU_EXTENDED_RESOURCE if name == "gpu.nvidia.com" else None)
            for name, expr in NVIDIA_CLASSES.items()
        ),
        *(device_class(name, expr) for name, expr in NEBIUS_CLASSES.items()),
    ]


def gpu_uuid(node: str, index: int) -> str:
    return f"GPU-{uuid.uuid5(uuid.NAMESPACE_URL, f'{node}/gpu/{index}')}"


def captured_devices(chart: str, product: str) -> list[Obj]:
    """The devices the real driver of chart line `chart` published for one real `product` GPU (tests/data/captured).

    Device entries carry no node name, so they are used exactly as captured; the caller's slice gives them
    this node's nodeName and pool name.
    """
    files = sorted(CAPTURED_SLICES.glob(f"resourceslices-h200-{chart}-*.json"))
    if len(files) != 1:
        raise ValueError(f"expected one captured slice file for chart {chart} in {CAPTURED_SLICES}, found {files}")
    [captured] = json.loads(files[0].read_text())["items"]
    devices = captured["spec"]["devices"]
    published = {device["attributes"]["productName"]["string"] for device in devices}
    if published != {product}:
        raise ValueError(f"{files[0].name} holds {sorted(published)}, not {product}: no capture for this GPU")
    return devices


def gpu_devices(node: str, group: GpuNodeGroupConfig, chart: str) -> list[Obj]:
    """The GPUs a node of `group` publishes: the captured real slice on a 1-GPU node, the modelled 8-GPU layout else."""
    product, memory = PLATFORM_GPUS[group.platform]
    count = group.gpus_per_node
    if count == 1:
        return captured_devices(chart, product)
    layout = EIGHT_GPU_PCI[:count]
    if len(layout) != count:
        raise ValueError(f"no PCIe layout for {count} GPUs per node (group {group.name}, preset {group.preset})")
    return [
        {
            "name": f"gpu-{index}",
            "attributes": {
                "type": {"string": "gpu"},
                "uuid": {"string": gpu_uuid(node, index)},
                "productName": {"string": product},
                "brand": {"string": "Nvidia"},
                "architecture": {"string": "Hopper"},
                "cudaComputeCapability": {"version": "9.0.0"},
                "driverVersion": {"version": "580.159.4"},
                "cudaDriverVersion": {"version": "13.0.0"},
                "addressingMode": {"string": "None"},
                PCI_BUS_ID: {"string": bus},
                PCIE_ROOT_ATTRIBUTE: {"string": root},
            },
            "capacity": {"memory": {"value": memory}},
        }
        for index, (bus, root) in enumerate(layout)
    ]


def _nic(name: str, if_name: str, pci: str, root: str, numa: int, rdma: bool, encapsulation: str, **extra: Any) -> Obj:
    attributes = {
        "dra.net/ifName": {"string": if_name},
        "dra.net/pciAddress": {"string": pci},
        "dra.net/numaNode": {"int": numa},
        "dra.net/rdma": {"bool": rdma},
        "dra.net/encapsulation": {"string": encapsulation},
        "dra.net/type": {"string": "device"},
        "dra.net/virtual": {"bool": False},
        "dra.net/sriov": {"bool": False},
        "dra.net/state": {"string": "up"},
        PCIE_ROOT_ATTRIBUTE: {"string": root},
        **{f"dra.net/{key}": value for key, value in extra.items()},
    }
    return {"name": name, "attributes": attributes}


def nic_devices() -> list[Obj]:
    """eth0 (not RDMA) and eight InfiniBand NICs, as DRANet names them (`pci-<address>`)."""
    devices = [_nic("pci-0000-00-05-0", "eth0", "0000:00:05.0", "pci0000:00", 0, False, "ether", mtu={"int": 1500})]
    for if_name, pci, root, rdma_device, numa in IB_NICS:
        devices.append(
            _nic(
                "pci-" + pci.replace(":", "-").replace(".", "-"),
                if_name,
                pci,
                root,
                numa,
                True,
                "infiniband",
                rdmaDevice={"string": rdma_device},
                mtu={"int": 4092},
            )
        )
    return devices


def resource_slice(node: str, driver: str, devices: Sequence[Obj]) -> Obj:
    return {
        "apiVersion": RESOURCE_API,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{driver}"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": list(devices),
        },
    }


def create_node(kube: Kube, name: str, labels: Mapping[str, str], taints: Sequence[Obj], preset: str) -> None:
    """A node as a kubelet would register it: labels, taints, then capacity and Ready via the status subresource."""
    cpu, memory = preset_resources(preset)
    kube.create(
        {
            "apiVersion": "v1",
            "kind": "Node",
            # The well-known labels every kubelet sets on its node (k8s.io/api core/v1 well_known_labels.go:
            # kubernetes.io/hostname, kubernetes.io/os, kubernetes.io/arch); charts select on them (the GPU
            # Operator v26.7.0's operator pod has nodeSelector kubernetes.io/os: linux).
            "metadata": {
                "name": name,
                "labels": {
                    **labels,
                    "kubernetes.io/hostname": name,
                    "kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64",
                },
            },
            "spec": {"taints": list(taints)},
        }
    )
    kube.patch(
        "v1",
        "Node",
        name,
        {
            "status": {
                "capacity": {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "200Gi"},
                "allocatable": {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "190Gi"},
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "reason": "KubeletReady",
                        "message": "stand-in node for the DRA e2e tests (no kubelet)",
                        "lastHeartbeatTime": NOW,
                        "lastTransitionTime": NOW,
                    }
                ],
                "nodeInfo": {
                    # A node group runs the control plane's release (Nebius upgrades the groups with it).
                    "kubeletVersion": kube.server_version,
                    "architecture": "amd64",
                    "operatingSystem": "linux",
                    "osImage": "Ubuntu 24.04.3 LTS",
                    "kernelVersion": "6.18.44",
                    "containerRuntimeVersion": "containerd://2.1.4",
                    "kubeProxyVersion": "",
                    "machineID": uuid.uuid5(uuid.NAMESPACE_URL, name).hex,
                    "systemUUID": str(uuid.uuid5(uuid.NAMESPACE_DNS, name)),
                    "bootID": str(uuid.uuid5(uuid.NAMESPACE_OID, name)),
                },
            }
        },
        status=True,
    )
    # TaintNodesByCondition admission adds node.kubernetes.io/not-ready on create; the node-lifecycle
    # controller (not running: there are no kubelets) would lift it once Ready. Do its job.
    kube.patch(
        "v1", "Node", name, [{"op": "replace", "path": "/spec/taints", "value": list(taints)}], content_type=JSON_PATCH
    )


def node_name(stack: str, group: str, index: int) -> str:
    return f"{stack}-{group}-{index}"


def group_node_count(group: GpuNodeGroupConfig) -> int:
    """The nodes a group has right after `pulumi up`: its fixed count, or the autoscaler's minimum."""
    return group.fixed_node_count or (group.autoscaling.min_nodes if group.autoscaling else 0)


def create_stack_nodes(kube: Kube, stack: str, config: StackConfig, nodes: dict[str, str | None]) -> None:
    """Every node the stack's groups start with, and their slices, recorded in `nodes` (name -> GPU group, None: system)."""
    for index in range(config.system_nodes.node_count):
        name = node_name(stack, "system", index)
        create_node(kube, name, system_node_labels(), [], config.system_nodes.preset)
        nodes[name] = None
    for group in config.gpu_node_groups:
        labels = gpu_node_labels(group.name, group.preinstalled_driver, group.labels)
        if group.infiniband:
            labels = {**labels, DRANET_NODE_LABEL: "true"}
        taints = [{"key": t.key, "value": t.value, "effect": t.effect} for t in group.taints]
        for index in range(group_node_count(group)):
            name = node_name(stack, group.name, index)
            create_node(kube, name, labels, taints, group.preset)
            kube.create(resource_slice(name, GPU_DRIVER, gpu_devices(name, group, config.driver.chart)))
            if group.infiniband:
                kube.create(resource_slice(name, NETWORK_DRIVER, nic_devices()))
            nodes[name] = group.name


def kubelet_plugin_pod(node: str, namespace: str, release: str, chart_version: str, values: Mapping[str, Any]) -> Obj:
    """One pod of the chart's kubelet-plugin DaemonSet as the DaemonSet controller would create it for `node`.

    The nodeSelector and tolerations come from the plan's Helm values, so the real scheduler decides
    whether the plugin can land on the node; the DaemonSet controller pins each pod to its node with
    a matchFields affinity, which this pod carries too.
    """
    plugin = values.get("kubeletPlugin") or {}
    image = f"nvcr.io/nvidia/k8s-dra-driver-gpu:v{chart_version}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{release}-kubelet-plugin-{uuid.uuid5(uuid.NAMESPACE_URL, node).hex[:5]}",
            "namespace": namespace,
            "labels": {
                "app.kubernetes.io/name": release,
                "app.kubernetes.io/instance": release,
                f"{release}-component": "kubelet-plugin",
            },
        },
        "spec": {
            "nodeSelector": dict(plugin.get("nodeSelector") or {}),
            "tolerations": list(plugin.get("tolerations") or []),
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                        ]
                    }
                }
            },
            "priorityClassName": "system-node-critical",
            "containers": [{"name": "gpus", "image": image}, {"name": "compute-domains", "image": image}],
        },
    }


def running_status(pod: Mapping[str, Any]) -> Obj:
    """The status a kubelet would report once every container runs and is ready."""
    conditions = [
        {"type": kind, "status": "True", "lastTransitionTime": NOW}
        for kind in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
    ]
    return {
        "status": {
            "phase": "Running",
            "conditions": conditions,
            "hostIP": "10.0.0.10",
            "podIP": "10.1.0.10",
            "startTime": NOW,
            "containerStatuses": [
                {
                    "name": c["name"],
                    "image": c["image"],
                    "imageID": "",
                    "ready": True,
                    "started": True,
                    "restartCount": 0,
                    "state": {"running": {"startedAt": NOW}},
                }
                for c in pod["spec"]["containers"]
            ],
        }
    }


def dranet_daemonset(labelled_nodes: int) -> tuple[Obj, Obj]:
    """Nebius's DRANet DaemonSet in kube-system and the status its controller would report."""
    manifest = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "dranet", "namespace": "kube-system", "labels": {"app": "dranet"}},
        "spec": {
            "selector": {"matchLabels": {"app": "dranet"}},
            "template": {
                "metadata": {"labels": {"app": "dranet"}},
                "spec": {
                    "hostNetwork": True,
                    "nodeSelector": {DRANET_NODE_LABEL: "true"},
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [{"name": "dranet", "image": "registry.k8s.io/networking/dranet:v1.1.0"}],
                },
            },
        },
    }
    status = {
        "status": {
            "currentNumberScheduled": labelled_nodes,
            "desiredNumberScheduled": labelled_nodes,
            "numberAvailable": labelled_nodes,
            "numberMisscheduled": 0,
            "numberReady": labelled_nodes,
            "updatedNumberScheduled": labelled_nodes,
            "observedGeneration": 1,
        }
    }
    return manifest, status
