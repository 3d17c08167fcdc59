"""The namespaces the stack creates, and the names none of them may take.

The stack registers a Namespace for its claim templates and samples (`claimNamespace`) and one per
queue team, and `pulumi destroy` deletes them with everything in them; each Helm release creates its
own namespace if missing. So none may be a namespace the cluster owns (Kubernetes creates `default`,
`kube-system`, `kube-public` and `kube-node-lease` itself, and a destroy would delete what runs there),
and a namespace the stack creates for its own objects may not be the namespace of one of its
releases, as the stack config sets them.
"""

from __future__ import annotations

from collections.abc import Mapping

from components.config.errors import ConfigProblems, shown
from components.dra_constants import GPU_OPERATOR_NAMESPACE, MONITORING_NAMESPACE, NETWORK_OPERATOR_NAMESPACE
from components.input.stack import StackInput
from components.model import DraDriverConfig

# The namespaces a cluster is created with (kubernetes.io/docs/concepts/overview/working-with-objects/namespaces,
# "Initial namespaces").
KUBERNETES_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def fixed_release_namespaces(settings: StackInput, gpu_operator: bool, network_operator: bool) -> dict[str, str]:
    """The namespaces of the releases whose namespace no setting moves, each with what runs there and the setting
    that installs it: the DRA driver's namespace is checked against these, as every other namespace is."""
    releases = {}
    if gpu_operator:
        releases[GPU_OPERATOR_NAMESPACE] = "the GPU Operator's release (for the gpuNodeGroups without driversPreset)"
    if network_operator:
        releases[NETWORK_OPERATOR_NAMESPACE] = (
            "the Network Operator's release (for the infiniband gpuNodeGroups without driversPreset)"
        )
    if settings.kubePrometheusStack:
        releases[MONITORING_NAMESPACE] = "the kube-prometheus-stack release (nebius-dra:kubePrometheusStack)"
    return releases


def release_namespaces(settings: StackInput, driver: DraDriverConfig, with_metrics: bool = True) -> dict[str, str]:
    """The namespace of each Helm release the stack installs but Kueue's (`queues` holds it), and what runs
    there; without the GPU metrics exporter's for the check of its own."""
    releases = fixed_release_namespaces(settings, driver.gpu_operator, driver.network_operator)
    if with_metrics and settings.gpuMetrics:
        releases[settings.gpuMetricsNamespace] = "the GPU metrics exporter's release (nebius-dra:gpuMetricsNamespace)"
    releases[driver.namespace] = "the DRA driver's release (nebius-dra:draDriverNamespace)"
    return releases


def refuse_taken_namespace(
    where: str, namespace: str, taken: Mapping[str, str], purpose: str, problems: ConfigProblems
) -> bool:
    """Records why the namespace `where` names cannot be one the stack creates; True when it was refused.

    `taken` holds the namespaces of the stack's releases and objects it must stay apart from, with what
    is there; `purpose` says what the namespace is for and ends the message (what to pick instead).
    """
    if namespace in KUBERNETES_NAMESPACES:
        problems.add(
            where,
            f"got {shown(namespace)}, a namespace Kubernetes creates and owns ({', '.join(KUBERNETES_NAMESPACES)}); "
            f"{purpose}",
        )
        return True
    if namespace in taken:
        problems.add(where, f"got {shown(namespace)}, the namespace of {taken[namespace]}; {purpose}")
        return True
    return False
