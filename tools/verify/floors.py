"""The burn-in's bus-bandwidth floors file (tools/verify/nccl_floors.yaml, or a stack's own `--burn-in-floors`).

Read through the project's input limits and checked by a strict model, as a stack file is: types,
bounds and unknown keys, every problem at once, each line naming the file and the entry. The
file is read whenever the burn-in is configured, so a broken floors file is refused (exit 2)
before the cluster is asked, whether or not the burn-in then runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, Field, StrictStr, ValidationError, model_validator

from components.config.errors import ConfigProblems, add_validation_problems, did_you_mean
from components.config.reading import InputError, load_yaml
from components.gpu_platforms import GPU_PLATFORMS
from components.input.fields import DATE_PATTERN, PLATFORM_PATTERN, SOURCE_PATTERN, Shape
from components.input.prices import calendar_day, past_day

FLOORS_FILE = Path(__file__).with_name("nccl_floors.yaml")
# The highest bus bandwidth a floor or a measurement may be, in GB/s: 100 times NVLink 5's 1.8 TB/s per GPU. A figure
# above it is a typo or a log that is not all_reduce_perf's, never a measurement.
MAX_GBPS = 100_000
# The lowest figure a floor or a published run may be, in GB/s: the derivation check below tolerates ROUNDING_GBPS
# (floors are written in whole GB/s), so a floor under 1 GB/s cannot be told from 0 (no floor at all), and a
# figure such as 1e-300 is a typo. (1 GB/s is below even one 10 GbE link's line rate, 1.25 GB/s, IEEE 802.3ae: no
# GPU fabric's floor is near it.)
MIN_GBPS = 1
MAX_NODES = 10_000
# The size every floor is the busbw at: the largest of the published runs' sweeps (publishedRun: "all_reduce_perf,
# 1 GiB"). The burn-in's sweep ends there (tools/verify/burnin_job.py Sweep) and the verdict judges that row alone.
FLOOR_BYTES = 1 << 30


class FloorsError(ValueError):
    """A floors file the verdict cannot use; the message names the file, the entry and the field."""


NodeCount = Annotated[int, Field(ge=1, le=MAX_NODES, description=f"expected a whole number of nodes, 1 to {MAX_NODES}")]
Gbps = Annotated[
    float,
    Field(
        ge=MIN_GBPS,
        le=MAX_GBPS,
        description=f"expected a bus bandwidth in GB/s, {MIN_GBPS} to {MAX_GBPS}",
    ),
]
# The most a floor may be below its published figure: the faults the burn-in is for cost several times the bandwidth
# (the header of nccl_floors.yaml), so at a margin of 50 % or more a run at half the published figure, the mildest of
# them, would pass.
MAX_MARGIN_PERCENT = 50


def _read_by_now(value: str) -> str:
    """The day a figure was read (or the file checked) cannot be to come: a future one would make the figure look
    fresher than it is."""
    try:
        return past_day(value)
    except ValueError:
        raise ValueError(
            f'date "{value}" is in the future; expected the day the figure was read from its source, today or before'
        ) from None


FloorDate = Annotated[
    StrictStr,
    Field(pattern=DATE_PATTERN, description='expected the day the figure was read, as a quoted "YYYY-MM-DD"'),
    AfterValidator(calendar_day),
    AfterValidator(_read_by_now),
]
# A text is shown in every verdict, on a terminal and in the --json report: printable ASCII only, as a price's source
# is (SOURCE_PATTERN), so that no NUL, bell, escape or bidi override (U+202E, which reorders what follows it on
# screen) reaches either; and no white space around it, refused rather than stripped, as the stack file's texts are
# (a quoted " y" is what the file says, and the file should say "y").
FloorText = Annotated[
    StrictStr,
    Field(
        pattern=SOURCE_PATTERN,
        description="expected 1 to 300 printable ASCII characters (no control or bidi character), without white "
        "space around them",
    ),
]
# The floor may differ from publishedGbps less marginPercent by less than this: the file writes floors in whole GB/s
# (455.9 less 20 % is 364.72, written 365).
ROUNDING_GBPS = 1.0


def _known_platform(platform: str) -> str:
    """A floor for a platform no group can have would never be used: the one table of GPU platforms decides."""
    if platform not in GPU_PLATFORMS:
        raise ValueError(
            f"{platform} is no GPU platform Nebius lists{did_you_mean(platform, GPU_PLATFORMS)} (known: "
            f"{', '.join(GPU_PLATFORMS)}; components/gpu_platforms.py)"
        )
    return platform


class FloorEntry(Shape):
    """One floor: the least busbw of a platform at a range of node counts, and the published run it comes from.

    Every entry says where its floor comes from, as nccl_floors.yaml's header defines a floor: publishedGbps (the
    figure a run reached: a published one, or your own healthy cluster's), publishedRun (what ran) and
    marginPercent (how far below it the floor is); floorGbps must be the one less the other. A bare `floorGbps: 1`
    would pass a broken fabric, and nothing in the file would show that it is no figure anyone measured.
    """

    platform: Annotated[
        StrictStr,
        Field(pattern=PLATFORM_PATTERN, max_length=63, description="expected a GPU platform such as gpu-h200-sxm"),
        AfterValidator(_known_platform),
    ]
    minNodes: NodeCount
    maxNodes: NodeCount | None = None
    floorGbps: Gbps
    marginPercent: Annotated[
        float,
        Field(
            ge=0,
            lt=MAX_MARGIN_PERCENT,
            description=f"expected the margin below the published figure, 0 to below {MAX_MARGIN_PERCENT} %",
        ),
    ]
    publishedGbps: Gbps
    publishedRun: FloorText
    source: FloorText
    date: FloorDate

    @model_validator(mode="after")
    def _ordered(self) -> FloorEntry:
        if self.maxNodes is not None and self.maxNodes < self.minNodes:
            raise ValueError(f"maxNodes {self.maxNodes} is below minNodes {self.minNodes}")
        return self

    @model_validator(mode="after")
    def _derived(self) -> FloorEntry:
        """The header of nccl_floors.yaml defines a floor as the published figure less the margin: the three numbers
        must say the same thing, or the margin (or the figure) the file shows is not the one the verdict uses."""
        if self.floorGbps > self.publishedGbps:
            raise ValueError(f"floorGbps {self.floorGbps:g} is above publishedGbps {self.publishedGbps:g}")
        derived = self.publishedGbps * (1 - self.marginPercent / 100)
        if abs(self.floorGbps - derived) >= ROUNDING_GBPS:
            raise ValueError(
                f"floorGbps {self.floorGbps:g} is not publishedGbps {self.publishedGbps:g} less marginPercent "
                f"{self.marginPercent:g} ({derived:.6g} GB/s, to within {ROUNDING_GBPS:g} GB/s): correct one of the three"
            )
        return self

    def overlaps(self, other: FloorEntry) -> bool:
        """Both cover one platform at some node count: the later would never be used (the first match wins)."""
        highest = min(n for n in (self.maxNodes, other.maxNodes, MAX_NODES) if n is not None)
        return self.platform == other.platform and max(self.minNodes, other.minNodes) <= highest


class FloorsFile(Shape):
    """The whole file: when its figures were last checked, and the entries in the order they are tried."""

    checked: FloorDate | None = None
    # At least one entry: an empty list judges nothing, and a stack's own file that covers nothing is a mistake.
    floors: Annotated[
        list[FloorEntry],
        Field(
            min_length=1, max_length=1_000, description="expected a list of 1 to 1000 floors {platform, minNodes, ...}"
        ),
    ]

    @model_validator(mode="after")
    def _read_before_checked(self) -> FloorsFile:
        """`checked` is the day every figure was last read against its source: an entry read later was not."""
        later = [
            f"floors[{index}].date {entry.date} is after checked {self.checked}"
            for index, entry in enumerate(self.floors)
            if self.checked is not None and entry.date > self.checked
        ]
        if later:
            raise ValueError(
                "; ".join(later[:5])
                + (f"; and {len(later) - 5} more" if len(later) > 5 else "")
                + ": expected each entry's date on or before the file's checked day (update checked)"
            )
        return self

    @model_validator(mode="after")
    def _disjoint(self) -> FloorsFile:
        # Quadratic in the entries, at most 1,000 of them (the bound above): half a million comparisons at worst.
        clashes = [
            f"floors[{later}] covers {entry.platform} at node counts floors[{earlier}] already covers"
            f" (the first match is used, so floors[{later}] would never be)"
            for later, entry in enumerate(self.floors)
            for earlier in range(later)
            if self.floors[earlier].overlaps(entry)
        ]
        if clashes:
            raise ValueError("; ".join(clashes[:5]) + (f"; and {len(clashes) - 5} more" if len(clashes) > 5 else ""))
        return self


class _Document(Shape):
    """The file as one field, so that each problem reads `<file>: floors[0].marginPercent ...`."""

    file: FloorsFile = Field(description="expected a map {checked?, floors: [...]}")


@dataclass(frozen=True)
class Floor:
    platform: str
    min_nodes: int
    max_nodes: int | None
    gbps: float
    source: str
    date: str
    origin: str

    def covers(self, platform: str, nodes: int) -> bool:
        return (
            self.platform == platform
            and self.min_nodes <= nodes
            and (self.max_nodes is None or nodes <= self.max_nodes)
        )

    def text(self) -> str:
        return f"{self.gbps:g} GB/s ({self.origin}: {self.platform}, {self.source}, read {self.date})"


def load_floors(path: Path, label: str | None = None) -> tuple[Floor, ...]:
    """The entries of one floors file, in its order; FloorsError naming the file, the entry and the field otherwise.

    The file is checked as strictly as a stack file: types (`marginPercent: twenty` is refused), bounds and
    unknown keys, every problem at once, each line naming the file.
    """
    origin = label or str(path)
    try:
        document = load_yaml(path, origin, FloorsError)
    except InputError as error:
        raise FloorsError(str(error)) from None
    try:
        floors = _Document.model_validate({"file": document}).file
    except ValidationError as error:
        problems = ConfigProblems()
        add_validation_problems(problems, error, {"file": document}, _Document, where_for=lambda _: origin)
        count = len(problems.lines)
        heading = f"{origin}: not a floors file of the shape of {FLOORS_FILE.name} ({count} problem{'s' if count > 1 else ''}):"
        raise FloorsError("\n".join([heading, *(f"  - {line}" for line in problems.lines)])) from None
    return tuple(
        Floor(entry.platform, entry.minNodes, entry.maxNodes, entry.floorGbps, entry.source, entry.date, origin)
        for entry in floors.floors
    )


def floors_for_run(override: Path | None) -> tuple[Floor, ...]:
    """A stack's own floors first, then the project's table."""
    own = load_floors(override) if override is not None else ()
    return own + load_floors(FLOORS_FILE, f"tools/verify/{FLOORS_FILE.name}")
