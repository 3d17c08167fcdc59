"""dev and prod in cloud mode (their stack files as they are) through the real CLI: the CLI types every
value of the stack file against Pulumi.yaml, the program runs whole and registers its Nebius resources,
and the preview stops only where this environment ends: the Nebius provider plugin, which cannot be
had here (README, "What the engine tier cannot reach").
"""

from __future__ import annotations

import pytest
from cli_project import copy_project
from cli_stack import Result

# pulumi-nebius 0.6.73 is a parameterized Terraform bridge: its resources need the plugin
# `terraform-provider` (pulumi/pulumi-terraform-provider) v1.5.0 with nebius/nebius 0.6.73, which the
# Go module proxy does not serve.
NEBIUS_PLUGIN = "terraform-provider"


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_whole_program_runs_and_reaches_the_nebius_provider(stack, engine, tmp_path):
    project = copy_project(tmp_path / "project")
    code, out, err = engine.run(["stack", "init", stack], project)
    assert code == 0, err
    result = Result(*engine.run(["preview", "--stack", stack], project, timeout=600))
    assert result.code != 0, f"a cloud-mode preview passed without the Nebius provider: {result}"
    assert f"no resource plugin 'pulumi-resource-{NEBIUS_PLUGIN}' found" in result.text, str(result)
    for earlier in ("invalid stack configuration", "Traceback", "config validation error", "ConfigError"):
        assert earlier not in result.text, f"the preview failed before the Nebius provider ({earlier!r}): {result}"
