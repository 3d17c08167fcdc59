"""The one way in for every file and answer from outside: stack files, prices, policy config, baselines,
git revisions, kubeconfigs and API answers.

Each is read as a regular file only (a FIFO or `/dev/zero` would hold a reader for ever), at most
`MAX_INPUT_BYTES`, and parsed with caps that Python's parsers lack: nesting at most `MAX_DEPTH`
levels (deeper, the parsers and every walk over the result end in RecursionError), YAML aliases at
most `MAX_ALIASES` and at most `MAX_NODES` values once they are expanded (a "billion laughs" document
is a few hundred bytes), whole numbers of at most `MAX_DIGITS` digits (a longer one overflows
`float()` or, past 4300 digits, `int()`) and, in JSON, finite floats. Every refusal names the limit.

Text that came from outside and is echoed goes through `printable` (a terminal escape or a newline
cannot forge output) and, in Markdown, `markdown_text` (nor a link, an image or HTML in a PR summary).

YAML is read with the YAML 1.2 core schema's implicit types, as the Pulumi CLI reads stack files:
`on` and `2024-01-01` stay strings, `010` is ten.

A key given twice in one mapping or object is refused, naming both lines, in every file and answer:
Python's readers keep the last value silently, while the Pulumi CLI reads `Pulumi.yaml` and stack files
with gopkg.in/yaml.v3 (sdk/go/common/encoding/marshal.go, v3.0.1 in pkg/go.mod), whose decoder refuses
them: `line 9: mapping key "a" already defined at line 3` (yaml.v3 v3.0.1 decode.go, `uniqueKeys`, on
unless a caller turns it off). Keys are compared as the values they are read as, so `1` and `01`, which
a map would merge, are one key. The one exception is the policy pack config (`on_duplicate`):
`pulumi preview --policy-pack-config` reads it with Go's encoding/json (pkg/resource/analyzer/config.go,
parsePolicyPackConfig), which keeps the last value of a key given twice, and so does the plan.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import stat
import sys
import tempfile
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml

from components.shown import shown

MAX_INPUT_BYTES = 16 << 20
MAX_DEPTH = 64
MAX_ALIASES = 1_000
MAX_NODES = 200_000
# Past 308 digits a whole number overflows `float()`, the first thing a reader of a bound or a price does.
MAX_DIGITS = 300

ErrorFactory = Callable[[str], Exception]
DuplicateHandler = Callable[[str], None]

_BASE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class InputError(ValueError):
    """A file or answer from outside that is not a regular file, too large, or past a parsing limit."""


class DuplicateKeyError(yaml.constructor.ConstructorError):
    """A mapping or object that gives one key twice, at two (line, column) places, 1-based."""

    def __init__(self, key: Any, first: tuple[int, int], again: tuple[int, int]) -> None:
        super().__init__(None, None, "a key given twice")
        self.key, self.first, self.again = key, first, again

    def where(self) -> str:
        same_line = self.first[0] == self.again[0]
        first, again = (
            f"line {line}, column {column}" if same_line else f"line {line}"
            for line, column in (self.first, self.again)
        )
        return f"the key {_key_text(self.key)} is given twice, at {first} and at {again}"

    def __str__(self) -> str:
        return f"{self.where()}; give it once (a reader that takes it keeps one of the values and drops the other silently)"


class MergeKeyError(yaml.constructor.ConstructorError):
    """A YAML merge key (`<<: *anchor`, plain, not quoted: libyaml gives a plain scalar the style "", pyyaml None).
    gopkg.in/yaml.v3, the Pulumi CLI's reader, merges it; the project's reader does not (its YAML 1.2 core schema has
    no merge type), so it is refused once, at its line, rather than read as a key named `<<` beside fields that then
    seem missing."""

    def __init__(self, line: int) -> None:
        super().__init__(None, None, "a YAML merge key")
        self.line = line

    def __str__(self) -> str:
        return (
            f"line {self.line}: YAML merge keys (<<) are not read by the offline plan and the project's tools; write "
            "the fields out"
        )


def _key_text(key: Any) -> str:
    text = printable(key if isinstance(key, str) else json.dumps(key) if _is_scalar(key) else repr(key))
    return json.dumps(text if len(text) <= 80 else f"{text[:80]}...", ensure_ascii=False)


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float))


class Yaml12Loader(_BASE_LOADER):
    """Safe loading with the YAML 1.2 core schema's implicit types only (libyaml when the wheel has it),
    and each key of a mapping given once."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first_places: dict[Any, tuple[int, int]] = {}
        merge_line = None
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == "<<" and not key_node.style:
                # Refused after the keys are read: a merge key given twice is a key given twice, as yaml.v3 says.
                merge_line = merge_line or key_node.start_mark.line + 1
            key = self.construct_object(key_node, deep=True)
            place = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            try:
                if key in first_places:
                    raise DuplicateKeyError(key, first_places[key], place)
                first_places[key] = place
            except TypeError:
                continue  # an unhashable key: the base constructor refuses it with its own message
        if merge_line:
            raise MergeKeyError(merge_line)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


Yaml12Loader.yaml_implicit_resolvers = {}
for _tag, _pattern, _first in (
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+.0123456789"),
    ),
):
    Yaml12Loader.add_implicit_resolver(_tag, re.compile(_pattern), _first)


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node)).replace("_", "")
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    base = {"0o": 8, "0x": 16}.get(digits[:2], 10)
    digits = digits[2:] if base != 10 else digits
    if len(digits) > MAX_DIGITS:
        raise yaml.constructor.ConstructorError(
            None, None, f"a whole number of {len(digits)} digits; at most {MAX_DIGITS} (MAX_DIGITS)", node.start_mark
        )
    return sign * int(digits, base)


Yaml12Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISREG, "a regular file"),
    ):
        if test(mode):
            return name
    return "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file"


def read_text(path: Path, label: str, error: ErrorFactory = InputError, limit: int = MAX_INPUT_BYTES) -> str:
    """The UTF-8 text of the regular file `path`; `error(message)` naming `label` and the limit otherwise.

    The file is opened without blocking, so that a FIFO is refused instead of waited on.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as failure:
        raise error(f"cannot read {label}: {failure.strerror or failure}") from None
    # Checked on the descriptor, before a file object is made of it: `open` of a directory raises IsADirectoryError.
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise error(f"cannot read {label}: it is {_kind(mode)}, not a regular file")
    with os.fdopen(descriptor, "rb") as file:
        try:
            data = file.read(limit + 1)
        except OSError as failure:
            raise error(f"cannot read {label}: {failure.strerror or failure}") from None
    return decode_text(data, label, error, limit)


class _EmptyPath:
    """What a path flag given "" reads as until `parsed_arguments` refuses it: `Path("")` is `Path(".")`, the current
    folder, so once converted the empty path could only be refused as `.: it is a directory`."""


_EMPTY_PATH = _EmptyPath()


def _path_flag(text: str) -> Path | _EmptyPath:
    return Path(text) if text else _EMPTY_PATH


def parsed_arguments(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """`parser.parse_args(argv)`, refusing an option given `--` as its value (`--base=--`): argparse reads that `--`
    as the end of the options and leaves the option an empty list, which no tool takes for its value; and a path
    option (`type=Path`) given an empty path, which `Path` would read as the current folder."""
    paths = [action for action in parser._actions if action.type is Path]  # argparse keeps its options only here
    for action in paths:
        action.type = _path_flag
    try:
        args = parser.parse_args(argv)
    finally:
        for action in paths:
            action.type = Path
    for action in parser._actions:
        if action.nargs is None and action.option_strings and isinstance(getattr(args, action.dest, None), list):
            parser.error(f"{action.option_strings[-1]}: got --, which ends the options; give the option a value")
        if action.option_strings and getattr(args, action.dest, None) is _EMPTY_PATH:
            flag = action.option_strings[-1]
            parser.error(f'{flag}: an empty path (""); give the path of a file, or leave {flag} out')
    return args


def check_file_flag(
    path: Path, flag: str, error: ErrorFactory = InputError, must_exist: bool = False, directory: bool = False
) -> None:
    """Refuses a path given to a file flag that is there but is not a regular file (a directory, a FIFO, a device;
    with `directory`, anything but a directory), before anything is run: opening a FIFO blocks until its other end
    is opened. Checked with `os.stat`, never by opening; a missing path is refused only when it `must_exist`."""
    shown_path = shown(str(path))
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if must_exist:
            raise error(f"{flag} {shown_path}: no such file") from None
        return
    except OSError as failure:
        raise error(f"{flag} {shown_path}: {failure.strerror or failure}") from None
    if directory and not stat.S_ISDIR(mode):
        raise error(f"{flag} {shown_path}: it is {_kind(mode)}, not a directory")
    if not directory and not stat.S_ISREG(mode):
        raise error(f"{flag} {shown_path}: it is {_kind(mode)}, not a regular file")


def check_output_flag(path: Path, flag: str, error: ErrorFactory = InputError, directory: bool = False) -> None:
    """`check_file_flag`, then that the tool can write there, before anything is built: a file it writes at the end
    (a report after a whole run) or a folder like `/proc` gave only an errno then, without the flag or the path.

    Nothing is left behind or emptied: a file that is there is opened for writing without truncating it and written no bytes; otherwise a
    file is made and removed in the path's folder (a file's parent), or, while that is not there yet, in the nearest
    folder above it that is (the tools make the rest)."""
    check_file_flag(path, flag, error, directory=directory)
    try:
        if path.exists() and not directory:
            # A write of no bytes changes nothing in a regular file, and fails where the real one would fail
            # (`/proc/version`: Input/output error, even for root, whom the open lets through).
            descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK | os.O_CLOEXEC)
            try:
                os.write(descriptor, b"")
            finally:
                os.close(descriptor)
        else:
            folder = path.absolute() if directory else path.absolute().parent
            tempfile.TemporaryFile(dir=next(above for above in (folder, *folder.parents) if above.exists())).close()
    except OSError as failure:
        raise error(f"{flag} {shown(str(path))}: cannot be written: {failure.strerror or failure}") from None


def decode_text(data: bytes, label: str, error: ErrorFactory = InputError, limit: int = MAX_INPUT_BYTES) -> str:
    """Bytes from outside (a file, a git revision, an answer) as text, at most `limit` bytes of UTF-8."""
    if len(data) > limit:
        raise error(f"{label}: larger than {limit >> 20} MiB, the limit on one input (MAX_INPUT_BYTES)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as failure:
        raise error(f"{label}: not a text file (not UTF-8) at byte {failure.start}") from None


def _yaml_shape_problem(text: str) -> str | None:
    """Depth, alias and expanded-size problems of a YAML document, found from its events before it is built."""
    sizes: dict[str, int] = {}
    open_collections: list[list[Any]] = [[None, 0]]  # [anchor, values inside], outermost first
    aliases = 0
    for event in yaml.parse(text, Loader=Yaml12Loader):
        if isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                return f"more than {MAX_ALIASES} aliases (MAX_ALIASES)"
            open_collections[-1][1] += sizes.get(str(event.anchor), 1)
        elif isinstance(event, yaml.ScalarEvent):
            open_collections[-1][1] += 1
            if event.anchor:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.CollectionStartEvent):
            open_collections.append([event.anchor, 1])
            if len(open_collections) - 1 > MAX_DEPTH:
                return f"nested more than {MAX_DEPTH} levels deep (MAX_DEPTH)"
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, size = open_collections.pop()
            if anchor:
                sizes[anchor] = size
            open_collections[-1][1] += size
        if open_collections[-1][1] > MAX_NODES or open_collections[0][1] > MAX_NODES:
            expanded = " once its aliases are expanded" if aliases else ""
            return f"more than {MAX_NODES} values{expanded} (MAX_NODES)"
    return None


# What the parser's problem says, by its fixed words, as a message may say it: pyyaml's and libyaml's problems quote the
# document where they name a tag, an anchor or a character (`could not determine a constructor for the tag '!x'`,
# pyyaml 6.0 constructor.py), and a stack file's secret value (`chartRepositoryPassword: !s3cret`) is such a text.
_YAML_KINDS = (
    ("constructor for the tag", "an unknown tag"),
    ("unhashable key", "an unhashable key"),
    ("undefined alias", "an undefined alias"),
    ("occurrence", "an anchor given twice"),
    ("tag handle", "an undefined tag handle"),
    ("escape character", "an unknown escape character"),
    ("cannot start any token", "a character that cannot start any token"),
)
# A quoted part of a problem that is the parser's own words: a token's name (`'<block end>'`) or one ASCII punctuation
# mark (`expected ',' or ']'`); any other quoted part may be the document's and is left out.
_PARSER_WORDS = re.compile(r"'(?:<[a-z ]+>|[!-/:-@\[-`{-~])'")
_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")


def _yaml_kind(problem: str) -> str:
    for words, kind in _YAML_KINDS:
        if words in problem:
            return kind
    return _QUOTED.sub(
        lambda quoted: quoted[0] if _PARSER_WORDS.fullmatch(quoted[0]) else "(a text not quoted)", problem
    )


def yaml_problem(failure: yaml.YAMLError) -> str:
    """A YAML error as `problem at line L, column C`, without the parser's multi-line excerpt, and no text of the
    document: a tag, an anchor or a character the parser names is said by its kind (`an unknown tag`)."""
    if isinstance(failure, DuplicateKeyError | MergeKeyError):
        return str(failure)
    if isinstance(failure, yaml.MarkedYAMLError) and failure.problem_mark is not None:
        mark = failure.problem_mark
        problem = _yaml_kind(failure.problem or failure.context or "unreadable")
        return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"
    return _yaml_kind(" ".join(str(failure).split()))


def parse_yaml(text: str, label: str, error: ErrorFactory = InputError) -> Any:
    """One YAML 1.2 document within the limits above; `error(message)` naming `label` otherwise."""
    try:
        problem = _yaml_shape_problem(text)
        if problem is None:
            return check_values(yaml.load(text, Loader=Yaml12Loader), label, error)
    except DuplicateKeyError as failure:
        raise error(f"{label}: {failure}") from failure  # the cause keeps the places for a reader that hides the key
    except MergeKeyError as failure:
        raise error(f"{label}: {failure}") from None
    except yaml.YAMLError as failure:
        raise error(f"{label} is not valid YAML: {yaml_problem(failure)}") from None
    raise error(f"{label}: {problem}")


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"a whole number of {len(text.lstrip('-'))} digits; at most {MAX_DIGITS} (MAX_DIGITS)")
    return int(text)


def _json_constant(constant: str) -> Any:
    raise ValueError(f"{constant} is not a number this project reads (numbers must be finite)")


def _json_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is beyond a float's range (numbers must be finite)")
    return value


# A JSON string (each of its characters matches one way only, so the scan is linear) or a structural character.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]', re.DOTALL)


def json_duplicates(text: str) -> Iterator[DuplicateKeyError]:
    """Each key of valid JSON `text` that an object gives again, with both places, in one linear scan."""
    objects: list[dict[str, tuple[int, int]] | None] = []  # per open container: an object's keys' places; None: a list
    expect_key, line, line_start, position = False, 1, 0, 0
    for token in _JSON_TOKEN.finditer(text):
        line += text.count("\n", position, token.start())
        line_start = max(line_start, text.rfind("\n", position, token.start()) + 1)
        position = token.start()
        symbol = token.group()
        if symbol in ("{", "["):
            objects.append({} if symbol == "{" else None)
            expect_key = symbol == "{"
        elif symbol in ("}", "]"):
            objects.pop()
        elif symbol == ",":
            expect_key = objects[-1] is not None
        elif expect_key and symbol.startswith('"'):
            keys = objects[-1]
            assert keys is not None
            key, place = json.loads(symbol), (line, position - line_start + 1)
            if key in keys:
                yield DuplicateKeyError(key, keys[key], place)
            else:
                keys[key] = place
            expect_key = False


def parse_json(
    text: str | bytes, label: str, error: ErrorFactory = InputError, on_duplicate: DuplicateHandler | None = None
) -> Any:
    """One JSON document within the limits above; `error(message)` naming `label` otherwise.

    A key given twice in an object is refused; with `on_duplicate`, it is told each one (a message naming
    the key and both lines) and the last value is kept, as Go's encoding/json keeps it.
    """
    objects_with_duplicates = 0

    def one_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal objects_with_duplicates
        document = dict(pairs)
        objects_with_duplicates += len(document) < len(pairs)
        return document

    try:
        document = json.loads(
            text,
            parse_int=_json_int,
            parse_float=_json_float,
            parse_constant=_json_constant,
            object_pairs_hook=one_object,
        )
    except RecursionError:
        raise error(f"{label}: nested more than {MAX_DEPTH} levels deep (MAX_DEPTH)") from None
    except ValueError as failure:
        raise error(f"{label} is not valid JSON: {failure}") from None
    if objects_with_duplicates:
        for duplicate in json_duplicates(text if isinstance(text, str) else text.decode(json.detect_encoding(text))):
            if on_duplicate is None:
                raise error(f"{label}: {duplicate}")
            on_duplicate(f"{label}: {duplicate.where()}")
    return check_values(document, label, error)


def check_values(document: Any, label: str, error: ErrorFactory = InputError) -> Any:
    """`document` when its nesting and whole numbers are within the limits; walked without recursion.

    Floats are left to the readers, which name the field: YAML writes `.inf` and `.nan` on purpose.
    """
    pending: list[tuple[Any, int]] = [(document, 0)]
    while pending:
        value, depth = pending.pop()
        if depth > MAX_DEPTH:
            raise error(f"{label}: nested more than {MAX_DEPTH} levels deep (MAX_DEPTH)")
        if isinstance(value, dict):
            pending.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            pending.extend((item, depth + 1) for item in value)
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**MAX_DIGITS:
            raise error(f"{label}: a whole number of more than {MAX_DIGITS} digits (MAX_DIGITS)")
    return document


def load_yaml(path: Path, label: str, error: ErrorFactory = InputError) -> Any:
    return parse_yaml(read_text(path, label, error), label, error)


def key_lines(path: Path, label: str, under: str, error: ErrorFactory = InputError) -> dict[str, int]:
    """The line of each key of the map at the top-level key `under` of a YAML file already read with `load_yaml`
    (so within the limits), from its node tree: a reader that finds two keys meaning one names both lines."""
    root = yaml.compose(read_text(path, label, error), Loader=Yaml12Loader)
    for key_node, value_node in root.value if isinstance(root, yaml.MappingNode) else ():
        if key_node.value == under and isinstance(value_node, yaml.MappingNode):
            return {str(key.value): key.start_mark.line + 1 for key, _ in value_node.value}
    return {}


def load_json(
    path: Path, label: str, error: ErrorFactory = InputError, on_duplicate: DuplicateHandler | None = None
) -> Any:
    return parse_json(read_text(path, label, error), label, error, on_duplicate)


# Unicode categories that draw nothing and can move the cursor, erase, or reorder text: controls (C0, C1, DEL,
# and so every terminal escape), format characters (bidirectional overrides) and line or paragraph separators.
_INVISIBLE = frozenset(("Cc", "Cf", "Zl", "Zp"))


def write_stdout(text: str) -> None:
    """Write a command's result to stdout, flushed; a reader that has gone (`| head -c 100`) is not its failure.

    A closed pipe raised BrokenPipeError out of main: a traceback and exit 1 (a BLOCKED plan's status), and the lines
    after it were never printed. The rest is dropped as the reader asked, stdout is pointed at /dev/null so the flush
    at exit cannot fail again (exit 120), and the command's own status stands."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def printable(text: str, lines: bool = False) -> str:
    """`text` with every control, format and line-separator character written as its JSON escape (`\\u001b`, `\\n`);
    with `lines`, a message of several lines keeps its line feeds (and only those)."""
    if text.isprintable():
        return text
    return "".join(
        json.dumps(character)[1:-1]
        if unicodedata.category(character) in _INVISIBLE and not (lines and character == "\n")
        else character
        for character in text
    )


# What starts Markdown inside a line on GitHub: emphasis, code, links and images (`[`), table cells, strike-through.
# `.`, `-`, `(` and the like stay as they are, so a URL still reads (and links) as one.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def markdown_text(text: str) -> str:
    """`text` as literal Markdown on GitHub: printable, its Markdown punctuation escaped, HTML as entities."""
    escaped = printable(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN_SPECIAL.sub(r"\\\1", escaped)


_BACKTICKS = re.compile(r"`+")


def markdown_code_block(lines: list[str], info: str = "") -> list[str]:
    """`lines` as a fenced code block on GitHub, literal: each line printable, and the fence one backtick longer than
    the longest run of backticks in them, which no line can close (CommonMark 0.31.2, section 4.5: a closing fence is
    at least as long as the opening one). Inside, Markdown and HTML are text."""
    body = [printable(line) for line in lines]
    longest = max((len(run) for line in body for run in _BACKTICKS.findall(line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{info}", *body, fence]
