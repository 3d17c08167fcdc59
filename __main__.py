"""Nebius mk8s with DRA-enabled GPU node groups: config in, one component, outputs out."""

from pathlib import Path

import pulumi

from components.cyclic_gc import without_cyclic_gc

# The validation models and every registration stay live for the whole run: collecting cycles meanwhile, or after,
# only walks them (components/cyclic_gc.py).
with without_cyclic_gc(freeze_after=True):
    from components.config import parse_stack_config, read_raw_config
    from components.platform import DraPlatform, DraPlatformArgs

    raw_config = read_raw_config(Path(__file__).with_name("Pulumi.yaml"))
    config = parse_stack_config(raw_config, pulumi.get_stack())
    platform = DraPlatform(f"dra-{pulumi.get_stack()}", DraPlatformArgs(config=config))

    if platform.cluster is not None:
        pulumi.export("clusterId", platform.cluster.cluster_id)
        pulumi.export("clusterEndpoint", platform.cluster.endpoint)
    pulumi.export("kubeconfig", platform.access.kubeconfig)
    pulumi.export("gpuNodeGroupIds", {name: group.node_group.id for name, group in platform.gpu_node_groups.items()})
