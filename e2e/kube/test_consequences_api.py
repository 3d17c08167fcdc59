"""The table of consequences against a real Kubernetes API server: a claim template's spec is immutable.

The table (policies/dra_guardrails/consequences.py) says a change to a ResourceClaimTemplate's spec
deletes and creates the template. A real kube-apiserver is the source: it refuses an update of the
spec ("field is immutable") and takes one of the metadata. The template is dev's own `gpu`
template, as the program registers it.

Run from the repository root:
    venv/bin/python -m pytest e2e/kube/test_consequences_api.py -q
"""

from __future__ import annotations

import copy
import uuid

import pytest
from control_plane import ControlPlane, ensure_binaries
from kubernetes import client, config, dynamic
from kubernetes.client.rest import ApiException

from policies.dra_guardrails.consequences import CLAIM_TEMPLATE_TYPE, Effect, consequences_of
from tools.plan.mock_engine import run_program
from tools.plan.values import presentable


@pytest.fixture(scope="module")
def api():
    ensure_binaries()
    with ControlPlane(quiet=True) as plane:
        api_client = config.new_client_from_config(config_file=str(plane.kubeconfig))
        yield api_client
        api_client.close()


def test_a_claim_template_spec_is_immutable_and_its_labels_are_not(api):
    [registered] = [r for r in run_program("dev").of_type(CLAIM_TEMPLATE_TYPE) if r.inputs["metadata"]["name"] == "gpu"]
    spec = presentable(registered.inputs["spec"], {})
    namespace = f"consequences-{uuid.uuid4().hex[:8]}"
    client.CoreV1Api(api).create_namespace({"metadata": {"name": namespace}})
    templates = dynamic.DynamicClient(api).resources.get(api_version="resource.k8s.io/v1", kind="ResourceClaimTemplate")
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu", "namespace": namespace},
        "spec": spec,
    }
    templates.create(body=body, namespace=namespace)
    changed = copy.deepcopy(spec)
    changed["spec"]["devices"]["requests"][0]["exactly"]["count"] = 2
    with pytest.raises(ApiException) as refused:
        templates.patch(
            name="gpu",
            namespace=namespace,
            body={"spec": changed},
            content_type="application/merge-patch+json",
        )
    assert refused.value.status == 422 and "field is immutable" in str(refused.value.body)
    assert {row.effect for row in consequences_of(CLAIM_TEMPLATE_TYPE, "spec.spec.devices")} == {Effect.DELETE_CREATE}
    relabelled = templates.patch(
        name="gpu",
        namespace=namespace,
        body={"metadata": {"labels": {"team": "a"}}},
        content_type="application/merge-patch+json",
    )
    assert relabelled.metadata.labels["team"] == "a"
