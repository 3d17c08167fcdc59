"""`make demo`: the dev stack's Kubernetes layer put on a local control plane by the real Pulumi CLI, its claims
allocated by the real scheduler, then torn down. Nothing leaves 127.0.0.1.

    make demo            # from the repository root; the first run builds the engines (see README)

What runs: etcd, kube-apiserver, kube-controller-manager and kube-scheduler (e2e/kube), the Pulumi CLI
with its Python host and Kubernetes provider (e2e/pulumi), the real charts served from a chart
repository on 127.0.0.1, and a kubelet stand-in that only writes pod status (no container runs).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[1]
sys.path[:0] = [str(PROJECT), str(PROJECT / "e2e" / "dra"), str(HERE)]

from chart_repository import ChartRepository  # noqa: E402
from cli_checks import POLICY_PACK, check_claims_allocated, kubernetes_objects, release_objects  # noqa: E402
from cli_stack import CliStack  # noqa: E402
from dra_engines import control_plane_mod, engine_build, engine_mod  # noqa: E402
from dra_kube import Kube  # noqa: E402
from dra_scenarios import SCENARIOS  # noqa: E402
from kubelet_stand_in import KubeletStandIn  # noqa: E402

STACK = "dev"


def say(message: str) -> None:
    print(f"[demo] {message}", flush=True)


def main() -> int:
    started = time.monotonic()
    try:
        binaries = engine_build.ensure_binaries()
    except engine_build.BuildError as err:
        print(f"[demo] building the Pulumi engine failed: {err}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="nebius-dra-demo-") as tmp:
        work = Path(tmp)
        say("starting a Kubernetes control plane on 127.0.0.1")
        with control_plane_mod.ControlPlane(quiet=True, workload_controllers=True) as plane:
            kube = Kube(str(plane.kubeconfig))
            with (
                ChartRepository(engine_build.vendor_dir() / "charts", work / "charts") as charts,
                KubeletStandIn(str(plane.kubeconfig)),
                engine_mod.OfflineEngine(binaries["pulumi"].parent, root=work / "pulumi") as engine,
            ):
                say(f"charts served at {charts.url}: {', '.join(f'{n} {v}' for n, v in charts.charts)}")
                stack = CliStack.prepare(SCENARIOS[STACK], work, engine, kube, plane.kubeconfig, charts.url)
                say(f"pulumi up --stack {STACK} (existing-cluster mode, the policy pack on)")
                print(stack.ok("up", "--yes", *POLICY_PACK).out, flush=True)
                for item in kubernetes_objects(stack) + release_objects(kube, stack):
                    where = f"{item['namespace']}/" if item["namespace"] else ""
                    say(f"  on the API server: {item['kind']} {where}{item['name']}")
                for template, group in check_claims_allocated(stack, kube).items():
                    say(f"  claim from template {template}: allocated by the scheduler on node group {group}")
                say(f"pulumi destroy --stack {STACK}")
                stack.ok("destroy", "--yes")
                stack.close()
            kube.close()
    say(f"done in {time.monotonic() - started:.0f}s; everything it made is gone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
