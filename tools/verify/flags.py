"""The verifier's flag values, refused at argument parsing (exit 2, naming the flag) when no run could use them.

Each is an argparse `type`: argparse names the flag (`argument --json: an empty path`), and the value is quoted
through `shown`. An empty path is never read as `.` (`Path("")`) nor as "not given" (the $KUBECONFIG fallback): a CI
line `--kubeconfig "$KC"` with KC unset must not verify whatever cluster the default kubeconfig points at.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from components.config.claim_templates import image_problem
from components.input.fields import Image, LocalFile
from components.shown import shown

# A day: no step of a verification (a smoke pod's start, a burn-in, the exec plugin's login) waits longer; past it a
# limit is a typo (`1e300` overflowed the thread's wait, blamed on the server).
MAX_SECONDS = 86400.0

_SECONDS = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_IMAGE = TypeAdapter(Image)
_FILE = TypeAdapter(LocalFile)


def seconds(text: str) -> float:
    """A time limit: more than 0 and at most a day of seconds."""
    # ASCII digits with an optional fraction, as the stack file's numbers: float() also takes `1_000`, ` 3`, `+3`,
    # `1e3` and other scripts' digits, which no limit written by hand needs.
    if not _SECONDS.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{shown(text)} is not a number of seconds: give ASCII digits, with a fraction after '.' if needed (such as "
            "30 or 2.5)"
        )
    value = float(text)
    if not 0 < value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(
            f"{shown(text)}: the limit must be a positive number of seconds, at most {MAX_SECONDS:.0f} (a day)"
        )
    return value


def path(text: str) -> Path:
    """A file flag's path; an empty one is refused, never read as `.` or as the flag left out."""
    if text == "":
        raise argparse.ArgumentTypeError("an empty path; give the file's path, or leave the flag out")
    return Path(text)


def name(text: str) -> str:
    """A name that is looked up (a kubeconfig context): an empty one would silently mean the default."""
    if text == "":
        raise argparse.ArgumentTypeError("an empty name; give a context of the kubeconfig, or leave the flag out")
    return text


def image(text: str) -> str:
    """An image reference, as the stack file's sample images are checked: its shape (`components.input.fields.Image`)
    and a pinned tag or digest (`image_problem`), so a smoke pod or burn-in runs the image the run names, not
    whatever `latest` or `main` points at that day."""
    try:
        reference = _IMAGE.validate_python(text)
    except ValidationError as error:
        # The type's own message: what it got, the part that failed, and what it allows (`IMAGE_RULE`).
        raise argparse.ArgumentTypeError(error.errors()[0]["msg"]) from None
    if problem := image_problem(reference):
        raise argparse.ArgumentTypeError(f"{shown(reference)} {problem}")
    return reference


def absolute_file(example: str) -> Callable[[str], str]:
    """A file's absolute path inside an image (`--burn-in-binary`), as the stack file's paths are checked."""

    def check(text: str) -> str:
        try:
            if text:
                return _FILE.validate_python(text)
        except ValidationError:
            pass
        raise argparse.ArgumentTypeError(
            f"got {shown(text)}; expected a file's absolute path in the image such as {example}: at most 255 "
            "characters, '/' then ASCII letters, digits, '.', '_', '-' and '/' (no space), naming a file (not ending "
            "in '/', '.' or '..')"
        )

    return check
