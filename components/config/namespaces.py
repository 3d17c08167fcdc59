"""The namespaces the stack creates, and the names none of them may take.

The stack registers a Namespace for its claim templates and samples (`claimNamespace`) and one per
queue team, and `pulumi destroy` deletes them with everything in them; each Helm release creates its
own namespace if missing. So none may be a namespace the cluster owns (Kubernetes creates `default`,
`kube-system`, `kube-public` and `kube-node-lease` itself, and a destroy would delete what runs there),
nor start with `kube-`, the prefix Kubernetes reserves for its system namespaces (a managed cluster's
add-ons live in such namespaces), and a namespace the stack creates for its own objects may not be the
namespace of one of its releases, as the stack config sets them.
"""

from __future__ import annotations

from collections.abc import Mapping

from components.config.errors import ConfigProblems, shown
from components.dra_constants import GPU_OPERATOR_NAMESPACE, MONITORING_NAMESPACE, NETWORK_OPERATOR_NAMESPACE
from components.input.fields import KUBERNETES_NAMESPACES, RESERVED_NAMESPACE_PREFIX
from components.input.queues import QueuesInput
from components.input.stack import StackInput
from components.model import DraDriverConfig

NAMESPACES_PAGE = "kubernetes.io/docs/concepts/overview/working-with-objects/namespaces"


def defaulted_kueue_namespace(queues: QueuesInput) -> dict[str, str]:
    """Kueue's namespace where the stack installs Kueue (`queues` declares teams) and leaves its namespace at the
    default, with what runs there: a namespace setting that takes it is then the one the user wrote, so it is refused
    on that setting (Kueue's own check, components/config/queues.py, leaves this collision to it)."""
    if not queues.teams or "namespace" in queues.model_fields_set:
        return {}
    return {queues.namespace: "Kueue's release (nebius-dra:queues namespace, left at its default)"}


def fixed_release_namespaces(settings: StackInput, gpu_operator: bool, network_operator: bool) -> dict[str, str]:
    """The namespaces of the releases whose namespace no setting of the stack file moves, each with what runs there
    and the setting that installs it: the DRA driver's namespace is checked against these, as every other namespace
    is."""
    releases = defaulted_kueue_namespace(settings.queues)
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
    where: str,
    namespace: str,
    taken: Mapping[str, str],
    purpose: str,
    problems: ConfigProblems,
    example: str | None = None,
) -> bool:
    """Records why the namespace `where` names cannot be one the stack creates; True when it was refused.

    `taken` holds the namespaces of the stack's releases and objects it must stay apart from, with what
    is there; `purpose` says what the namespace is for and ends the message, with `example` (the setting's default)
    as a name to pick instead where that name is free: never the refused value, nor one `taken` holds.
    """
    if example is not None and example != namespace and example not in taken:
        purpose = f"{purpose}, for example {example}"
    if namespace in KUBERNETES_NAMESPACES:
        problems.add(
            where,
            f"got {shown(namespace)}, a namespace Kubernetes creates and owns ({', '.join(KUBERNETES_NAMESPACES)}); "
            f"{purpose}",
        )
        return True
    if namespace.startswith(RESERVED_NAMESPACE_PREFIX):
        problems.add(
            where,
            f"got {shown(namespace)}, which starts with {RESERVED_NAMESPACE_PREFIX}, the prefix Kubernetes reserves for "
            f'its system namespaces ({NAMESPACES_PAGE}: "Avoid creating namespaces with the prefix '
            f'{RESERVED_NAMESPACE_PREFIX}"); {purpose}',
        )
        return True
    if namespace in taken:
        problems.add(where, f"got {shown(namespace)}, the namespace of {taken[namespace]}; {purpose}")
        return True
    return False
