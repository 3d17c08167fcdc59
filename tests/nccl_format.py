# ruff: noqa: UP031  (the C printf formats of nccl-tests, kept as written there)
"""all_reduce_perf output printed the way nccl-tests v2.19.6 prints it, for variants of the real capture.

Every format string below is the one in github.com/NVIDIA/nccl-tests at v2.19.6 (commit a0b82b2),
src/util.cu: `writeDeviceReport` (header and the per-rank "Using devices" lines, gathered to rank 0
over MPI in rank order), `writeResultHeader` (column heads, no -I, no timestamps),
`writeBenchmarkLinePreamble`/`writeBenchmarkLineBody` (one row per size; `getFloatStr` fits a number
into its column), `writeResultFooter`, then `finalizeFooter` and `writeErrors`; src/common.h's
NCCLCHECK for a failed NCCL call. `render` of the parsed real capture reproduces that capture byte
for byte (tests/tools/verify/test_nccl_output.py), so a variant differs from a real output only in its numbers.
busbw = algbw * 2(n-1)/n for all-reduce (src/all_reduce.cu AllReduceGetBw, doc/PERFORMANCE.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tools.verify.nccl_output import AllReduceRun, Measurement, RankDevice, SizeRow

VERSION_LINE = "# nccl-tests version {version} nccl-headers=22809 nccl-library=22809"


def c_float(value: float, width: int) -> str:
    """src/util.cu getFloatStr: "%*.2f", else "%*.1f", else "%*.0f", else "%*.1e" (width >= 7) or "%*.0e"."""
    for text in (f"{value:{width}.2f}", f"{value:{width}.1f}", f"{value:{width}.0f}"):
        if len(text) <= width:
            return text
    return f"{value:{width}.1e}" if width >= 7 else f"{value:{width}.0e}"


def c_g(value: float) -> str:
    """printf's %g for the integers nccl-tests prints with it (#wrong, the average's zero)."""
    return f"{value:g}"


def rank_line(rank: RankDevice) -> str:
    domain, bus, device = (int(part, 16) for part in rank.pci.split(":"))
    return (
        f"#  Rank {rank.rank:2d} Group {rank.group:2d} Pid {rank.pid:6d} on {rank.host:>10s} device {rank.device:2d} "
        f"[{domain:04x}:{bus:02x}:{device:02x}] {rank.name}"
    )


def _body(measurement: Measurement) -> str:
    wrong = "   N/A" if measurement.wrong is None else f"{c_g(measurement.wrong):>6s}"
    return (
        f"  {c_float(measurement.time_us, 7):>7s}  {c_float(measurement.algbw_gbps, 6):>6s}  "
        f"{c_float(measurement.busbw_gbps, 6):>6s}  {wrong}"
    )


def row_line(row: SizeRow) -> str:
    preamble = f"{row.size_bytes:12d}  {row.count:12d}  {row.data_type:>8s}  {row.redop:>6s}  {row.root:6d}"
    return preamble + _body(row.out_of_place) + _body(row.in_place)


def header_lines(run: AllReduceRun, warmup: int = 1, iters: int = 20) -> list[str]:
    blank = ("",) * 5
    return [
        VERSION_LINE.format(version=run.version),
        "# Collective test starting: all_reduce_perf",
        f"# nThread {run.threads} nGpus {run.gpus_per_thread} minBytes {run.min_bytes} maxBytes {run.max_bytes} "
        f"step: {run.step}({run.step_unit}) warmup iters: {warmup} iters: {iters} agg iters: 1 validation: {run.validation} "
        "graph: 0 unalign: 0",
        "#",
        "# Using devices",
        *(rank_line(rank) for rank in run.ranks),
        "#",
        "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          " % blank,
        "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s"
        % ("size", "count", "type", "redop", "root", *("time", "algbw", "busbw", "#wrong") * 2, 0, ""),
        "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s"
        % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", 0, ""),
    ]


def footer_lines(run: AllReduceRun) -> list[str]:
    return [
        "# %-20s : %d %s" % ("Out of bounds values", run.out_of_bounds, "FAILED" if run.out_of_bounds else "OK"),
        "# %-20s : %s %s" % ("Avg bus bandwidth", c_g(run.avg_busbw_gbps), ""),
        "#",
        "# Collective test concluded: all_reduce_perf",
        "#",
        "",
    ]


def render(run: AllReduceRun) -> str:
    return "\n".join([*header_lines(run), *(row_line(row) for row in run.rows), *footer_lines(run)]) + "\n"


def nccl_failure_line(host: str, line: int, error: str, last_error: str) -> str:
    """src/common.h NCCLCHECK (NCCL >= 2.13): "%s: Test NCCL failure %s:%d '%s / %s'"."""
    return f"{host}: Test NCCL failure common.cu:{line} '{error} / {last_error}'"


@dataclass(frozen=True)
class Fabric:
    """A multi-node run: `hosts` (the pods' hostnames) with `gpus` GPUs each, one MPI process per GPU (-g 1)."""

    hosts: Sequence[str]
    gpus: int = 8
    name: str = "NVIDIA H200"

    def ranks(self) -> tuple[RankDevice, ...]:
        # The PCI bus IDs of an 8-GPU H200 VM's GPUs are not in the capture; the one-GPU VM's 00:06 is, so the
        # others count up from it the way the 2-GPU VM's do (00:06, 00:07, /work/shared/reference/device-output).
        return tuple(
            RankDevice(
                rank=index * self.gpus + device,
                group=0,
                pid=1211 + device,
                host=host,
                device=device,
                pci=f"0000:00:{6 + device:02x}",
                name=self.name,
            )
            for index, host in enumerate(self.hosts)
            for device in range(self.gpus)
        )


def with_bandwidth(
    real: AllReduceRun, fabric: Fabric, busbw_at: Callable[[int], float], wrong_at: Callable[[int], int] = lambda _: 0
) -> AllReduceRun:
    """The real capture's sizes and counts on `fabric`, with busbw `busbw_at(size)` GB/s at each size."""
    ranks = fabric.ranks()
    n = len(ranks)
    factor = 2 * (n - 1) / n
    rows = []
    for row in real.rows:
        busbw = busbw_at(row.size_bytes)
        algbw = busbw / factor
        # A real collective takes at least its launch latency (the capture's time at that size): a time of 0 is no
        # measurement (src/util.cu prints one only when the timer failed), which the parser refuses.
        time_us = max(row.size_bytes / (algbw * 1e3) if algbw else 0.0, row.out_of_place.time_us)
        # Values as printed: the parser sees the rounded column, so the variant keeps exactly that.
        measurement = Measurement(
            float(c_float(time_us, 7)), float(c_float(algbw, 6)), float(c_float(busbw, 6)), wrong_at(row.size_bytes)
        )
        rows.append(SizeRow(row.size_bytes, row.count, row.data_type, row.redop, row.root, measurement, measurement))
    average = sum(2 * row.out_of_place.busbw_gbps for row in rows) / (2 * len(rows))
    # writeResultFooter's count: one per data check (out of place and in place) that found wrong elements.
    wrong = sum(2 for row in rows if row.wrong)
    return AllReduceRun(
        version=real.version,
        threads=1,
        gpus_per_thread=1,
        min_bytes=real.min_bytes,
        max_bytes=real.max_bytes,
        step=real.step,
        step_unit=real.step_unit,
        validation=real.validation,
        requested_bytes=real.requested_bytes,
        ranks=ranks,
        rows=tuple(rows),
        out_of_bounds=wrong,
        avg_busbw_gbps=float(f"{average:g}"),
    )
