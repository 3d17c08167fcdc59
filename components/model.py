"""The stack's configuration as frozen, typed objects.

The config layer builds these from what the user wrote; everything above it (value
builders, components, the verifier) receives them and never reads `pulumi.Config`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, NamedTuple

from components.dra_constants import (
    DCGM_EXPORTER_REPOSITORY,
    DCGM_EXPORTER_VERSION,
    DEFAULT_CLAIM_NAMESPACE,
    DEFAULT_METRICS_NAMESPACE,
    GPU_BY_PRODUCT_TEMPLATE,
    KUBE_PROMETHEUS_STACK_VERSION,
    LEGACY_CHART,
    MULTI_GPU_TEMPLATE,
    NETWORK_TEMPLATES,
    ON_DEMAND_CAPACITY,
    PROMETHEUS_COMMUNITY_REPOSITORY,
    RENAMED_CHART,
    RESERVED_CAPACITY,
    SPOT_CAPACITY,
)
from components.input.fields import GPU_PRESET_PATTERN
from components.input.node_groups import GpuNodeGroupInput
from components.queue_model import NO_QUEUES, QueuesConfig
from components.repository_model import ChartRepositoryConfig

_GPU_PRESET = re.compile(GPU_PRESET_PATTERN.removesuffix("$") + r"\Z")


def gpus_in_preset(preset: str) -> int | None:
    """GPUs per node of a GPU preset; None for a preset of another shape (a CPU preset)."""
    match = _GPU_PRESET.match(preset)
    return int(match.group(1)) if match else None


# Durations as the Nebius API takes them (pulumi-nebius 0.6.73, strategy.drain_timeout and
# auto_repair.conditions[].timeout): "a sequence of decimal numbers, each with optional fraction and a
# unit suffix ... Valid time units are ns, us (or µs), ms, s, m, h, d". Go's time.ParseDuration, which
# the API's format follows, takes both spellings of the micro sign (U+00B5 and U+03BC) for us.
# The stack-file schema lets only the ASCII units in; this parser reads what the API reads.
DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ns|us|µs|μs|ms|s|m|h|d)")


def duration_seconds(text: str) -> float:
    """Seconds in a duration such as `30m`, `1h30m` or `0`; ValueError for anything else."""
    if text == "0":
        return 0.0
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        raise ValueError(f"{text!r} is not a duration such as 30m or 1h30m")
    return sum(float(number) * DURATION_UNITS[unit] for number, unit in parts)


@dataclass(frozen=True)
class NodeAmount:
    """A number of nodes, or a percentage of the group's nodes: strategy.max_surge and max_unavailable.

    pulumi-nebius 0.6.73 (Mk8sV1NodeGroupStrategyArgs): a percentage of max_surge is rounded up to the
    nearest whole number, one of max_unavailable rounded down.
    """

    count: int | None = None
    percent: int | None = None

    def nodes(self, group_size: int, round_up: bool) -> int:
        if self.count is not None:
            return self.count
        exact = group_size * (self.percent or 0) / 100
        return math.ceil(exact) if round_up else math.floor(exact)

    def __str__(self) -> str:
        return f"{self.percent}%" if self.percent is not None else str(self.count or 0)


@dataclass(frozen=True)
class RolloutStrategy:
    """How Nebius replaces a group's nodes when its template changes: node-group `strategy`, always sent.

    The API's own defaults change in Q3 2026 (pulumi-nebius 0.6.73 docstrings: drain timeout 0 -> 10m,
    max surge 1 -> 0, max unavailable 0 -> 1), so the stack never leaves them to it.
    """

    max_surge: NodeAmount
    max_unavailable: NodeAmount
    drain_timeout: str

    def surge_nodes(self, group_size: int) -> int:
        """Extra nodes Nebius may create during a roll-out (percentages round up)."""
        return self.max_surge.nodes(group_size, round_up=True)

    def unavailable_nodes(self, group_size: int) -> int:
        """Nodes that may be down at once during a roll-out (percentages round down)."""
        return self.max_unavailable.nodes(group_size, round_up=False)

    @property
    def drain_seconds(self) -> float:
        """0 means no limit: a PodDisruptionBudget that forbids an eviction then holds the roll-out."""
        return duration_seconds(self.drain_timeout)

    def __str__(self) -> str:
        return f"maxSurge {self.max_surge}, maxUnavailable {self.max_unavailable}, drainTimeout {self.drain_timeout}"


# GPU groups replace one node at a time and never create an extra one: a surge node needs a whole spare
# GPU node of quota (8 GPUs on training presets), and on reserved capacity it spills into pay-as-you-go
# (AUTO) or stalls the roll-out (STRICT). The drain gets 30 minutes, time for a training job to checkpoint,
# and is bounded so that a PodDisruptionBudget cannot hold a roll-out for ever.
GPU_ROLLOUT = RolloutStrategy(NodeAmount(count=0), NodeAmount(count=1), "30m")
# The system group keeps its controllers up: one extra CPU node during a roll-out, none taken away first.
SYSTEM_ROLLOUT = RolloutStrategy(NodeAmount(count=1), NodeAmount(count=0), "10m")


@dataclass(frozen=True)
class AutoRepairCondition:
    """One `auto_repair.conditions` entry: repair a node whose condition `type` stays `status` for `timeout`,
    or (`disabled`) switch off Nebius's default repair rule for that condition. `status` in Kubernetes spelling."""

    type: str
    status: str
    timeout: str | None = None
    disabled: bool = False

    def __str__(self) -> str:
        return f"{self.type}={self.status} " + ("off" if self.disabled else f"after {self.timeout}")


@dataclass(frozen=True)
class Capacity:
    """Where a GPU group's VMs come from: `on-demand`, `reserved` (capacity block groups) or `spot` (preemptible)."""

    type: str = ON_DEMAND_CAPACITY
    reservation_policy: str | None = None
    capacity_block_group_ids: tuple[str, ...] = ()
    max_price_per_gpu_hour: str | None = None

    @property
    def spot(self) -> bool:
        return self.type == SPOT_CAPACITY

    @property
    def reserved(self) -> bool:
        return self.type == RESERVED_CAPACITY

    def __str__(self) -> str:
        if self.spot:
            price = f"max {self.max_price_per_gpu_hour} USD per GPU-hour" if self.max_price_per_gpu_hour else None
            return f"spot ({price or 'follows the spot price'})"
        if self.reserved:
            blocks = ", ".join(self.capacity_block_group_ids) or "any suitable capacity block"
            return f"reserved {self.reservation_policy} ({blocks})"
        return ON_DEMAND_CAPACITY + (f" (reservations {self.reservation_policy})" if self.reservation_policy else "")


ON_DEMAND = Capacity()


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str


@dataclass(frozen=True)
class Autoscaling:
    min_nodes: int
    max_nodes: int


class NodeRange(NamedTuple):
    """The fewest and the most nodes a group runs: its autoscaling min and max, or its fixed count as both."""

    smallest: int
    largest: int

    @classmethod
    def of(cls, fixed_node_count: int | None, autoscaling: Autoscaling | None) -> NodeRange:
        """The range of a group's scaling; 0 as both while neither is set (an entry refused for it)."""
        if autoscaling is not None:
            return cls(autoscaling.min_nodes, autoscaling.max_nodes)
        return cls(fixed_node_count or 0, fixed_node_count or 0)


@dataclass(frozen=True)
class GpuNodeGroupConfig:
    """A GPU group: the validated entry of the stack file (`settings`) and what the rules across its fields made of it.

    A setting that needs no rule across fields is read from `settings` by the values function that
    uses it (the properties below are such reads), so adding one is a field of GpuNodeGroupInput and
    that use; the fields here are the ones parsing derives (scaling, labels, taints, roll-out, capacity).
    """

    settings: GpuNodeGroupInput
    fixed_node_count: int | None
    autoscaling: Autoscaling | None
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    strategy: RolloutStrategy = GPU_ROLLOUT
    auto_repair: tuple[AutoRepairCondition, ...] = ()
    capacity: Capacity = ON_DEMAND

    @property
    def name(self) -> str:
        return self.settings.name

    @property
    def platform(self) -> str:
        return self.settings.platform

    @property
    def preset(self) -> str:
        return self.settings.preset

    @property
    def drivers_preset(self) -> str | None:
        return self.settings.driversPreset

    @property
    def infiniband(self) -> bool:
        return self.settings.infiniband

    @property
    def boot_disk_gib(self) -> int:
        return self.settings.bootDiskSizeGib

    @property
    def spot(self) -> bool:
        """Preemptible VMs at the spot price."""
        return self.capacity.spot

    @property
    def node_range(self) -> NodeRange:
        return NodeRange.of(self.fixed_node_count, self.autoscaling)

    @property
    def preinstalled_driver(self) -> bool:
        """A drivers preset means the node image ships the NVIDIA driver; without one the GPU Operator installs it."""
        return self.drivers_preset is not None

    @property
    def gpus_per_node(self) -> int:
        return gpus_in_preset(self.preset) or 0


@dataclass(frozen=True)
class ClusterConfig:
    name: str
    parent_id: str
    subnet_id: str
    kubernetes_version: str
    etcd_cluster_size: int
    public_endpoint: bool
    nebius_profile: str | None


@dataclass(frozen=True)
class SystemNodeGroupConfig:
    platform: str
    preset: str
    node_count: int
    boot_disk_gib: int
    strategy: RolloutStrategy = SYSTEM_ROLLOUT
    auto_repair: tuple[AutoRepairCondition, ...] = ()


@dataclass(frozen=True)
class DraDriverConfig:
    chart: str
    version: str
    repository: ChartRepositoryConfig
    namespace: str
    driver_root: str
    compute_domains: bool
    value_overrides: Mapping[str, Any]
    gpu_operator: bool
    network_operator: bool
    gpu_operator_version: str
    network_operator_version: str
    gpu_operator_repository: ChartRepositoryConfig
    network_operator_repository: ChartRepositoryConfig
    secret_values: bool = False
    # GPU groups whose kubelet plugin the stack accepts to lose when the driver root moves (draPluginOutageAccepted).
    plugin_outage_accepted: tuple[str, ...] = ()

    @property
    def renamed_chart(self) -> bool:
        return self.chart == RENAMED_CHART

    @property
    def name_override(self) -> str | None:
        """The renamed chart keeps the old object names, so an upgrade adopts the old release's objects."""
        return LEGACY_CHART if self.renamed_chart else None


@dataclass(frozen=True)
class DeviceToleration:
    """A request's toleration of a device taint (k8s.io/api resource/v1 DeviceToleration); None leaves a field out."""

    key: str | None
    operator: str
    value: str | None
    effect: str | None
    toleration_seconds: int | None


@dataclass(frozen=True)
class DeviceSelection:
    """Which devices, and how many: the body of `exactly` and of each `firstAvailable` entry."""

    device_class: str
    count: int | None
    allocation_mode: str
    selectors: tuple[str, ...] = ()
    admin_access: bool = False
    # Only where the stack's Kubernetes minor has DRADeviceTaints and DRAConsumableCapacity on.
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class SubRequestConfig:
    name: str
    selection: DeviceSelection


@dataclass(frozen=True)
class DeviceRequestConfig:
    """One request: `exactly` one selection, or the first of `first_available` that can be allocated."""

    name: str
    exactly: DeviceSelection | None
    first_available: tuple[SubRequestConfig, ...] = ()

    @property
    def selections(self) -> tuple[DeviceSelection, ...]:
        return (self.exactly,) if self.exactly else tuple(sub.selection for sub in self.first_available)

    @property
    def device_classes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(selection.device_class for selection in self.selections))


@dataclass(frozen=True)
class ConstraintConfig:
    """`matchAttribute` (devices share the attribute) or, where DRAConsumableCapacity is on, `distinctAttribute`."""

    match_attribute: str | None
    requests: tuple[str, ...] = ()
    distinct_attribute: str | None = None


@dataclass(frozen=True)
class OpaqueConfig:
    driver: str
    parameters: Mapping[str, Any]
    requests: tuple[str, ...] = ()


@dataclass(frozen=True)
class UserClaimTemplate:
    name: str
    requests: tuple[DeviceRequestConfig, ...]
    constraints: tuple[ConstraintConfig, ...] = ()
    config: tuple[OpaqueConfig, ...] = ()

    @property
    def admin_access(self) -> bool:
        return any(selection.admin_access for request in self.requests for selection in request.selections)


@dataclass(frozen=True)
class ClaimsConfig:
    namespace: str
    builtin_templates: tuple[str, ...]
    multi_gpu_count: int
    gpu_products: tuple[str, ...]
    sample_pods: bool
    sample_gpu_image: str
    sample_rdma_image: str
    user_templates: tuple[UserClaimTemplate, ...] = ()
    allowed_device_classes: tuple[str, ...] = ()
    infiniband: bool = False

    @property
    def admin_access(self) -> bool:
        """Kubernetes admits adminAccess requests only in a namespace labelled for it."""
        return any(template.admin_access for template in self.user_templates)

    @property
    def active_builtin_templates(self) -> tuple[str, ...]:
        """The listed built-ins this stack's nodes can satisfy.

        Network templates need DRANet's NICs, which exist only on InfiniBand GPU groups; the
        multi-GPU template needs nodes with at least two GPUs.
        """
        return tuple(name for name in self.builtin_templates if name not in self.left_out_builtin_templates)

    @property
    def left_out_builtin_templates(self) -> dict[str, str]:
        """The listed built-ins no node of the stack can serve, each with why: they are not created.

        Network templates need DRANet's NICs, which exist only on InfiniBand GPU groups; the
        multi-GPU template needs nodes with at least two GPUs; the product template needs a product.
        """
        why = {} if self.infiniband else dict.fromkeys(NETWORK_TEMPLATES, "no GPU group has infiniband: true")
        if self.multi_gpu_count < 2:
            why[MULTI_GPU_TEMPLATE] = "no GPU group has two or more GPUs per node"
        if not self.gpu_products:
            why[GPU_BY_PRODUCT_TEMPLATE] = (
                "no GPU group's platform has a known product name; list them in nebius-dra:gpuProducts"
            )
        return {name: reason for name, reason in why.items() if name in self.builtin_templates}


NO_CLAIMS = ClaimsConfig(
    namespace=DEFAULT_CLAIM_NAMESPACE,
    builtin_templates=(),
    multi_gpu_count=0,
    gpu_products=(),
    sample_pods=False,
    sample_gpu_image="",
    sample_rdma_image="",
)


FULL_PROFILE = "full"
BASIC_PROFILE = "basic"


@dataclass(frozen=True)
class ObservabilityConfig:
    """GPU metrics: one DCGM exporter in DRA mode on every GPU node, and optionally Prometheus around it.

    `profile` is the exporter's field list: `full` has DCGM's profiling fields (DCGM_FI_PROF_*),
    `basic` leaves them out for platforms whose profiling module fails (L40S on Nebius).
    """

    enabled: bool
    version: str
    namespace: str
    profile: str
    value_overrides: Mapping[str, Any] = field(default_factory=dict)
    service_monitor: bool = False
    kube_prometheus_stack: bool = False
    kube_prometheus_stack_version: str = KUBE_PROMETHEUS_STACK_VERSION
    runtime_class: str | None = None
    repository: ChartRepositoryConfig = field(default=ChartRepositoryConfig(DCGM_EXPORTER_REPOSITORY))
    kube_prometheus_stack_repository: ChartRepositoryConfig = field(
        default=ChartRepositoryConfig(PROMETHEUS_COMMUNITY_REPOSITORY)
    )

    @property
    def scraped(self) -> bool:
        """A ServiceMonitor is rendered: the user's Prometheus Operator or the stack's kube-prometheus-stack reads it."""
        return self.enabled and (self.service_monitor or self.kube_prometheus_stack)


NO_OBSERVABILITY = ObservabilityConfig(
    enabled=False, version=DCGM_EXPORTER_VERSION, namespace=DEFAULT_METRICS_NAMESPACE, profile=FULL_PROFILE
)


@dataclass(frozen=True)
class PriceSource:
    """Where a price was read and the day it holds; `origin` is the file or config key that carried it."""

    source: str
    date: str
    origin: str
    note: str | None = None
    # Why the table doubts the figure (prices/nebius.yaml `doubtful`); shown beside it wherever it is used.
    doubtful: str | None = None


@dataclass(frozen=True)
class GpuRate:
    """Nebius's unified price of one GPU of a preset, which covers the preset's vCPUs and RAM."""

    usd_per_gpu_hour: Decimal
    source: PriceSource


@dataclass(frozen=True)
class CpuRate:
    usd_per_vcpu_hour: Decimal
    usd_per_gib_hour: Decimal
    source: PriceSource


@dataclass(frozen=True)
class GpuPrice:
    platform: str
    presets: tuple[str, ...]
    on_demand: GpuRate
    spot: GpuRate | None = None


@dataclass(frozen=True)
class CpuPrice:
    platform: str
    on_demand: CpuRate
    spot: CpuRate | None = None


@dataclass(frozen=True)
class PriceTable:
    """GPU prices by platform and preset, CPU prices by platform; what is missing is unpriced, never guessed."""

    gpu: tuple[GpuPrice, ...] = ()
    cpu: tuple[CpuPrice, ...] = ()

    def gpu_price(self, platform: str, preset: str) -> GpuPrice | None:
        return next((p for p in self.gpu if p.platform == platform and preset in p.presets), None)

    def gpu_presets(self, platform: str) -> tuple[str, ...]:
        return tuple(preset for p in self.gpu if p.platform == platform for preset in p.presets)

    def cpu_price(self, platform: str) -> CpuPrice | None:
        return next((p for p in self.cpu if p.platform == platform), None)

    def overridden_by(self, overrides: PriceTable) -> PriceTable:
        """This table with `overrides` winning: per GPU platform and preset, per CPU platform."""
        replaced = {(p.platform, preset) for p in overrides.gpu for preset in p.presets}
        kept_gpu = []
        for price in self.gpu:
            presets = tuple(preset for preset in price.presets if (price.platform, preset) not in replaced)
            if presets:
                kept_gpu.append(
                    price
                    if presets == price.presets
                    else GpuPrice(price.platform, presets, price.on_demand, price.spot)
                )
        overridden_cpu = {p.platform for p in overrides.cpu}
        return PriceTable(
            gpu=(*kept_gpu, *overrides.gpu),
            cpu=(*(p for p in self.cpu if p.platform not in overridden_cpu), *overrides.cpu),
        )


NO_PRICES = PriceTable()


@dataclass(frozen=True)
class StackConfig:
    cluster: ClusterConfig
    system_nodes: SystemNodeGroupConfig
    gpu_node_groups: tuple[GpuNodeGroupConfig, ...]
    infiniband_fabric: str | None
    protect: bool
    node_service_account_id: str | None
    driver: DraDriverConfig
    claims: ClaimsConfig = NO_CLAIMS
    observability: ObservabilityConfig = NO_OBSERVABILITY
    prices: PriceTable = NO_PRICES
    queues: QueuesConfig = NO_QUEUES
    # Existing-cluster mode: the kubeconfig of a cluster the stack does not create (a secret).
    existing_kubeconfig: str | None = None

    @property
    def creates_cluster(self) -> bool:
        return self.existing_kubeconfig is None

    @property
    def infiniband_groups(self) -> tuple[GpuNodeGroupConfig, ...]:
        return tuple(group for group in self.gpu_node_groups if group.infiniband)
