"""Generated input: the scalars found outside (any JSON/YAML scalar), values a user could write, and where.

`places` lists every place below a typed model a user can write to and `put` writes a value there,
so that a property test can send any value to any setting of the stack file.
"""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any, Union

from hypothesis import strategies as st
from pydantic import BaseModel

# Any scalar a parsed JSON or YAML document may hold: the values that reach the program from outside.
OUTSIDE_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
)
# Besides the outside-input scalars, text in the alphabet of names, versions and percentages, long enough to pass bounds.
SCALARS = OUTSIDE_SCALARS | st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-./%", max_size=300)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=40) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=45,
)
MAX_DEPTH = 7


def _members(annotation: Any) -> list[Any]:
    """The types a value of `annotation` may be, without Annotated metadata and None."""
    while typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (Union, types.UnionType):
        return [member for arg in typing.get_args(annotation) if arg is not type(None) for member in _members(arg)]
    return [annotation]


def places(annotation: Any, depth: int = 0) -> list[tuple[Any, ...]]:
    """Every place below a value of `annotation` a user can write: a model field by name, list entry 0, map key "k"."""
    if depth >= MAX_DEPTH:
        return []
    found: list[tuple[Any, ...]] = []
    for member in _members(annotation):
        if isinstance(member, type) and issubclass(member, BaseModel):
            steps = [(name, info.annotation) for name, info in member.model_fields.items()]
        elif typing.get_origin(member) is list:
            steps = [(0, typing.get_args(member)[0])]
        elif typing.get_origin(member) is dict:
            steps = [("k", typing.get_args(member)[1])]
        else:
            continue
        for step, inner in steps:
            found.append((step,))
            found.extend((step, *below) for below in places(inner, depth + 1))
    return found


def put(document: Any, place: tuple[Any, ...], value: Any) -> Any:
    """`document` with `value` at `place`, creating the maps and lists on the way (an entry 0 where a list is empty)."""
    if not place:
        return value
    step, rest = place[0], place[1:]
    if isinstance(step, int):
        entries = list(document) if isinstance(document, list) and document else [{}]
        entries[0] = put(entries[0], rest, value)
        return entries
    fields = dict(document) if isinstance(document, dict) else {}
    fields[step] = put(fields.get(step, {}), rest, value)
    return fields
