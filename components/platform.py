"""The whole stack as one component: cluster, node groups, fabric, access, and what runs on it."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.cluster import Mk8sCluster, Mk8sClusterArgs
from components.cluster_access import ClusterAccess, ClusterAccessArgs
from components.cost import CostEstimate, CostEstimateArgs
from components.dra_driver import DraDriver, DraDriverArgs
from components.dra_workloads import DraWorkloads, DraWorkloadsArgs
from components.existing_gpu_node_group import ExistingGpuNodeGroup, ExistingGpuNodeGroupArgs
from components.gpu_metrics import GpuMetrics, GpuMetricsArgs
from components.gpu_node_group import GpuNodeGroup, GpuNodeGroupArgs
from components.infiniband_fabric import InfinibandFabric, InfinibandFabricArgs
from components.kueue import TeamQueues, TeamQueuesArgs
from components.labels import system_node_labels
from components.model import StackConfig
from components.nvidia_operator import NvidiaOperator, NvidiaOperatorArgs
from components.system_node_group import SystemNodeGroup, SystemNodeGroupArgs
from components.values.cost import stack_cost
from components.values.gpu_operator import gpu_operator_spec, network_operator_spec
from components.values.queue_cost import team_quota_costs

# Pulumi waits about 10 minutes for a Pod to become ready. When the GPU Operator builds the
# driver on freshly joined nodes, the driver, then the kubelet plugin, then the CUDA image
# pull can take longer than that.
OPERATOR_SAMPLE_POD_TIMEOUT = "30m"


@dataclass
class DraPlatformArgs:
    config: StackConfig


class DraPlatform(pulumi.ComponentResource):
    cluster: Mk8sCluster | None
    system_nodes: SystemNodeGroup | None
    fabric: InfinibandFabric | None
    gpu_node_groups: dict[str, GpuNodeGroup]
    existing_gpu_node_groups: dict[str, ExistingGpuNodeGroup]
    access: ClusterAccess
    gpu_operator: NvidiaOperator | None
    network_operator: NvidiaOperator | None
    dra_driver: DraDriver
    metrics: GpuMetrics | None
    workloads: DraWorkloads
    queues: TeamQueues | None
    cost: CostEstimate | None

    def __init__(self, name: str, args: DraPlatformArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("nebius-dra:index:DraPlatform", name, None, opts)
        config = args.config
        child = pulumi.ResourceOptions(parent=self)
        if config.existing_kubeconfig is None:
            self._create_cluster(name, config, child)
        else:
            self._describe_existing_cluster(name, config, child)
        self._install_drivers(name, config, child)
        self.metrics = (
            GpuMetrics(
                f"{name}-metrics",
                GpuMetricsArgs(
                    observability=config.observability,
                    gpu_taints=[taint for group in config.gpu_node_groups for taint in group.taints],
                    system_node_selector=system_node_labels(),
                    provider=self.access.provider,
                    depends_on=[*self._system_nodes(), *([self.gpu_operator.release] if self.gpu_operator else [])],
                ),
                child,
            )
            if config.observability.enabled
            else None
        )
        self.workloads = DraWorkloads(
            f"{name}-workloads",
            DraWorkloadsArgs(
                provider=self.access.provider,
                claims=config.claims,
                gpu_groups=config.gpu_node_groups,
                depends_on=[*self.gpu_node_groups.values(), self.dra_driver],
                sample_pod_create_timeout=OPERATOR_SAMPLE_POD_TIMEOUT if self.gpu_operator else None,
            ),
            child,
        )
        self.queues = (
            TeamQueues(
                f"{name}-queues",
                TeamQueuesArgs(
                    queues=config.queues,
                    claims=config.claims,
                    gpu_groups=config.gpu_node_groups,
                    system_node_selector=system_node_labels(),
                    provider=self.access.provider,
                    depends_on=self._system_nodes(),
                ),
                child,
            )
            if config.queues.enabled
            else None
        )
        # The stack's nodes cost what it creates; an existing cluster's nodes are not its to price.
        self.cost = (
            CostEstimate(
                f"{name}-cost", CostEstimateArgs(estimate=stack_cost(config), teams=team_quota_costs(config)), child
            )
            if config.creates_cluster
            else None
        )
        self.register_outputs(
            {
                "cluster_id": self.cluster.cluster_id if self.cluster else None,
                "kubeconfig": self.access.kubeconfig,
            }
        )

    def _create_cluster(self, name: str, config: StackConfig, child: pulumi.ResourceOptions) -> None:
        """The mk8s cluster, its system and GPU node groups, the InfiniBand fabric, and access built from them."""
        self.existing_gpu_node_groups = {}
        self.cluster = Mk8sCluster(
            f"{name}-mk8s",
            Mk8sClusterArgs(settings=config.cluster, protect=config.protect),
            child,
        )
        self.system_nodes = SystemNodeGroup(
            f"{name}-system",
            SystemNodeGroupArgs(
                cluster_id=self.cluster.cluster_id,
                cluster_name=config.cluster.name,
                settings=config.system_nodes,
                service_account_id=config.node_service_account_id,
                kubernetes_version=config.cluster.kubernetes_version,
            ),
            child,
        )
        self.fabric = (
            InfinibandFabric(
                f"{name}-fabric",
                InfinibandFabricArgs(
                    parent_id=config.cluster.parent_id,
                    cluster_name=config.cluster.name,
                    fabric=config.infiniband_fabric,
                    protect=config.protect,
                ),
                child,
            )
            if config.infiniband_groups and config.infiniband_fabric
            else None
        )
        self.gpu_node_groups = {
            group.name: GpuNodeGroup(
                f"{name}-gpu-{group.name}",
                GpuNodeGroupArgs(
                    cluster_id=self.cluster.cluster_id,
                    cluster_name=config.cluster.name,
                    group=group,
                    gpu_cluster_id=self.fabric.gpu_cluster.id if group.infiniband and self.fabric else None,
                    service_account_id=config.node_service_account_id,
                    protect=config.protect,
                    kubernetes_version=config.cluster.kubernetes_version,
                    project_id=config.cluster.parent_id,
                ),
                child,
            )
            for group in config.gpu_node_groups
        }
        self.access = ClusterAccess(
            f"{name}-access",
            ClusterAccessArgs(
                cluster_name=config.cluster.name,
                cluster_id=self.cluster.cluster_id,
                endpoint=self.cluster.endpoint,
                ca_certificate=self.cluster.ca_certificate,
                nebius_profile=config.cluster.nebius_profile,
            ),
            child,
        )

    def _system_nodes(self) -> list[pulumi.Resource]:
        """What Helm releases wait for: the system node group the stack creates, nothing on an existing cluster."""
        return [self.system_nodes.node_group] if self.system_nodes else []

    def _describe_existing_cluster(self, name: str, config: StackConfig, child: pulumi.ResourceOptions) -> None:
        """Existing-cluster mode: no Nebius resource; access from the given kubeconfig, the GPU groups described."""
        self.cluster = None
        self.system_nodes = None
        self.fabric = None
        self.gpu_node_groups = {}
        self.existing_gpu_node_groups = {
            group.name: ExistingGpuNodeGroup(f"{name}-gpu-{group.name}", ExistingGpuNodeGroupArgs(group=group), child)
            for group in config.gpu_node_groups
        }
        self.access = ClusterAccess(
            f"{name}-access",
            ClusterAccessArgs(
                cluster_name=config.cluster.name,
                cluster_id=f"existing:{config.cluster.name}",
                existing_kubeconfig=config.existing_kubeconfig,
            ),
            child,
        )

    def _install_drivers(self, name: str, config: StackConfig, child: pulumi.ResourceOptions) -> None:
        """Helm releases wait for the system nodes, never for GPU groups: GPU pods land as GPU nodes join."""
        system_nodes = self._system_nodes()
        provider = self.access.provider
        driver = config.driver
        operator_taints = [
            taint for group in config.gpu_node_groups if not group.preinstalled_driver for taint in group.taints
        ]
        gpu_taints = [taint for group in config.gpu_node_groups for taint in group.taints]
        self.gpu_operator = (
            NvidiaOperator(
                f"{name}-gpu-operator",
                NvidiaOperatorArgs(
                    gpu_operator_spec(driver, operator_taints, gpu_taints),
                    provider,
                    system_nodes,
                ),
                child,
            )
            if driver.gpu_operator
            else None
        )
        self.network_operator = (
            NvidiaOperator(
                f"{name}-network-operator",
                NvidiaOperatorArgs(
                    network_operator_spec(driver),
                    provider,
                    [*system_nodes, *([self.gpu_operator.release] if self.gpu_operator else [])],
                ),
                child,
            )
            if driver.network_operator
            else None
        )
        self.dra_driver = DraDriver(
            f"{name}-dra-driver",
            DraDriverArgs(
                driver=driver,
                gpu_taints=gpu_taints,
                provider=provider,
                depends_on=[*system_nodes, *([self.gpu_operator.release] if self.gpu_operator else [])],
            ),
            child,
        )
