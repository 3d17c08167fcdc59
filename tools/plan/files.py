"""Every Kubernetes object and every Helm release's values, as files a pull request diffs.

The files are byte-stable: keys sorted, no timestamps, no mock IDs, paths made from names.
So committing nothing and diffing `build/plan/<stack>/` between two branches shows exactly
what would change inside the cluster. Files a previous run wrote for objects that are gone
are removed, or a deleted object would look as if it were still planned.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from policies.dra_rules import field_at
from tools.plan.mock_engine import RegisteredResource
from tools.plan.tree import sort_key

KUBERNETES_DIR = "kubernetes"
HELM_DIR = "helm"
CLUSTER_SCOPED = "_cluster"
NOT_OBJECTS = ("kubernetes:helm.sh/", "kubernetes:yaml/", "kubernetes:kustomize/")
PATCH_SUFFIX = "Patch"
MARKER = ".nebius-dra-plan"
MARKER_TEXT = (
    "Written by `python -m tools.plan`: every other file in this directory is replaced or deleted on each run.\n"
)


class ForeignDirectoryError(FileExistsError):
    """The output directory holds files the plan did not write; cleaning it could delete someone's work."""


class _PlanDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]  # libyaml when the wheel has it: 4x faster, same text
    """Multi-line strings (scripts, CEL expressions) as literal blocks, so a diff shows lines, not escapes."""


def _represent_text(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|" if "\n" in text else None)


_PlanDumper.add_representer(str, _represent_text)


def to_yaml(document: Any) -> str:
    return yaml.dump(
        document, Dumper=_PlanDumper, sort_keys=True, default_flow_style=False, allow_unicode=True, width=100
    )


def _safe(part: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", part) or "_"


def api_version_and_kind(type_token: str, inputs: Mapping[str, Any]) -> tuple[str, str]:
    """`kubernetes:apps/v1:Deployment` -> (`apps/v1`, `Deployment`); `core` is the unnamed group."""
    _, module, kind = type_token.split(":", 2)
    group, _, version = module.rpartition("/")
    api_version = version if group in ("", "core") else f"{group}/{version}"
    return str(inputs.get("apiVersion") or api_version), str(inputs.get("kind") or kind)


def is_kubernetes_object(type_token: str) -> bool:
    return (
        type_token.startswith("kubernetes:") and not type_token.startswith(NOT_OBJECTS) and type_token.count(":") == 2
    )


def kubernetes_manifest(resource: RegisteredResource, inputs: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The object as `kubectl apply` would get it: apiVersion and kind from the type token, then the inputs.

    A `...Patch` type is a server-side-apply patch of an object someone else owns: it keeps
    the object's kind and is written as `<kind>-<name>.patch.yaml`.
    """
    api_version, kind = api_version_and_kind(resource.type, inputs)
    patch = "kind" not in inputs and kind.endswith(PATCH_SUFFIX)
    manifest = {key: value for key, value in inputs.items() if key not in ("apiVersion", "kind")}
    manifest["apiVersion"] = api_version
    manifest["kind"] = kind.removesuffix(PATCH_SUFFIX) if patch else kind
    namespace = field_at(manifest, "metadata", "namespace") or CLUSTER_SCOPED
    name = field_at(manifest, "metadata", "name") or resource.name
    suffix = ".patch.yaml" if patch else ".yaml"
    return f"{KUBERNETES_DIR}/{_safe(namespace)}/{_safe(manifest['kind'].lower())}-{_safe(name)}{suffix}", manifest


def helm_values(resource: RegisteredResource, inputs: Mapping[str, Any]) -> tuple[str, str]:
    """The release's values, headed by a comment naming chart, version and repository."""
    release = inputs.get("name") or resource.name
    namespace = inputs.get("namespace") or "default"
    origin = [f"chart {inputs.get('chart')}", f"version {inputs.get('version') or '(unpinned)'}"]
    if field_at(inputs, "repositoryOpts", "repo"):
        origin.append(f"from {field_at(inputs, 'repositoryOpts', 'repo')}")
    header = f"# Helm release {namespace}/{release}: {', '.join(origin)}\n"
    path = f"{HELM_DIR}/{_safe(namespace)}/{_safe(release)}.values.yaml"
    return path, header + to_yaml(inputs.get("values") or {})


def plan_files(resources: Iterable[RegisteredResource], inputs: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Relative path -> file text. Two resources that would share a path get their Pulumi names appended."""
    files: dict[str, str] = {}
    for resource in sorted(resources, key=sort_key):
        values = inputs[resource.urn]
        if resource.type.startswith("kubernetes:helm.sh/") and resource.type.endswith(":Release"):
            path, text = helm_values(resource, values)
        elif is_kubernetes_object(resource.type):
            path, manifest = kubernetes_manifest(resource, values)
            text = to_yaml(manifest)
        else:
            continue
        if path in files:
            path = f"{path.removesuffix('.yaml')}.{_safe(resource.name)}.yaml"
        files[path] = text
    return dict(sorted(files.items()))


@dataclass
class WriteResult:
    directory: Path
    written: list[str]
    unchanged: list[str]
    removed: list[str]


def write_plan_files(files: Mapping[str, str], directory: Path) -> WriteResult:
    """Writes what changed, leaves identical files untouched, deletes what this run no longer plans.

    Only in a directory the plan made (it carries MARKER) or an empty one: `--out .` must never
    delete a user's `./dev`.
    """
    if directory.is_dir() and any(directory.iterdir()) and not (directory / MARKER).is_file():
        raise ForeignDirectoryError(
            f"{directory} has files the plan did not write (no {MARKER}); choose an empty or plan-made directory with --out"
        )
    directory.mkdir(parents=True, exist_ok=True)
    (directory / MARKER).write_text(MARKER_TEXT)
    written, unchanged = [], []
    for relative, text in files.items():
        target = directory / relative
        if target.exists() and target.read_text() == text:
            unchanged.append(relative)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        written.append(relative)
    removed = sorted(
        relative
        for path in directory.rglob("*")
        if path.is_file() and (relative := str(path.relative_to(directory))) not in files and relative != MARKER
    )
    for relative in removed:
        (directory / relative).unlink()
    for folder in sorted(
        (path for path in directory.rglob("*") if path.is_dir()), key=lambda p: len(p.parts), reverse=True
    ):
        if not any(folder.iterdir()):
            folder.rmdir()
    return WriteResult(directory, written, unchanged, removed)
