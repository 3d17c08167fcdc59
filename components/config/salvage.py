"""The well-shaped rest of a stack whose shape is partly wrong, so that one run shows every problem.

If a shape error (a misspelt key, a string where a number belongs) stopped the run, the rules
across fields would wait for it, and a newcomer would fix problems in rounds. So the values
pydantic refused are taken out of a copy of the document until the rest validates, and the
program's rules check that rest. A misspelt key or enum value with one close known name is
read as that name instead, as the person fixing it would. The user's file is never changed, and
each refused value keeps its own problem line.

A rule that reads a value taken out would judge a default the user never wrote, so its
problems are held back (`MeaningProblems`): a line that names a key taken out, or a field
taken out of the entry it is about, and every rule across the stack once a GPU group or a user
template lost a part it reads. The run then says those checks wait for the fix.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from components.config.errors import (
    NAMED_ENTRY_KEYS,
    ConfigProblems,
    closest_name,
    config_key,
    described_at,
    entry_label,
    entry_where,
    team_where,
)
from components.input.meaning import REQUIRED
from components.input.stack import StackInput, stack_settings

# A round answers every error at once, and a later round only answers a required field that went
# missing, one model level up; the input models nest fewer levels than this (a test holds it).
MAX_ROUNDS = 16
SETTINGS = stack_settings()
# A template's rules read its requests together (what fits one node, constraints, NIC pairs): any part
# taken out of one holds back every rule about it, not only those naming the part.
READ_WHOLE = ("userClaimTemplates",)
# The teams of the queues: each goes alone, named as the queue rules name it.
QUEUE_TEAMS = ("queues", "teams")


@dataclass
class EntryLeftOut:
    """What one named entry lost: itself, or fields (first level) and the names on their paths."""

    whole: bool = False
    fields: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)


@dataclass
class LeftOut:
    """Where refused values were taken out: top-level keys, and fields by the entry they belong to."""

    keys: set[str] = field(default_factory=set)
    # By `nebius-dra:<key> entry <name>`, as problems name the entry.
    in_entries: dict[str, EntryLeftOut] = field(default_factory=dict)

    def touches(self, key: str, ignoring: Collection[str] = ()) -> bool:
        """Whether anything under the top-level `key` was taken out, other than entry fields in `ignoring`."""
        prefix = f"{config_key(key)} entry "
        return key in self.keys or any(
            where.startswith(prefix) and (entry.whole or not entry.fields <= set(ignoring))
            for where, entry in self.in_entries.items()
        )

    def lost_teams(self) -> bool:
        """Whether a team of the queues was taken out."""
        return any(where.startswith(team_where("")) for where in self.in_entries)

    def __bool__(self) -> bool:
        return bool(self.keys or self.in_entries)


@dataclass
class Salvaged:
    """The validated input (None when nothing could be salvaged) and what had to be left out of it.

    `read_as` holds what a later round refused in a value read under the close name of a misspelt key (its
    bounds, its own fields): the error, the document it was found in, and the places read under a new name.
    The first round could not see those problems, since the value was under a name the model does not know.
    """

    settings: StackInput | None
    left_out: LeftOut
    read_as: list[tuple[ValidationError, dict[str, Any], tuple[tuple[Any, ...], ...]]] = field(default_factory=list)


def salvage(document: dict[str, Any], error: ValidationError, left_out: LeftOut) -> Salvaged:
    """The stack input with every refused value taken out (or read as its one close known name), noted in `left_out`."""
    repaired = copy.deepcopy(document)
    for key in left_out.keys - set(repaired):  # keys whose text could not be decoded
        if SETTINGS[key].default is REQUIRED:
            return Salvaged(None, left_out)
        repaired[key] = copy.deepcopy(SETTINGS[key].default)
    renamed: list[tuple[Any, ...]] = []
    read_as: list[tuple[ValidationError, dict[str, Any], tuple[tuple[Any, ...], ...]]] = []
    for _ in range(MAX_ROUNDS):
        items = error.errors(include_url=False)
        if renamed and any(tuple(item["loc"][: len(place)]) in renamed for item in items for place in renamed):
            read_as.append((error, copy.deepcopy(repaired), tuple(renamed)))
        unread = [item for item in items if not _read_as_close_name(repaired, item, renamed)]
        # A missing field that a misspelling now supplies is no longer missing.
        doomed = [
            path
            for item in unread
            if len(path := _resolved(repaired, item["loc"])) < len(item["loc"]) or item["type"] != "missing"
        ]
        if not _take_out(repaired, doomed, left_out):
            return Salvaged(None, left_out, read_as)
        try:
            return Salvaged(StackInput.model_validate(repaired), left_out, read_as)
        except ValidationError as again:
            error = again
    return Salvaged(None, left_out, read_as)


def _resolved(document: Any, location: Sequence[Any]) -> tuple[Any, ...]:
    """The longest prefix of pydantic's location that names a value present in the document.

    A location runs past the document where a field is missing (its parent is at fault) or through
    a union member's tag (the value at the tag's parent is at fault). `[key]` names a map key that
    is at fault, and the entry under it goes.
    """
    walked: list[Any] = []
    node = document
    for part in location:
        if part == "[key]":
            return tuple(walked)
        if isinstance(node, dict):
            present = isinstance(part, str) and part in node
        else:
            present = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if not present:
            break
        node = node[part]
        walked.append(part)
    return tuple(walked)


def _read_as_close_name(document: Any, item: Any, renamed: list[tuple[Any, ...]]) -> bool:
    """Reads a misspelt key or enum value as the one known name close to it; False when there is none.

    A key read under its close name is noted in `renamed`, so that the next round's verdict on its value is told."""
    kind, path = item["type"], tuple(item["loc"])
    if kind not in ("extra_forbidden", "literal_error") or not path or _resolved(document, path) != path:
        return False
    parent = _node(document, path[:-1])
    described = described_at(StackInput, list(path))
    if kind == "extra_forbidden" and isinstance(parent, dict):
        meant = closest_name(path[-1], described.parent_fields)
        if meant is None or meant in parent:
            return False
        parent[meant] = parent.pop(path[-1])
        renamed.append((*path[:-1], meant))
        return True
    if kind == "literal_error" and isinstance(parent, (dict, list)):
        meant = closest_name(item.get("input"), described.choices)
        if meant is None:
            return False
        parent[path[-1]] = next(choice for choice in described.choices if str(choice) == meant)
        return True
    return False


def _node(document: Any, path: Sequence[Any]) -> Any:
    for part in path:
        document = document[part]
    return document


def _take_out(document: dict[str, Any], paths: list[tuple[Any, ...]], left_out: LeftOut) -> bool:
    """Removes each value at fault; False when the document itself is at fault.

    An item of a list goes with its whole list (so the positions the rules quote stay the
    user's), except an entry of `gpuNodeGroups` or `userClaimTemplates`, which goes alone and
    is named by its entry name. A field at fault goes and its default applies; a required
    one is missed in the next round and its parent goes then. A top-level key without a
    default (`gpuNodeGroups`) cannot go: then nothing is salvaged.
    """
    targets: set[tuple[Any, ...]] = set()
    for path in paths:
        if path[:2] == QUEUE_TEAMS and len(path) > 3:
            path = path[:3]  # a team's rules read it whole: any part at fault takes the team out
        while path and isinstance(path[-1], int) and not _named_entry(path):
            path = path[:-1]
        if not path:
            return False
        targets.add(path)
    for path in sorted(targets, key=lambda p: (len(p), p[-1] if isinstance(p[-1], int) else -1), reverse=True):
        if any(path[:depth] in targets for depth in range(1, len(path))):
            continue
        _record(document, path, left_out)
        parent = _node(document, path[:-1])
        del parent[path[-1]]
        if len(path) == 1:
            # Every key reaches the program (the CLI merges Pulumi.yaml's defaults in): the default stands in.
            default = SETTINGS[path[0]].default
            if default is REQUIRED:
                return False
            parent[path[0]] = copy.deepcopy(default)
    return True


def _named_entry(path: tuple[Any, ...]) -> bool:
    """An entry that goes alone: of `gpuNodeGroups` or `userClaimTemplates`, or a team of the queues."""
    return (len(path) == 2 and path[0] in NAMED_ENTRY_KEYS) or (len(path) == 3 and path[:2] == QUEUE_TEAMS)


def _record(document: dict[str, Any], path: tuple[Any, ...], left_out: LeftOut) -> None:
    key = str(path[0])
    if path[:2] == QUEUE_TEAMS and len(path) == 3:
        team = team_where(entry_label(_node(document, QUEUE_TEAMS), path[2]))
        left_out.in_entries.setdefault(team, EntryLeftOut()).whole = True
    elif key in NAMED_ENTRY_KEYS and len(path) >= 2 and isinstance(path[1], int):
        entry = left_out.in_entries.setdefault(entry_where(key, document.get(key), path[1]), EntryLeftOut())
        if len(path) == 2:
            entry.whole = True
        else:
            entry.whole = entry.whole or key in READ_WHOLE
            entry.fields.add(str(path[2]))
            entry.names.update(str(part) for part in path[2:] if isinstance(part, str))
    else:
        left_out.keys.add(key)


class MeaningProblems(ConfigProblems):
    """The program's rules' problems for a salvaged stack, less those that read a value taken out."""

    def __init__(self, shape: ConfigProblems, left_out: LeftOut) -> None:
        super().__init__()
        self.lines = shape.lines
        self.secrets = shape.secrets
        self.left_out = left_out
        self._key_mentions = _mentions(left_out.keys)
        self._field_mentions = {where: _mentions(entry.names) for where, entry in left_out.in_entries.items()}

    def add(self, key: str, message: str) -> None:
        if not self._reads_left_out(key, message):
            super().add(key, message)

    def _reads_left_out(self, key: str, message: str) -> bool:
        if self._key_mentions is not None and self._key_mentions.search(f"{key}: {message}"):
            return True
        entry = self.left_out.in_entries.get(key)
        if entry is None:
            return False
        fields = self._field_mentions[key]
        return entry.whole or (fields is not None and fields.search(message) is not None)

    def held_back_for(self, key: str, *more: str, ignoring: Collection[str] = ()) -> ConfigProblems:
        """For a rule that reads every entry of these keys: a sink holding back all its problems when one lost a part.

        Entry fields in `ignoring` are ones the rule never reads.
        """
        if any(self.left_out.touches(name, ignoring) for name in (key, *more)):
            return _HeldBack()
        return self

    def raise_if_any(self) -> None:
        if self.left_out and self.lines:
            self.note = "checks that read a refused value run once it is fixed"
        super().raise_if_any()


class _HeldBack(ConfigProblems):
    def add(self, key: str, message: str) -> None:
        """Held back: the rule read a default standing in for a refused value."""


def _mentions(names: Iterable[str]) -> re.Pattern[str] | None:
    """A pattern finding any of the names as a whole word (so `infiniband` is not found in `infinibandFabric`)."""
    words = sorted(set(names), key=len, reverse=True)
    if not words:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(word) for word in words) + r")(?![\w])")
