"""Runs the real Pulumi program in-process under the SDK's mock engine.

This is what `make plan`, the tests and the benchmark share: the stack's real
`Pulumi.<stack>.yaml`, merged over `Pulumi.yaml` defaults the way the Pulumi CLI merges
them, fed to the unmodified `__main__.py`. Nothing reaches a cloud, and no Pulumi CLI or
provider plugin is needed. Every registration is recorded with its parent, dependencies,
provider and options, so callers can reason about the graph `pulumi up` would walk.
"""

from __future__ import annotations

import runpy
import sys
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from google.protobuf import struct_pb2
from pulumi.runtime import mocks, rpc, settings
from pulumi.runtime.config import set_all_config
from pulumi.runtime.proto import resource_pb2
from pulumi.runtime.stack import run_in_stack
from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await

from components.config.raw import OFFLINE_ENGINE
from components.config.stack_file import PROJECT_DIR, StackFileError
from components.cyclic_gc import without_cyclic_gc
from components.dra_constants import PROJECT
from tools.plan.stack_source import ReadableCheck, check_stack_program, read_stack_source, with_program_problems

STACK_TYPE = "pulumi:pulumi:Stack"
MOCK_CA_PEM = "-----BEGIN CERTIFICATE-----\nTU9DSy1DQQ==\n-----END CERTIFICATE-----\n"


@dataclass
class RegisteredResource:
    """One resource as the engine saw it: engine (camelCase) property names, URNs for links."""

    urn: str
    type: str
    name: str
    custom: bool
    inputs: dict[str, Any]
    parent: str
    dependencies: list[str]
    property_dependencies: dict[str, list[str]]
    provider: str
    protect: bool
    # ResourceOptions.delete_before_replace: a replacement deletes this resource before it creates the new one.
    delete_before_replace: bool = False
    # ResourceOptions.replace_on_changes: input paths whose change replaces the resource instead of updating it.
    replace_on_changes: list[str] = field(default_factory=list)
    create_timeout: str = ""
    outputs: dict[str, Any] = field(default_factory=dict)
    # Outputs the program asks the engine to keep secret (ResourceOptions.additional_secret_outputs).
    additional_secret_outputs: list[str] = field(default_factory=list)


@dataclass
class ProgramRun:
    stack: str
    config: dict[str, str]
    resources: list[RegisteredResource]
    outputs: dict[str, Any]
    secret_outputs: set[str]
    error: BaseException | None

    def of_type(self, type_token: str) -> list[RegisteredResource]:
        return [r for r in self.resources if r.type == type_token]

    def by_urn(self) -> dict[str, RegisteredResource]:
        return {r.urn: r for r in self.resources}


def _mock_outputs(type_token: str, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """What the providers would report back that the program reads."""
    if type_token == "nebius:index/mk8sV1Cluster:Mk8sV1Cluster":
        public = "publicEndpoint" in ((inputs.get("controlPlane") or {}).get("endpoints") or {})
        endpoints = (
            {"publicEndpoint": f"https://{name}.mk8s.example"}
            if public
            else {"privateEndpoint": f"https://{name}.internal"}
        )
        return {"status": {"controlPlane": {"endpoints": endpoints, "auth": {"clusterCaCertificate": MOCK_CA_PEM}}}}
    if type_token == "kubernetes:helm.sh/v3:Release":
        return {
            "status": {"name": inputs.get("name", name), "namespace": inputs.get("namespace", ""), "status": "deployed"}
        }
    return {}


def state_struct(state: Mapping[str, Any]) -> struct_pb2.Struct:
    """`state` as the engine would send it back: directly when it is plain data, else through the SDK."""
    struct = struct_pb2.Struct()
    try:
        struct.update(state)
    except (TypeError, ValueError):
        _ensure_event_loop()
        return _sync_await(rpc.serialize_properties(dict(state), {}))
    return struct


class _RecordingMocks(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict]:
        return f"{args.name}-id", {**args.inputs, **_mock_outputs(args.typ, args.name, args.inputs)}

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict, list[tuple[str, str]] | None]:
        return {}, None


class _RecordingMonitor(mocks.MockMonitor):
    def __init__(self) -> None:
        super().__init__(_RecordingMocks())
        self.registered: list[RegisteredResource] = []
        self.stack_outputs: dict[str, Any] = {}
        self.secret_outputs: set[str] = set()

    def RegisterResource(self, request):  # noqa: N802 (gRPC method name)
        """The SDK's mock registration, minus its per-resource event loop for serialising plain state.

        `MockMonitor.RegisterResource` serialises the returned state through the SDK's async
        serialiser on a fresh event loop in the RPC thread, about a millisecond a resource.
        Mock state is plain data, which a protobuf Struct takes directly; anything else goes
        the SDK's way.
        """
        urn = self.make_urn(request.parent, request.type, request.name)
        if request.type == STACK_TYPE:
            return resource_pb2.RegisterResourceResponse(urn=urn)
        inputs = rpc.deserialize_properties(request.object, keep_internal=False)
        resource_id, state = self.mocks.new_resource(
            pulumi.runtime.MockResourceArgs(
                typ=request.type,
                name=request.name,
                inputs=inputs,
                provider=request.provider,
                resource_id=request.importId,
                custom=request.custom or False,
            )
        )
        self.resources[urn] = mocks.MockMonitor.ResourceRegistration(urn, resource_id or "", state)
        self.registered.append(
            RegisteredResource(
                urn=urn,
                type=request.type,
                name=request.name,
                custom=request.custom,
                inputs=inputs,
                parent=request.parent,
                dependencies=list(request.dependencies),
                property_dependencies={key: list(deps.urns) for key, deps in request.propertyDependencies.items()},
                provider=request.provider,
                protect=request.protect,
                delete_before_replace=request.deleteBeforeReplace,
                replace_on_changes=list(request.replaceOnChanges),
                create_timeout=request.customTimeouts.create,
                outputs=dict(state),
                additional_secret_outputs=list(request.additionalSecretOutputs),
            )
        )
        return resource_pb2.RegisterResourceResponse(urn=urn, id=resource_id or "", object=state_struct(state))

    def RegisterResourceOutputs(self, request):  # noqa: N802 (gRPC method name)
        if request.urn.endswith(f"::{STACK_TYPE}::{settings.get_project()}-{settings.get_stack()}"):
            raw = rpc.deserialize_properties(request.outputs)
            for key, value in raw.items():
                if rpc.is_rpc_secret(value):
                    self.secret_outputs.add(key)
                    value = rpc.unwrap_rpc_secret(value)
                self.stack_outputs[key] = value
        return super().RegisterResourceOutputs(request)


def run_program(
    stack: str,
    config: Mapping[str, str] | None = None,
    project_dir: Path = PROJECT_DIR,
    project: str = PROJECT,
    preview: bool = False,
    entry: Callable[[], None] | None = None,
    secret_keys: Collection[str] = (),
    stack_file: Path | None = None,
    check_readable: ReadableCheck = check_stack_program,
) -> ProgramRun:
    """Runs `__main__.py` (or `entry`) for `stack`; `config` (and its `secret_keys`) replace the stack file's.

    The config comes from `Pulumi.<stack>.yaml` in `project_dir`, or from `stack_file` (`--stack-file`) when given.
    A stack file that cannot be read whole is reported with what `check_readable`, the checks of the program
    in `project_dir`, refuses in the keys that could be read.
    """
    monitor = _RecordingMonitor()
    if config is None:
        try:
            read = read_stack_source(stack, stack_file, project_dir)
        except StackFileError as unreadable:
            return ProgramRun(stack, {}, [], {}, set(), with_program_problems(unreadable, stack, check_readable))
        values, secret_keys = read.values, read.secret_keys
    else:
        values = dict(config)
    settings.reset_options(project=project, stack=stack, preview=preview)
    pulumi.runtime.set_mocks(_RecordingMocks(), project=project, stack=stack, preview=preview, monitor=monitor)
    settings.ROOT.set(None)
    set_all_config(values, list(secret_keys))

    def main_program() -> None:
        runpy.run_path(str(project_dir / "__main__.py"), run_name="__main__")

    program = entry or main_program
    error: BaseException | None = None
    added_path = str(project_dir) not in sys.path
    if added_path:
        sys.path.insert(0, str(project_dir))
    offline = OFFLINE_ENGINE.set(True)  # the stack file was read above (or `config` replaces it)
    try:
        with without_cyclic_gc():
            _sync_await(run_in_stack(program))
    except Exception as exc:
        error = exc
    finally:
        OFFLINE_ENGINE.reset(offline)
        if added_path:
            sys.path.remove(str(project_dir))
    return ProgramRun(
        stack=stack,
        config=values,
        resources=monitor.registered,
        outputs=monitor.stack_outputs,
        secret_outputs=monitor.secret_outputs,
        error=error,
    )
