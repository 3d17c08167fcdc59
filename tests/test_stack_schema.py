"""The published stack-file schema is current, accepts every stack file and refuses what the program refuses."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from components.config.stack_file import PROJECT_DIR
from tests.helpers import STACKS
from tools.stack_schema import SCHEMA_FILE, main, rendered


def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text()))


def test_the_committed_schema_is_the_generated_one():
    assert SCHEMA_FILE.read_text() == rendered(), "run python -m tools.stack_schema"
    assert main(["--check"]) == 0


@pytest.mark.parametrize("stack", STACKS)
def test_every_stack_file_is_valid(stack):
    document = yaml.safe_load((PROJECT_DIR / f"Pulumi.{stack}.yaml").read_text())
    assert list(validator().iter_errors(document)) == []


@pytest.mark.parametrize(
    "change",
    [
        {"nebius-dra:protected": True},
        {"nebius-dra:etcdClusterSize": 5},
        {"nebius-dra:systemNodeCount": "2"},
        {"nebius-dra:kubernetesVersion": 1.34},
        {
            "nebius-dra:gpuNodeGroups": [
                {"name": "g", "platform": "gpu-h200-sxm", "preset": "8gpu-128vcpu-1600gb", "fixedNodeCount": 101}
            ]
        },
        {
            "nebius-dra:gpuNodeGroups": [
                {"name": "g", "platform": "gpu-h200-sxm", "preset": "8gpu\n", "fixedNodeCount": 1}
            ]
        },
    ],
)
def test_values_the_program_refuses_fail_the_schema(change):
    document = yaml.safe_load((PROJECT_DIR / "Pulumi.dev.yaml").read_text())
    document["config"].update(change)
    assert list(validator().iter_errors(document)), change


def test_other_namespaces_and_secure_driver_values_are_allowed():
    document = yaml.safe_load((PROJECT_DIR / "Pulumi.dev.yaml").read_text())
    document["config"]["nebius:profile"] = "ci"
    document["config"]["nebius-dra:draDriverValues"] = {"secure": "v1:abc"}
    assert list(validator().iter_errors(document)) == []
