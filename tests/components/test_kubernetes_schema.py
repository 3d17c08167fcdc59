"""Every Kubernetes object a stack registers validates against the strict schema of the stack's own minor.

kubernetes-validate (pinned in requirements-dev.txt) ships the schemas of 1.34 to 1.37; a stack is
checked against the minor its kubernetesVersion names, as components/dra_minors.py reads it, and dev is
also planned on every supported minor (1.36 with a claim that tolerates device taints).

The manifests are rebuilt from the engine's inputs, i.e. what the Kubernetes provider would
send to the API server, for every helper's objects alike. Helm releases are not objects
(the chart renders them in the cluster) and providers are not Kubernetes objects at all.
"""

from __future__ import annotations

import copy
import json

import kubernetes_validate
import pytest

from components.config.stack_file import load_stack_config
from components.dra_minors import SUPPORTED_MINORS, minor_of
from tests.helpers import STACKS
from tests.kubernetes_manifests import api_version_and_kind, kubernetes_objects, manifest
from tools.plan.mock_engine import run_program

KUBERNETES_VERSION = "1.34.0"  # the oldest minor: what a refusal test needs
VERSION_KEY = "nebius-dra:kubernetesVersion"
TOLERATING_TEMPLATE = {
    "name": "survives-xid",
    "requests": [
        {
            "name": "gpu",
            "exactly": {
                "deviceClassName": "gpu.nvidia.com",
                "tolerations": [{"key": "gpu.nvidia.com/xid", "operator": "Exists", "effect": "NoExecute"}],
            },
        }
    ],
}


def schema_version(kubernetes_version: str) -> str:
    """The kubernetes-validate schema of a stack's minor: "1.36-nebius-node.2" -> "1.36.0"."""
    return f"{minor_of(kubernetes_version)}.0"


def test_type_tokens_map_to_api_versions():
    assert api_version_and_kind("kubernetes:core/v1:Namespace") == ("v1", "Namespace")
    assert api_version_and_kind("kubernetes:resource.k8s.io/v1:ResourceClaimTemplate") == (
        "resource.k8s.io/v1",
        "ResourceClaimTemplate",
    )
    assert api_version_and_kind("kubernetes:rbac.authorization.k8s.io/v1:Role") == (
        "rbac.authorization.k8s.io/v1",
        "Role",
    )


def schema_failures(run, version: str) -> list[str]:
    objects = kubernetes_objects(run)
    kinds = {api_version_and_kind(r.type)[1] for r in objects}
    assert {"Namespace", "ResourceClaimTemplate"} <= kinds, kinds
    failures = []
    for resource in objects:
        try:
            kubernetes_validate.validate(manifest(resource), version, strict=True)
        except (kubernetes_validate.ValidationError, kubernetes_validate.SchemaNotFoundError) as error:
            failures.append(f"{resource.type} {resource.name}: {str(error).splitlines()[0]}")
    return failures


@pytest.mark.parametrize("stack", STACKS)
def test_every_kubernetes_object_validates_strictly(stack_runs, stack):
    version = schema_version(load_stack_config(stack)[VERSION_KEY])
    assert not schema_failures(stack_runs[stack], version)


@pytest.mark.parametrize("minor", SUPPORTED_MINORS)
def test_dev_on_each_supported_minor_validates_against_that_minors_schema(minor):
    config = {**load_stack_config("dev"), VERSION_KEY: minor}
    if minor == "1.36":
        config["nebius-dra:userClaimTemplates"] = json.dumps([TOLERATING_TEMPLATE])
    run = run_program("dev", config=config)
    assert run.error is None, run.error
    assert not schema_failures(run, schema_version(minor))


def test_dra_objects_use_the_stable_api(stack_runs):
    for run in stack_runs.values():
        for resource in kubernetes_objects(run):
            if "resource.k8s.io" in resource.type:
                assert manifest(resource)["apiVersion"] == "resource.k8s.io/v1", resource.type


def test_validation_refuses_the_v1beta1_request_shape(prod_run):
    template = next(r for r in prod_run.resources if r.type == "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate")
    flat = copy.deepcopy(manifest(template))
    request = flat["spec"]["spec"]["devices"]["requests"][0]
    request.update(request.pop("exactly"))
    with pytest.raises(kubernetes_validate.ValidationError, match="deviceClassName"):
        kubernetes_validate.validate(flat, KUBERNETES_VERSION, strict=True)
