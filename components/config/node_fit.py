"""What one claim can ever get: its devices all come from one node, so a node of some group must hold them.

Kubernetes allocates every device of a ResourceClaim from one node (the scheduler picks the node,
then the devices in its ResourceSlices; k8s.io/dynamic-resource-allocation structured allocator),
so a template that asks one node for more GPUs or NICs than the largest node of the stack has is
accepted by the API server and stays Pending for ever.

A node holds its preset's GPUs (`<G>gpu`) and, in an InfiniBand GPU cluster, one NIC per GPU
(tests/data/resourceslice-dranet-ib.yaml). How those devices sit on PCIe roots is not counted
here: no 8-GPU node's slices have been captured (issue 30), so a `pcieRoot` constraint over
several devices is the policy pack's advisory `pcie-root-constraint-per-pair`, never a refusal.
MIG devices and classes of other drivers are not counted either: their number per node is not
known here, so those requests are never refused by this rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from components.dra_constants import ALL_DEVICES, GPU_CLASS, NETWORK_CLASSES, VFIO_CLASS
from components.model import DeviceSelection, GpuNodeGroupConfig

GPU_CLASSES = (GPU_CLASS, VFIO_CLASS)


@dataclass(frozen=True)
class Devices:
    """GPUs and InfiniBand/RDMA NICs: what a node holds, or what a claim asks one node for."""

    gpus: int = 0
    nics: int = 0

    def __add__(self, other: Devices) -> Devices:
        return Devices(self.gpus + other.gpus, self.nics + other.nics)

    def fits(self, node: Devices) -> bool:
        return self.gpus <= node.gpus and self.nics <= node.nics

    def described(self) -> str:
        parts = [f"{self.gpus} GPU(s)"] if self.gpus else []
        parts += [f"{self.nics} NIC(s)"] if self.nics else []
        return " and ".join(parts) or "no GPU or NIC"


def node_devices(group: GpuNodeGroupConfig) -> Devices:
    """A node's GPUs (its preset's `<G>gpu`) and, in the InfiniBand GPU cluster, one NIC per GPU."""
    return Devices(group.gpus_per_node, group.gpus_per_node if group.infiniband else 0)


def selection_devices(selection: DeviceSelection, node: Devices) -> Devices:
    """What one `exactly` or `firstAvailable` entry takes from `node`; `All` takes every device, and at least one.

    A request with `capacity` takes a share of a device that allows several allocations (DRAConsumableCapacity),
    so two such requests may get one device: it is not counted.
    """
    kind = "gpus" if selection.device_class in GPU_CLASSES else None
    kind = "nics" if selection.device_class in NETWORK_CLASSES else kind
    if kind is None or selection.capacity:
        return Devices()
    wanted = max(getattr(node, kind), 1) if selection.allocation_mode == ALL_DEVICES else selection.count or 1
    return Devices(**{kind: wanted})


def request_devices(selections: Sequence[DeviceSelection], node: Devices) -> Devices:
    """The least any of a request's alternatives takes: `firstAvailable` gets the first that fits, so this errs towards accepting."""
    taken = [selection_devices(selection, node) for selection in selections]
    return Devices(min((t.gpus for t in taken), default=0), min((t.nics for t in taken), default=0))


def claim_devices(requests: Iterable[Sequence[DeviceSelection]], node: Devices) -> Devices:
    """What a claim takes from one node: the sum of its requests, each of which gets its own devices."""
    total = Devices()
    for selections in requests:
        total = total + request_devices(selections, node)
    return total


def largest_node(groups: Sequence[GpuNodeGroupConfig]) -> tuple[GpuNodeGroupConfig, Devices] | None:
    return max(
        ((group, node_devices(group)) for group in groups), key=lambda pair: (pair[1].gpus, pair[1].nics), default=None
    )


def unfit_reason(requests: Sequence[Sequence[DeviceSelection]], groups: Sequence[GpuNodeGroupConfig]) -> str | None:
    """Why no node of any group can hold the claim's devices, naming the largest node; None when one can."""
    if any(claim_devices(requests, node_devices(group)).fits(node_devices(group)) for group in groups):
        return None
    largest = largest_node(groups)
    if largest is None:
        return None
    group, node = largest
    asked = claim_devices(requests, node)
    return (
        f"asks one node for {asked.described()}, but the largest GPU node has {node.gpus} GPU(s) and {node.nics} NIC(s) "
        f"(group {group.name}, preset {group.preset}); a claim's devices all come from one node, so it could never be allocated"
    )
