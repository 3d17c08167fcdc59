"""Reads what NVIDIA's nccl-tests `all_reduce_perf` prints: its header, the per-size table and the summary.

The format is the one nccl-tests v2.19.6 prints (github.com/NVIDIA/nccl-tests, src/util.cu):
`writeDeviceReport` prints the version, "Collective test starting", the run's parameters and
one "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s" line per rank
(rank 0 gathers every process's lines with MPI_Gather); `writeResultHeader` the column heads;
`writeBenchmarkLinePreamble` and `writeBenchmarkLineBody` one row per size (size, count, type,
redop, root, then time, algbw, busbw and #wrong out of place and again in place, `N/A` for
#wrong when the data check is off); `writeResultFooter` "Out of bounds values", "Avg bus
bandwidth" and "Collective test concluded". Older releases print less, and the parser takes them
too, so that an image with an older nccl-tests can be pointed at: before v2.18.5 there is no
"# nccl-tests version" line, before v2.16.7 no "Collective test starting/concluded", and before
v2.14.1 a rank's GPU is "[0x%02x]" (its PCI bus alone; the tags' src/common.cu). A failed CUDA or NCCL call prints
"<host>: Test CUDA failure ..." or "<host>: Test NCCL failure ..." (src/common.h), a hung
collective "<host>: Test timeout ..." (src/common.cu), and the run stops there.

Anything else (a pod's log cut short, an image that runs something other than all_reduce_perf,
garbage) is a `NcclOutputError` whose message says what was missing, never a traceback.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# src/util.cu getFloatStr: a number fitted into a column, as "%.2f", "%.1f", "%.0f" or "%.1e"/"%.0e".
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|nan|-?inf"
_WRONG = r"\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|N/A"
_MEASUREMENT = (
    rf"\s+(?P<{{p}}time>{_NUMBER})\s+(?P<{{p}}algbw>{_NUMBER})\s+(?P<{{p}}busbw>{_NUMBER})\s+(?P<{{p}}wrong>{_WRONG})"
)
ROW = re.compile(
    r"^\s*(?P<size>\d+)\s+(?P<count>\d+)\s+(?P<type>\S+)\s+(?P<redop>\S+)\s+(?P<root>-?\d+)"
    + _MEASUREMENT.format(p="oop_")
    + _MEASUREMENT.format(p="ip_")
    + r"(?:\s+.*)?$"
)
VERSION = re.compile(
    r"^# nccl-tests version (?P<version>\S+) nccl-headers=(?P<headers>\d+) nccl-library=(?P<library>\d+)"
)
STARTING = re.compile(r"^# Collective test starting: (?P<program>\S+)")
PARAMETERS = re.compile(r"^# nThread (?P<threads>\d+) nGpus (?P<gpus>\d+) minBytes (?P<min>\d+) maxBytes (?P<max>\d+)")
RANK = re.compile(
    r"^#\s+Rank\s+(?P<rank>\d+) Group\s+(?P<group>\d+) Pid\s+(?P<pid>\d+) on\s+(?P<host>\S+) device\s+(?P<device>\d+)"
    r" \[(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}|0x[0-9a-fA-F]{2})\] (?P<name>.*?)\s*$"
)
OUT_OF_BOUNDS = re.compile(r"^# Out of bounds values\s*: (?P<count>\d+)")
AVERAGE = re.compile(rf"^# Avg bus bandwidth\s*: (?P<busbw>{_NUMBER})")
CONCLUDED = re.compile(r"^# Collective test concluded: (?P<program>\S+)")
FAILURE = re.compile(r"^(?P<host>\S+): Test (?P<what>CUDA failure|NCCL failure|timeout) (?P<detail>.*)$")
PROGRAM = "all_reduce_perf"


class NcclOutputError(ValueError):
    """The text is not a complete all_reduce_perf run; the message says what is missing or wrong."""


@dataclass(frozen=True)
class Measurement:
    time_us: float
    algbw_gbps: float
    busbw_gbps: float
    # None when the run did not check its data (`-c 0` prints N/A).
    wrong: int | None


@dataclass(frozen=True)
class SizeRow:
    size_bytes: int
    count: int
    data_type: str
    redop: str
    out_of_place: Measurement
    in_place: Measurement

    @property
    def busbw_gbps(self) -> float:
        """The row's bus bandwidth: the lower of its out-of-place and in-place figures."""
        return min(self.out_of_place.busbw_gbps, self.in_place.busbw_gbps)

    @property
    def wrong(self) -> int:
        return sum(m.wrong or 0 for m in (self.out_of_place, self.in_place))


@dataclass(frozen=True)
class RankDevice:
    rank: int
    group: int
    pid: int
    host: str
    device: int
    pci: str
    name: str


@dataclass(frozen=True)
class AllReduceRun:
    # None before nccl-tests v2.18.5, which first printed it.
    version: str | None
    threads: int
    gpus_per_thread: int
    min_bytes: int
    max_bytes: int
    ranks: tuple[RankDevice, ...]
    rows: tuple[SizeRow, ...]
    out_of_bounds: int
    avg_busbw_gbps: float

    @property
    def hosts(self) -> tuple[str, ...]:
        """Hosts in rank order, each once: for a pod, its hostname (the pod's name)."""
        return tuple(dict.fromkeys(rank.host for rank in self.ranks))

    @property
    def largest(self) -> SizeRow:
        return max(self.rows, key=lambda row: row.size_bytes)


def _number(text: str) -> float:
    return float(text)


def _wrong(text: str) -> int | None:
    return None if text == "N/A" else int(float(text))


def _measurement(match: re.Match[str], prefix: str) -> Measurement:
    return Measurement(
        _number(match[f"{prefix}time"]),
        _number(match[f"{prefix}algbw"]),
        _number(match[f"{prefix}busbw"]),
        _wrong(match[f"{prefix}wrong"]),
    )


def _row(match: re.Match[str]) -> SizeRow:
    return SizeRow(
        int(match["size"]),
        int(match["count"]),
        match["type"],
        match["redop"],
        _measurement(match, "oop_"),
        _measurement(match, "ip_"),
    )


def _rank(match: re.Match[str]) -> RankDevice:
    return RankDevice(
        int(match["rank"]),
        int(match["group"]),
        int(match["pid"]),
        match["host"],
        int(match["device"]),
        match["pci"].lower(),
        match["name"],
    )


def _shown(line: str) -> str:
    printable = "".join(ch if ch.isprintable() else "?" for ch in line.strip())
    return printable[:160] + ("..." if len(printable) > 160 else "")


def parse_all_reduce(text: str) -> AllReduceRun:
    """The run `text` shows; NcclOutputError when it is not one whole all_reduce_perf run."""
    if not text.strip():
        raise NcclOutputError("the output is empty: all_reduce_perf printed nothing (did the container start it?)")
    version: str | None = None
    program: str | None = None
    parameters: re.Match[str] | None = None
    ranks: list[RankDevice] = []
    rows: list[SizeRow] = []
    out_of_bounds: int | None = None
    average: float | None = None
    concluded = False
    for line in text.splitlines():
        if failure := FAILURE.match(line):
            raise NcclOutputError(
                f"all_reduce_perf stopped on {failure['host']}: {failure['what']} {_shown(failure['detail'])}"
            )
        if match := VERSION.match(line):
            version = match["version"]
        elif match := STARTING.match(line):
            program = match["program"]
        elif match := PARAMETERS.match(line):
            parameters = match
        elif match := RANK.match(line):
            ranks.append(_rank(match))
        elif match := ROW.match(line):
            rows.append(_row(match))
        elif match := OUT_OF_BOUNDS.match(line):
            out_of_bounds = int(match["count"])
        elif match := AVERAGE.match(line):
            average = _number(match["busbw"])
        elif match := CONCLUDED.match(line):
            concluded = True
    if parameters is None:
        first = next((line for line in text.splitlines() if line.strip()), "")
        raise NcclOutputError(
            f"this is not nccl-tests output: no '# nThread N nGpus N minBytes N maxBytes N' header (it begins {_shown(first)!r})"
        )
    if program is not None and program != PROGRAM:
        raise NcclOutputError(f"the output is from {program}, not {PROGRAM}")
    if not ranks:
        raise NcclOutputError("the header lists no ranks ('#  Rank N Group N Pid N on HOST device N [...]')")
    if not rows:
        raise NcclOutputError("the output has no result rows: all_reduce_perf stopped before its first size")
    # "Collective test concluded" comes with "Collective test starting" (both since v2.16.7).
    if out_of_bounds is None or average is None or (program is not None and not concluded):
        raise NcclOutputError(
            f"the output stops after {len(rows)} size(s) (largest {max(row.size_bytes for row in rows)} B) without "
            "'# Out of bounds values', '# Avg bus bandwidth' and '# Collective test concluded': the run was cut short"
        )
    return AllReduceRun(
        version=version,
        threads=int(parameters["threads"]),
        gpus_per_thread=int(parameters["gpus"]),
        min_bytes=int(parameters["min"]),
        max_bytes=int(parameters["max"]),
        ranks=tuple(ranks),
        rows=tuple(rows),
        out_of_bounds=out_of_bounds,
        avg_busbw_gbps=average,
    )
