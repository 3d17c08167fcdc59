"""The published stack-file schema is current, accepts every stack file and refuses what the program refuses.

Three validators read it: Python's jsonschema (whose `pattern` runs Python's re), and two that run
ECMA-262 regexes as editors do, ajv in its default strict mode and check-jsonschema in its default
regex mode. Only the last two see what an editor sees: Python's `$` also matches before a trailing
newline, and Python's re compiles syntax ECMA-262 refuses.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from components.config.stack_file import PROJECT_DIR, STACK_FILE_BLOCKS, load_yaml_file
from components.input.fields import KUBERNETES_NAMESPACES, RESERVED_NAMESPACE_PATTERN
from tests.helpers import STACKS, ajv_errors
from tools.stack_schema import SCHEMA_FILE, main, rendered


def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text()))


def stack_file(stack: str) -> dict:
    """A stack file as an editor reads it (YAML 1.2), in the JSON data model the schema describes."""
    return load_yaml_file(PROJECT_DIR / f"Pulumi.{stack}.yaml")


def dev_with(change: dict) -> dict:
    document = stack_file("dev")
    document["config"].update(change)
    return document


def dev_group_with(change: dict) -> dict:
    document = stack_file("dev")
    document["config"]["nebius-dra:gpuNodeGroups"][0].update(change)
    return document


# Refused by every validator.
REFUSED = {
    "misspelt key": dev_with({"nebius-dra:protected": True}),
    "etcd size": dev_with({"nebius-dra:etcdClusterSize": 5}),
    "count as a string": dev_with({"nebius-dra:systemNodeCount": "2"}),
    "version as a number": dev_with({"nebius-dra:kubernetesVersion": 1.34}),
    "a minor without DRA rules": dev_with({"nebius-dra:kubernetesVersion": "1.99"}),
    "a patch version": dev_with({"nebius-dra:kubernetesVersion": "1.34.1"}),
    "too many nodes": dev_group_with({"fixedNodeCount": 101}),
    "malformed preset": dev_group_with({"preset": "8gpu\n"}),
    "a GPU platform Nebius does not list": dev_group_with({"platform": "gpu-b200-sxm-b"}),
    "label prefix with capitals": dev_group_with({"labels": {"Example.com/team": "ml"}}),
    "label prefix over 253": dev_group_with({"labels": {f"{'a' * 254}/team": "ml"}}),
    "taint prefix over 253": dev_group_with(
        {"taints": [{"key": f"{'a' * 254}/gpu", "value": "t", "effect": "NoSchedule"}]}
    ),
    "queues with an unknown field": dev_with({"nebius-dra:queues": {"teams": [], "cohorts": []}}),
    "queue team with a misspelt field": dev_with(
        {"nebius-dra:queues": {"teams": [{"name": "a", "quota": [{"group": "h200", "gpus": 1}]}]}}
    ),
    "queue quota as a string": dev_with(
        {"nebius-dra:queues": {"teams": [{"name": "a", "quotas": [{"group": "h200", "gpus": "8"}]}]}}
    ),
    "queues counting a MIG class": dev_with({"nebius-dra:queues": {"deviceClasses": ["mig.nvidia.com"]}}),
    # Hostile review a40 #4: a secret-only key's plain value, which the program refuses, passed the editor.
    "plain repository password": dev_with(
        {
            "nebius-dra:draDriverRepository": "oci://h.example.com/n",
            "nebius-dra:chartRepositoryUsername": "robot",
            "nebius-dra:chartRepositoryPassword": "hunter2",
        }
    ),
    "plain kubeconfig": dev_with({"nebius-dra:existingClusterKubeconfig": "apiVersion: v1"}),
    # A namespace Kubernetes owns or reserves, refused for one key alone (hostile review 15).
    "claim namespace kube-system": dev_with({"nebius-dra:claimNamespace": "kube-system"}),
    "driver namespace default": dev_with({"nebius-dra:draDriverNamespace": "default"}),
    "metrics namespace with the kube- prefix": dev_with({"nebius-dra:gpuMetricsNamespace": "kube-metrics"}),
    "Kueue's namespace with the kube- prefix": dev_with(
        {
            "nebius-dra:queues": {
                "namespace": "kube-flannel",
                "teams": [{"name": "a", "quotas": [{"group": "h200", "gpus": 1}]}],
            }
        }
    ),
    "a team's namespace kube-system": dev_with(
        {
            "nebius-dra:queues": {
                "teams": [{"name": "a", "namespace": "kube-system", "quotas": [{"group": "h200", "gpus": 1}]}]
            }
        }
    ),
}
# Refused by the ECMA-262 validators; Python's re lets a trailing newline through `$`.
REFUSED_BY_ECMA = {
    "preset with a trailing newline": dev_group_with({"preset": "1gpu-16vcpu-200gb\n"}),
    "label key with a trailing newline": dev_group_with({"labels": {"team\n": "ml"}}),
    "namespace with a trailing newline": dev_with({"nebius-dra:claimNamespace": "dra-claims\n"}),
}
ALLOWED = {
    "a GPU platform Nebius lists beside its -a variant": dev_group_with({"platform": "gpu-b200-sxm"}),
    "other namespaces and secure driver values": dev_with(
        {"nebius:profile": "ci", "kubernetes:context": "kind", "nebius-dra:draDriverValues": {"secure": "v1:abc"}}
    ),
    "a secure repository password": dev_with(
        {
            "nebius-dra:draDriverRepository": "oci://h.example.com/n",
            "nebius-dra:chartRepositoryUsername": "robot",
            "nebius-dra:chartRepositoryPassword": {"secure": "v1:abc"},
            "nebius-dra:existingClusterKubeconfig": "",
        }
    ),
    "a team's quota": dev_with(
        {
            "nebius-dra:queues": {
                "teams": [{"name": "research", "cohort": "h200", "quotas": [{"group": "h200", "gpus": 1}]}]
            }
        }
    ),
    "labels and taints": dev_group_with(
        {
            "labels": {f"{'a' * 253}/team": "ml", "team": ""},
            "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
        }
    ),
}
ACCEPTED = {**{f"Pulumi.{stack}.yaml": stack_file(stack) for stack in STACKS}, **ALLOWED}
TYPO = dev_with({"nebius-dra:samplePod": True, "nebius-dra:systemNodeCount": "1"})


def test_the_committed_schema_is_the_generated_one():
    assert SCHEMA_FILE.read_text() == rendered(), "run python -m tools.stack_schema"
    assert main(["--check"]) == 0


@pytest.mark.parametrize("name", ACCEPTED)
def test_every_stack_file_is_valid(name):
    assert list(validator().iter_errors(ACCEPTED[name])) == []


@pytest.mark.parametrize("name", REFUSED)
def test_values_the_program_refuses_fail_the_schema(name):
    assert list(validator().iter_errors(REFUSED[name]))


def namespace_fields(node: object, path: str = "") -> dict[str, object]:
    """Every field of the schema named as a namespace (`namespace`, `...Namespace`), by its path."""
    found: dict[str, object] = {}
    if isinstance(node, dict):
        for key, value in node.get("properties", {}).items():
            if key == "namespace" or key.endswith("Namespace"):
                found[f"{path}/properties/{key}"] = value
        for key, value in node.items():
            found.update(namespace_fields(value, f"{path}/{key}"))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            found.update(namespace_fields(item, f"{path}/{index}"))
    return found


def test_every_namespace_field_refuses_the_namespaces_kubernetes_owns_and_reserves():
    """The program refuses them for every namespace it creates (components/config/namespaces.py); the schema says so
    on each field, so an editor flags them too (hostile review 15)."""
    fields = namespace_fields(json.loads(SCHEMA_FILE.read_text()))
    assert len(fields) == 5, sorted(fields)
    rule = [{"not": {"enum": list(KUBERNETES_NAMESPACES)}}, {"not": {"pattern": RESERVED_NAMESPACE_PATTERN}}]
    assert {path: _rule_of(field) for path, field in fields.items()} == dict.fromkeys(fields, rule)


def _rule_of(field: object) -> object:
    """The `allOf` of a namespace field, or of its string branch where the field may be left out (null)."""
    assert isinstance(field, dict)
    branches = [branch for branch in field.get("anyOf", [field]) if branch.get("type") == "string"]
    return branches[0].get("allOf") if branches else None


# Objects left open on purpose: the stack file's config (Pulumi's own keys, other providers' namespaces), Helm
# values handed to a chart as written, and a driver's opaque claim parameters. The top level is closed: the Pulumi
# CLI's ProjectStack has five keys (STACK_FILE_BLOCKS).
OPEN_OBJECTS = {
    "/properties/config",
    "/properties/config/properties/nebius-dra:draDriverValues/anyOf/0",
    "/properties/config/properties/nebius-dra:gpuMetricsValues",
    "/$defs/OpaqueInput/properties/parameters",
}


def open_objects(node: object, path: str = "") -> set[str]:
    """Where an object of the schema takes fields it does not declare (a map's typed values are declared)."""
    found = set()
    if isinstance(node, dict):
        if (node.get("type") == "object" or "properties" in node) and node.get("additionalProperties", True) is True:
            found.add(path)
        for key, value in node.items():
            found |= open_objects(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found |= open_objects(value, f"{path}/{index}")
    return found


def test_every_object_the_models_declare_is_closed():
    schema = json.loads(SCHEMA_FILE.read_text())
    assert open_objects(schema) == OPEN_OBJECTS
    queues = schema["properties"]["config"]["properties"]["nebius-dra:queues"]
    assert queues["$ref"] == "#/$defs/QueuesInput", queues
    assert schema["$defs"]["QueuesInput"]["additionalProperties"] is False


def test_a_misspelt_key_is_named_with_the_keys_the_project_declares():
    messages = [error.message for error in validator().iter_errors(TYPO)]
    [typo] = [message for message in messages if "samplePod'" in message]
    assert typo.startswith("'nebius-dra:samplePod' is not one of [") and "'nebius-dra:samplePods'" in typo
    assert "'1' is not of type 'integer'" in messages


def test_the_schema_takes_the_top_level_blocks_the_reader_takes_and_no_other():
    schema = json.loads(SCHEMA_FILE.read_text())
    assert sorted(schema["properties"]) == sorted(STACK_FILE_BLOCKS)
    assert schema["additionalProperties"] is False
    assert list(validator().iter_errors({**ACCEPTED["Pulumi.dev.yaml"], "confg": {}}))


@pytest.fixture(scope="module")
def ajv() -> dict:
    """One ajv run over every document these tests hand it."""
    documents = {**ACCEPTED, **REFUSED, **REFUSED_BY_ECMA, "typo": TYPO}
    return ajv_errors(json.loads(SCHEMA_FILE.read_text()), documents)


def test_ajv_compiles_the_schema_in_strict_mode_without_a_warning(ajv):
    assert ajv["warnings"] == []


@pytest.mark.parametrize("name", ACCEPTED)
def test_ajv_accepts_every_stack_file(ajv, name):
    assert ajv["errors"][name] == []


@pytest.mark.parametrize("name", [*REFUSED, *REFUSED_BY_ECMA])
def test_ajv_refuses_what_the_program_refuses(ajv, name):
    assert ajv["errors"][name]


def test_ajv_names_a_misspelt_key_and_a_wrong_type(ajv):
    errors = ajv["errors"]["typo"]
    prefix = '/config key "nebius-dra:samplePod" must be equal to one of the allowed values: '
    [typo] = [error for error in errors if error.startswith(prefix)]
    assert "nebius-dra:samplePods" in typo.removeprefix(prefix).split(", ")
    assert "/config/nebius-dra:systemNodeCount must be integer" in errors


def check_jsonschema(*files: Path) -> subprocess.CompletedProcess:
    """check-jsonschema in its default regex mode (ECMA-262, through regress), as its users run it."""
    command = [sys.executable, "-m", "check_jsonschema", "--schemafile", str(SCHEMA_FILE), *map(str, files)]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def as_files(documents: dict, directory: Path) -> list[Path]:
    files = [directory / f"{index}.json" for index in range(len(documents))]
    for file, document in zip(files, documents.values(), strict=True):
        file.write_text(json.dumps(document))
    return files


def test_check_jsonschema_accepts_every_stack_file(tmp_path):
    stack_files = [PROJECT_DIR / f"Pulumi.{stack}.yaml" for stack in STACKS]
    done = check_jsonschema(*stack_files, *as_files(ALLOWED, tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("name", [*REFUSED, *REFUSED_BY_ECMA])
def test_check_jsonschema_refuses_what_the_program_refuses(tmp_path, name):
    done = check_jsonschema(*as_files({name: {**REFUSED, **REFUSED_BY_ECMA}[name]}, tmp_path))
    assert done.returncode == 1 and "Schema validation errors were encountered" in done.stdout, done.stderr


def test_check_jsonschema_names_a_misspelt_key(tmp_path):
    done = check_jsonschema(*as_files({"typo": TYPO}, tmp_path))
    assert "$.config: 'nebius-dra:samplePod' is not one of ['nebius-dra:allowedDeviceClasses'," in done.stdout
    assert "$.config['nebius-dra:systemNodeCount']: '1' is not of type 'integer'" in done.stdout
