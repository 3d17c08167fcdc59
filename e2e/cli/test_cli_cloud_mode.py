"""dev and prod in cloud mode (their stack files as they are) through the real CLI: the CLI types every
value of the stack file against Pulumi.yaml, the program runs whole and registers its Nebius resources,
and the preview stops only where this environment ends: the Nebius provider plugin, which cannot be
had here (README, "What the engine tier cannot reach").
"""

from __future__ import annotations

import re

import pytest
from cli_project import copy_project
from cli_stack import Result

from components.config import parse_stack_config
from components.config.errors import ConfigError
from components.config.stack_file import load_stack_config, program_config

# pulumi-nebius 0.6.73 is a parameterized Terraform bridge: its resources need the plugin
# `terraform-provider` (pulumi/pulumi-terraform-provider) v1.5.0 with nebius/nebius 0.6.73, which the
# Go module proxy does not serve.
NEBIUS_PLUGIN = "terraform-provider"
# How the Python language host reports a program that ended with an exception (its exec script, built from
# pulumi/pulumi at the commit e2e/pulumi/BUILD-NOTES.md names: sdk/python/cmd/pulumi-language-python-exec).
PROGRAM_FAILED = "Program failed with an unhandled exception:"
COMPONENTS = (
    "nebius-dra:index:DraPlatform",
    "nebius-dra:cluster:Mk8sCluster",
    "nebius-dra:nodes:GpuNodeGroup",
    "nebius-dra:nodes:SystemNodeGroup",
    "nebius-dra:driver:DraDriver",
    "nebius-dra:access:ClusterAccess",
    "nebius-dra:workloads:DraWorkloads",
    "nebius-dra:cost:CostEstimate",
)


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_whole_program_runs_and_reaches_the_nebius_provider(stack, new_engine, tmp_path):
    engine = new_engine(f"cloud-{stack}")
    project = copy_project(tmp_path / "project")
    code, _out, err = engine.run(["stack", "init", stack], project)
    assert code == 0, err
    result = Result(*engine.run(["preview", "--stack", stack], project, timeout=600))
    assert result.code != 0, f"a cloud-mode preview passed without the Nebius provider: {result}"
    # The engine cancels the program once the provider failed; whether the program's own ending on that
    # cancellation is reported as well ("Program failed ...") depends on which of the two the engine hears
    # first (seen both ways on one commit), so that line is allowed and its exceptions are judged below.
    errors = set(re.findall(r"^\s*error: (.*)$", result.text, re.M)) - {PROGRAM_FAILED}
    assert errors == {
        f"no resource plugin 'pulumi-resource-{NEBIUS_PLUGIN}' found in the workspace at version v1.5.0 or on your $PATH"
    }, str(result)
    # The program got as far as every component of the stack before the engine stopped it.
    for component in COMPONENTS:
        assert re.search(rf"\+\s+{re.escape(component)} dra-{stack}", result.out), (
            f"{component} never registered: {result}"
        )
    # Once the provider failed, the engine cancels the program: every exception it printed is that cancellation.
    raised = re.findall(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Interrupt))(?::\s*(.*))?$", result.text, re.M)
    own = [(name, text) for name, text in raised if not cancelled(name, text)]
    assert not own and "invalid stack configuration" not in result.text, (
        f"the program failed on its own: {own}\n{result}"
    )


def cancelled(name: str, text: str) -> bool:
    """The Python SDK's and the exec script's ways of ending when the engine cancels the program."""
    return (
        name == "KeyboardInterrupt"
        or "context canceled" in text
        or "StatusCode.CANCELLED" in text
        or name.endswith("_InactiveRpcError")
    )


# Values a stack file may get wrong (or right) in its YAML types; the offline plan reads stack files
# itself (components/config/stack_file.py), so the CLI, which types them against Pulumi.yaml, is
# the judge of whether that reader agrees with it.
TYPED_LINES = [
    "nebius-dra:publicEndpoint: on",
    "nebius-dra:publicEndpoint: false",
    'nebius-dra:publicEndpoint: "false"',
    'nebius-dra:publicEndpoint: "False"',
    "nebius-dra:etcdClusterSize: 1:30",
    "nebius-dra:etcdClusterSize: 3.0",
    "nebius-dra:etcdClusterSize: 3",
    'nebius-dra:etcdClusterSize: "3"',
    'nebius-dra:etcdClusterSize: "three"',
    'nebius-dra:etcdClusterSize: " 3"',
    'nebius-dra:etcdClusterSize: "+3"',
    "nebius-dra:gpuProducts: [1]",
    'nebius-dra:gpuProducts: ["NVIDIA H200"]',
    "nebius-dra:clusterName: 010",
    "nebius-dra:clusterName: dra-typed",
]


@pytest.mark.parametrize("line", TYPED_LINES)
def test_the_offline_reader_types_stack_values_as_the_cli_does(line, new_engine, tmp_path):
    """Both refuse or both take a value, judged end to end: the CLI by its type check or the program's refusal
    of the value it was handed (an unquoted 010 reaches the program as "8"), the offline plan by its reader."""
    engine = new_engine("typed")
    project = copy_project(tmp_path / "project")
    key = line.split(": ", 1)[0]
    (project / "Pulumi.typed.yaml").write_text((project / "Pulumi.dev.yaml").read_text() + f"  {line}\n")
    code, _out, err = engine.run(["stack", "init", "typed"], project)
    assert code == 0, err
    result = Result(*engine.run(["preview", "--stack", "typed"], project, timeout=600))
    cli_refused = f"configuration key '{key}' must be of type" in result.text or f"- {key}: got" in result.text
    if not cli_refused:
        assert f"no resource plugin 'pulumi-resource-{NEBIUS_PLUGIN}' found" in result.text, str(result)
    try:
        offline = parse_stack_config(program_config(load_stack_config("typed", project)), "typed") and "took it"
    except ConfigError as refusal:
        offline = f"refused it: {refusal}" if key in str(refusal) else f"took it, refusing something else: {refusal}"
    assert offline.startswith("refused") == cli_refused, f"{line!r}: the offline reader {offline}; the CLI: {result}"
