"""The table of what each supported Kubernetes minor enables for DRA, against the releases it names.

`policies/dra_minors.json` is read by the program (components/dra_minors.py) and the policy pack. Each gate
row is checked against `pkg/features/kube_features.go` of the k8s.io/kubernetes release its minor names, and
each field row against the `+featureGate` tag in that release's k8s.io/api resource/v1/types.go, both read
from the Go module proxy (`go mod download`; skipped without Go).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest

from components import dra_minors
from components.config.claim_templates import GATED_FIELDS
from policies.dra_guardrails import planned

TABLE = json.loads(dra_minors.TABLE_FILE.read_text())
GATE_SPEC = re.compile(
    r'Version: version\.MustParse\("(?P<minor>[0-9.]+)"\), Default: (?P<default>true|false),'
    r"(?: LockToDefault: (?:true|false),)? PreRelease: featuregate\.(?P<stage>\w+)"
)


@cache
def module_dir(module: str) -> Path:
    """The served module's files, `module` as "path vX.Y.Z" (the table's spelling)."""
    if shutil.which("go") is None:
        pytest.skip("go is not on the PATH")
    path, version = module.split(" ")
    result = subprocess.run(
        ["go", "mod", "download", "-json", f"{path}@{version}"], capture_output=True, text=True, timeout=600
    )
    if result.returncode != 0:
        pytest.skip(f"the Go module proxy did not serve {module}: {result.stdout.strip() or result.stderr.strip()}")
    return Path(json.loads(result.stdout)["Dir"])


def gate_in_release(source: str, gate: str, minor: str) -> tuple[str, bool]:
    """(stage, default) of `gate` in kube_features.go's versioned specs, for the newest row at or below `minor`."""
    block = re.search(rf"\n\t{gate}: \{{\n(.*?)\n\t\}},", source, re.S)
    assert block, f"{gate} has no versioned spec"
    rows = [
        m
        for m in GATE_SPEC.finditer(block.group(1))
        if tuple(map(int, m["minor"].split("."))) <= tuple(map(int, minor.split(".")))
    ]
    assert rows, f"{gate} is not defined in {minor}"
    return rows[-1]["stage"], rows[-1]["default"] == "true"


@pytest.mark.parametrize("minor", list(TABLE["minors"]))
def test_every_gate_row_is_what_that_release_states(minor):
    source = (module_dir(TABLE["minors"][minor]["release"]) / "pkg/features/kube_features.go").read_text()
    table = {gate: (row[minor]["stage"], row[minor]["default"]) for gate, row in TABLE["gates"].items()}
    release = {gate: gate_in_release(source, gate, minor) for gate in TABLE["gates"]}
    assert table == release


@pytest.mark.parametrize("minor", list(TABLE["minors"]))
def test_every_field_row_is_tagged_with_its_gate_in_that_release(minor):
    types = (module_dir(TABLE["minors"][minor]["api"]) / "resource/v1/types.go").read_text()
    for api_field, gate in TABLE["fields"].items():
        type_name, field_name = api_field.split(".")
        body = re.search(rf"\ntype {type_name} struct \{{\n(.*?)\n\}}", types, re.S)
        assert body, f"{type_name} is not in k8s.io/api resource/v1 of {minor}"
        tagged = re.search(rf'\+featureGate=([A-Za-z,]+)\n(?:\t//.*\n)*\t\w+ [^\n]*json:"{field_name},', body.group(1))
        assert tagged and gate in tagged.group(1).split(","), (minor, api_field)


def test_the_table_covers_every_gated_field_the_config_reads():
    read = {
        "DeviceRequest.firstAvailable",
        "ExactDeviceRequest.adminAccess",
        *(
            f"{shape}.{name}"
            for shape in ("ExactDeviceRequest", "DeviceSubRequest")
            for name in ("tolerations", "capacity")
        ),
        "DeviceConstraint.distinctAttribute",
    }
    assert {name.split(".")[1] for name in read} == set(GATED_FIELDS)
    assert read <= set(dra_minors.FIELD_GATES)
    assert {*dra_minors.FIELD_GATES.values(), *dra_minors.DRIVER_GATE_NEEDS.values()} <= set(dra_minors.GATES)


def test_each_minor_row_is_read_as_the_issue_states_it():
    # kubernetes/enhancements kep.yaml: device taints, consumable capacity, extended-resource mapping and
    # partitionable devices are beta and on in 1.36; prioritized list and admin access are GA there.
    for gate in ("DRADeviceTaints", "DRAConsumableCapacity", "DRAExtendedResource", "DRAPartitionableDevices"):
        assert [dra_minors.gate_on(gate, minor) for minor in ("1.34", "1.35", "1.36")] == [False, False, True]
        assert dra_minors.first_minor_on(gate) == "1.36"
    assert dra_minors.GATES["DRAPrioritizedList"]["1.36"]["stage"] == "GA"
    assert dra_minors.minor_of("1.36-nebius-node.3") == "1.36"
    assert dra_minors.minor_of("1.37") == "1.36"  # newer than the table: the newest row
    assert dra_minors.minor_of("1.30") == "1.34"  # refused elsewhere; judged by the strictest row


def test_the_policy_pack_reads_the_same_table():
    assert planned.DRA_MINORS == TABLE


# The API server's compiler features, as validation.go sets them from the feature gates.
COMPILER_FEATURE = re.compile(r"(Enable\w+): utilfeature\.DefaultFeatureGate\.Enabled\(features\.(\w+)\)")
# A versioned option of newCompiler that declares `device` with one object type under a feature condition.
DEVICE_OPTION = re.compile(
    r"return (!?)features\.(\w+)\s*\},\s*EnvOptions: \[\]cel\.EnvOption\{\s*cel\.Variable\(deviceVar, (\w+)\.CelType\(\)\)"
)


def device_types_in_release(minor: str) -> list[tuple[str, bool, frozenset[str]]]:
    """(gate, declared when the gate is on?, fields) of each `device` type newCompiler of `minor`'s release picks."""
    api_version = TABLE["minors"][minor]["api"].split(" ")[1]
    compile_go = (module_dir(f"k8s.io/dynamic-resource-allocation {api_version}") / "cel/compile.go").read_text()
    kubernetes = module_dir(TABLE["minors"][minor]["release"])
    validation = (kubernetes / "pkg/apis/resource/validation/validation.go").read_text()
    call = re.search(r"dracel\.GetCompiler\(dracel\.Features\{(.*?)\}\)", validation, re.S)
    assert call, f"validation.go of {minor} compiles selectors some other way"
    gates = dict(COMPILER_FEATURE.findall(call.group(1)))
    names = dict(re.findall(r'^\t(\w+Var)\s*=\s*"(\w+)"', compile_go, re.M))
    lists = {
        name: {names[var] for var in re.findall(r"field\((\w+),", body)}
        for name, body in re.findall(r"(fields\w+) := \[\]\*apiservercel\.DeclField\{(.*?)\}\n", compile_go, re.S)
    }
    for name, other in re.findall(r"(fields\w+) = append\(\1, (fields\w+)\.\.\.\)", compile_go):
        lists[name] |= lists[other]
    types = dict(
        re.findall(
            r'(deviceType\w+) := apiservercel\.NewObjectType\("kubernetes\.DRADevice", fields\((fields\w+)\.\.\.\)\)',
            compile_go,
        )
    )
    options = DEVICE_OPTION.findall(compile_go)
    assert options, f"compile.go of {minor} declares `device` some other way"
    return [
        (gates[feature], not negated, frozenset(lists[types[device_type]])) for negated, feature, device_type in options
    ]


@pytest.mark.parametrize("minor", list(TABLE["minors"]))
def test_the_cel_device_fields_of_each_minor_are_what_its_api_server_declares(minor):
    source = (module_dir(TABLE["minors"][minor]["release"]) / "pkg/features/kube_features.go").read_text()
    options = device_types_in_release(minor)
    picked = [fields for gate, when_on, fields in options if gate_in_release(source, gate, minor)[1] == when_on]
    assert picked == [frozenset(dra_minors.cel_device_fields(minor))], (options, dra_minors.cel_device_fields(minor))
    # Each field's gate in the table is the gate whose "on" option adds it.
    every = frozenset.intersection(*(fields for _, _, fields in options))
    for gate, when_on, fields in options:
        for name in fields - every:
            assert when_on and dra_minors.CEL_DEVICE_FIELDS[name] == gate, (name, gate)
    assert {name for name, gate in dra_minors.CEL_DEVICE_FIELDS.items() if gate is None} == every


def test_every_gate_of_a_cel_device_field_has_its_row():
    assert {gate for gate in dra_minors.CEL_DEVICE_FIELDS.values() if gate} <= set(dra_minors.GATES)
