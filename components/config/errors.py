"""How bad configuration is reported.

Every parser in this project collects its complaints into a `ConfigProblems` and raises
them together, so a user fixing a stack file sees every mistake in one run instead of
one per `pulumi preview`. Each line names the key as users type it, where in the value
the problem is, what was given and what is allowed.
"""

from __future__ import annotations

import difflib
import json
import re
import types
import typing
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Annotated, Any, Literal, Union

import pulumi
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from components.config.reading import printable
from components.dra_constants import NAMESPACE
from components.redaction import NO_SECRETS, Secrets, redacted
from components.shown import quotable, shown

# Keys whose values are lists of named entries: a problem names the entry, not just its index.
NAMED_ENTRY_KEYS = ("gpuNodeGroups", "userClaimTemplates")


def config_key(key: str) -> str:
    """The key as users type it with `pulumi config set`."""
    return f"{NAMESPACE}:{key}"


class ConfigError(pulumi.RunError):
    """Raised before any resource is registered; `pulumi.RunError` exits without a traceback.

    `problems` are the lines it was raised with (by `ConfigProblems`), so a caller can report some of them again
    without parsing the message."""

    def __init__(self, message: str, problems: ConfigProblems | None = None) -> None:
        super().__init__(message)
        self.problems = problems


class ConfigProblems:
    """Collects `key: problem` lines and raises them as one `ConfigError`."""

    def __init__(self, secrets: Secrets = NO_SECRETS) -> None:
        self.lines: list[str] = []
        # Said in the heading: what the run could not check yet.
        self.note = ""
        # The secret values' leaves: never printed, whatever a message quotes (`components.redaction`).
        self.secrets = secrets

    def add(self, key: str, message: str) -> None:
        # A config key is never a secret: the message alone is redacted, so the line always names the key to fix.
        self.lines.append(f"{key}: {redacted(message, self.secrets)}")

    def message(self) -> str:
        count = len(self.lines)
        note = f"; {self.note}" if self.note else ""
        heading = f"invalid stack configuration ({count} problem{'s' if count > 1 else ''}{note}):"
        return "\n".join([heading, *(f"  - {line}" for line in self.lines)])

    def without(self, dropped: Callable[[str], object]) -> ConfigProblems:
        """These problems less the lines `dropped` picks, with the same note and secrets."""
        kept = ConfigProblems(self.secrets)
        kept.lines = [line for line in self.lines if not dropped(line)]
        kept.note = self.note
        return kept

    def raise_if_any(self) -> None:
        if self.lines:
            raise ConfigError(self.message(), self)


def refuse_repeats(key: str, names: Sequence[str], problems: ConfigProblems) -> None:
    """A list of names that says one twice is a slip (`[gpu, gpu]` for `[gpu, multi-gpu]`), not a wish: refused."""
    again = sorted({name for name in names if names.count(name) > 1})
    if again:
        problems.add(config_key(key), f"lists {', '.join(map(shown, again))} more than once; list each once")


def closest_name(given: Any, known: Sequence[Any]) -> str | None:
    """The known name closest to a mistyped one when it is close (difflib's ratio, at least 0.6), else None."""
    names = [str(name) for name in known]
    close = difflib.get_close_matches(given, names, n=1) if isinstance(given, str) else []
    return close[0] if close else None


def did_you_mean(given: Any, known: Sequence[Any]) -> str:
    """`; did you mean X?` when one known name is close to a mistyped one, else nothing."""
    close = closest_name(given, known)
    return f"; did you mean {close}?" if close else ""


def team_where(name: str) -> str:
    """`nebius-dra:queues team <name>`: where the problems of one team of the queues are named."""
    return f"{config_key('queues')} team {name}"


# A name or config key a label may hold as it is: letters, digits, '-', '_', '.' and ':' (Pulumi's `<namespace>:<name>`,
# the legacy `<namespace>:config:<name>` and the malformed keys a refusal names). Nothing else is quoted raw: a label
# starts the line, and a credential pasted into a name (`h:PW@x`, `user:PW@host`) would be shown there; each spelling
# of one has a character outside this class (`components.shown`, `_MARKERS`).
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,256}\Z")


def shown_name(name: Any) -> str:
    """A user's name or key as a label shows it: as it is when plain, by its shape (`shown`) when it may hold a
    credential, else with its invisible characters escaped (`printable`)."""
    text = str(name)
    if _PLAIN_NAME.match(text):
        return text
    return shown(text) if quotable(text) != text else printable(text)


def quoted_name(name: Any) -> str:
    """`shown_name` in quotes: a plain name JSON-quoted, any other as `shown` quotes it."""
    text = str(name)
    return json.dumps(text) if _PLAIN_NAME.match(text) else shown(text)


def entry_label(entries: Any, index: int) -> str:
    """The entry's name (`shown_name`) when it has a usable one, else `[<index>]`."""
    entry = entries[index] if isinstance(entries, Sequence) and 0 <= index < len(entries) else None
    name = entry.get("name") if isinstance(entry, Mapping) else None
    usable = isinstance(name, str) and name and len(name) <= 63 and name.isprintable()
    return shown_name(name) if usable else f"[{index}]"


def entry_where(key: str, entries: Any, index: int) -> str:
    """`nebius-dra:<key> entry <name>` when the entry has a usable name, else `entry [<index>]`."""
    return f"{config_key(key)} entry {entry_label(entries, index)}"


PLAIN_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}\Z")


def path_text(parts: Sequence[Any]) -> str:
    """`a.b[0].c`; a map key that is not a plain name is shown quoted, so no user text can break the line."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif PLAIN_FIELD.match(str(part)):
            text += f".{part}" if text else str(part)
        else:
            text += f"[{shown(part)}]"
    return text


def add_validation_problems(
    problems: ConfigProblems,
    error: ValidationError,
    document: Mapping[str, Any],
    model: type[BaseModel],
    skip: Collection[str] = (),
    where_for: Callable[[str], str] = config_key,
    within: Collection[tuple[Any, ...]] = (),
) -> None:
    """One line per pydantic error, in the project's words: key, place, value given, what is allowed.

    pydantic's own message ("Input should be ...", "Field required") is never shown: it names Python types and
    model classes the user never wrote. Keys in `skip` already have their problem recorded (they could not be
    decoded), so their "missing" is not news. `where_for` names a top-level key: the config key by default, a
    file's key for documents read from files. With `within`, only errors at or below those places are told.
    """
    items = [
        item
        for item in error.errors(include_url=False)
        if not within or any(tuple(item["loc"][: len(place)]) == place for place in within)
    ]
    # A required field whose misspelling is reported with "did you mean" is not also reported missing.
    meant = {
        (*item["loc"][:-1], name)
        for item in items
        if item["type"] == "extra_forbidden"
        and (name := closest_name(item["loc"][-1], described_at(model, list(item["loc"])).parent_fields))
    }
    for item in items:
        location = list(item["loc"])
        if (location and location[0] in skip) or (item["type"] == "missing" and tuple(location) in meant):
            continue
        described = described_at(model, location)
        key = str(location.pop(0)) if location else "?"
        where = where_for(key)
        if key in NAMED_ENTRY_KEYS and location and isinstance(index := location[0], int):
            location.pop(0)
            where = entry_where(key, document.get(key), index)
        problems.add(where, _problem(item, location, described, where))


def _problem(item: Mapping[str, Any], location: list[Any], described: FieldDescription, where: str) -> str:
    """The text after `key: ` for one pydantic error at `location` (the place below the key)."""
    kind, given = item["type"], item.get("input")
    context = item.get("ctx") or {}
    rule = allowed_rule(kind, context, described)
    if location and location[-1] == "[key]":
        place = path_text(location[:-2])
        return f"{place + ' ' if place else ''}key {shown(location[-2])} is malformed; {rule}"
    if kind == "extra_forbidden":
        place = path_text(location[:-1])
        hint = did_you_mean(location[-1], described.parent_fields)
        return f"{place + ' ' if place else ''}has unknown field(s) {shown(location[-1])}{hint}; allowed: {', '.join(described.parent_fields)}"
    place = path_text(location)
    if kind == "value_error" and "error" in context:
        return f"{place + ' ' if place else ''}{context['error']}"
    if kind == "missing":
        return (
            f"{place} is required{'; ' + rule if rule else ''}"
            if place
            else f"is required: set it with `pulumi config set {where} <value>`"
        )
    hint = did_you_mean(given, described.choices) if kind == "literal_error" else ""
    return f"{place + ' ' if place else ''}got {shown(given)}{hint}; {rule}"


# What a value of the wrong shape should have been, by pydantic's error type, for a field with no description.
SHAPE_BY_ERROR = {
    "list_type": "expected a list",
    "tuple_type": "expected a list",
    "dict_type": "expected a map",
    "model_type": "expected a map",
    "model_attributes_type": "expected a map",
    "string_type": "expected a string",
    "int_type": "expected a whole number",
    "int_from_float": "expected a whole number",
    "bool_type": "expected true or false",
    "float_type": "expected a number",
    "finite_number": "expected a finite number",
    "string_too_short": "expected a string",
    "string_too_long": "expected a string",
    "string_pattern_mismatch": "expected a string",
    "too_short": "expected a list",
    "too_long": "expected a list",
    "greater_than": "expected a number",
    "greater_than_equal": "expected a number",
    "less_than": "expected a number",
    "less_than_equal": "expected a number",
    "missing": "",
}


def allowed_rule(kind: str, context: Mapping[str, Any], described: FieldDescription) -> str:
    """What is allowed: the field's description, else the shape its type asks for; then the bound crossed, if any."""
    shape = SHAPE_BY_ERROR.get(kind, "expected another value")
    if kind in ("model_type", "model_attributes_type", "missing") and described.fields:
        shape = f"expected a map {{{', '.join(described.fields)}}}"
    elif kind in ("too_short", "too_long") and context.get("field_type") == "Dictionary":
        shape = "expected a map"
    elif kind == "string_pattern_mismatch" and "pattern" in context:
        shape = f"expected text matching {context['pattern']}"
    elif kind == "literal_error" and "expected" in context:
        shape = f"allowed: {context['expected']}"
    bound = _bound(kind, context)
    return "; ".join(part for part in (described.description or shape, bound) if part)


# pydantic's numeric bound errors: the context entry holding the limit, and how the project words it.
NUMERIC_BOUNDS = {
    "greater_than": ("gt", "above"),
    "greater_than_equal": ("ge", "at least"),
    "less_than": ("lt", "below"),
    "less_than_equal": ("le", "at most"),
}


def _bound(kind: str, context: Mapping[str, Any]) -> str:
    """The limit a value crossed, from the error's context: lengths, counts and numeric bounds."""
    if kind in ("string_too_short", "string_too_long"):
        most = kind == "string_too_long"
        limit = context.get("max_length" if most else "min_length")
        return f"{'at most' if most else 'at least'} {limit} character{'s' if limit != 1 else ''}"
    if kind in ("too_short", "too_long"):
        most = kind == "too_long"
        limit = context.get("max_length" if most else "min_length")
        return f"it has {context.get('actual_length')}, {'at most' if most else 'at least'} {limit} allowed"
    if kind in NUMERIC_BOUNDS:
        name, word = NUMERIC_BOUNDS[kind]
        return f"{word} {context.get(name)}"
    return ""


class FieldDescription:
    """What the model says of one place of the input: enough to word a problem, or to guess what a typo meant."""

    def __init__(self) -> None:
        self.description = ""
        self.parent_fields: tuple[str, ...] = ()
        # The fields of the model the location ends at, when it ends at one: what a map there may hold.
        self.fields: tuple[str, ...] = ()
        self.choices: tuple[Any, ...] = ()


def described_at(model: type[BaseModel], location: Sequence[Any]) -> FieldDescription:
    """The description of the field at `location` (innermost wins) and the fields its parent model allows.

    An entry of a list or map has its own description or none: the list's ("expected a list of ...") would
    misdescribe one entry.
    """
    found = FieldDescription()
    target: Any = model
    parts = list(location)
    for index, part in enumerate(parts):
        if part == "[key]":
            continue
        target = _unwrap(target, found)
        if isinstance(target, type) and issubclass(target, BaseModel) and isinstance(part, str):
            found.parent_fields = tuple(target.model_fields)
            info = target.model_fields.get(part)
            if info is None:
                return found
            found.description = info.description or ""
            target = info.annotation
        elif isinstance(part, int) and typing.get_origin(target) in (tuple, list):
            found.description = ""
            target = typing.get_args(target)[0]
        elif typing.get_origin(target) is dict:
            found.description = ""
            key_type, value_type = typing.get_args(target)
            target = key_type if parts[index + 1 : index + 2] == ["[key]"] else value_type
        else:
            return found
    target = _unwrap(target, found)
    if isinstance(target, type) and issubclass(target, BaseModel):
        found.fields = tuple(target.model_fields)
    return found


def _unwrap(target: Any, found: FieldDescription) -> Any:
    """Strips Annotated (taking its Field description) and `X | None`."""
    while True:
        origin = typing.get_origin(target)
        if origin is Annotated:
            target, *metadata = typing.get_args(target)
            for item in metadata:
                if isinstance(item, FieldInfo) and item.description:
                    found.description = item.description
        elif origin is Literal:
            found.choices = typing.get_args(target)
            return target
        elif origin in (Union, types.UnionType):
            members = [arg for arg in typing.get_args(target) if arg is not type(None)]
            if len(members) != 1:
                return target
            target = members[0]
        else:
            return target
