"""The CLI floor: a bare Pulumi program of a stack's recorded registrations, for the real CLI (`make bench-cli`).

`floor.py`'s SDK floor replays a recording under the mock engine; the real CLI needs a program
on disk, in a project of its own, that the same Python host runs. `floor_program` writes that
program from the same recording (`tools/plan/mock_engine.py`'s run of the program, as
`floor.shape_of` takes it down): one straight line of SDK constructors, in registration order,
with the recorded types, names, parents, providers, dependencies, options and inputs as
literals; components as plain `pulumi.ComponentResource`s; no config parsing, validation, CEL
or component code. Nothing is read at run time but the stack's secret config: a recorded secret
whose value is a secret config value (the kubeconfig of existing-cluster mode) is written as
that key's `pulumi.Config(...).require_secret(...)`, so the program's file holds no secret and
the engine sees the same secret input. A secret from anywhere else is refused, never written.

`preview_rows` and `registration_differences` are the check, before anything is timed, that the
floor registers what the program does: both are previewed by the real CLI (`pulumi preview
--json`) and their steps compared: URNs, types, parents, providers, dependencies, options and inputs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, replace
from typing import Any

from pulumi.runtime.rpc import is_rpc_secret, unwrap_rpc_secret

from tools.bench.floor import keyword_arguments, sdk_class, sdk_class_path, urn_of_reference
from tools.plan.mock_engine import ProgramRun, RegisteredResource

# A recorded secret that is the value of a secret config key, in a CLI shape: {SECRET_CONFIG: "<project>:<key>"}.
SECRET_CONFIG = "cliFloorSecretConfig"


class SecretNotFromConfigError(ValueError):
    """A recorded secret that no secret config key holds: the floor program would have to write it out."""


def _secret_mark(plain: Any, secrets: Mapping[str, str], where: str) -> dict[str, str]:
    """The mark of the secret config key whose value `plain` is; refused when none is."""
    key = next((key for key, secret in secrets.items() if secret == plain), None)
    if key is None:
        raise SecretNotFromConfigError(f"{where} is a secret no secret config key holds")
    return {SECRET_CONFIG: key}


def _config_marks(value: Any, secrets: Mapping[str, str], where: str) -> Any:
    """`value` with every secret in it as its config key's mark (`_secret_mark`)."""
    if is_rpc_secret(value):
        return _secret_mark(unwrap_rpc_secret(value), secrets, where)
    if isinstance(value, dict):
        return {k: _config_marks(v, secrets, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [_config_marks(v, secrets, f"{where}[{i}]") for i, v in enumerate(value)]
    return value


def cli_shape(run: ProgramRun, secret_config: Mapping[str, str]) -> dict[str, Any]:
    """A program run's registrations and stack outputs for `floor_program`, secrets as their config keys' marks.

    The mock engine's outputs of each resource are left out (the engine makes its own; the
    provider's would repeat the kubeconfig); a secret stack output is marked as a secret input is.
    """
    resources = [
        asdict(replace(r, inputs=_config_marks(r.inputs, secret_config, f"{r.urn} input"), outputs={}))
        for r in run.resources
    ]
    outputs = {
        key: _secret_mark(value, secret_config, f"stack output {key}")
        if key in run.secret_outputs
        else _config_marks(value, secret_config, f"stack output {key}")
        for key, value in run.outputs.items()
    }
    return {"resources": resources, "outputs": outputs}


def _literal(value: Any, secret_names: Mapping[str, str]) -> str:
    """`value` (JSON data, marks included) as Python source: the mark of a config key is that key's variable."""
    if isinstance(value, dict):
        if set(value) == {SECRET_CONFIG}:
            return secret_names[value[SECRET_CONFIG]]
        return "{" + ", ".join(f"{key!r}: {_literal(item, secret_names)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_literal(item, secret_names) for item in value) + "]"
    return repr(value)


def _marked_keys(value: Any) -> Iterable[str]:
    if isinstance(value, dict):
        if set(value) == {SECRET_CONFIG}:
            yield value[SECRET_CONFIG]
            return
        for item in value.values():
            yield from _marked_keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from _marked_keys(item)


def _options(resource: RegisteredResource, names: Mapping[str, str]) -> str:
    """The resource's `ResourceOptions`, only those the program set (the others are the SDK's defaults)."""
    options = []
    if resource.parent in names:
        options.append(f"parent={names[resource.parent]}")
    if resource.provider:
        options.append(f"provider={names[urn_of_reference(resource.provider)]}")
    if resource.dependencies:
        options.append("depends_on=[" + ", ".join(names[urn] for urn in resource.dependencies) + "]")
    if resource.protect:
        options.append("protect=True")
    if resource.delete_before_replace:
        options.append("delete_before_replace=True")
    if resource.replace_on_changes:
        options.append(f"replace_on_changes={resource.replace_on_changes!r}")
    if resource.create_timeout:
        options.append(f"custom_timeouts=pulumi.CustomTimeouts(create={resource.create_timeout!r})")
    if resource.additional_secret_outputs:
        options.append(f"additional_secret_outputs={resource.additional_secret_outputs!r}")
    return "pulumi.ResourceOptions(" + ", ".join(options) + ")"


def floor_program(shape: Mapping[str, Any], title: str) -> str:
    """The `__main__.py` of the CLI floor of `shape` (a `cli_shape`): the registrations as straight-line SDK calls."""
    resources = [RegisteredResource(**recorded) for recorded in shape["resources"]]
    keys = sorted(
        {key for r in resources for key in _marked_keys(r.inputs)} | set(_marked_keys(list(shape["outputs"].values())))
    )
    secret_names = {key: f"secret_{index}" for index, key in enumerate(keys)}
    modules = sorted({sdk_class_path(r.type)[0] for r in resources if r.custom})
    lines = [
        f'"""The CLI floor of {title}: its recorded registrations, nothing of the program (tools/bench/cli_floor.py)."""',
        "",
        "import pulumi",
        *(f"import {module}" for module in modules),
        "",
    ]
    for key, name in secret_names.items():
        namespace, _, bare = key.partition(":")
        lines.append(f"{name} = pulumi.Config({namespace!r}).require_secret({bare!r})")
    names: dict[str, str] = {}
    for index, resource in enumerate(resources):
        name = f"r{index}"
        options = _options(resource, names)
        if resource.custom:
            module, class_name = sdk_class_path(resource.type)
            arguments = keyword_arguments(sdk_class(resource.type), resource.inputs)
            call_arguments = "".join(f", {key}={_literal(value, secret_names)}" for key, value in arguments.items())
            lines.append(f"{name} = {module}.{class_name}({resource.name!r}, opts={options}{call_arguments})")
        else:
            lines.append(
                f"{name} = pulumi.ComponentResource({resource.type!r}, {resource.name!r}, "
                f"{_literal(resource.inputs, secret_names)}, {options})"
            )
            lines.append(f"{name}.register_outputs({{}})")
        names[resource.urn] = name
    for key, value in shape["outputs"].items():
        lines.append(f"pulumi.export({key!r}, {_literal(value, secret_names)})")
    return "\n".join(lines) + "\n"


def floor_project(program_project: Mapping[str, Any]) -> dict[str, Any]:
    """The floor's Pulumi.yaml from the program's: the same name (so the same URNs) and runtime (the same host and
    venv), none of its config declarations (the CLI would require the program's keys of the floor's stack)."""
    return {
        "name": program_project["name"],
        "description": "the CLI floor (tools/bench/cli_floor.py)",
        "runtime": program_project["runtime"],
    }


# What a preview step's state says that the floor cannot or need not copy: where in the program each resource was
# registered, and which input carried each dependency (the floor's inputs are plain values, the dependencies the
# same resources' `depends_on`: tools/bench/floor.py).
NOT_COMPARED = ("sourcePosition", "stackTrace", "propertyDependencies")


def preview_rows(preview: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """`pulumi preview --json`'s steps by URN: the operation and the new state (inputs, parent, options ...).

    Left out: `NOT_COMPARED`, and a provider reference's id (a preview gives a provider it has not
    created an unknown id of its own), so a provider is compared by URN; dependencies are sorted
    (they are sent in the order their resources resolved).
    """
    rows = {}
    for step in preview.get("steps") or []:
        state = {k: v for k, v in (step.get("newState") or {}).items() if k not in NOT_COMPARED}
        if "provider" in state:
            state["provider"] = urn_of_reference(state["provider"])
        if "dependencies" in state:
            state["dependencies"] = sorted(state["dependencies"])
        rows[step["urn"]] = {"op": step.get("op"), **state}
    return rows


def registration_differences(
    program: Mapping[str, Mapping[str, Any]], floor: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    """What the floor's preview steps do not share with the program's, one line each; none when they match."""
    lines = [f"only the program registers {urn}" for urn in sorted(set(program) - set(floor))]
    lines += [f"only the floor registers {urn}" for urn in sorted(set(floor) - set(program))]
    for urn in sorted(set(program) & set(floor)):
        for key in sorted(set(program[urn]) | set(floor[urn])):
            if program[urn].get(key) != floor[urn].get(key):
                lines.append(
                    f"{urn}: {key} is {program[urn].get(key)!r} in the program, {floor[urn].get(key)!r} in the floor"
                )
    return lines
