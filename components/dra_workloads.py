"""The claim templates and sample Pods, in their own namespace, created through the cluster's provider.

Templates need nothing but the API server: a ResourceClaimTemplate is only a recipe until a
Pod uses it. The sample Pods need the DRA driver's DeviceClasses to be scheduled, so they
wait for whatever `depends_on` names (the driver's release).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from pulumi_kubernetes.core import v1 as core
from pulumi_kubernetes.meta import v1 as meta
from pulumi_kubernetes.resource import v1 as dra

from components.labels import MANAGED_LABELS
from components.model import ClaimsConfig, GpuNodeGroupConfig
from components.values.claim_templates import claim_template_specs, namespace_labels, template_spec_args
from components.values.sample_pods import pod_spec_args, sample_pod_specs

# The API server refuses any change to a ResourceClaimTemplate's spec (k8s.io/kubernetes v1.34
# pkg/apis/resource/validation ValidateResourceClaimTemplateUpdate: "field is immutable"), and the
# Kubernetes provider plans such a change as an update, which fails (seen with the real CLI in
# e2e/cli). So a changed spec replaces the template, deleted first: the new one takes the same name.
IMMUTABLE_SPEC = pulumi.ResourceOptions(replace_on_changes=["spec"], delete_before_replace=True)


DRA_WORKLOADS_TYPE = "nebius-dra:workloads:DraWorkloads"
BUILTINS_LEFT_OUT = "builtinTemplatesLeftOut"


@dataclass
class DraWorkloadsArgs:
    provider: k8s.Provider
    claims: ClaimsConfig
    gpu_groups: Sequence[GpuNodeGroupConfig]
    depends_on: Sequence[pulumi.Resource] = field(default_factory=list)
    sample_pod_create_timeout: str | None = None


class DraWorkloads(pulumi.ComponentResource):
    namespace: core.Namespace | None
    claim_templates: dict[str, dra.ResourceClaimTemplate]
    sample_pods: dict[str, core.Pod]

    def __init__(self, name: str, args: DraWorkloadsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        claims = args.claims
        # The built-ins the stack lists but no node of it can serve are not created; recorded with why, so the
        # plan names them (a template that selects what no node has would leave every claim pending).
        left_out = claims.left_out_builtin_templates
        super().__init__(DRA_WORKLOADS_TYPE, name, {BUILTINS_LEFT_OUT: left_out} if left_out else None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        templates = claim_template_specs(claims)
        pods = sample_pod_specs(claims, args.gpu_groups)
        self.namespace = (
            core.Namespace(
                f"{name}-namespace",
                metadata=meta.ObjectMetaArgs(name=claims.namespace, labels=namespace_labels(claims, MANAGED_LABELS)),
                opts=child,
            )
            if templates or pods
            else None
        )
        namespace_name = self.namespace.metadata.name if self.namespace else None
        self.claim_templates = {
            template: dra.ResourceClaimTemplate(
                f"{name}-template-{template}",
                metadata=meta.ObjectMetaArgs(name=template, namespace=namespace_name, labels=MANAGED_LABELS),
                spec=template_spec_args(spec),
                opts=pulumi.ResourceOptions.merge(child, IMMUTABLE_SPEC),
            )
            for template, spec in templates.items()
        }
        self.sample_pods = {
            pod: core.Pod(
                f"{name}-pod-{pod}",
                metadata=meta.ObjectMetaArgs(name=pod, namespace=namespace_name, labels=MANAGED_LABELS),
                spec=pod_spec_args(spec),
                opts=pulumi.ResourceOptions.merge(
                    child,
                    pulumi.ResourceOptions(
                        depends_on=self._pod_dependencies(spec, args.depends_on),
                        custom_timeouts=pulumi.CustomTimeouts(create=args.sample_pod_create_timeout)
                        if args.sample_pod_create_timeout
                        else None,
                    ),
                ),
            )
            for pod, spec in pods.items()
        }
        self.register_outputs(
            {
                "namespace": namespace_name,
                "claimTemplates": list(self.claim_templates),
                "samplePods": list(self.sample_pods),
            }
        )

    def _pod_dependencies(self, spec: Mapping[str, Any], driver: Sequence[pulumi.Resource]) -> list[pulumi.Resource]:
        """The driver, and the templates the Pod names by plain string (which carries no dependency)."""
        return [
            *driver,
            *(self.claim_templates[claim["resourceClaimTemplateName"]] for claim in spec["resourceClaims"]),
        ]
