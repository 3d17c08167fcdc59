"""The Kubernetes objects and Helm releases of a program run, as the manifests the API server receives."""

from __future__ import annotations

from typing import Any

from pulumi.runtime import rpc

from tools.plan.mock_engine import ProgramRun, RegisteredResource

HELM_RELEASE = "kubernetes:helm.sh/v3:Release"


def unwrap_secrets(value: Any) -> Any:
    if rpc.is_rpc_secret(value):
        return unwrap_secrets(rpc.unwrap_rpc_secret(value))
    if isinstance(value, dict):
        return {key: unwrap_secrets(item) for key, item in value.items()}
    if isinstance(value, list):
        return [unwrap_secrets(item) for item in value]
    return value


def api_version_and_kind(type_token: str) -> tuple[str, str]:
    """`kubernetes:resource.k8s.io/v1:ResourceClaimTemplate` -> (`resource.k8s.io/v1`, `ResourceClaimTemplate`)."""
    _, group_version, kind = type_token.split(":")
    group, _, version = group_version.rpartition("/")
    return (version if group == "core" else group_version), kind


def kubernetes_objects(run) -> list:
    return [r for r in run.resources if r.custom and r.type.startswith("kubernetes:") and r.type != HELM_RELEASE]


def manifest(resource) -> dict[str, Any]:
    api_version, kind = api_version_and_kind(resource.type)
    body = unwrap_secrets(resource.inputs)
    assert body.get("apiVersion", api_version) == api_version, resource.name
    assert body.get("kind", kind) == kind, resource.name
    return {**body, "apiVersion": api_version, "kind": kind}


def releases(run: ProgramRun, chart_name: str) -> list[RegisteredResource]:
    """Releases of a chart, whether named bare (classic repository) or by full OCI reference."""
    return [r for r in run.of_type(HELM_RELEASE) if r.inputs["chart"].rsplit("/", 1)[-1] == chart_name]
