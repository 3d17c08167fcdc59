"""Kueue and the teams' queues: the pinned release, the teams' namespaces with their claim templates, the
flavors and queues, and a queued sample Job.

Kueue's objects wait for its release (the chart holds their CRDs, and its webhooks must be serving before
a Job is created so that the Job starts suspended). The release waits for the system nodes only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from pulumi_kubernetes.batch import v1 as batch
from pulumi_kubernetes.core import v1 as core
from pulumi_kubernetes.meta import v1 as meta
from pulumi_kubernetes.resource import v1 as dra

from components.dra_workloads import IMMUTABLE_SPEC
from components.labels import MANAGED_LABELS
from components.model import ClaimsConfig, GpuNodeGroupConfig
from components.queue_model import QUEUE_NAME_LABEL, QueuesConfig
from components.release import pinned_release
from components.values.claim_templates import template_spec_args
from components.values.kueue import kueue_release, queue_objects, queued_job, team_claim_templates
from components.values.sample_pods import pod_spec_args

# A queued Job may wait for quota for as long as other teams hold it: Pulumi does not wait for it to finish.
SKIP_AWAIT = {"pulumi.com/skipAwait": "true"}
TEAM_QUEUES_TYPE = "nebius-dra:kueue:TeamQueues"


@dataclass
class TeamQueuesArgs:
    queues: QueuesConfig
    claims: ClaimsConfig
    gpu_groups: Sequence[GpuNodeGroupConfig]
    system_node_selector: Mapping[str, str]
    provider: k8s.Provider
    depends_on: Sequence[pulumi.Resource] = field(default_factory=list)


class TeamQueues(pulumi.ComponentResource):
    release: k8s.helm.v3.Release
    namespaces: dict[str, core.Namespace]
    queue_objects: dict[str, k8s.apiextensions.CustomResource]
    claim_templates: dict[str, dra.ResourceClaimTemplate]
    sample_job: batch.Job | None

    def __init__(self, name: str, args: TeamQueuesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TEAM_QUEUES_TYPE, name, None, opts)
        queues = args.queues
        if not queues.enabled:
            raise ValueError("TeamQueues needs at least one team: the platform builds it only when queues are on")
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        self.release = pinned_release(
            f"{name}-release",
            kueue_release(queues, args.system_node_selector),
            args.provider,
            args.depends_on,
            self,
        )
        after_release = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[self.release]))
        self.namespaces = {
            team.namespace: core.Namespace(
                f"{name}-namespace-{team.namespace}",
                metadata=meta.ObjectMetaArgs(name=team.namespace, labels=MANAGED_LABELS),
                opts=child,
            )
            for team in queues.teams
        }
        self.queue_objects = {
            _object_key(manifest): k8s.apiextensions.CustomResource(
                f"{name}-{_object_key(manifest)}",
                api_version=manifest["apiVersion"],
                kind=manifest["kind"],
                metadata=_metadata(manifest["metadata"], self.namespaces),
                spec=manifest["spec"],
                opts=after_release,
            )
            for manifest in queue_objects(queues, args.gpu_groups)
        }
        templates = team_claim_templates(queues, args.claims)
        self.claim_templates = {
            f"{namespace}/{template}": dra.ResourceClaimTemplate(
                f"{name}-template-{namespace}-{template}",
                metadata=meta.ObjectMetaArgs(name=template, namespace=ns.metadata.name, labels=MANAGED_LABELS),
                spec=template_spec_args(spec),
                opts=pulumi.ResourceOptions.merge(child, IMMUTABLE_SPEC),
            )
            for namespace, ns in self.namespaces.items()
            for template, spec in templates.items()
        }
        self.sample_job = self._sample_job(name, queues, args.claims, after_release)
        self.register_outputs(
            {
                "namespace": self.release.namespace,
                "teams": [team.name for team in queues.teams],
                "queueObjects": list(self.queue_objects),
            }
        )

    def _sample_job(
        self, name: str, queues: QueuesConfig, claims: ClaimsConfig, after_release: pulumi.ResourceOptions
    ) -> batch.Job | None:
        job = queued_job(queues, claims)
        if job is None:
            return None
        metadata, spec = job["metadata"], job["spec"]
        pod = spec["template"]["spec"]
        template = self.claim_templates[
            f"{metadata['namespace']}/{pod['resourceClaims'][0]['resourceClaimTemplateName']}"
        ]
        queue = self.queue_objects[f"localqueue-{metadata['namespace']}-{metadata['labels'][QUEUE_NAME_LABEL]}"]
        return batch.Job(
            f"{name}-sample-job",
            metadata=meta.ObjectMetaArgs(
                name=metadata["name"],
                namespace=self.namespaces[metadata["namespace"]].metadata.name,
                labels={**MANAGED_LABELS, **metadata["labels"]},
                annotations=SKIP_AWAIT,
            ),
            spec=batch.JobSpecArgs(
                backoff_limit=spec["backoffLimit"],
                template=core.PodTemplateSpecArgs(spec=pod_spec_args(pod)),
            ),
            opts=pulumi.ResourceOptions.merge(after_release, pulumi.ResourceOptions(depends_on=[template, queue])),
        )


def _object_key(manifest: Mapping[str, Any]) -> str:
    """`clusterqueue-research`, `localqueue-research-research`: kind and name (and namespace) in one key."""
    metadata = manifest["metadata"]
    parts = [manifest["kind"].lower(), *([metadata["namespace"]] if "namespace" in metadata else []), metadata["name"]]
    return "-".join(parts)


def _metadata(metadata: Mapping[str, Any], namespaces: Mapping[str, core.Namespace]) -> meta.ObjectMetaArgs:
    """A namespaced object names its namespace through the Namespace resource, so it waits for it."""
    namespace = metadata.get("namespace")
    return meta.ObjectMetaArgs(
        name=metadata["name"],
        namespace=namespaces[namespace].metadata.name if namespace else None,
        labels=MANAGED_LABELS,
    )
