#!/usr/bin/env bash
# Builds everything node.py runs on the GPU machine, on an x86-64 Linux machine with Go >= 1.26, gcc,
# libseccomp-dev (its static libseccomp.a goes into runc) and git mirrors of the two DRA driver repositories.
# The control plane (kube-apiserver, -controller-manager, -scheduler, etcd) comes from e2e/kube/build.py.
#
#   NVIDIA_REPO=<bare git dir of github.com/NVIDIA/k8s-dra-driver-gpu> \
#   SIGS_REPO=<bare git dir of github.com/kubernetes-sigs/dra-driver-nvidia-gpu> \
#   OUT=/work/build42 e2e/gpu-node/build.sh
#
# Output: $OUT/bin/{kubelet,containerd,containerd-shim-runc-v2,ctr,runc,gpu-kubelet-plugin-<line>,
# nvidia-cdi-hook-<version>,helm,pause,cuda-check,netaddr,cni/{bridge,host-local,loopback}} and $OUT/wheels
# (tools.verify's imports for the machine's Python 3.12).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${OUT:?where the binaries go}
NVIDIA_REPO=${NVIDIA_REPO:?bare git dir of github.com/NVIDIA/k8s-dra-driver-gpu}
SIGS_REPO=${SIGS_REPO:?bare git dir of github.com/kubernetes-sigs/dra-driver-nvidia-gpu}
export GOTOOLCHAIN=local
BIN=$OUT/bin SRC=$OUT/src
mkdir -p "$BIN/cni" "$SRC"
N="nice -n 10"

module() {  # module DIR MODULE@VERSION: a throw-away module that requires MODULE@VERSION
  mkdir -p "$1" && cd "$1"
  [ -f go.mod ] || go mod init "gpu-node/$(basename "$1")" >/dev/null
  GOFLAGS=-mod=mod go get "$2"
}

# The DRA kubelet plugins, from their tags with their vendored modules (cgo: NVML through go-nvml), with the
# ldflags of the upstream Makefiles' cmd-% targets.
mkdir -p "$SRC/nvidia" "$SRC/sigs"
git -C "$NVIDIA_REPO" archive v25.12.0 | tar x -C "$SRC/nvidia"
git -C "$SIGS_REPO" archive v0.4.1 | tar x -C "$SRC/sigs"
(
  export GOFLAGS=-mod=vendor CGO_ENABLED=1 CGO_LDFLAGS_ALLOW='-Wl,--unresolved-symbols=ignore-in-object-files'
  cd "$SRC/nvidia" && $N go build -trimpath -ldflags "-s -w -X github.com/NVIDIA/k8s-dra-driver-gpu/internal/info.gitCommit=0882da87 -X github.com/NVIDIA/k8s-dra-driver-gpu/internal/info.version=v25.12.0" -o "$BIN/gpu-kubelet-plugin-25.12.0" ./cmd/gpu-kubelet-plugin
  cd "$SRC/sigs" && $N go build -trimpath -ldflags "-s -w -X sigs.k8s.io/dra-driver-nvidia-gpu/internal/info.gitCommit=764900e7 -X sigs.k8s.io/dra-driver-nvidia-gpu/internal/info.version=v0.4.1" -o "$BIN/gpu-kubelet-plugin-0.4.1" ./cmd/gpu-kubelet-plugin
)

# nvidia-cdi-hook at the nvidia-container-toolkit version each driver's go.mod requires (cgo, like the plugin).
for v in 1.18.2 1.19.1; do
  module "$SRC/hook-$v" "github.com/NVIDIA/nvidia-container-toolkit@v$v"
  CGO_ENABLED=1 GOFLAGS=-mod=mod CGO_LDFLAGS_ALLOW='-Wl,--unresolved-symbols=ignore-in-object-files' \
    $N go build -trimpath -ldflags "-s -w -X github.com/NVIDIA/nvidia-container-toolkit/internal/info.version=$v" \
    -o "$BIN/nvidia-cdi-hook-$v" github.com/NVIDIA/nvidia-container-toolkit/cmd/nvidia-cdi-hook
done

# containerd 2.4.2 with its CRI plugin, the runc shim and ctr.
module "$SRC/containerd" github.com/containerd/containerd/v2@v2.4.2
for cmd in containerd containerd-shim-runc-v2 ctr; do
  CGO_ENABLED=0 GOFLAGS=-mod=mod $N go build -trimpath -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=v2.4.2" \
    -o "$BIN/$cmd" "github.com/containerd/containerd/v2/cmd/$cmd"
done

# runc 1.3.3 with seccomp (containerd gives the pod sandbox a seccomp profile), libseccomp linked in statically.
module "$SRC/runc" github.com/opencontainers/runc@v1.3.3
mkdir -p "$SRC/pkgconfig"
sed 's#^Libs:.*#Libs: /usr/lib/x86_64-linux-gnu/libseccomp.a#' /usr/lib/x86_64-linux-gnu/pkgconfig/libseccomp.pc >"$SRC/pkgconfig/libseccomp.pc"
PKG_CONFIG_PATH=$SRC/pkgconfig CGO_ENABLED=1 GOFLAGS=-mod=mod $N go build -a -trimpath -tags seccomp \
  -ldflags "-s -w -X main.version=1.3.3" -o "$BIN/runc" github.com/opencontainers/runc

# The CNI reference plugins the node's bridge network needs.
module "$SRC/cni" github.com/containernetworking/plugins@v1.10.0
for p in main/bridge ipam/host-local main/loopback; do
  CGO_ENABLED=0 GOFLAGS=-mod=mod $N go build -trimpath -ldflags "-s -w" -o "$BIN/cni/$(basename $p)" "github.com/containernetworking/plugins/plugins/$p"
done

# kubelet v1.34.12 in a copy of the e2e tier's 1.34 wrapper module, with e2e/kube/build.py's ldflags.
rm -rf "$SRC/kube" && cp -r "$ROOT/e2e/kube/kubernetes-1.34" "$SRC/kube" && cd "$SRC/kube"
CGO_ENABLED=0 GOFLAGS=-mod=mod $N go build -trimpath \
  -ldflags '-s -w -X k8s.io/component-base/version.gitVersion=v1.34.12 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=34' \
  -o "$BIN/kubelet" k8s.io/kubernetes/cmd/kubelet

# helm, only to render the vendored charts here (render.py).
module "$SRC/helm" helm.sh/helm/v3@v3.20.2
CGO_ENABLED=0 GOFLAGS=-mod=mod $N go build -trimpath -ldflags "-s -w" -o "$BIN/helm" helm.sh/helm/v3/cmd/helm

# This directory's own programs.
(cd "$HERE/pause" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$BIN/pause" .)
(cd "$HERE/netaddr" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$BIN/netaddr" .)
gcc -O2 -Wall -o "$BIN/cuda-check" "$HERE/cuda_check.c" -ldl
cp "$(command -v openssl)" "$BIN/openssl"

# tools.verify's imports as cp312 wheels (the machine's python3 is 3.12), at the versions of this checkout's venv;
# kubernetes-validate is left out: the kubernetes client imports it only if present.
"$ROOT/venv/bin/python" - >"$OUT/verify-wheels.txt" <<'PY'
import importlib.metadata as md, sys
import tools.verify.__main__  # noqa: F401
found = md.packages_distributions()
names = {d for m in list(sys.modules) for d in found.get(m.split(".")[0], [])} - {"setuptools", "kubernetes-validate"}
print("\n".join(f"{n}=={md.version(n)}" for n in sorted(names, key=str.lower)))
PY
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$OUT/wheels" -r "$OUT/verify-wheels.txt"
ls -la "$BIN" "$BIN/cni"
