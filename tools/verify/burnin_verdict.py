"""The burn-in's verdict: all_reduce_perf's output against the bus-bandwidth floor of its platform and node count.

Pure functions of the pods' outputs and the floors table (tools/verify/nccl_floors.yaml, or a
stack's own file given with --burn-in-floors, whose entries come first). A run is judged at the
largest size its header asks for, on its float sum rows (the worst there, when -N repeats it), by
the lower of the out-of-place and in-place busbw; any wrong element fails it whatever the
bandwidth, and so does a rank on a host that is not one of the judged pods. An all-reduce across
nodes is one collective: when it is slow, every node in it is named, because the output cannot
say which link was slow (the README says how to bisect).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from tools.verify.checks import Discrepancy, Outcome
from tools.verify.floors import MAX_GBPS, Floor
from tools.verify.nccl_output import AllReduceRun, NcclOutputError, parse_all_reduce


def floor_for(floors: Sequence[Floor], platform: str, nodes: int) -> Floor | None:
    return next((floor for floor in floors if floor.covers(platform, nodes)), None)


@dataclass(frozen=True)
class PodOutput:
    """One pod's log and where it ran."""

    pod: str
    hostname: str
    node: str
    log: str


def _tail(log: str, lines: int = 6) -> str:
    kept = [line for line in log.splitlines() if line.strip()][-lines:]
    return " | ".join(kept)[-600:] or "(empty)"


def _shown_host(host: str) -> str:
    return "".join(ch if ch.isprintable() else "?" for ch in host)[:80]


def _nodes_text(nodes: Sequence[str]) -> str:
    return ", ".join(nodes)


def host_as_printed(hostname: str) -> str:
    """A pod's hostname as a rank line names it: nccl-tests' getHostName cuts it at its first '.' (src/common.h)."""
    return hostname.split(".", 1)[0]


def judge_output(
    output: PodOutput, nodes: Sequence[str], hosts: Sequence[str], gpus: int, floor: Floor | None, subject: str
) -> tuple[Outcome, AllReduceRun | None]:
    """One all_reduce_perf run (one pod's log) over `nodes`, whose pods have the hostnames `hosts` and `gpus` GPUs
    each: what it measured, whether it ran there (a rank per GPU of each pod, none elsewhere) and whether that is
    enough."""
    where = f"nodes {_nodes_text(nodes)}" if len(nodes) > 1 else f"node {nodes[0]}"
    try:
        run = parse_all_reduce(output.log)
    except NcclOutputError as error:
        return Outcome(
            f"no bandwidth from {where}",
            (
                Discrepancy(
                    subject=f"{subject}: all_reduce_perf in pod {output.pod} on {where}",
                    expected="a complete all_reduce_perf run",
                    found=f"{error}; its log ends: {_tail(output.log)}",
                    likely_cause=(
                        "NCCL could not set up or lost its transport (the log's NCCL WARN lines say which: an IB device "
                        "missing in the pod, a memlock limit, a peer that did not answer), or the image is not an MPI "
                        "build of nccl-tests (--burn-in-image, --burn-in-binary)"
                    ),
                ),
            ),
        ), None
    findings = []
    largest = run.largest
    expected = {host_as_printed(host): gpus for host in hosts}
    ranked = Counter(rank.host for rank in run.ranks)
    if ranked != expected:
        findings.append(
            Discrepancy(
                subject=f"{subject}: ranks of the run on {where}",
                expected=f"{gpus * len(expected)} ranks, {gpus} (one per GPU) on each of the pods {', '.join(expected)}",
                found=f"{len(run.ranks)} ranks: "
                + ", ".join(f"{count} on {_shown_host(host)}" for host, count in ranked.items()),
                likely_cause=(
                    "the run is not the one of these pods (ranks on other hosts, or all on one: mpirun's host list "
                    "or a log from another run), or a pod saw fewer GPUs than its claim holds: read the pod's claim "
                    "and nvidia-smi -L in it"
                ),
            )
        )
    wrong_rows = [row.size_bytes for row in run.rows if row.wrong]
    if run.out_of_bounds or wrong_rows:
        findings.append(
            Discrepancy(
                subject=f"{subject}: data check on {where}",
                expected="# Out of bounds values : 0 OK, #wrong 0 at every size",
                found=f"{run.out_of_bounds} out-of-bounds check(s); wrong elements at sizes {', '.join(map(str, wrong_rows)) or 'none listed'} B",
                likely_cause="the all-reduce returned corrupted data: a GPU or NIC is faulty (Xid errors, NebiusGPUError), drain the nodes",
            )
        )
    unmeasured = [f"{row.size_bytes} B ({', '.join(row.not_finite())})" for row in run.rows if row.not_finite()]
    if not math.isfinite(run.avg_busbw_gbps):
        unmeasured.append(f"'# Avg bus bandwidth' ({run.avg_busbw_gbps:g})")
    if unmeasured:
        findings.append(
            Discrepancy(
                subject=f"{subject}: measurements on {where}",
                expected="a time above 0, a finite algbw and busbw of at least 0 at every size, and a finite average "
                "bus bandwidth",
                found=f"no measurement (nan, inf, a bandwidth below 0, a time of 0) at {'; '.join(unmeasured[:8])}"
                + (" ..." if len(unmeasured) > 8 else ""),
                likely_cause="all_reduce_perf measured nothing there (a time of 0, a failed timer, a collective that "
                "returned at once): read the pod's log",
            )
        )
    measured = f"{largest.busbw_gbps:g} GB/s busbw at {largest.size_bytes} B over {len(run.ranks)} GPUs"
    if not 0 <= largest.busbw_gbps <= MAX_GBPS:
        # NaN fails every comparison, so it is caught here, before any floor is compared with it.
        findings.append(
            Discrepancy(
                subject=f"{subject}: bus bandwidth on {where}",
                expected=f"a bus bandwidth from 0 to {MAX_GBPS} GB/s at the largest size",
                found=measured
                + f" (out of place {largest.out_of_place.busbw_gbps:g}, in place {largest.in_place.busbw_gbps:g})",
                likely_cause="all_reduce_perf printed no measurement (nan or inf: a time of 0, a failed timer) or the "
                "log is not all_reduce_perf's: read the pod's log",
            )
        )
    elif floor is not None and largest.busbw_gbps < floor.gbps:
        findings.append(
            Discrepancy(
                subject=f"{subject}: bus bandwidth on {where}",
                expected=f"at least {floor.text()}",
                found=measured
                + f" (out of place {largest.out_of_place.busbw_gbps:g}, in place {largest.in_place.busbw_gbps:g})",
                likely_cause=(
                    "the fabric is not used or not used fully: a GPU and its NIC on different PCIe roots, GPUDirect RDMA "
                    "off, a NIC down or on the wrong fabric (ibstat on each node), or NCCL fell back to sockets (NCCL WARN "
                    "lines in the log); across nodes the run cannot say which node: burn-in two at a time to bisect"
                    if len(nodes) > 1
                    else "NVLink within the node is degraded (nvidia-smi nvlink --status, nvidia-smi topo -m), or another "
                    "workload shares the GPUs"
                ),
            )
        )
    summary = f"{measured} on {where}" + ("" if floor is None else f" (floor {floor.gbps:g})")
    warnings: tuple[Discrepancy, ...] = ()
    if floor is None:
        warnings = (
            Discrepancy(
                subject=f"{subject}: bus bandwidth on {where}",
                expected="a floor for the group's platform and node count (tools/verify/nccl_floors.yaml or --burn-in-floors)",
                found=f"none; measured {measured}",
                likely_cause="add an entry for this platform and node count, with its source, to judge the next run",
            ),
        )
    return Outcome(summary, tuple(findings), warnings=warnings), run
