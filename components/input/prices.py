"""The price table's shape: prices/nebius.yaml and a stack's nebius-dra:priceOverrides share it."""

from __future__ import annotations

import datetime
import json
import re
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    Field,
    StrictStr,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from components.input.fields import (
    DATE_PATTERN,
    GPU_PRESET_PATTERN,
    PLATFORM_PATTERN,
    PRICE_SOURCE_PATTERN,
    SOURCE_PATTERN,
    Shape,
)
from components.redaction import (
    ANCHOR_PATTERN,
    HEX_TOKEN_LENGTH,
    TOKEN_WORD_LENGTH,
    holds_a_token_shaped_word,
    may_hold_a_credential,
    redacted,
)
from components.shown import shape

MAX_USD_PER_UNIT_HOUR = 1000  # Far above any published Nebius price per GPU, vCPU or GiB hour.
# The least a rate may be: about a hundredth of the cheapest Nebius price of its kind (prices/nebius.yaml, dated
# 2025-09 to 2026-10: $1.45 per GPU-hour, the H100 spot rate; $0.012 per vCPU-hour and $0.0045 per GiB-hour, cpu-d3
# spot). No real price is below it, and a placeholder such as 1e-9 would price a fleet at $0.00 and pass every budget.
MIN_USD_PER_GPU_HOUR = 0.01
MIN_USD_PER_VCPU_HOUR = 0.0001
MIN_USD_PER_GIB_HOUR = 0.00001
MAX_PRICE_ENTRIES = 200


UsdPerGpuHour = Annotated[
    float,
    Field(
        ge=MIN_USD_PER_GPU_HOUR,
        le=MAX_USD_PER_UNIT_HOUR,
        description=f"expected US dollars per GPU-hour, a number from {MIN_USD_PER_GPU_HOUR} (no Nebius price is "
        f"lower) to {MAX_USD_PER_UNIT_HOUR}",
    ),
]
UsdPerVcpuHour = Annotated[
    float,
    Field(
        ge=MIN_USD_PER_VCPU_HOUR,
        le=MAX_USD_PER_UNIT_HOUR,
        description=f"expected US dollars per vCPU-hour, a number from {MIN_USD_PER_VCPU_HOUR:.4f} (no Nebius price is "
        f"lower) to {MAX_USD_PER_UNIT_HOUR}",
    ),
]
UsdPerGibHour = Annotated[
    float,
    Field(
        ge=MIN_USD_PER_GIB_HOUR,
        le=MAX_USD_PER_UNIT_HOUR,
        description=f"expected US dollars per GiB-hour of RAM, a number from {MIN_USD_PER_GIB_HOUR:.5f} (no Nebius price "
        f"is lower) to {MAX_USD_PER_UNIT_HOUR}",
    ),
]


# A price's source, note and doubtful are kept with it: the cost report and the plan print the source and the doubt
# beside every use, and the note travels with them. A credential in one would be printed with it. So each is refused
# when it has what a credential needs (components/redaction.py's `may_hold_a_credential`, which `quotable` hides by:
# a '%'-encoding, which can spell '?', '=' or '@'; a '=', '?', ';' or '\\'; a ':' but a URL's `scheme://`, a port or a
# `key:name`; an '@', '&' or '#' where it can carry one), what the redactor takes for one (`redacted`: `token
# abcd1234x`, `Bearer ...`), or a token-shaped word (`holds_a_token_shaped_word`: both cases and a digit in 16 or
# more letters and digits, or 32 or more hex digits; `nvidia2024mirror` is none). Two marks carry nothing where they
# are allowed: a URL's fragment that only names a place in its page (`#gpu`, ANCHOR_PATTERN, which the redactor
# shows), and in a reference without ':' (a contract number: no scheme, so no URL, and no password) an '@', '&' or
# '#' (`see @nebius`, `H100 & H200`, `contract #17`): an '@' ends a user with no password, and a '&' or '#' starts
# no `name=value` without a '='. One such word is no token: a git object id (40 lowercase hex digits, SHA-1; 64,
# SHA-256) that is a whole segment of a path, as a permalink's commit
# (`https://github.com/nebius/docs/blob/<commit>/prices.md`). Only there: a bare 40 hex digits is also the shape of a
# GitHub token of before 2021. One function, `without_credential`, refuses all three.
_GIT_OBJECT_ID_SEGMENT = re.compile(r"(?<=/)(?:[0-9a-f]{64}|[0-9a-f]{40})(?![^/\s])")
_PAGE_ANCHOR = re.compile(rf"#{ANCHOR_PATTERN}\Z")
_REFERENCE_MARKS = re.compile(r"[@&#]")
PRINTED_RULE = (
    "a price's source, note and doubtful are printed with it, so none may hold what a credential needs: a "
    "'%'-encoding; in a source, and in a URL in a note, '=', '?', ';', '\\', a ':' other than a URL's scheme:// "
    "and port, an '@' or '&' in a URL, or a '#' other than a URL's fragment naming a place in the page (#gpu; an "
    "'@', '&' or '#' in a reference without ':' is taken); a word the redactor hides (Bearer ..., token ...); or a "
    f"word shaped as a token, {TOKEN_WORD_LENGTH} or more letters and digits with both cases and a digit, or "
    f"{HEX_TOKEN_LENGTH} or more hex digits (a token such as ghp_...; a git commit id as a whole segment of a path, as "
    "in a permalink, is no token; a name with a year, nvidia2024mirror, is none)"
)


def _token_shaped(text: str) -> bool:
    return holds_a_token_shaped_word(_GIT_OBJECT_ID_SEGMENT.sub("/", text))


def _marks_judged(text: str) -> str:
    """`text` without the marks that carry no credential where they are: a URL's page anchor, a reference's '@',
    '&' and '#' (the comment above `_GIT_OBJECT_ID_SEGMENT` says why)."""
    if "://" in text:
        return _PAGE_ANCHOR.sub("", text)
    return text if ":" in text else _REFERENCE_MARKS.sub(" ", text)


def credential_shaped(text: str) -> bool:
    """True when `text` may hold a credential: it has what one needs (`may_hold_a_credential`, `_marks_judged`),
    `redacted` would change it, or a word in it is shaped as a token."""
    return may_hold_a_credential(_marks_judged(text)) or redacted(text) != text or _token_shaped(text)


# A '%'-encoding is refused whatever it spells, '%20' (a space) too: it could as well spell '?', '=' or '@', and
# telling which one it is would quote it. A refusal of one says how to do without it.
_PERCENT_ENCODING = re.compile(r"%[0-9A-Fa-f]{2}")
ENCODING_HINT = (
    "; a '%'-encoding is refused whatever it spells, '%20' (a space) too: give the page's address without it (a "
    "URL's path holds no space), or, outside a URL (a reference such as a contract number, a note), write the "
    "space as a space"
)


# A note is prose: its ':' and ';' are punctuation, so only its URLs are held to a source's marks.
_URL_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S*")


def prose_credential_shaped(text: str) -> bool:
    """`credential_shaped` for prose: a URL in it as a source, the rest as the redactor and the token shape see it."""
    return (
        redacted(text) != text
        or _token_shaped(text)
        or _PERCENT_ENCODING.search(text) is not None
        or any(credential_shaped(url.rstrip(".,;:)")) for url in _URL_WORD.findall(text))
    )


def without_credential(text: str, expected: str, prose: bool = False) -> str:
    """`text` (a price's source, or with `prose` its note or doubtful) unless it may hold a credential
    (`credential_shaped`, `prose_credential_shaped`); then the refusal describes it by its shape (`shape`), never
    quoting it, and says what is `expected` and why."""
    if (prose_credential_shaped if prose else credential_shaped)(text):
        hint = ENCODING_HINT if _PERCENT_ENCODING.search(text) else ""
        raise ValueError(
            f"got {json.dumps(shape(text))}, which may hold a credential; expected {expected}: {PRINTED_RULE}{hint}"
        )
    return text


def _source_url_or_text(source: str) -> str:
    """A source's second pattern, refused with the error of its first, so the user reads the field's description;
    then a source that may hold a credential (`without_credential`)."""
    if re.fullmatch(PRICE_SOURCE_PATTERN, source) is None:
        raise PydanticCustomError(
            "string_pattern_mismatch", "String should match pattern '{pattern}'", {"pattern": PRICE_SOURCE_PATTERN}
        )
    return without_credential(
        source, "the Nebius page's URL (a host, a port and a path) or a reference such as a contract number"
    )


NOTE_EXPECTED = "a note in words, without a credential's marks"


def _note_in_words(note: str) -> str:
    # A note is printed as a source is, whose pattern takes printable ASCII only: a character a terminal acts on (a
    # control character, ESC or BEL among them, a line break, a bidi override) is refused, by its code point.
    unprintable = sorted({f"U+{ord(c):04X}" for c in note if not c.isprintable()})
    if unprintable:
        raise ValueError(
            f"holds {', '.join(unprintable[:5])}, a character a terminal acts on (a control or format character, a "
            f"line break); expected {NOTE_EXPECTED}, on one line of printable characters"
        )
    return without_credential(note, NOTE_EXPECTED, prose=True)


PriceSource = Annotated[
    StrictStr,
    Field(
        pattern=SOURCE_PATTERN,
        max_length=300,
        description="expected where the price comes from: the URL of the Nebius page (https:// or http://, a host, "
        "a port and a path, without user, password, query or fragment, as a chart repository URL), or a reference "
        f"such as a contract number without ':'; printable ASCII, at most 300 characters; {PRINTED_RULE}",
        json_schema_extra={"allOf": [{"pattern": PRICE_SOURCE_PATTERN}]},
    ),
    AfterValidator(_source_url_or_text),
]
PriceDate = Annotated[
    StrictStr,
    Field(
        pattern=DATE_PATTERN,
        description='expected the day the price holds, as a quoted "YYYY-MM-DD"',
    ),
]


def calendar_day(value: str) -> str:
    """`value` when it is a day of the calendar (the pattern admits 2026-13-45); the reason otherwise."""
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        raise ValueError(f'date "{value}" is not a day of the calendar; write "YYYY-MM-DD"') from None
    return value


def past_day(value: str) -> str:
    """`value` when it is a day of the calendar not after today (a day later anywhere on Earth: UTC+14 is at most
    one day ahead of UTC); the day a price is known to hold cannot be to come, and a future one would keep the
    staleness note from ever appearing."""
    latest = datetime.datetime.now(datetime.UTC).date() + datetime.timedelta(days=1)
    if datetime.date.fromisoformat(calendar_day(value)) > latest:
        raise ValueError(f'date "{value}" is in the future; write the day the price was read on the Nebius page')
    return value


# Spot (preemptible) capacity is sold below on-demand: Nebius's price list (https://nebius.com/prices, the source of
# prices/nebius.yaml's spot figures) gives each platform's spot price under its on-demand one. A spot figure above
# the on-demand one is a swapped or mistyped pair, and would price a spot group dearer than the same on-demand group.
SPOT_RULE = "a spot price is at most the on-demand price of the same platform (https://nebius.com/prices)"


def spot_not_dearer(platform: str, rates: dict[str, tuple[float, float]]) -> None:
    """Refuses, naming the platform and both figures, each rate (name: on-demand, spot) whose spot is dearer."""
    dearer = [
        f"{name} spot {spot} > on-demand {on_demand}" for name, (on_demand, spot) in rates.items() if spot > on_demand
    ]
    if dearer:
        raise ValueError(f"platform {platform}: {', '.join(dearer)}; {SPOT_RULE}")


PriceNote = Annotated[
    StrictStr,
    Field(
        max_length=1000,
        description=f"expected {NOTE_EXPECTED}, at most 1000 characters (note: how the figure was read; doubtful: why "
        f"it is not to be trusted, printed beside every use); {PRINTED_RULE}",
    ),
    AfterValidator(_note_in_words),
]


class _DatedPrice(Shape):
    source: PriceSource
    date: PriceDate

    @field_validator("date")
    @classmethod
    def _real_day(cls, value: str) -> str:
        return past_day(value)


class GpuRateInput(_DatedPrice):
    usdPerGpuHour: UsdPerGpuHour


class CpuRateInput(_DatedPrice):
    usdPerVcpuHour: UsdPerVcpuHour
    usdPerGibHour: UsdPerGibHour


class GpuPriceInput(Shape):
    platform: Annotated[
        StrictStr,
        Field(pattern=PLATFORM_PATTERN, max_length=63, description="expected a GPU platform such as gpu-h200-sxm"),
    ]
    presets: Annotated[
        list[
            Annotated[
                StrictStr,
                Field(
                    pattern=GPU_PRESET_PATTERN,
                    max_length=63,
                    description="expected a GPU preset such as 8gpu-128vcpu-1600gb",
                ),
            ]
        ],
        Field(min_length=1, max_length=64, description="expected 1 to 64 presets the price holds for"),
    ]
    onDemand: GpuRateInput
    spot: GpuRateInput | None = None
    note: PriceNote | None = None
    doubtful: PriceNote | None = None

    @model_validator(mode="after")
    def _spot_not_dearer(self) -> GpuPriceInput:
        if self.spot is not None:
            spot_not_dearer(self.platform, {"usdPerGpuHour": (self.onDemand.usdPerGpuHour, self.spot.usdPerGpuHour)})
        return self


class CpuPriceInput(Shape):
    platform: Annotated[
        StrictStr,
        Field(pattern=PLATFORM_PATTERN, max_length=63, description="expected a CPU platform such as cpu-d3"),
    ]
    onDemand: CpuRateInput
    spot: CpuRateInput | None = None
    note: PriceNote | None = None
    doubtful: PriceNote | None = None

    @model_validator(mode="after")
    def _spot_not_dearer(self) -> CpuPriceInput:
        if self.spot is not None:
            spot_not_dearer(
                self.platform,
                {
                    "usdPerVcpuHour": (self.onDemand.usdPerVcpuHour, self.spot.usdPerVcpuHour),
                    "usdPerGibHour": (self.onDemand.usdPerGibHour, self.spot.usdPerGibHour),
                },
            )
        return self


class PriceTableInput(Shape):
    """prices/nebius.yaml, and the shape of nebius-dra:priceOverrides."""

    currency: Annotated[
        Literal["USD"],
        Field(
            description="allowed: USD (the default), the only currency: every rate is a usdPer... field, in US "
            "dollars as Nebius's price list and prices/nebius.yaml (currency: USD) give them, and the estimate adds "
            "overrides and the table's prices together and shows and budgets the sum in dollars; convert a price "
            "quoted in another currency to USD before writing it"
        ),
    ] = "USD"
    gpu: list[GpuPriceInput] = Field(
        default_factory=list,
        max_length=MAX_PRICE_ENTRIES,
        description=f"expected a list of at most {MAX_PRICE_ENTRIES} {{platform, presets, onDemand, spot?, note?}}",
    )
    cpu: list[CpuPriceInput] = Field(
        default_factory=list,
        max_length=MAX_PRICE_ENTRIES,
        description=f"expected a list of at most {MAX_PRICE_ENTRIES} {{platform, onDemand, spot?, note?}}",
    )
