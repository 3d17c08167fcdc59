"""Every Kubernetes object and every Helm release's values, as files a pull request diffs.

The files are byte-stable: keys sorted, no timestamps, no mock IDs, paths made from names.
So committing nothing and diffing `build/plan/<stack>/` between two branches shows exactly
what would change inside the cluster. Files a previous run wrote for objects that are gone
are removed, or a deleted object would look as if it were still planned.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from components.redaction import redacted, redacted_leaves
from components.shown import shown as shown_text
from policies.dra_guardrails.planned import field_at
from tools.plan.mock_engine import RegisteredResource
from tools.plan.tree import sort_key

KUBERNETES_DIR = "kubernetes"
HELM_DIR = "helm"
CLUSTER_SCOPED = "_cluster"
NOT_OBJECTS = ("kubernetes:helm.sh/", "kubernetes:yaml/", "kubernetes:kustomize/")
PATCH_SUFFIX = "Patch"
MARKER = ".nebius-dra-plan"
MARKER_TEXT = (
    "Written by `python -m tools.plan`: each run replaces or deletes the files listed below, the ones it wrote, and\n"
    "refuses to touch this directory while it holds any other file.\n"
)
# A marker of before the list (its text was one line) names no file: what it owned were the files of the shapes
# the plan writes, `plan_files`'s paths.
_UNLISTED_MARKER_FILES = re.compile(r"(?:kubernetes/[^/]+/[^/]+\.yaml|helm/[^/]+/[^/]+\.values\.yaml)")


class ForeignDirectoryError(FileExistsError):
    """The output directory holds files the plan did not write; cleaning it could delete someone's work."""


def marker_text(files: Iterable[str]) -> str:
    """The marker's text: MARKER_TEXT, then the relative path of each file the run wrote, one a line, sorted."""
    return MARKER_TEXT + "".join(f"{relative}\n" for relative in sorted(files))


def recorded_files(marker: str, existing: Iterable[str]) -> set[str]:
    """Of the `existing` files, the ones a marker's text says the plan wrote: those it lists, or, for a marker of
    before the list, those of the shapes the plan writes."""
    if marker.startswith(MARKER_TEXT):
        listed = set(marker.removeprefix(MARKER_TEXT).splitlines())
        return {relative for relative in existing if relative in listed}
    return {relative for relative in existing if _UNLISTED_MARKER_FILES.fullmatch(relative)}


class UnsafePlanPathError(OSError):
    """A path the plan would write or delete is not a plain file or folder inside its own directory."""


class SymlinkRefusedError(UnsafePlanPathError):
    """The plan directory, or something in it the plan would touch, is a symbolic link."""


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
    """One path component: unusual characters become `_`, and `.` or `..` (a folder, not a name) become `_`/`__`."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", part)
    return "_" * max(1, len(safe)) if safe in ("", ".", "..") else safe


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
    inputs = redacted_leaves(inputs)  # leaf by leaf: a redaction of the written text could break its YAML
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
    """The release's values, headed by a comment naming chart, version and repository, every text redacted leaf by
    leaf before it is written (`[credentials]@host/x` quoted as YAML needs it, not pasted into the text)."""
    inputs = redacted_leaves(inputs)
    release = inputs.get("name") or resource.name
    namespace = inputs.get("namespace") or "default"
    origin = [f"chart {inputs.get('chart')}", f"version {inputs.get('version') or '(unpinned)'}"]
    if field_at(inputs, "repositoryOpts", "repo"):
        origin.append(f"from {field_at(inputs, 'repositoryOpts', 'repo')}")
    header = redacted(f"# Helm release {namespace}/{release}: {', '.join(origin)}") + "\n"
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


_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _link_refused(shown: Path) -> SymlinkRefusedError:
    return SymlinkRefusedError(
        f"{shown} is a symbolic link; the plan never writes, reads or deletes through a link in its output "
        "directory. Remove the link, or choose another --out."
    )


def _kind_at(parent: int, name: str, shown: Path) -> int | None:
    """The file type bits of `name` inside the open directory `parent`, without following a link; None if absent."""
    try:
        mode = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(mode):
        raise _link_refused(shown)
    if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
        raise UnsafePlanPathError(f"{shown} is neither a file nor a directory; the plan will not touch it")
    return stat.S_IFMT(mode)


def _open_directory(parent: int, name: str, shown: Path, create: bool) -> int:
    """`name` inside `parent`, opened as a directory and never through a link (made first when `create`)."""
    kind = _kind_at(parent, name, shown)
    if kind is None and create:
        os.mkdir(name, 0o777, dir_fd=parent)
    elif kind is not None and kind != stat.S_IFDIR:
        raise UnsafePlanPathError(f"{shown} is a file where the plan needs a directory")
    try:
        return os.open(name, _DIRECTORY_FLAGS, dir_fd=parent)
    except OSError as error:
        if error.errno == errno.ELOOP:  # became a link since the check above
            raise _link_refused(shown) from None
        raise


def _parts(relative: str) -> list[str]:
    parts = relative.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise UnsafePlanPathError(f"refusing plan file path {shown_text(relative)}: every part must be a plain name")
    return parts


def _read_file(parent: int, name: str, shown: Path) -> bytes | None:
    """The file's bytes, or None when there is none; a link or anything but a regular file is refused."""
    if _kind_at(parent, name, shown) is None:
        return None
    try:
        descriptor = os.open(name, _READ_FLAGS, dir_fd=parent)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _link_refused(shown) from None
        raise
    with os.fdopen(descriptor, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise UnsafePlanPathError(f"{shown} is not a regular file; the plan will not touch it")
        return file.read()


def _write_file(parent: int, name: str, data: bytes, shown: Path) -> None:
    """Writes a new file beside `name` and renames it over `name`.

    The rename replaces whatever `name` is (a link is replaced, never followed; a hard link to a
    file elsewhere is broken off, never written through) and readers never see half a file.
    """
    temporary = f".{name}.{os.getpid()}.tmp"
    descriptor = os.open(temporary, _CREATE_FLAGS, 0o666, dir_fd=parent)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        os.replace(temporary, name, src_dir_fd=parent, dst_dir_fd=parent)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary, dir_fd=parent)
        raise


def _walk(directory: int, shown: Path, prefix: str = "") -> tuple[list[str], list[str]]:
    """(files, folders) below an open directory, as relative paths, folders deepest first.

    Refuses a link or a special file anywhere in the tree before anything is written or deleted.
    """
    files: list[str] = []
    folders: list[str] = []
    for name in sorted(os.listdir(directory)):
        relative = f"{prefix}{name}"
        if _kind_at(directory, name, shown / relative) == stat.S_IFREG:
            files.append(relative)
            continue
        child = _open_directory(directory, name, shown / relative, create=False)
        try:
            below, below_folders = _walk(child, shown, f"{relative}/")
        finally:
            os.close(child)
        files += below
        folders += [*below_folders, relative]
    return files, folders


class _Directories:
    """Open descriptors of the plan directory and the folders below it, by relative path, each opened once."""

    def __init__(self, root: int, shown: Path) -> None:
        self.shown = shown
        self.opened: dict[str, int] = {"": root}

    def get(self, folder: str, create: bool) -> int:
        if folder not in self.opened:
            parent, _, name = folder.rpartition("/")
            self.opened[folder] = _open_directory(self.get(parent, create), name, self.shown / folder, create)
        return self.opened[folder]

    def close(self) -> None:
        for descriptor in self.opened.values():
            os.close(descriptor)


def write_plan_files(files: Mapping[str, str], directory: Path) -> WriteResult:
    """Writes what changed, leaves identical files untouched, deletes what this run no longer plans.

    Only in a directory the plan made (it carries MARKER) or an empty one, and only the files the
    marker lists, the ones an earlier run wrote: `--out .` must never delete a user's `./dev`, nor a
    run a note the user put beside the plan's files; any other file is refused, naming it, before
    anything changes. Nothing is followed through a symbolic link: when `directory`, or
    anything in it the plan would read, write or delete, is a link, SymlinkRefusedError is raised
    before any file changes. Every file and folder is reached from an already-open parent folder
    with O_NOFOLLOW, so a link swapped in while the plan runs is refused too. `directory`'s own
    parents are the caller's choice and may be links.
    """
    if directory.name in ("", ".", ".."):
        raise UnsafePlanPathError(f"{directory}: the plan directory must end in a plain name such as the stack's")
    planned = {relative: _parts(relative) for relative in files}
    directory.parent.mkdir(parents=True, exist_ok=True)
    parent = os.open(directory.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        root = _open_directory(parent, directory.name, directory, create=True)
    finally:
        os.close(parent)
    folders = _Directories(root, directory)
    try:
        if os.listdir(root) and _kind_at(root, MARKER, directory / MARKER) != stat.S_IFREG:
            raise ForeignDirectoryError(
                f"{directory} has files the plan did not write (no {MARKER}); choose an empty or plan-made directory with --out"
            )
        existing, existing_folders = _walk(root, directory)
        marker = (_read_file(root, MARKER, directory / MARKER) or b"").decode(errors="replace")
        ours = recorded_files(marker, (relative for relative in existing if relative != MARKER))
        foreign = [relative for relative in existing if relative not in ours and relative != MARKER]
        if foreign:
            more = f" and {len(foreign) - 1} more" if len(foreign) > 1 else ""
            raise ForeignDirectoryError(
                f"{directory} holds {directory / foreign[0]}{more}, which the plan did not write (its {MARKER} does "
                "not list it); nothing was changed: move it out of the directory, or choose another --out"
            )
        removed = sorted(relative for relative in ours if relative not in files)
        for relative in removed:
            folder, _, name = relative.rpartition("/")
            os.unlink(name, dir_fd=folders.get(folder, create=False))
        _write_file(root, MARKER, marker_text(files).encode(), directory / MARKER)
        written, unchanged = [], []
        for relative, text in files.items():
            *path, name = planned[relative]
            parent = folders.get("/".join(path), create=True)
            data = text.encode()
            if _read_file(parent, name, directory / relative) == data:
                unchanged.append(relative)
                continue
            _write_file(parent, name, data, directory / relative)
            written.append(relative)
        for relative in existing_folders:  # each after the folders inside it
            if not os.listdir(folders.get(relative, create=False)):
                folder, _, name = relative.rpartition("/")
                os.rmdir(name, dir_fd=folders.get(folder, create=False))
    finally:
        folders.close()
    return WriteResult(directory, written, unchanged, removed)
