"""Every Kubernetes object and every Helm release's values, as files a pull request diffs.

The files are byte-stable: keys sorted, no timestamps, no mock IDs, paths made from names.
So committing nothing and diffing `build/plan/<stack>/` between two branches shows exactly
what would change inside the cluster. Files a previous run wrote for objects that are gone
are removed, or a deleted object would look as if it were still planned.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
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
    "Written by `python -m tools.plan`: below, each file it wrote, after the SHA-256 of what it wrote. Each run\n"
    "replaces them, deletes one it no longer plans only while it holds what the plan wrote, and refuses to touch\n"
    "this directory while it holds any other file.\n"
)
# One entry a line, as `sha256sum` prints one (coreutils: the digest in lowercase hex, two spaces, the name).
_ENTRY = re.compile(r"(?P<digest>[0-9a-f]{64})  (?P<relative>[^\n]*)")


class ForeignDirectoryError(FileExistsError):
    """The output directory holds files the plan did not write; cleaning it could delete someone's work."""


class UntrustedManifestError(OSError):
    """The marker is not a list the plan wrote; anyone who can write it could otherwise name a file to delete."""


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_plan_file_path(relative: str) -> bool:
    """True for a path of the shape `plan_files` makes, `kubernetes/<namespace>/<file>.yaml` or
    `helm/<namespace>/<release>.values.yaml`, each part a name `_safe` keeps as it is: no `..`, no `/` at either
    end, no other folder. Only such a path is written, and only such a path may a marker name."""
    parts = relative.split("/")
    if len(parts) != 3 or any(_safe(part) != part for part in parts):
        return False
    return parts[2].endswith(".values.yaml" if parts[0] == HELM_DIR else ".yaml") and parts[0] in (
        KUBERNETES_DIR,
        HELM_DIR,
    )


def marker_text(digests: Mapping[str, str]) -> str:
    """The marker's text: MARKER_TEXT, then `<sha256>  <relative path>` for each file, sorted by path."""
    return MARKER_TEXT + "".join(f"{digests[relative]}  {relative}\n" for relative in sorted(digests))


def recorded_digests(marker: str, shown: Path) -> dict[str, str]:
    """Relative path -> the digest of what the plan wrote there, from a marker's text. Anything but what
    `marker_text` writes (a marker of an earlier version, which lists no digest, included) raises
    UntrustedManifestError naming the marker `shown` and its first line in doubt: such a list is trusted for nothing,
    so a name added to it deletes nothing."""
    if not marker.startswith(MARKER_TEXT):
        raise _untrusted(
            f"{shown} does not start with the plan's header (an earlier version's lists no digests)", shown
        )
    if not marker.endswith("\n"):
        raise _untrusted(f"{shown} does not end with a newline (it was cut short)", shown)
    digests: dict[str, str] = {}
    first = MARKER_TEXT.count("\n") + 1
    for number, line in enumerate(marker.removeprefix(MARKER_TEXT).split("\n")[:-1], start=first):
        entry = _ENTRY.fullmatch(line)
        if entry is None:
            problem = "is not '<sha256 in lowercase hex>  <file>'"
        elif not is_plan_file_path(entry["relative"]):
            problem = f"names no file of the plan's shapes ({KUBERNETES_DIR}/<namespace>/<file>.yaml, {HELM_DIR}/<namespace>/<release>.values.yaml)"
        elif entry["relative"] in digests:
            problem = "names a file listed before"
        else:
            digests[entry["relative"]] = entry["digest"]
            continue
        raise _untrusted(f"{shown}, line {number}: {shown_text(line)} {problem}", shown)
    return digests


def _untrusted(problem: str, shown: Path) -> UntrustedManifestError:
    return UntrustedManifestError(
        f"{problem}; the plan trusts none of its list and changed nothing: move out of {shown.parent} what you keep, "
        "delete the directory, and run the plan again"
    )


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
    kept: list[str]
    """Files an earlier run wrote that this one no longer plans, left in place because they changed since."""


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
    if not is_plan_file_path(relative):
        raise UnsafePlanPathError(
            f"refusing plan file path {shown_text(relative)}: every part must be a plain name, in "
            f"{KUBERNETES_DIR}/<namespace>/<file>.yaml or {HELM_DIR}/<namespace>/<release>.values.yaml"
        )
    return relative.split("/")


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

    def read(self, relative: str) -> bytes:
        """The bytes of a file `_walk` found; a link swapped in since is refused, a file gone since reads as none."""
        folder, _, name = relative.rpartition("/")
        return _read_file(self.get(folder, create=False), name, self.shown / relative) or b""

    def close(self) -> None:
        for descriptor in self.opened.values():
            os.close(descriptor)


def write_plan_files(files: Mapping[str, str], directory: Path) -> WriteResult:
    """Writes what changed, leaves identical files untouched, deletes what this run no longer plans.

    Only in a directory the plan made (it carries MARKER) or an empty one, and only the files the
    marker lists, the ones an earlier run wrote: `--out .` must never delete a user's `./dev`, nor a
    run a note the user put beside the plan's files; any other file is refused, naming it, before
    anything changes. The marker records the SHA-256 of each file it lists, and a file no longer
    planned is deleted only while it still holds those bytes: one edited since, or one whose name
    someone added to the marker, is kept (and listed again, so each run says so). A marker that is
    not exactly what the plan writes, or names anything but a path of the plan's shapes, is trusted
    for nothing (UntrustedManifestError). Nothing is followed through a symbolic link: when
    `directory`, or anything in it the plan would read, write or delete, is a link,
    SymlinkRefusedError is raised before any file changes. Every file and folder is reached from an
    already-open parent folder with O_NOFOLLOW, so a link swapped in while the plan runs is refused
    too. `directory`'s own parents are the caller's choice and may be links.
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
        marker = _read_file(root, MARKER, directory / MARKER)
        recorded = {} if marker is None else recorded_digests(marker.decode(errors="replace"), directory / MARKER)
        foreign = [relative for relative in existing if relative not in recorded and relative != MARKER]
        if foreign:
            more = f" and {len(foreign) - 1} more" if len(foreign) > 1 else ""
            raise ForeignDirectoryError(
                f"{directory} holds {directory / foreign[0]}{more}, which the plan did not write (its {MARKER} does "
                "not list it); nothing was changed: move it out of the directory, or choose another --out"
            )
        stale = sorted(relative for relative in existing if relative in recorded and relative not in files)
        removed = [relative for relative in stale if digest(folders.read(relative)) == recorded[relative]]
        kept = [relative for relative in stale if relative not in removed]
        data = {relative: text.encode() for relative, text in files.items()}
        listed = {relative: digest(content) for relative, content in data.items()}
        _write_file(
            root,
            MARKER,
            marker_text(listed | {relative: recorded[relative] for relative in kept}).encode(),
            directory / MARKER,
        )
        for relative in removed:
            folder, _, name = relative.rpartition("/")
            os.unlink(name, dir_fd=folders.get(folder, create=False))
        written, unchanged = [], []
        for relative, content in data.items():
            *path, name = planned[relative]
            parent = folders.get("/".join(path), create=True)
            if _read_file(parent, name, directory / relative) == content:
                unchanged.append(relative)
                continue
            _write_file(parent, name, content, directory / relative)
            written.append(relative)
        for relative in existing_folders:  # each after the folders inside it
            if not os.listdir(folders.get(relative, create=False)):
                folder, _, name = relative.rpartition("/")
                os.rmdir(name, dir_fd=folders.get(folder, create=False))
    finally:
        folders.close()
    return WriteResult(directory, written, unchanged, removed, kept)
