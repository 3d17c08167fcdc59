"""The SDK floor: a program's registrations replayed with nothing of the program in the way.

A program cannot be faster than the Pulumi SDK registering its resources. To measure that
floor for a given stack, the program is run once under the mock engine and its registrations
are written down as a *shape*: for every resource its type, name, parent, provider,
dependencies, options (`protect`, `delete_before_replace`, `replace_on_changes`, timeouts, additional
secret outputs) and inputs, in the order the engine saw them. `replay` registers that
shape again through the same SDK classes (`pulumi_nebius.Mk8sV1NodeGroup`,
`pulumi_kubernetes.resource.v1.ResourceClaimTemplate`, ...; components as plain
`pulumi.ComponentResource`s) under the same mock engine, with plain-data inputs and no config,
validation, CEL or component code. `same_registrations` is the check that the replay registers
exactly what the program did, so the floor is the floor of *these* resources.

What the replay cannot copy: inputs that were Outputs of other resources arrive as plain
values, and the dependency they carried becomes a `depends_on` of the same resource (the
engine sees the same dependency URNs; the SDK awaits one resource instead of one Output).
"""

from __future__ import annotations

import importlib
import inspect
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pulumi

from components.config.reading import load_json
from tools.plan.mock_engine import ProgramRun, RegisteredResource, run_program

PROVIDER_TYPE_PREFIX = "pulumi:providers:"
# The SDK packages whose typed classes the replay constructs, by the package a type token names.
SDK_PACKAGES = {"kubernetes": "pulumi_kubernetes", "nebius": "pulumi_nebius"}


def shape_of(run: ProgramRun) -> dict[str, Any]:
    """A program run's registrations and stack outputs as JSON-ready data, for `replay` in another process."""
    return {"resources": [asdict(resource) for resource in run.resources], "outputs": run.outputs}


def write_shape(run: ProgramRun, path: Path) -> None:
    path.write_text(json.dumps(shape_of(run)))


def read_shape(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = load_json(path, f"the program's shape {path}")
    return document


def sdk_class_path(type_token: str) -> tuple[str, str]:
    """The module and name of the typed SDK class behind a type token, e.g. `kubernetes:resource.k8s.io/v1:ResourceClaimTemplate`.

    Provider packages: `pulumi:providers:kubernetes` is `pulumi_kubernetes.Provider`. Kubernetes
    types are `kubernetes:<group>/<version>:<Kind>`, whose module is `pulumi_kubernetes.<first
    label of the group>.<version>` (as pulumi-kubernetes lays out its SDK); nebius types are
    `nebius:index/<camel>:<Name>`, exported at the package's top level.
    """
    if type_token.startswith(PROVIDER_TYPE_PREFIX):
        return SDK_PACKAGES[type_token.removeprefix(PROVIDER_TYPE_PREFIX)], "Provider"
    package, module, name = type_token.split(":")
    if package == "kubernetes":
        group, version = module.split("/")
        return f"pulumi_kubernetes.{group.split('.')[0]}.{version}", name
    return SDK_PACKAGES[package], name


def sdk_class(type_token: str) -> type[pulumi.CustomResource]:
    """The typed SDK class behind a type token (`sdk_class_path`)."""
    module, name = sdk_class_path(type_token)
    cls: type[pulumi.CustomResource] = getattr(importlib.import_module(module), name)
    return cls


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part.capitalize() for part in rest)


def keyword_arguments(cls: type, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """`inputs` (engine names, camelCase) as the keyword arguments of `cls`'s constructor (snake_case)."""
    parameters = inspect.signature(cls._internal_init).parameters  # type: ignore[attr-defined]
    by_engine_name = {_camel(name): name for name in parameters if name not in ("__self__", "resource_name", "opts")}
    unknown = sorted(set(inputs) - set(by_engine_name))
    if unknown:
        raise ValueError(f"{cls.__name__} has no constructor argument for the inputs {unknown}")
    return {by_engine_name[key]: value for key, value in inputs.items()}


def urn_of_reference(provider_reference: str) -> str:
    """A provider reference is `<urn>::<id>`; URNs themselves contain `::`, ids do not."""
    return provider_reference.rsplit("::", 1)[0]


def replay(shape: Mapping[str, Any]) -> None:
    """Registers `shape`'s resources again, in order, and exports its stack outputs: the body of a Pulumi program."""
    registered: dict[str, pulumi.Resource] = {}
    providers: dict[str, pulumi.ProviderResource] = {}
    for recorded in shape["resources"]:
        resource = RegisteredResource(**recorded)
        opts = pulumi.ResourceOptions(
            parent=registered.get(resource.parent),
            provider=providers.get(urn_of_reference(resource.provider)) if resource.provider else None,
            depends_on=[registered[urn] for urn in resource.dependencies],
            protect=resource.protect or None,
            delete_before_replace=resource.delete_before_replace or None,
            replace_on_changes=resource.replace_on_changes or None,
            custom_timeouts=pulumi.CustomTimeouts(create=resource.create_timeout) if resource.create_timeout else None,
            additional_secret_outputs=resource.additional_secret_outputs or None,
        )
        if resource.custom:
            cls = sdk_class(resource.type)
            custom = cls(resource.name, opts=opts, **keyword_arguments(cls, resource.inputs))
            if isinstance(custom, pulumi.ProviderResource):
                providers[resource.urn] = custom
            registered[resource.urn] = custom
        else:
            component = pulumi.ComponentResource(resource.type, resource.name, resource.inputs, opts)
            component.register_outputs({})
            registered[resource.urn] = component
    for key, value in shape["outputs"].items():
        pulumi.export(key, value)


def replay_run(shape: Mapping[str, Any], stack: str) -> ProgramRun:
    """`replay` under the mock engine, as `run_program` runs the real program."""
    return run_program(stack, config={}, entry=lambda: replay(shape))


def _comparable(resources: Iterable[RegisteredResource]) -> list[tuple[Any, ...]]:
    """Sorted by URN: registrations arrive in the order their inputs resolve, which is not part of the shape."""
    rows = [
        (
            r.urn,
            r.type,
            r.custom,
            r.parent,
            r.provider,
            r.protect,
            r.delete_before_replace,
            r.replace_on_changes,
            r.create_timeout,
            r.additional_secret_outputs,
            sorted(r.dependencies),
            r.inputs,
        )
        for r in resources
    ]
    return sorted(rows, key=lambda row: row[0])


def same_registrations(program: ProgramRun, floor: ProgramRun) -> bool:
    """True when the replay registered what the program did: URNs, parents, providers, options, dependencies, inputs."""
    return _comparable(program.resources) == _comparable(floor.resources) and program.outputs == floor.outputs
