#!/usr/bin/env python3
"""Write a single-layer OCI image archive from files of the machine it runs on, for `ctr images import`.

The GPU machine has no registry and no network, so the node's images are made there from its own
distribution: each named file goes in at the same path (or at DEST), and every shared library an ELF
file needs (as `ldd` resolves it on this machine) goes in with it, so the image runs on its own,
without host mounts. Symbolic links among the named files are kept as links and their targets added.

Usage:
    mkimage.py OUT.tar REF [--env K=V]... [--entrypoint PATH] FILE[=DEST]...

REF must be fully qualified (registry/name:tag): the CRI normalises a short name to docker.io/...,
which an imported short name would then not match. Standard library only (Python 3.8+).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile

# Directories every container expects; the runtime mounts over most of them.
SKELETON = ("dev", "etc", "proc", "sys", "tmp", "run", "var", "usr/bin", "usr/sbin", "usr/lib", "usr/lib64", "root")
# Top-level directories that a merged-/usr distribution makes links into /usr; kept as links when the host has them so.
MERGED = ("bin", "sbin", "lib", "lib64")
ETC_FILES = {
    "etc/passwd": b"root:x:0:0:root:/root:/bin/sh\n",
    "etc/group": b"root:x:0:\n",
    "etc/ld.so.conf": b"include /etc/ld.so.conf.d/*.conf\n",
}
LDD_PATH = re.compile(r"(?:=>\s*)?(/\S+)\s+\(0x")


def is_elf(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == b"\x7fELF"
    except OSError:
        return False


def shared_libraries(path: str) -> list[str]:
    """The absolute paths `ldd` resolves for an ELF file; none for a static binary."""
    proc = subprocess.run(["ldd", path], capture_output=True, text=True)
    if proc.returncode != 0:
        return []
    missing = [line.strip() for line in proc.stdout.splitlines() if "not found" in line]
    if missing:
        sys.exit(f"mkimage: {path} needs libraries this machine lacks: {missing}")
    return [m.group(1) for line in proc.stdout.splitlines() if (m := LDD_PATH.search(line))]


class Layer:
    def __init__(self) -> None:
        self.raw = io.BytesIO()
        self.tar = tarfile.open(fileobj=self.raw, mode="w", format=tarfile.PAX_FORMAT)  # noqa: SIM115 (closed by close())
        self.names: set[str] = set()

    def _info(self, name: str, **fields: object) -> tarfile.TarInfo:
        info = tarfile.TarInfo(name)
        info.mtime = 0
        for key, value in fields.items():
            setattr(info, key, value)
        return info

    def directory(self, name: str) -> None:
        name = name.strip("/")
        if not name or name in self.names:
            return
        self.directory(os.path.dirname(name))
        self.names.add(name)
        self.tar.addfile(self._info(name, type=tarfile.DIRTYPE, mode=0o755))

    def data(self, name: str, body: bytes, mode: int) -> None:
        name = name.strip("/")
        if name in self.names:
            return
        self.directory(os.path.dirname(name))
        self.names.add(name)
        self.tar.addfile(self._info(name, size=len(body), mode=mode), io.BytesIO(body))

    def symlink(self, name: str, target: str) -> None:
        name = name.strip("/")
        if name in self.names:
            return
        self.directory(os.path.dirname(name))
        self.names.add(name)
        self.tar.addfile(self._info(name, type=tarfile.SYMTYPE, linkname=target, mode=0o777))

    def host_file(self, source: str, dest: str | None = None) -> None:
        """Adds `source` at `dest`, by default at its path with the directories' links resolved (merged /usr)."""
        if dest is None:
            dest = os.path.join(os.path.realpath(os.path.dirname(source)), os.path.basename(source))
            if os.path.islink(source):
                target = os.readlink(source)
                self.symlink(dest, target)
                self.host_file(os.path.normpath(os.path.join(os.path.dirname(source), target)))
                return
        real = os.path.realpath(source)
        if not os.path.isfile(real):
            sys.exit(f"mkimage: {source} is not a file on this machine")
        with open(real, "rb") as handle:
            self.data(dest, handle.read(), os.stat(real).st_mode & 0o7777)
        if is_elf(real):
            for library in shared_libraries(real):
                self.host_file(library)

    def close(self) -> bytes:
        self.tar.close()
        return self.raw.getvalue()


def digest(body: bytes) -> str:
    return "sha256:" + hashlib.sha256(body).hexdigest()


def write_archive(out: str, ref: str, layer_tar: bytes, env: list[str], entrypoint: list[str] | None) -> str:
    # Level 1: the layers hold large binaries, are made on the machine that runs them and never travel.
    layer = gzip.compress(layer_tar, compresslevel=1, mtime=0)
    config = {
        "architecture": "amd64",
        "os": "linux",
        "rootfs": {"type": "layers", "diff_ids": [digest(layer_tar)]},
        "config": {"Env": env, **({"Entrypoint": entrypoint} if entrypoint else {})},
    }
    config_body = json.dumps(config, sort_keys=True).encode()
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": digest(config_body),
            "size": len(config_body),
        },
        "layers": [
            {"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": digest(layer), "size": len(layer)}
        ],
    }
    manifest_body = json.dumps(manifest, sort_keys=True).encode()
    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [
            {
                "mediaType": manifest["mediaType"],
                "digest": digest(manifest_body),
                "size": len(manifest_body),
                "platform": {"architecture": "amd64", "os": "linux"},
                # containerd names the imported image from this annotation (the OCI ref.name holds only a tag).
                "annotations": {"io.containerd.image.name": ref, "org.opencontainers.image.ref.name": ref},
            }
        ],
    }
    blobs = {config_body: "config", layer: "layer", manifest_body: "manifest"}
    with tarfile.open(out, "w") as archive:
        entries = [("oci-layout", b'{"imageLayoutVersion":"1.0.0"}'), ("index.json", json.dumps(index).encode())]
        entries += [(f"blobs/sha256/{digest(body)[7:]}", body) for body in blobs]
        for name, body in entries:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(body), 0o644, 0
            archive.addfile(info, io.BytesIO(body))
    return digest(manifest_body)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("ref")
    parser.add_argument("--env", action="append", default=[], metavar="K=V")
    parser.add_argument("--entrypoint", action="append", metavar="ARG")
    parser.add_argument("files", nargs="+", metavar="FILE[=DEST]")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"[a-z0-9.-]+\.[a-z]+(:\d+)?/[a-z0-9._/-]+:[\w.-]+", args.ref):
        parser.error(f"REF {args.ref!r} is not fully qualified (registry.example/name:tag)")
    layer = Layer()
    for directory in SKELETON:
        layer.directory(directory)
    for top in MERGED:
        if os.path.islink(f"/{top}"):
            layer.symlink(top, os.readlink(f"/{top}"))
        else:
            layer.directory(top)
    for spec in args.files:
        source, _, dest = spec.partition("=")
        layer.host_file(source, dest or None)
    for name, body in ETC_FILES.items():
        layer.data(name, body, 0o644)
    env = args.env or ["PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"]
    manifest = write_archive(args.out, args.ref, layer.close(), env, args.entrypoint)
    print(f"{args.out}: {args.ref} {manifest} ({len(layer.names)} entries)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
