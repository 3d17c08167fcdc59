r"""Go's time.ParseDuration grammar, which CEL's `duration()` literals follow in cel-go: [-+]?([0-9]*(\.[0-9]*)?unit)+ or 0, within int64 nanoseconds."""

from __future__ import annotations

import re
from fractions import Fraction

_GO_DURATION_PART = re.compile(r"(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)")
_GO_DURATION_UNITS = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "μs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
}


def is_go_duration(text: str) -> bool:
    """Whether Go's time.ParseDuration accepts `text`: [-+]?([0-9]*(\\.[0-9]*)?unit)+ or 0, within int64 nanoseconds."""
    body = text[1:] if text[:1] in ("-", "+") else text
    if body == "0":
        return True
    total, index = Fraction(0), 0
    while index < len(body):
        part = _GO_DURATION_PART.match(body, index)
        if part is None or not (part.group(1) or part.group(2)):
            return False
        whole, fraction, unit = part.groups()
        value = Fraction(int(whole or "0")) + (Fraction(int(fraction), 10 ** len(fraction)) if fraction else 0)
        total += value * _GO_DURATION_UNITS[unit]
        index = part.end()
    limit = 2**63 if text.startswith("-") else 2**63 - 1
    return bool(body) and int(total) <= limit
