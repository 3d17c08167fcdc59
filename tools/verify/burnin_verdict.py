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

from tools.verify.burnin_job import Sweep
from tools.verify.checks import Discrepancy, Outcome
from tools.verify.floors import MAX_GBPS, Floor
from tools.verify.nccl_output import (
    JUDGED_REDOP,
    JUDGED_TYPE,
    JUDGED_TYPE_BYTES,
    AllReduceRun,
    NcclOutputError,
    parse_all_reduce,
)


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


def _listed(items: Sequence[str], most: int = 8) -> str:
    return "; ".join(items[:most]) + (f"; and {len(items) - most} more" if len(items) > most else "")


def _header_mismatches(run: AllReduceRun, sweep: Sweep) -> list[str]:
    """Each header field that is not what the job's arguments ask for: the log is then of another run (or another
    command), and a floor measured at 1 GiB with the data check on cannot judge it."""
    fields: list[tuple[str, object, object, str]] = [
        ("nThread", run.threads, sweep.threads, f"-t {sweep.threads}"),
        ("nGpus", run.gpus_per_thread, sweep.gpus_per_process, f"-g {sweep.gpus_per_process}"),
        ("minBytes", run.min_bytes, sweep.min_bytes, f"-b {sweep.min_bytes}"),
        ("maxBytes", run.max_bytes, sweep.max_bytes, f"-e {sweep.max_bytes}"),
    ]
    # Releases that do not print a field cannot be compared on it (nccl_output.py: older releases print less).
    if run.step is not None:
        fields.append(
            ("step:", f"{run.step}({run.step_unit})", f"{sweep.step_factor}(factor)", f"-f {sweep.step_factor}")
        )
    if run.validation is not None:
        fields.append(("validation:", run.validation, sweep.check, f"-c {sweep.check}"))
    return [f"{name} {read} (the job asked for {asked}: {flag})" for name, read, asked, flag in fields if read != asked]


def _printed_step(figure: float) -> float:
    """The last digit a 6-wide bandwidth column keeps (src/util.cu getFloatStr: "%.2f", "%.1f", "%.0f", then "%.0e")."""
    return 0.01 if figure < 1_000 else 0.1 if figure < 10_000 else 1.0 if figure < 1_000_000 else figure


def _row_mismatches(run: AllReduceRun, sweep: Sweep, ranks: int) -> list[str]:
    """Each row field that no row of the job's run can hold: a size outside the sweep, a float row whose count is not
    its size in floats, a root (an all-reduce has none), or a busbw that is not algbw x 2(n-1)/n for the log's n ranks
    (src/all_reduce.cu AllReduceGetBw), to within the digits printed (n as listed: a rank count other than the job's
    is a finding of its own)."""
    factor = 2 * (ranks - 1) / ranks
    found = []
    for row in run.rows:
        at = f"at {row.size_bytes} B"
        if not sweep.min_bytes <= row.size_bytes <= sweep.max_bytes:
            found.append(f"a row {at}, outside the job's sizes {sweep.min_bytes} to {sweep.max_bytes} B")
        if row.data_type == JUDGED_TYPE and row.count * JUDGED_TYPE_BYTES != row.size_bytes:
            found.append(
                f"count {row.count} {at} (a {JUDGED_TYPE} row of that size holds {row.size_bytes // JUDGED_TYPE_BYTES})"
            )
        if row.root != -1:
            found.append(f"root {row.root} {at} (an all-reduce has no root: -1)")
        for place, measurement in (("out of place", row.out_of_place), ("in place", row.in_place)):
            algbw, busbw = measurement.algbw_gbps, measurement.busbw_gbps
            if not measurement.not_finite() and abs(busbw - algbw * factor) > (
                _printed_step(busbw) + _printed_step(algbw) * factor
            ):
                found.append(
                    f"algbw {algbw:g} beside busbw {busbw:g} {at} {place} (busbw is algbw x 2(n-1)/n = "
                    f"{algbw * factor:.6g} for {ranks} ranks)"
                )
    return found


def judge_output(
    output: PodOutput,
    nodes: Sequence[str],
    hosts: Sequence[str],
    gpus: int,
    floor: Floor | None,
    subject: str,
    sweep: Sweep,
) -> tuple[Outcome, AllReduceRun | None]:
    """One all_reduce_perf run (one pod's log) over `nodes`, whose pods have the hostnames `hosts` and `gpus` GPUs
    each, asked for `sweep`: what it measured, whether it is the run the job asked for (its header's parameters, a
    rank per GPU of each pod numbered 0 to n-1, none elsewhere, the data checked) and whether that is enough."""
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
    expected = {host_as_printed(host): gpus for host in hosts}
    total = gpus * len(expected)
    asked = f"all_reduce_perf {sweep.arguments()} over {total} ranks"
    header = _header_mismatches(run, sweep)
    if header:
        findings.append(
            Discrepancy(
                subject=f"{subject}: parameters of the run on {where}",
                expected=f"the header of the run the job asked for ({asked})",
                found=f"header {_listed(header)}",
                likely_cause="the log is of another run than the Job's (an image whose entry point runs its own "
                "all_reduce_perf command, or a wrapper that changes the arguments): check --burn-in-image and "
                "--burn-in-binary",
            )
        )
    rows = _row_mismatches(run, sweep, len(run.ranks))
    if rows:
        findings.append(
            Discrepancy(
                subject=f"{subject}: rows of the run on {where}",
                expected=f"the rows of the run the job asked for ({asked})",
                found=_listed(rows),
                likely_cause="the log is not one all_reduce_perf run of the Job's (edited, put together, or from "
                "another program): read the pod's log",
            )
        )
    ranked = Counter(rank.host for rank in run.ranks)
    if ranked != expected:
        findings.append(
            Discrepancy(
                subject=f"{subject}: ranks of the run on {where}",
                expected=f"{total} ranks, {gpus} (one per GPU) on each of the pods {', '.join(expected)}",
                found=f"{len(run.ranks)} ranks: "
                + ", ".join(f"{count} on {_shown_host(host)}" for host, count in ranked.items()),
                likely_cause=(
                    "the run is not the one of these pods (ranks on other hosts, or all on one: mpirun's host list "
                    "or a log from another run), or a pod saw fewer GPUs than its claim holds: read the pod's claim "
                    "and nvidia-smi -L in it"
                ),
            )
        )
    numbers = Counter(rank.rank for rank in run.ranks)
    if sorted(numbers) != list(range(total)) or any(count > 1 for count in numbers.values()):
        repeated = [f"rank {rank} listed {count} times" for rank, count in sorted(numbers.items()) if count > 1]
        missing = [f"rank {rank} missing" for rank in range(total) if rank not in numbers]
        extra = [f"rank {rank} listed" for rank in sorted(numbers) if rank >= total]
        findings.append(
            Discrepancy(
                subject=f"{subject}: rank numbers of the run on {where}",
                expected=f"ranks 0 to {total - 1}, each once (one per GPU of the {len(expected)} pod(s))",
                found=_listed([*repeated, *missing, *extra]),
                likely_cause="a rank line repeated or lost: the log is edited or put together from several runs, "
                "not one run's: read the pod's log",
            )
        )
    wrong_rows = [row.size_bytes for row in run.rows if row.wrong]
    unchecked = [row.size_bytes for row in run.rows if any(m.wrong is None for m in (row.out_of_place, row.in_place))]
    if run.out_of_bounds or wrong_rows or unchecked:
        parts = [f"{run.out_of_bounds} out-of-bounds check(s)"] if run.out_of_bounds else []
        if wrong_rows:
            parts.append(f"wrong elements at sizes {', '.join(map(str, wrong_rows))} B")
        elif run.out_of_bounds:
            parts.append("no row lists its wrong elements (#wrong 0 at every size)")
        if unchecked:
            parts.append(
                f"#wrong N/A (the data was not checked: all_reduce_perf -c 0) at sizes "
                f"{', '.join(map(str, unchecked[:8]))}{' ...' if len(unchecked) > 8 else ''} B"
            )
        findings.append(
            Discrepancy(
                subject=f"{subject}: data check on {where}",
                expected=f"# Out of bounds values : 0 OK, #wrong 0 at every size (the job asks for the check: -c {sweep.check})",
                found="; ".join(parts),
                likely_cause="the all-reduce returned corrupted data: a GPU or NIC is faulty (Xid errors, NebiusGPUError), "
                "drain the nodes"
                if run.out_of_bounds or wrong_rows
                else "the run did not check its data, so it proves nothing about it: the image's all_reduce_perf "
                "was run with -c 0 (its entry point or a wrapper)",
            )
        )
    unmeasured = [f"{row.size_bytes} B ({', '.join(row.not_finite())})" for row in run.rows if row.not_finite()]
    if not math.isfinite(run.avg_busbw_gbps):
        unmeasured.append(f"'# Avg bus bandwidth' ({run.avg_busbw_gbps:g})")
    if unmeasured:
        findings.append(
            Discrepancy(
                subject=f"{subject}: measurements on {where}",
                expected=f"a time above 0, a finite algbw of at least 0 and a busbw from 0 to {MAX_GBPS} GB/s at "
                "every size, and a finite average bus bandwidth",
                found=f"no measurement (nan, inf, a bandwidth below 0, a busbw above {MAX_GBPS} GB/s, a time of 0) "
                f"at {'; '.join(unmeasured[:8])}" + (" ..." if len(unmeasured) > 8 else ""),
                likely_cause="all_reduce_perf measured nothing there (a time of 0, a failed timer, a collective that "
                "returned at once), or the log is not all_reduce_perf's: read the pod's log",
            )
        )
    # The floor is for one size (FLOOR_BYTES, where the job's sweep ends): only that row is judged against it,
    # whatever size the header's maxBytes names.
    judged = run.worst_at(sweep.max_bytes)
    if judged is None:
        findings.append(
            Discrepancy(
                subject=f"{subject}: bus bandwidth on {where}",
                expected=f"a {JUDGED_TYPE} {JUDGED_REDOP} row at {sweep.max_bytes} B, the size the floors are for "
                f"(-e {sweep.max_bytes})",
                found=f"none; the largest row is {max(row.size_bytes for row in run.rows)} B",
                likely_cause="the run did not sweep up to the job's largest size: read the header finding and the "
                "pod's log",
            )
        )
        return Outcome(f"no bandwidth at {sweep.max_bytes} B on {where}", tuple(findings)), run
    measured = f"{judged.busbw_gbps:g} GB/s busbw at {judged.size_bytes} B over {len(run.ranks)} GPUs"
    columns = f" (out of place {judged.out_of_place.busbw_gbps:g}, in place {judged.in_place.busbw_gbps:g})"
    if not 0 <= judged.busbw_gbps <= MAX_GBPS:
        # NaN fails every comparison, so it is caught here, before any floor is compared with it.
        findings.append(
            Discrepancy(
                subject=f"{subject}: bus bandwidth on {where}",
                expected=f"a bus bandwidth from 0 to {MAX_GBPS} GB/s at the largest size",
                found=measured + columns + f": outside 0 to {MAX_GBPS} GB/s, no measurement (not compared with any "
                "floor)",
                likely_cause="all_reduce_perf printed no measurement (nan or inf: a time of 0, a failed timer) or the "
                "log is not all_reduce_perf's: read the pod's log",
            )
        )
    elif floor is not None and judged.busbw_gbps < floor.gbps:
        findings.append(
            Discrepancy(
                subject=f"{subject}: bus bandwidth on {where}",
                expected=f"at least {floor.text()}",
                found=measured + columns,
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
