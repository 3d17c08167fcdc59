"""The CLI floor of `make bench-cli` registers what the program does, and never writes the kubeconfig out."""

from __future__ import annotations

import json

import pytest

from tests.existing_clusters import KEY, KUBECONFIG, existing
from tools.bench.cli_floor import (
    SecretNotFromConfigError,
    cli_shape,
    floor_program,
    floor_project,
    preview_rows,
    registration_differences,
)
from tools.bench.fleets import with_user_templates
from tools.bench.floor import same_registrations
from tools.plan.mock_engine import ProgramRun, run_program

SECRET_PART = "t0ken-that-must-never-show"


def _program(templates: int = 0) -> ProgramRun:
    run = existing("dev", **with_user_templates({}, templates))
    assert run.error is None
    return run


def _floor_run(source: str) -> ProgramRun:
    """The floor program under the mock engine, with the kubeconfig as the stack's secret config (as the CLI's)."""
    code = compile(source, "__main__.py", "exec")
    return run_program("dev", config={KEY: KUBECONFIG}, secret_keys=[KEY], entry=lambda: exec(code, {}))


@pytest.mark.parametrize("templates", [0, 3])
def test_the_floor_program_registers_what_the_program_does(templates):
    program = _program(templates)
    floor = _floor_run(floor_program(cli_shape(program, {KEY: KUBECONFIG}), "stack dev"))
    assert floor.error is None
    assert same_registrations(program, floor)
    assert floor.secret_outputs == program.secret_outputs == {"kubeconfig"}


def test_the_kubeconfig_is_in_neither_the_shape_nor_the_program():
    program = _program()
    shape = cli_shape(program, {KEY: KUBECONFIG})
    source = floor_program(shape, "stack dev")
    assert SECRET_PART in json.dumps([r.inputs for r in program.resources])  # the recording holds it ...
    assert SECRET_PART not in json.dumps(shape)  # ... its shape for the floor does not
    assert SECRET_PART not in source
    assert "pulumi.Config('nebius-dra').require_secret('existingClusterKubeconfig')" in source


def test_a_secret_no_config_key_holds_is_refused():
    program = _program()
    with pytest.raises(SecretNotFromConfigError, match="kubeconfig"):
        cli_shape(program, {KEY: "another kubeconfig"})


def test_the_floor_program_has_no_code_of_the_program():
    source = floor_program(cli_shape(_program(), {KEY: KUBECONFIG}), "stack dev")
    imports = {line for line in source.splitlines() if line.startswith(("import ", "from "))}
    assert imports == {
        "import pulumi",
        "import pulumi_kubernetes",
        "import pulumi_kubernetes.core.v1",
        "import pulumi_kubernetes.helm.v3",
        "import pulumi_kubernetes.resource.v1",
    }
    assert "pulumi.ComponentResource('nebius-dra:index:DraPlatform', 'dra-dev', {}, pulumi.ResourceOptions())" in source


def test_the_floor_project_keeps_the_name_and_runtime_and_no_config():
    program = {"name": "nebius-dra", "runtime": {"name": "python"}, "config": {"nebius-dra:gpuNodeGroups": {}}}
    project = floor_project(program)
    assert project["name"] == "nebius-dra" and project["runtime"] == {"name": "python"}
    assert "config" not in project


def _step(urn: str, provider: str = "urn:p::prov::04da6b54", dependencies=("urn:a", "urn:b"), **state) -> dict:
    return {
        "op": "create",
        "urn": urn,
        "newState": {
            "urn": urn,
            "type": "kubernetes:core/v1:Namespace",
            "provider": provider,
            "dependencies": list(dependencies),
            "inputs": {"metadata": {"name": "n"}},
            **state,
        },
    }


def test_previews_match_whatever_the_provider_ids_dependency_order_and_source_positions():
    program = preview_rows({"steps": [_step("urn:x", sourcePosition="project:///components/a.py#1")]})
    floor = preview_rows(
        {"steps": [_step("urn:x", "urn:p::prov::ffff", ("urn:b", "urn:a"), sourcePosition="project:///__main__.py#9")]}
    )
    assert registration_differences(program, floor) == []


def test_previews_differ_by_urn_input_and_option():
    program = preview_rows({"steps": [_step("urn:x", replaceOnChanges=["spec"]), _step("urn:only-program")]})
    floor = preview_rows(
        {
            "steps": [
                {**_step("urn:x"), "newState": {**_step("urn:x")["newState"], "inputs": {"metadata": {"name": "m"}}}},
                _step("urn:only-floor"),
            ]
        }
    )
    assert registration_differences(program, floor) == [
        "only the program registers urn:only-program",
        "only the floor registers urn:only-floor",
        "urn:x: inputs is {'metadata': {'name': 'n'}} in the program, {'metadata': {'name': 'm'}} in the floor",
        "urn:x: replaceOnChanges is ['spec'] in the program, None in the floor",
    ]
