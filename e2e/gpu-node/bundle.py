#!/usr/bin/env python3
"""Pack what node.py needs into parts that each fit one device call (64 MiB with the checkout).

    python3 e2e/gpu-node/bundle.py --bin BUILD/bin --kube-cache ~/.cache/nebius-dra-e2e --lines BUILD/lines \\
        --wheels BUILD/wheels --prestart 25.12.0=SRC/hack/kubelet-plugin-prestart.sh ... --out MAIN/.devbundle

Each binary is compressed once with `xz -9` (kept in --xz-cache as NAME.xz and reused while newer than it). PARTS says which part carries what; every call copies its part into one folder on the machine
(the files stay while it is warm), and the last one runs node.py over that folder. Standard library only.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LIMIT = 64 << 20
# What one device call carries besides the checkout itself (about 3.4 MiB of tracked files).
CHECKOUT_ALLOWANCE = 5 << 20
PARTS = {
    "a": ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"),
    "b": (
        "kubelet",
        "containerd",
        "containerd-shim-runc-v2",
        "ctr",
        "runc",
        "gpu-kubelet-plugin-25.12.0",
        "nvidia-cdi-hook-1.18.2",
        "pause",
        "cuda-check",
        "netaddr",
        "openssl",
        "bridge",
        "host-local",
        "loopback",
    ),
    "c": ("gpu-kubelet-plugin-0.4.1", "nvidia-cdi-hook-1.19.1"),
}
# The project's code node.py runs, as the device's checkout (the main branch) may not have it yet.
CODE = ("node.py", "mkimage.py", "Pulumi.gpunode-sigs.yaml")
CONTROL_PLANE = HERE.parent / "kube" / "control_plane.py"


def find_binary(name: str, search: list[Path]) -> Path:
    for folder in search:
        for candidate in (folder / name, *folder.glob(f"*/bin/{name}"), *folder.glob(f"cni/{name}")):
            if candidate.is_file():
                return candidate
    sys.exit(f"bundle: no binary {name} under {', '.join(map(str, search))}")


def compressed(binary: Path, cache: Path) -> Path:
    packed = cache / f"{binary.name}.xz"
    if not packed.exists() or packed.stat().st_mtime < binary.stat().st_mtime:
        cache.mkdir(parents=True, exist_ok=True)
        partial = packed.with_suffix(".partial")
        with partial.open("wb") as out:
            subprocess.run(["nice", "-n", "10", "xz", "-9", "-T2", "-c", str(binary)], check=True, stdout=out)
        partial.replace(packed)
    return packed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", type=Path, required=True)
    parser.add_argument("--kube-cache", type=Path, required=True)
    parser.add_argument("--lines", type=Path, required=True, help="render.py's --out")
    parser.add_argument("--wheels", type=Path, required=True, help="cp312 wheels of tools.verify's imports")
    parser.add_argument("--prestart", action="append", default=[], metavar="LINE=PATH")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--xz-cache", type=Path, required=True, help="where the compressed binaries are kept")
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    search = [args.bin, args.kube_cache]
    for part, names in PARTS.items():
        folder = args.out / part / "bin"
        folder.mkdir(parents=True)
        for name in names:
            shutil.copy(compressed(find_binary(name, search), args.xz_cache), folder / f"{name}.xz")
    code = args.out / "a" / "code"
    code.mkdir()
    for name in CODE:
        shutil.copy(HERE / name, code / name)
    shutil.copy(CONTROL_PLANE, code / CONTROL_PLANE.name)
    shutil.copytree(args.lines, args.out / "a" / "lines")
    for spec in args.prestart:
        line, _, path = spec.partition("=")
        shutil.copy(path, args.out / "a" / "lines" / line / "kubelet-plugin-prestart.sh")
    shutil.copytree(args.wheels, args.out / "c" / "wheels")
    for part in PARTS:
        size = sum(f.stat().st_size for f in (args.out / part).rglob("*") if f.is_file())
        print(f"bundle: part {part}: {size / (1 << 20):.1f} MiB")
        if size + CHECKOUT_ALLOWANCE > LIMIT:
            sys.exit(f"bundle: part {part} is {size} bytes: over {LIMIT - CHECKOUT_ALLOWANCE} with the checkout")
    return 0


if __name__ == "__main__":
    sys.exit(main())
