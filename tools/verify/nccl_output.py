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

import math
import re
import time
from dataclasses import dataclass

from tools.verify.floors import MAX_GBPS

# Every pattern here is linear in the line: no two adjacent quantified parts can match the same character (white
# space, then digits or non-space), and no lazy part is followed by an optional run, so a line of a million spaces
# is read in one pass (tests/tools/verify/test_nccl_output.py times it). Whole numbers have at most 18 digits: a
# longer one is no count nccl-tests prints, and it would overflow (or, past 4300 digits, stop) `int()`.
_INT = r"[0-9]{1,18}"
# src/util.cu getFloatStr: a number fitted into a column, as "%.2f", "%.1f", "%.0f" or "%.1e"/"%.0e".
# A NaN or an infinity is printed by the C library's printf: glibc writes "nan", "-nan", "inf", "-inf" (and "%e"
# the same); other C libraries write "NaN" or "Infinity". Each is read (Python's float takes them all) so that the
# row is judged and fails, never dropped as "not a row" with a smaller size judged in its place.
_NUMBER = (
    r"[-+]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[nN][aA][nN]|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)"
)
_WRONG = r"[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|N/A"
_MEASUREMENT = (
    rf"\s+(?P<{{p}}time>{_NUMBER})\s+(?P<{{p}}algbw>{_NUMBER})\s+(?P<{{p}}busbw>{_NUMBER})\s+(?P<{{p}}wrong>{_WRONG})"
)
ROW = re.compile(
    rf"^\s*(?P<size>{_INT})\s+(?P<count>{_INT})\s+(?P<type>\S+)\s+(?P<redop>\S+)\s+(?P<root>-?{_INT})"
    + _MEASUREMENT.format(p="oop_")
    + _MEASUREMENT.format(p="ip_")
    + r"(?:\s.*)?$"
)
VERSION = re.compile(
    rf"^# nccl-tests version (?P<version>\S+) nccl-headers=(?P<headers>{_INT}) nccl-library=(?P<library>{_INT})"
)
STARTING = re.compile(r"^# Collective test starting: (?P<program>\S+)")
PARAMETERS = re.compile(
    rf"^# nThread (?P<threads>{_INT}) nGpus (?P<gpus>{_INT}) minBytes (?P<min>{_INT}) maxBytes (?P<max>{_INT})"
    rf"(?: step: (?P<step>{_INT})\((?P<unit>factor|bytes)\))?"
)
# Further on the same line: "warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0" (src/util.cu); the data
# check's flag (-c) is searched for on its own, as releases differ in what comes between.
VALIDATION = re.compile(rf" validation: (?P<validation>{_INT})")
# The rows judged: all_reduce_perf's default data type and reduction (src/common.cu: `nccltype = ncclFloat`, `ncclop =
# ncclSum`, named "float" and "sum" by test_typenames and test_opnames), which the floors are measured with; `-d all`
# or `-o all` adds rows of other types and reductions (an int8 `max` moves a quarter of the bytes per element and
# does no arithmetic), which are read, checked for wrong elements, and not judged against a float sum's floor.
JUDGED_TYPE, JUDGED_REDOP = "float", "sum"
# A float's bytes: a float row's count is its size over this (src/common.cu wordSize).
JUDGED_TYPE_BYTES = 4
# The widest element all_reduce_perf sums (double, int64, uint64): a row's printed size is its requested size
# rounded down to a whole number of elements (src/common.cu: `count = size / wordSize(type)`).
_WIDEST_ELEMENT_BYTES = 8
# The device name runs to the end of the line; its trailing white space is stripped in code, not by a `\s*$` after
# a lazy `.*?` (which retries the run of spaces from every position: quadratic).
RANK = re.compile(
    rf"^#\s+Rank\s+(?P<rank>{_INT}) Group\s+(?P<group>{_INT}) Pid\s+(?P<pid>{_INT}) on\s+(?P<host>\S+) device\s+"
    rf"(?P<device>{_INT}) \[(?P<pci>[0-9a-fA-F]{{4}}:[0-9a-fA-F]{{2}}:[0-9a-fA-F]{{2}}|0x[0-9a-fA-F]{{2}})\] (?P<name>.*)$"
)
OUT_OF_BOUNDS = re.compile(rf"^# Out of bounds values\s*: (?P<count>{_INT})")
AVERAGE = re.compile(rf"^# Avg bus bandwidth\s*: (?P<busbw>{_NUMBER})")
CONCLUDED = re.compile(r"^# Collective test concluded: (?P<program>\S+)")
FAILURE = re.compile(r"^(?P<host>\S+): Test (?P<what>CUDA failure|NCCL failure|timeout) (?P<detail>.*)$")
# CPU seconds one log may take to read: far above what a real log needs (milliseconds), so that only a log built to
# be slow reaches it; the step then fails with this limit named instead of holding the run.
PARSE_CPU_LIMIT_S = 10.0
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

    def not_finite(self) -> tuple[str, ...]:
        """The columns that hold no measurement: a figure that is NaN or infinite, a bandwidth below 0, a busbw above
        MAX_GBPS (no fabric's: a typo or a log that is not all_reduce_perf's), or a time not above 0 (all_reduce_perf
        measured nothing there: a bandwidth is bytes over that time, src/all_reduce.cu AllReduceGetBw, so a time of 0
        makes any bandwidth printed beside it meaningless). Every column is checked, not only the one judged: the
        judged figure is the lower of two, and a 1e300 beside a 450 would otherwise be dropped unseen."""
        columns = (
            ("time", self.time_us, self.time_us > 0),
            ("algbw", self.algbw_gbps, self.algbw_gbps >= 0),
            ("busbw", self.busbw_gbps, 0 <= self.busbw_gbps <= MAX_GBPS),
        )
        return tuple(name for name, figure, in_range in columns if not (in_range and math.isfinite(figure)))


@dataclass(frozen=True)
class SizeRow:
    size_bytes: int
    count: int
    data_type: str
    redop: str
    # -1 for an all-reduce, which has no root (src/all_reduce.cu runs TimeTest with root -1).
    root: int
    out_of_place: Measurement
    in_place: Measurement

    @property
    def busbw_gbps(self) -> float:
        """The row's bus bandwidth: the lower of its out-of-place and in-place figures; NaN when either is not a
        finite number (`min` would hide a NaN in second place, as every comparison with NaN is false)."""
        figures = (self.out_of_place.busbw_gbps, self.in_place.busbw_gbps)
        return min(figures) if all(math.isfinite(figure) for figure in figures) else math.nan

    @property
    def wrong(self) -> int:
        return sum(m.wrong or 0 for m in (self.out_of_place, self.in_place))

    def not_finite(self) -> tuple[str, ...]:
        """'out-of-place busbw' and the like: each column of the row that holds NaN or an infinity."""
        return tuple(
            f"{place} {column}"
            for place, measurement in (("out-of-place", self.out_of_place), ("in-place", self.in_place))
            for column in measurement.not_finite()
        )


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
    # The header's "step: N(factor)" or "step: N(bytes)"; None where the release does not print it.
    step: int | None
    step_unit: str | None
    # The header's "validation: N", all_reduce_perf's -c (1: each result is checked); None where not printed.
    validation: int | None
    # The largest size the run was asked for: the last of minBytes, minBytes*factor (or +step), ... not above maxBytes.
    requested_bytes: int
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
        """The row judged: the one at the largest size the run was asked for (parse_all_reduce refuses a log
        without it). Where that size has several rows (`-N` repeats every size, src/common.cu `run_cycles`), the
        worst: a NaN first, then the lowest busbw, so that a slow repeat is never hidden by a fast one."""
        worst = self.worst_at(self.requested_bytes)
        assert worst is not None, "parse_all_reduce refuses a log without a row at the requested size"
        return worst

    def worst_at(self, size_bytes: int) -> SizeRow | None:
        """The worst float sum row at `size_bytes` (the size a floor is for), as `largest` is at the header's."""
        judged = [row for row in self.rows if _is_judged(row, size_bytes)]
        return min(judged, key=lambda row: (not math.isnan(row.busbw_gbps), row.busbw_gbps), default=None)


def _is_requested_size(size_bytes: int, requested_bytes: int) -> bool:
    return requested_bytes - _WIDEST_ELEMENT_BYTES < size_bytes <= requested_bytes


def _is_judged(row: SizeRow, requested_bytes: int) -> bool:
    return (row.data_type, row.redop) == (JUDGED_TYPE, JUDGED_REDOP) and _is_requested_size(
        row.size_bytes, requested_bytes
    )


def _requested_bytes(parameters: re.Match[str]) -> int:
    """The last size of src/common.cu's loop `for (size = minbytes; size <= maxbytes; size = stepfactor > 1 ?
    size*stepfactor : size+stepbytes)`; maxBytes itself when the header does not print its step."""
    size, largest = int(parameters["min"]), int(parameters["max"])
    step = int(parameters["step"]) if parameters["step"] else 0
    if step < (2 if parameters["unit"] == "factor" else 1) or size == 0 or size > largest:
        return largest
    if parameters["unit"] == "factor":
        while size * step <= largest:
            size *= step
        return size
    return size + (largest - size) // step * step


def _number(text: str) -> float:
    return float(text)


def _wrong(text: str) -> int | None:
    """The #wrong column: src/util.cu writeBenchmarkLineBody prints the int64 count with "%6g", so it is a whole number
    (`1.23457e+06` for 1234567, read as 1234570: rounded, never below 1); a fraction such as 0.9 is no count."""
    if text == "N/A":
        return None
    value = float(text)
    if not math.isfinite(value) or value > 10**18 or value != int(value):
        raise NcclOutputError(f"#wrong {_shown(text)} is not a count of elements (a whole number)")
    return int(value)


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
        int(match["root"]),
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
        match["name"].rstrip(),
    )


def _shown(line: str) -> str:
    printable = "".join(ch if ch.isprintable() else "?" for ch in line.strip())
    return printable[:160] + ("..." if len(printable) > 160 else "")


def parse_all_reduce(text: str, cpu_limit_s: float = PARSE_CPU_LIMIT_S) -> AllReduceRun:
    """The run `text` shows; NcclOutputError when it is not one whole all_reduce_perf run, or when reading it takes
    more than `cpu_limit_s` of CPU time."""
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
    deadline = time.process_time() + cpu_limit_s
    for line in text.splitlines():
        if time.process_time() > deadline:
            raise NcclOutputError(
                f"reading the output took more than {cpu_limit_s:g} s of CPU time (PARSE_CPU_LIMIT_S); a real "
                "all_reduce_perf log takes milliseconds"
            )
        if failure := FAILURE.match(line):
            raise NcclOutputError(
                f"all_reduce_perf stopped on {failure['host']}: {failure['what']} {_shown(failure['detail'])}"
            )
        if match := VERSION.match(line):
            version = match["version"]
        elif match := STARTING.match(line):
            program = match["program"]
        elif match := PARAMETERS.match(line):
            if parameters is not None:
                raise NcclOutputError(
                    "the output has two '# nThread ...' headers: two runs written into one log (a container that "
                    "restarted, or logs put together); one run's log is judged, not two"
                )
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
    requested = _requested_bytes(parameters)
    validation = VALIDATION.search(parameters.string)
    if not any(_is_requested_size(row.size_bytes, requested) for row in rows):
        raise NcclOutputError(
            f"the output has no row at {requested} B, the largest size the header asks for (maxBytes "
            f"{parameters['max']}); its largest row is {max(row.size_bytes for row in rows)} B: the run is not whole"
        )
    if not any(_is_judged(row, requested) for row in rows):
        kinds = sorted(
            {
                f"{_shown(row.data_type)} {_shown(row.redop)}"
                for row in rows
                if _is_requested_size(row.size_bytes, requested)
            }
        )
        raise NcclOutputError(
            f"the output has no {JUDGED_TYPE} {JUDGED_REDOP} row at {requested} B (its rows there are "
            f"{', '.join(kinds[:6])}): "
            f"the floors are for all_reduce_perf's default {JUDGED_TYPE} {JUDGED_REDOP} (-d {JUDGED_TYPE} -o {JUDGED_REDOP})"
        )
    return AllReduceRun(
        version=version,
        threads=int(parameters["threads"]),
        gpus_per_thread=int(parameters["gpus"]),
        min_bytes=int(parameters["min"]),
        max_bytes=int(parameters["max"]),
        step=int(parameters["step"]) if parameters["step"] else None,
        step_unit=parameters["unit"],
        validation=int(validation["validation"]) if validation else None,
        requested_bytes=requested,
        ranks=tuple(ranks),
        rows=tuple(rows),
        out_of_bounds=out_of_bounds,
        avg_busbw_gbps=average,
    )
