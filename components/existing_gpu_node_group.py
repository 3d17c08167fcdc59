"""A GPU node group of a cluster the stack does not create: described, never created.

In existing-cluster mode the GPU groups already exist (made in the console, by Terraform, by
another stack). The stack still needs their shape, for the driver's tolerations, the claim
templates and the samples; this component records it, so the plan and the policy pack see
which groups the cluster must have and what labels and taints their nodes must carry.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.model import GpuNodeGroupConfig
from components.values.node_groups import described_gpu_group


@dataclass
class ExistingGpuNodeGroupArgs:
    group: GpuNodeGroupConfig


class ExistingGpuNodeGroup(pulumi.ComponentResource):
    description: dict[str, object]

    def __init__(self, name: str, args: ExistingGpuNodeGroupArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        self.description = described_gpu_group(args.group)
        super().__init__("nebius-dra:nodes:ExistingGpuNodeGroup", name, self.description, opts)
        self.register_outputs(self.description)
